// ONNX import: graphs laid out as torch.onnx.export writes ResNet-50, BERT-base and GPT-2 small
// (tests/data/make_onnx_models.py) against the zoo's parameter counts (exactly) and FLOPs (1 %),
// dynamic axes, saved activations, and one test per bad input: truncated file, cycle, unresolved
// dynamic dimension, unknown operator.
#include <cmath>
#include <ostream>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim/workloads/onnx_import.hpp"
#include "trainsim_test/files.hpp"

namespace {

using trainsim::InputError;
using trainsim::workloads::load_onnx_workload;
using trainsim::workloads::load_workload;
using trainsim::workloads::OnnxBindings;
using trainsim::workloads::OpClass;
using trainsim::workloads::Workload;

std::string good(const std::string& name) {
  return trainsim_test::test_data_dir() + "/good/workloads/onnx/" + name;
}
std::string bad(const std::string& name) {
  return trainsim_test::test_data_dir() + "/bad/workloads/onnx/" + name;
}

OnnxBindings with_sequence(std::int64_t tokens, std::int64_t batch = 1) {
  OnnxBindings b;
  b.batch = batch;
  b.sequence_length = tokens;
  return b;
}

struct Case {
  const char* file;
  const char* zoo;
  std::int64_t sequence;  // 0: none
};

// CTest names carry the printed parameter: print the zoo name, not the struct's bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.zoo;
}

class OnnxAgainstZoo : public testing::TestWithParam<Case> {};

TEST_P(OnnxAgainstZoo, ParametersExactFlopsWithinOnePercent) {
  const Case& c = GetParam();
  const Workload onnx = load_onnx_workload(good(c.file), c.sequence ? with_sequence(c.sequence) : OnnxBindings{});
  const Workload zoo = load_workload(c.zoo);
  EXPECT_EQ(onnx.params(), zoo.params());
  EXPECT_NEAR(onnx.forward_flops() / zoo.forward_flops(), 1.0, 0.01)
      << onnx.forward_flops() << " vs " << zoo.forward_flops();
  EXPECT_NEAR(onnx.backward_flops() / zoo.backward_flops(), 1.0, 0.01)
      << onnx.backward_flops() << " vs " << zoo.backward_flops();
}

INSTANTIATE_TEST_SUITE_P(Models, OnnxAgainstZoo,
                         testing::Values(Case{"resnet50.onnx", "resnet50", 0}, Case{"bert_base.onnx", "bert_base", 128},
                                         Case{"gpt2.onnx", "gpt2", 1024}),
                         [](const testing::TestParamInfo<Case>& p) { return std::string(p.param.zoo); });

TEST(OnnxImport, CostsArePerSampleWhateverTheBoundBatch) {
  const Workload one = load_onnx_workload(good("bert_base.onnx"), with_sequence(128, 1));
  const Workload eight = load_onnx_workload(good("bert_base.onnx"), with_sequence(128, 8));
  EXPECT_DOUBLE_EQ(one.forward_flops(), eight.forward_flops());
  EXPECT_DOUBLE_EQ(one.activation_bytes(trainsim::Precision::fp32), eight.activation_bytes(trainsim::Precision::fp32));
  EXPECT_EQ(one.params(), eight.params());
}

TEST(OnnxImport, SequenceLengthScalesAttentionQuadratically) {
  const Workload w128 = load_onnx_workload(good("gpt2.onnx"), with_sequence(128));
  const Workload w256 = load_onnx_workload(good("gpt2.onnx"), with_sequence(256));
  // Linear layers double; the attention products (class attention) quadruple.
  double att128 = 0, att256 = 0;
  for (const auto& l : w128.layers)
    if (l.op_class == OpClass::attention) att128 += l.flops_fwd;
  for (const auto& l : w256.layers)
    if (l.op_class == OpClass::attention) att256 += l.flops_fwd;
  ASSERT_GT(att128, 0);
  EXPECT_DOUBLE_EQ(att256 / att128, 4.0);
  // 12 layers × (QKᵀ + PV) = 2 · 2·T²·D each, per sequence.
  EXPECT_DOUBLE_EQ(att128, 12 * 2 * 2.0 * 128 * 128 * 768);
}

TEST(OnnxImport, LayersNameTheNodesAndClassifyThem) {
  const Workload w = load_onnx_workload(good("resnet50.onnx"), OnnxBindings{});
  ASSERT_NE(w.find_layer("input"), nullptr);
  EXPECT_EQ(w.find_layer("input")->op_class, OpClass::data);
  const auto* conv = w.find_layer("/conv1/Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->type, "Conv");
  EXPECT_EQ(conv->op_class, OpClass::conv);
  EXPECT_EQ(conv->params, 64 * 3 * 7 * 7);
  EXPECT_DOUBLE_EQ(conv->flops_fwd, 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
  EXPECT_EQ(conv->flops_bwd_input, 0);  // fed by data only
  EXPECT_EQ(conv->output_shape, (std::vector<std::int64_t>{64, 112, 112}));
  // BatchNormalization: scale and shift are parameters, the running statistics are not.
  EXPECT_EQ(w.find_layer("/bn1/BatchNormalization")->params, 2 * 64);
  EXPECT_EQ(w.find_layer("/fc/Gemm")->op_class, OpClass::matmul);
  EXPECT_EQ(w.find_layer("/Flatten")->op_class, OpClass::reshape);
  EXPECT_EQ(w.find_layer("/Flatten")->saved_elements, 0);
}

TEST(OnnxImport, TiedWeightCountsOnceAndIsAWeightOfTheHead) {
  const Workload w = load_onnx_workload(good("gpt2.onnx"), with_sequence(64));
  const auto* head = w.find_layer("/lm_head/MatMul");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->params, 0);  // wte is counted at its first reader, the token embedding
  EXPECT_EQ(head->op_class, OpClass::matmul);
  EXPECT_GT(head->flops_bwd_weight, 0);
  EXPECT_EQ(w.find_layer("/transformer/wte/Gather")->params, 50257 * 768);
}

TEST(OnnxImport, SavedActivationsFollowAutogradsRules) {
  const Workload w = load_onnx_workload(good("resnet50.onnx"), OnnxBindings{});
  // conv1's output is read by its BatchNormalization's backward; the Add of a residual block by
  // nobody (the Relu after it keeps its own output).
  EXPECT_DOUBLE_EQ(w.find_layer("/conv1/Conv")->saved_elements, 64.0 * 112 * 112);
  EXPECT_EQ(w.find_layer("/layer1.0/Add")->saved_elements, 0);
  EXPECT_DOUBLE_EQ(w.find_layer("/layer1.0/Relu_out")->saved_elements, 256.0 * 56 * 56);
}

TEST(OnnxImport, NamedDimensionsBind) {
  OnnxBindings b = with_sequence(16);
  b.dims["features"] = 32;
  const Workload w = load_onnx_workload(bad("dynamic_dim.onnx"), b);
  EXPECT_EQ(w.find_layer("/relu")->output_shape, (std::vector<std::int64_t>{16, 32}));
}

TEST(OnnxImport, ZooPathLoaderRecognisesOnnxFiles) {
  EXPECT_TRUE(trainsim::workloads::is_onnx_path("a/b/Model.ONNX"));
  EXPECT_FALSE(trainsim::workloads::is_onnx_path("model.json"));
  EXPECT_EQ(load_workload(good("resnet50.onnx")).params(), 25'557'032);
}

// ---- Bad input: one test each, the message names the node or the dimension ----

std::string error_of(const std::string& path, const OnnxBindings& bindings) {
  try {
    load_onnx_workload(path, bindings);
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), path);
    return e.what();
  }
  ADD_FAILURE() << path << " loaded";
  return "";
}

TEST(OnnxBadInput, TruncatedFile) {
  EXPECT_NE(error_of(bad("truncated.onnx"), OnnxBindings{}).find("the protobuf does not parse (the file is truncated"),
            std::string::npos);
}

TEST(OnnxBadInput, EveryTruncationIsAnErrorNotACrash) {
  const std::string bytes = trainsim_test::read_file(good("resnet50.onnx"));
  for (std::size_t cut = 0; cut < bytes.size(); cut += 997) {
    try {
      trainsim::workloads::parse_onnx_model(std::string_view(bytes).substr(0, cut), "cut", OnnxBindings{});
      ADD_FAILURE() << "a file cut at " << cut << " bytes loaded";
    } catch (const InputError&) {
    }
  }
}

TEST(OnnxBadInput, CycleNamesItsNodes) {
  const std::string e = error_of(bad("cycle.onnx"), OnnxBindings{});
  EXPECT_NE(e.find("node '/b' (Add): the graph has a cycle: '/c' → '/b' → '/c'"), std::string::npos) << e;
}

TEST(OnnxBadInput, UnresolvedDynamicDimensionNamesInputAndDimension) {
  const std::string e = error_of(bad("dynamic_dim.onnx"), with_sequence(16));
  EXPECT_NE(e.find("graph input 't', dimension 2: unresolved dynamic dimension 'features'; give its value in "
                   "workload.onnx_dims (or --dim) as {\"features\": N}"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of(bad("dynamic_dim.onnx"), OnnxBindings{})
                .find("dimension 1: unresolved dynamic dimension 'sequence'; give sequence_length"),
            std::string::npos);
}

TEST(OnnxBadInput, UnknownOperatorNamedWithCountAndFirstNode) {
  const std::string e = error_of(bad("unknown_op.onnx"), OnnxBindings{});
  EXPECT_NE(e.find("operators trainsim does not cost: custom.FancyAct (2 nodes, first '/act1')"), std::string::npos)
      << e;
}

TEST(OnnxBadInput, NotOnnxAtAll) {
  EXPECT_THROW(trainsim::workloads::parse_onnx_model("{\"layers\": []}", "x.onnx", OnnxBindings{}), InputError);
  EXPECT_THROW(trainsim::workloads::parse_onnx_model("", "x.onnx", OnnxBindings{}), InputError);
}

TEST(OnnxBadInput, SequenceLengthForAModelWithoutSequence) {
  try {
    load_onnx_workload(good("resnet50.onnx"), with_sequence(128));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "model");
    EXPECT_NE(e.detail().find("has no dynamic sequence dimension"), std::string::npos);
  }
}

}  // namespace
