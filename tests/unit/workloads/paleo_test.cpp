// Paleo's network format: files written in it load through the same model and give the expected
// parameter counts; recognised by shape wherever a layer-graph file is accepted.
#include <gtest/gtest.h>

#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim_test/files.hpp"

namespace {

using trainsim::InputError;
using trainsim::workloads::load_workload;
using trainsim::workloads::Workload;

std::string paleo_file(const std::string& name) { return trainsim_test::test_data_dir() + "/good/workloads/paleo/" + name; }

TEST(Paleo, AlexNetMatchesTorchvision) {
  const Workload w = load_workload(paleo_file("alexnet.json"));
  EXPECT_EQ(w.params(), 61'100'840);
  const Workload zoo = load_workload("alexnet");
  // Same convolutions and fully connected layers as the zoo model, so the same multiply-adds
  // (the zoo's adaptive pooling and ReLUs add a little elementwise work).
  double paleo_macs = 0, zoo_macs = 0;
  for (const auto& l : w.layers) paleo_macs += l.op_class == trainsim::workloads::OpClass::conv || l.type == "linear" ? l.flops_fwd : 0;
  for (const auto& l : zoo.layers) zoo_macs += l.op_class == trainsim::workloads::OpClass::conv || l.type == "linear" ? l.flops_fwd : 0;
  EXPECT_DOUBLE_EQ(paleo_macs, zoo_macs);
  // NHWC [128, 224, 224, 3] becomes a per-sample [3, 224, 224]; SAME keeps 27x27.
  EXPECT_EQ(w.layers.front().output_shape, (std::vector<std::int64_t>{3, 224, 224}));
  EXPECT_EQ(w.find_layer("conv1")->output_shape, (std::vector<std::int64_t>{64, 55, 55}));
  EXPECT_EQ(w.find_layer("conv2")->output_shape, (std::vector<std::int64_t>{192, 27, 27}));
  EXPECT_EQ(w.find_layer("fc6")->type, "linear");
  EXPECT_DOUBLE_EQ(w.find_layer("conv1")->flops_bwd_input, 0);  // reads the data only
  EXPECT_EQ(w.find_layer("softmax")->type, "loss");
}

TEST(Paleo, NetworkInNetworkMatchesTheZoo) {
  const Workload w = load_workload(paleo_file("nin.json"));
  EXPECT_EQ(w.name, "NIN");
  EXPECT_EQ(w.params(), 7'595'176);
  EXPECT_EQ(w.params(), load_workload("nin").params());
  // TensorFlow VALID: ⌈(224 − 11 + 1)/4⌉ = 54; the final 5x5 average pool leaves 1x1.
  EXPECT_EQ(w.find_layer("conv1")->output_shape, (std::vector<std::int64_t>{96, 54, 54}));
  EXPECT_EQ(w.find_layer("pool4")->output_shape, (std::vector<std::int64_t>{1000, 1, 1}));
  EXPECT_DOUBLE_EQ(w.find_layer("drop")->flops_fwd, 2.0 * 384 * 5 * 5);
}

TEST(Paleo, BlocksEndpointsConcatAndElementwise) {
  const Workload w = load_workload(paleo_file("blocks.json"));
  // stem 448, branch 0 136, branch 1 68 + 296, projection 272, fc 16·16·16·10 + 10
  EXPECT_EQ(w.params(), 448 + 136 + 68 + 296 + 272 + 40970);
  const auto* concat = w.find_layer("mixed/concat");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->output_shape, (std::vector<std::int64_t>{16, 32, 32}));  // dim 3 = channels
  EXPECT_EQ(w.find_layer("mixed/Branch_0/Conv2d_1x1")->parents, (std::vector<std::string>{"stem"}));
  // The block's name as a parent means its endpoint.
  EXPECT_EQ(w.find_layer("residual")->parents, (std::vector<std::string>{"mixed/concat", "project"}));
  EXPECT_EQ(w.find_layer("residual")->type, "add");
  EXPECT_EQ(w.find_layer("softmax")->output_shape, (std::vector<std::int64_t>{1}));
}

TEST(Paleo, ModelParallelSplitsFilters) {
  const Workload w = load_workload(paleo_file("model_parallel.json"));
  // fc6's 64 filters split over 2 workers: two 8x8x8x32 convolutions, concatenated per worker.
  EXPECT_EQ(w.find_layer("parallel_fc6/fc6@0")->output_shape, (std::vector<std::int64_t>{32, 1, 1}));
  EXPECT_EQ(w.find_layer("parallel_fc6/dropout6@1")->parents, (std::vector<std::string>{"parallel_fc6/fc6@1"}));
  EXPECT_EQ(w.find_layer("parallel_fc6/concat6@0")->parents,
            (std::vector<std::string>{"parallel_fc6/dropout6@0", "parallel_fc6/dropout6@1"}));
  EXPECT_EQ(w.find_layer("parallel_fc6/concat6@0")->output_shape, (std::vector<std::int64_t>{64, 1, 1}));
  EXPECT_EQ(w.params(), 296 + 2 * (8 * 8 * 8 * 32 + 32) + 650);
}

TEST(Paleo, ErrorsPointIntoThePaleoFile) {
  const std::string bad = trainsim_test::test_data_dir() + "/bad/workloads/paleo_channel_mismatch.json";
  try {
    load_workload(bad);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), bad);
    EXPECT_EQ(e.location(), "/layers/conv1/filter");
    EXPECT_NE(e.detail().find("layer 'conv1': declares 5 input channels"), std::string::npos) << e.what();
  }
}

TEST(Paleo, SizesAreBoundedLikeTheLayerGraphs) {
  // A filter this large overflowed the convolution's 64-bit parameter count (UBSan, tests/fuzz).
  try {
    trainsim::workloads::parse_paleo_graph(trainsim::parse_json_text(R"({"layers": {
      "data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 3]},
      "conv": {"parents": ["data"], "type": "Convolution", "filter": [3, 3, 3, 4000000000], "strides": [1, 1, 1, 1], "padding": "SAME"}}})",
                                                                     "p.json"),
                                           "p.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/layers/conv/filter/3");
    EXPECT_NE(e.detail().find("layer 'conv': must be ≤ 2147483647"), std::string::npos) << e.what();
  }
}

// Model-parallel expansion is bounded: a split count of 10^8 took minutes and gigabytes (the fuzz
// target's timeout), and a block with no layers looped over its splits doing nothing.
TEST(Paleo, ModelParallelExpansionIsBounded) {
  struct Case {
    const char* block;
    const char* pointer;
    const char* detail;
  };
  for (const Case& c : {
           Case{R"("fc": {"parents": [], "type": "Elementwise"})", "/layers/par/layers/fc",
                "expands to more than 100000 layers and parent links"},
           Case{R"("fc": {"parents": ["data"], "type": "Elementwise"}, "cat": {"parents": ["fc@all"], "type": "Concatenate", "dim": 3})",
                "/layers/par/layers/cat/parents/0", "expands to more than 100000 layers and parent links"},
           Case{"", "/layers/par/layers", "layer 'par': a block needs at least one layer"},
       }) {
    const std::string text = std::string(R"({"layers": {"data": {"parents": [], "type": "Input", "tensor": [1, 8, 8, 4]},
      "par": {"type": "ModelParallel", "splits": 100000000, "parents": ["data"], "layers": {)") + c.block + "}}}}";
    try {
      trainsim::workloads::parse_paleo_graph(trainsim::parse_json_text(text, "p.json"), "p.json");
      FAIL() << c.block;
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), c.pointer) << e.what();
      EXPECT_NE(e.detail().find(c.detail), std::string::npos) << e.what();
    }
  }
}

}  // namespace
