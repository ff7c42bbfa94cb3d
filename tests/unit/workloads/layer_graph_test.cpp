// The layer-graph reader: forward order, sequential shorthand, errors (pointer and layer), report.
#include <gtest/gtest.h>

#include <ostream>

#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim_test/files.hpp"
#include "trainsim_test/names.hpp"

namespace {

using trainsim::InputError;
using trainsim::parse_json_text;
using trainsim::Precision;
using trainsim::workloads::load_workload;
using trainsim::workloads::parse_layer_graph;
using trainsim::workloads::Workload;

Workload parse(const std::string& text) { return parse_layer_graph(parse_json_text(text, "g.json"), "g.json"); }

std::vector<std::string> order(const Workload& w) {
  std::vector<std::string> names;
  for (const auto& l : w.layers) names.push_back(l.name);
  return names;
}

TEST(LayerGraph, KeepsFileOrderWhenItIsTopological) {
  const Workload w = parse(R"({"name": "seq", "layers": [
    {"name": "in", "type": "input", "shape": [8]},
    {"name": "a", "type": "linear", "out_features": 4},
    {"name": "b", "type": "relu"},
    {"name": "c", "type": "linear", "out_features": 2}]})");
  EXPECT_EQ(w.name, "seq");
  EXPECT_EQ(w.source, "g.json");
  EXPECT_EQ(order(w), (std::vector<std::string>{"in", "a", "b", "c"}));
  // Without "parents" a layer reads the layer written before it.
  EXPECT_EQ(w.layers[2].parents, (std::vector<std::string>{"a"}));
}

TEST(LayerGraph, SortsLayersWrittenOutOfOrder) {
  const Workload w = parse(R"({"layers": [
    {"name": "sum", "type": "add", "parents": ["left", "right"]},
    {"name": "right", "type": "relu", "parents": ["in"]},
    {"name": "in", "type": "input", "shape": [4]},
    {"name": "left", "type": "sigmoid", "parents": ["in"]}]})");
  // Kahn's order, earliest-written ready layer first.
  EXPECT_EQ(order(w), (std::vector<std::string>{"in", "right", "left", "sum"}));
  EXPECT_EQ(w.name, "g.json");  // no "name": the source names it
}

TEST(LayerGraph, CycleNamesItsLayers) {
  try {
    parse(R"({"layers": [
      {"name": "in", "type": "input", "shape": [4]},
      {"name": "a", "type": "add", "parents": ["in", "c"]},
      {"name": "b", "type": "relu", "parents": ["a"]},
      {"name": "c", "type": "relu", "parents": ["b"]}]})");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "g.json");
    EXPECT_EQ(e.location(), "/layers/1/parents");
    EXPECT_NE(e.detail().find("'a' → 'b' → 'c' → 'a'"), std::string::npos) << e.detail();
  }
}

TEST(LayerGraph, SelfLoopIsACycle) {
  try {
    parse(R"({"layers": [{"name": "in", "type": "input", "shape": [4]}, {"name": "a", "type": "add", "parents": ["in", "a"]}]})");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/layers/1/parents");
    EXPECT_NE(e.detail().find("cycle"), std::string::npos);
  }
}

struct BadCase {
  const char* layers;
  const char* pointer;
  const char* detail;
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.layers; }

// Parses a graph whose "layers" array holds `layers` and expects the case's error.
void expect_error(const std::string& layers, const BadCase& c) {
  try {
    parse(R"({"layers": [)" + layers + "]}");
    FAIL() << "expected InputError for " << c.layers;
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), c.pointer) << e.what();
    EXPECT_NE(e.detail().find(c.detail), std::string::npos) << e.what();
  }
}

class LayerGraphErrors : public testing::TestWithParam<BadCase> {};

TEST_P(LayerGraphErrors, NamePointerAndLayer) {
  expect_error(std::string(R"({"name": "in", "type": "input", "shape": [3, 8, 8]}, )") + GetParam().layers, GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LayerGraphErrors,
    testing::Values(
        BadCase{R"({"name": "c", "type": "conv2d", "out_channels": 4, "kernel": 3, "groups": 2})", "/layers/1/groups",
                "layer 'c': groups = 2 must divide the input channels (3)"},
        BadCase{R"({"name": "c", "type": "conv2d", "out_channels": 4, "kernel": [3]})", "/layers/1/kernel",
                "layer 'c': expected an integer or a [height, width] pair"},
        BadCase{R"({"name": "c", "type": "conv2d", "out_channels": 4, "kernel": 3, "padding": "full"})", "/layers/1/padding",
                "layer 'c': unknown value 'full'"},
        BadCase{R"({"name": "f", "type": "linear", "out_features": 4, "in_features": 7})", "/layers/1",
                "layer 'f': declares 7 input features but its input [3, 8, 8] has 8"},
        BadCase{R"({"name": "d", "type": "dropout", "rate": 1})", "/layers/1/rate", "layer 'd': must be < 1"},
        BadCase{R"({"name": "r", "type": "reshape", "shape": [5, -1]})", "/layers/1/shape", "layer 'r': cannot reshape [3, 8, 8]"},
        BadCase{R"({"name": "a", "type": "attention", "heads": 1})", "/layers/1", "layer 'a': attention needs a [tokens, model dim] input"},
        BadCase{R"({"name": "m", "type": "matmul"})", "/layers/1", "layer 'm': matmul takes 2 input(s), got 1"},
        BadCase{R"({"name": "s", "type": "slice", "axis": 1, "start": 4, "length": 5})", "/layers/1", "layer 's': slice [4, 9) exceeds"},
        BadCase{R"({"name": "c", "type": "concat", "axis": 3})", "/layers/1/axis", "layer 'c': axis 3 is out of range"},
        BadCase{R"({"name": "x", "type": "input", "shape": [4], "parents": ["in"]})", "/layers/1/parents", "layer 'x': input takes 0 input(s)"},
        BadCase{R"({"name": "l", "type": "linear", "out_features": 4, "tied_to": "in"})", "/layers/1/tied_to",
                "layer 'l': can only share the weight of an embedding"},
        BadCase{R"({"name": "", "type": "relu"})", "/layers/1/name", "expected a non-empty layer name"},
        BadCase{R"({"name": "p", "type": "relu", "parents": "in"})", "/layers/1/parents", "layer 'p': expected an array"}),
    [](const auto& p) { return std::to_string(p.index) + "_" + trainsim_test::test_name(p.param.pointer); });

// Sizes whose products overflowed 64-bit integers (undefined behaviour) or a double's exact range
// before they were bounded (UBSan in the fuzz target tests/fuzz/fuzz_layer_graph reported the first
// ones). Each case is a whole graph.
class LayerGraphSizeLimits : public testing::TestWithParam<BadCase> {};

TEST_P(LayerGraphSizeLimits, AreBadInput) { expect_error(GetParam().layers, GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cases, LayerGraphSizeLimits,
    testing::Values(
        BadCase{R"({"name": "in", "type": "input", "shape": [4000000000000000000]},
                   {"name": "f", "type": "linear", "out_features": 4000000000000000000})",
                "/layers/0/shape/0", "layer 'in': must be ≤ 2147483647, got 4000000000000000000"},
        BadCase{R"({"name": "in", "type": "input", "shape": [8]},
                   {"name": "f", "type": "linear", "out_features": 2147483648})",
                "/layers/1/out_features", "layer 'f': must be ≤ 2147483647"},
        BadCase{R"({"name": "in", "type": "input", "shape": [2147483647]},
                   {"name": "f", "type": "linear", "out_features": 2147483647})",
                "/layers/1", "layer 'f': has more than 2^53 parameters"},
        BadCase{R"({"name": "in", "type": "input", "shape": [2147483647, 3, 3]},
                   {"name": "c", "type": "conv2d", "out_channels": 2147483647, "kernel": 3})",
                "/layers/1", "layer 'c': has more than 2^53 parameters"},
        BadCase{R"({"name": "in", "type": "input", "shape": [1, 1, 1]},
                   {"name": "c", "type": "conv2d", "out_channels": 1, "kernel": 1, "padding": 2147483647})",
                "/layers/1", "layer 'c': its output [1, 4294967295, 4294967295] has a dimension larger than 2147483647"},
        BadCase{R"({"name": "in", "type": "input", "shape": [2147483647]},
                   {"name": "c", "type": "concat", "parents": ["in", "in"]})",
                "/layers/1", "layer 'c': its output [4294967294] has a dimension larger"},
        BadCase{R"({"name": "in", "type": "input", "shape": [2147483647, 2147483647, 2]})",
                "/layers/0", "layer 'in': its output [2147483647, 2147483647, 2] has more than 2^53 elements"},
        BadCase{R"({"name": "in", "type": "input", "shape": [1, 2147483646]},
                   {"name": "a", "type": "attention", "heads": 1})",
                "/layers/1", "layer 'a': has more than 2^53 parameters"},
        BadCase{R"({"name": "in", "type": "input", "shape": [1]},
                   {"name": "e1", "type": "embedding", "num_embeddings": 94906265, "dim": 94906265},
                   {"name": "e2", "type": "embedding", "parents": ["in"], "num_embeddings": 94906265, "dim": 94906265})",
                "/layers/2", "layer 'e2': the model has more than 2^53 parameters up to this layer"}),
    [](const auto& p) { return std::to_string(p.index) + "_" + trainsim_test::test_name(p.param.pointer); });

TEST(LayerGraph, TopLevelKeysAreChecked) {
  try {
    parse(R"({"nmae": "x", "layers": [{"name": "in", "type": "input", "shape": [4]}]})");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/nmae");
    EXPECT_NE(e.detail().find("did you mean 'name'"), std::string::npos);
  }
  EXPECT_THROW(parse(R"({"layers": []})"), InputError);
}

TEST(LayerGraph, UnknownZooModelSuggestsTheNearest) {
  try {
    load_workload("resnet5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(e.detail().find("did you mean 'resnet50'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_workload("no/such/file.json"), InputError);
}

TEST(LayerGraph, ReportScalesWithBatchAndPrecision) {
  const Workload w = load_workload("mlp");
  const auto one = trainsim::workloads::workload_report(w, 1, Precision::fp32);
  const auto many = trainsim::workloads::workload_report(w, 64, Precision::fp16);
  EXPECT_EQ(one.at("params").get<std::int64_t>(), 669706);
  EXPECT_EQ(many.at("params").get<std::int64_t>(), 669706);
  EXPECT_DOUBLE_EQ(many.at("forward_flops").get<double>(), 64 * one.at("forward_flops").get<double>());
  EXPECT_DOUBLE_EQ(many.at("activation_bytes").get<double>(), 32 * one.at("activation_bytes").get<double>());
  EXPECT_DOUBLE_EQ(many.at("weight_bytes").get<double>(), 669706.0 * 2);
  EXPECT_EQ(one.at("layers").size(), w.layers.size());
  EXPECT_EQ(one.at("layers").at(1).at("name").get<std::string>(), "fc1");
  EXPECT_EQ(one.at("precision").get<std::string>(), "fp32");
}

TEST(LayerGraph, LoadsAFileByPath) {
  const Workload w = load_workload(trainsim_test::test_data_dir() + "/good/workloads/tiny_resnet_block.json");
  EXPECT_EQ(w.name, "tiny residual block");
  EXPECT_EQ(w.params(), 3 * 3 * 16 * 16 * 2 + 6 * 16 + 3 * 3 * 3 * 16 + 16 * 10 + 10);
}

}  // namespace

// workload.sequence_length / image_size: the inputs of a zoo model resized; parameters stay, the
// per-sample work scales with the input (ResNet-50 at 112² does a little more than a quarter of
// 224²: its last stage is 4×4 rather than 3.5², and the classifier does not shrink; BERT's
// per-token layers scale with the sequence, attention faster).
TEST(InputSize, ResizesZooInputsAndKeepsParameters) {
  using trainsim::workloads::InputSize;
  const Workload full = trainsim::workloads::load_workload("resnet50");
  const Workload half = trainsim::workloads::load_workload("resnet50", InputSize{std::nullopt, 112});
  EXPECT_EQ(half.params(), full.params());
  EXPECT_GT(half.forward_flops() / full.forward_flops(), 0.25);
  EXPECT_LT(half.forward_flops() / full.forward_flops(), 0.28);
  const Workload bert = trainsim::workloads::load_workload("bert_base");
  const Workload bert64 = trainsim::workloads::load_workload("bert_base", InputSize{64, std::nullopt});
  EXPECT_EQ(bert64.params(), bert.params());
  EXPECT_LT(bert64.forward_flops(), 0.51 * bert.forward_flops());
  EXPECT_EQ(bert64.name, "bert_base");
}

TEST(InputSize, ASizeTheModelHasNoInputForIsBadInput) {
  using trainsim::workloads::InputSize;
  EXPECT_THROW(trainsim::workloads::load_workload("resnet50", InputSize{128, std::nullopt}), trainsim::InputError);
  EXPECT_THROW(trainsim::workloads::load_workload("bert_base", InputSize{std::nullopt, 224}), trainsim::InputError);
  // GPT-2's position table holds 1024 tokens.
  EXPECT_NO_THROW(trainsim::workloads::load_workload("gpt2", InputSize{1024, std::nullopt}));
  EXPECT_THROW(trainsim::workloads::load_workload("gpt2", InputSize{1025, std::nullopt}), trainsim::InputError);
}
