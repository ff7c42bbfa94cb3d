// Every zoo model against its reference parameter count, forward multiply-adds against
// torchvision's published figures, aliases, determinism and the round trip through the format.
#include <cmath>
#include <ostream>

#include <gtest/gtest.h>

#include "trainsim/workloads/layer_graph.hpp"

namespace trainsim::workloads {
// CTest names carry the printed parameter: print the model name, not the struct's bytes.
void PrintTo(const ZooEntry& e, std::ostream* os) { *os << e.name; }
}  // namespace trainsim::workloads

namespace {

using trainsim::workloads::load_workload;
using trainsim::workloads::OpClass;
using trainsim::workloads::Workload;
using trainsim::workloads::zoo;
using trainsim::workloads::ZooEntry;

// The reference counts of the task (torchvision, Hugging Face, Keras examples), written out here
// independently of the zoo's own table.
const std::map<std::string, std::int64_t> kReference{
    {"alexnet", 61'100'840},        {"vgg16", 138'357'544},   {"vgg16_bn", 138'365'992},    {"resnet18", 11'689'512},
    {"resnet34", 21'797'672},       {"resnet50", 25'557'032}, {"resnet101", 44'549'160},    {"resnet152", 60'192'808},
    {"inception_v3", 27'161'264},   {"googlenet", 6'624'904}, {"nin", 7'595'176},           {"mlp", 669'706},
    {"autoencoder", 222'384},       {"cnn", 1'199'882},       {"bert_base", 109'482'240},   {"bert_large", 335'141'888},
    {"bert_base_mlm", 109'514'298}, {"gpt2", 124'439'808},    {"gpt2_medium", 354'823'168}, {"gpt2_large", 774'030'080},
    {"gpt2_xl", 1'557'611'200}};

class ZooModel : public testing::TestWithParam<ZooEntry> {};

TEST_P(ZooModel, ParameterCountEqualsReference) {
  const ZooEntry& entry = GetParam();
  ASSERT_TRUE(kReference.count(entry.name)) << entry.name << " has no reference in this test";
  EXPECT_EQ(entry.reference_params, kReference.at(entry.name));
  const Workload w = load_workload(entry.name);
  EXPECT_EQ(w.params(), kReference.at(entry.name)) << entry.name;
  EXPECT_EQ(w.name, entry.name);
  EXPECT_EQ(w.source, "zoo");
}

TEST_P(ZooModel, CostsAreConsistent) {
  const Workload w = load_workload(GetParam().name);
  ASSERT_FALSE(w.layers.empty());
  EXPECT_EQ(w.layers.front().op_class, OpClass::data);
  double weight_grad = 0;
  for (const auto& l : w.layers) {
    EXPECT_GE(l.flops_fwd, 0) << l.name;
    EXPECT_GE(l.output_elements, 1) << l.name;
    if (l.params == 0 && l.type != "linear") {
      EXPECT_EQ(l.flops_bwd_weight, 0) << l.name;
    }
    weight_grad += l.flops_bwd_weight;
  }
  // Backward ≈ 2 × forward: below 2× because the first layer has no input gradient.
  EXPECT_GT(w.backward_flops(), 1.3 * w.forward_flops());
  EXPECT_LE(w.backward_flops(), 2.01 * w.forward_flops());
  EXPECT_GT(weight_grad, 0.3 * w.forward_flops());
}

INSTANTIATE_TEST_SUITE_P(All, ZooModel, testing::ValuesIn(zoo()),
                         [](const testing::TestParamInfo<ZooEntry>& p) { return p.param.name; });

TEST(Zoo, ListsEveryReferenceModel) { EXPECT_EQ(zoo().size(), kReference.size()); }

// Forward multiply-adds of convolutions and fully connected layers, as torchvision reports them
// (its "GFLOPS" column counts multiply-adds).
double weight_layer_macs(const Workload& w) {
  double macs = 0;
  for (const auto& l : w.layers)
    if (l.op_class == OpClass::conv || l.op_class == OpClass::matmul) macs += l.flops_fwd / 2;
  return macs;
}

TEST(Zoo, ForwardMultiplyAddsWithinTwoPercentOfTorchvision) {
  const std::map<std::string, double> torchvision_gmacs{
      {"resnet50", 4.089}, {"resnet101", 7.801}, {"vgg16", 15.47}, {"alexnet", 0.714}, {"inception_v3", 5.713}};
  for (const auto& [model, gmacs] : torchvision_gmacs) {
    const Workload w = load_workload(model);
    EXPECT_NEAR(weight_layer_macs(w) / 1e9, gmacs, 0.02 * gmacs) << model;
    // Everything else (norms, activations, pooling) adds little on top.
    EXPECT_NEAR(w.forward_flops() / 2e9, gmacs, 0.02 * gmacs) << model;
  }
}

TEST(Zoo, FirstConvolutionHasNoInputGradient) {
  const Workload w = load_workload("resnet50");
  EXPECT_EQ(w.layers[1].name, "conv1");
  EXPECT_DOUBLE_EQ(w.layers[1].flops_bwd_input, 0);
  EXPECT_DOUBLE_EQ(w.layers[1].flops_bwd_weight, w.layers[1].flops_fwd);
  // conv1: 2·7·7·3·64·112·112
  EXPECT_DOUBLE_EQ(w.layers[1].flops_fwd, 2.0 * 7 * 7 * 3 * 64 * 112 * 112);
  EXPECT_DOUBLE_EQ(w.find_layer("layer1.0.conv2")->flops_bwd_input, w.find_layer("layer1.0.conv2")->flops_fwd);
}

TEST(Zoo, TransformersCountEveryToken) {
  const Workload bert = load_workload("bert_base");
  EXPECT_EQ(bert.layers.front().output_shape, (std::vector<std::int64_t>{128}));
  const Workload gpt = load_workload("gpt2");
  EXPECT_EQ(gpt.layers.front().output_shape, (std::vector<std::int64_t>{1024}));
  // ≈ 2·N·T for the weights (N without embeddings, plus the tied LM head) + attention 4·T²·D per layer.
  const double t = 1024, d = 768, n_blocks = 12 * (12 * d * d + 13 * d), head = 2 * t * d * 50257;
  const double matmuls = 2 * t * n_blocks + head + 12 * 4 * t * t * d;
  EXPECT_NEAR(gpt.forward_flops() / matmuls, 1.0, 0.03);
  EXPECT_EQ(gpt.find_layer("lm_head")->params, 0);
}

TEST(Zoo, AliasesResolve) {
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("resnet-50"), "resnet50");
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("ResNet_50"), "resnet50");
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("bert-base"), "bert_base");
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("gpt2-small"), "gpt2");
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("GPT2-XL"), "gpt2_xl");
  EXPECT_EQ(trainsim::workloads::zoo_canonical_name("inception-v3"), "inception_v3");
  EXPECT_FALSE(trainsim::workloads::zoo_canonical_name("resnet51").has_value());
  EXPECT_EQ(load_workload("bert_base").params(), load_workload("bert-base").params());
}

TEST(Zoo, DeterministicAndRoundTripsThroughTheFormat) {
  for (const char* model : {"googlenet", "gpt2"}) {
    const auto document = trainsim::workloads::zoo_layer_graph(model);
    EXPECT_EQ(document.dump(), trainsim::workloads::zoo_layer_graph(model).dump());
    const Workload from_text =
        trainsim::workloads::parse_layer_graph(trainsim::parse_json_text(document.dump(2), "exported.json"), "exported.json");
    const Workload zoo_model = load_workload(model);
    ASSERT_EQ(from_text.layers.size(), zoo_model.layers.size());
    EXPECT_EQ(from_text.params(), zoo_model.params());
    EXPECT_DOUBLE_EQ(from_text.forward_flops(), zoo_model.forward_flops());
    EXPECT_DOUBLE_EQ(from_text.backward_flops(), zoo_model.backward_flops());
  }
}

}  // namespace
