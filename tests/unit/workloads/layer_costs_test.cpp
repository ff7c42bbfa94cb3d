// Cost formulas on small layers computed by hand (the figures in the comments are the oracle).
#include <gtest/gtest.h>

#include "trainsim/workloads/layer_graph.hpp"

namespace {

using trainsim::parse_json_text;
using trainsim::Precision;
using trainsim::workloads::LayerCost;
using trainsim::workloads::OpClass;
using trainsim::workloads::parse_layer_graph;
using trainsim::workloads::Workload;

Workload parse(const std::string& layers) {
  return parse_layer_graph(parse_json_text(R"({"name": "t", "layers": )" + layers + "}", "test.json"), "test.json");
}

const LayerCost& layer(const Workload& w, const std::string& name) {
  const LayerCost* l = w.find_layer(name);
  if (l == nullptr) throw std::runtime_error("no layer " + name);
  return *l;
}

TEST(LayerCosts, GroupedStridedConvolution) {
  const Workload w = parse(R"([
    {"name": "data", "type": "input", "shape": [3, 10, 10]},
    {"name": "pointwise", "type": "conv2d", "out_channels": 8, "kernel": 1},
    {"name": "grouped", "type": "conv2d", "out_channels": 4, "kernel": 3, "stride": 2, "padding": 1, "groups": 2}])");
  // pointwise: 3·8 weights + 8 biases; 2·1·1·3·8·10·10 = 4800 FLOPs; first layer: no input gradient.
  const LayerCost& p = layer(w, "pointwise");
  EXPECT_EQ(p.params, 32);
  EXPECT_DOUBLE_EQ(p.flops_fwd, 4800);
  EXPECT_DOUBLE_EQ(p.flops_bwd_input, 0);
  EXPECT_DOUBLE_EQ(p.flops_bwd_weight, 4800);
  EXPECT_EQ(p.op_class, OpClass::conv);
  // grouped: Hout = ⌊(10 + 2·1 − 3)/2⌋ + 1 = 5; weights 3·3·(8/2)·4 = 144 (+4 biases);
  // FLOPs 2·144·5·5 = 7200 forward, the same again for each gradient.
  const LayerCost& g = layer(w, "grouped");
  EXPECT_EQ(g.output_shape, (std::vector<std::int64_t>{4, 5, 5}));
  EXPECT_EQ(g.params, 148);
  EXPECT_DOUBLE_EQ(g.flops_fwd, 7200);
  EXPECT_DOUBLE_EQ(g.flops_bwd_input, 7200);
  EXPECT_DOUBLE_EQ(g.flops_bwd_weight, 7200);
  EXPECT_DOUBLE_EQ(g.input_elements, 800);
  EXPECT_DOUBLE_EQ(g.output_elements, 100);
  EXPECT_DOUBLE_EQ(g.saved_elements, 100);
  EXPECT_DOUBLE_EQ(g.activation_bytes(Precision::fp32), 400);
  EXPECT_DOUBLE_EQ(g.activation_bytes(Precision::bf16), 200);
  EXPECT_DOUBLE_EQ(g.weight_bytes(Precision::fp16), 296);
  EXPECT_EQ(w.params(), 180);
  EXPECT_DOUBLE_EQ(w.forward_flops(), 12000);
  EXPECT_DOUBLE_EQ(w.backward_flops(), 4800 + 7200 + 7200);
}

TEST(LayerCosts, ConvolutionPaddingModesAndDilation) {
  const Workload w = parse(R"([
    {"name": "data", "type": "input", "shape": [1, 10, 10]},
    {"name": "same", "type": "conv2d", "parents": ["data"], "out_channels": 1, "kernel": 3, "stride": 2, "padding": "same"},
    {"name": "valid", "type": "conv2d", "parents": ["data"], "out_channels": 1, "kernel": 3, "stride": 2, "padding": "valid"},
    {"name": "dilated", "type": "conv2d", "parents": ["data"], "out_channels": 1, "kernel": 3, "dilation": 2, "bias": false},
    {"name": "rect", "type": "conv2d", "parents": ["data"], "out_channels": 2, "kernel": [1, 7], "padding": [0, 3]}])");
  EXPECT_EQ(layer(w, "same").output_shape, (std::vector<std::int64_t>{1, 5, 5}));     // ⌈10/2⌉
  EXPECT_EQ(layer(w, "valid").output_shape, (std::vector<std::int64_t>{1, 4, 4}));    // ⌊(10−3)/2⌋+1
  EXPECT_EQ(layer(w, "dilated").output_shape, (std::vector<std::int64_t>{1, 6, 6}));  // span 5: 10−5+1
  EXPECT_EQ(layer(w, "dilated").params, 9);
  EXPECT_EQ(layer(w, "rect").output_shape, (std::vector<std::int64_t>{2, 10, 10}));
  EXPECT_DOUBLE_EQ(layer(w, "rect").flops_fwd, 2.0 * 7 * 2 * 100);
}

TEST(LayerCosts, LinearOverTokens) {
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [5, 16]},
    {"name": "fc1", "type": "linear", "out_features": 32},
    {"name": "fc2", "type": "linear", "out_features": 8, "bias": false}])");
  // fc1: 16·32 + 32 = 544 params; 2·5·16·32 = 5120 FLOPs per sample (5 tokens).
  EXPECT_EQ(layer(w, "fc1").params, 544);
  EXPECT_EQ(layer(w, "fc1").output_shape, (std::vector<std::int64_t>{5, 32}));
  EXPECT_DOUBLE_EQ(layer(w, "fc1").flops_fwd, 5120);
  EXPECT_DOUBLE_EQ(layer(w, "fc1").flops_bwd_input, 0);
  EXPECT_DOUBLE_EQ(layer(w, "fc1").flops_bwd_weight, 5120);
  EXPECT_EQ(layer(w, "fc1").op_class, OpClass::matmul);
  // fc2: 32·8 = 256 params; 2·5·32·8 = 2560 FLOPs, and an input gradient (fc1 has weights).
  EXPECT_EQ(layer(w, "fc2").params, 256);
  EXPECT_DOUBLE_EQ(layer(w, "fc2").flops_fwd, 2560);
  EXPECT_DOUBLE_EQ(layer(w, "fc2").flops_bwd_input, 2560);
}

TEST(LayerCosts, MultiHeadSelfAttention) {
  // T = 4 tokens, D = 8, H = 2 heads.
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [4, 8]},
    {"name": "first", "type": "attention", "parents": ["x"], "heads": 2},
    {"name": "proj", "type": "linear", "parents": ["x"], "out_features": 8},
    {"name": "second", "type": "attention", "parents": ["proj"], "heads": 2, "causal": true}])");
  const LayerCost& a = layer(w, "first");
  EXPECT_EQ(a.params, 4 * 64 + 4 * 8);                           // Q, K, V, output: D² + D each
  EXPECT_DOUBLE_EQ(a.flops_fwd, 8 * 4 * 64 + 4 * 16 * 8 + 5 * 2 * 16);  // 2048 + 512 + 160 = 2720
  EXPECT_DOUBLE_EQ(a.flops_bwd_weight, 2048);                    // 8·T·D²
  EXPECT_DOUBLE_EQ(a.flops_bwd_input, 2 * 4 * 64 + 8 * 16 * 8 + 5 * 2 * 16);  // internal only: 1696
  EXPECT_DOUBLE_EQ(a.saved_elements, 5 * 32 + 2 * 16);
  EXPECT_EQ(a.op_class, OpClass::attention);
  // Fed by a layer with weights, the gradient through the Q/K/V projections (6·T·D²) is added.
  EXPECT_DOUBLE_EQ(layer(w, "second").flops_bwd_input, 1696 + 6 * 4 * 64);
  EXPECT_DOUBLE_EQ(layer(w, "second").flops_fwd, 2720);  // causal attention is counted dense
}

TEST(LayerCosts, TransformerBlock) {
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [4, 8]},
    {"name": "block", "type": "transformer", "heads": 2},
    {"name": "narrow", "type": "transformer", "heads": 4, "ffn_dim": 16, "activation": "relu"}])");
  // 12·D² + 13·D for the default feed-forward width 4·D = 32.
  EXPECT_EQ(layer(w, "block").params, 12 * 64 + 13 * 8);
  // attention 2720 + norms 2·5·32 + adds 2·32 + FFN 4·4·8·32 + GELU 8·4·32
  EXPECT_DOUBLE_EQ(layer(w, "block").flops_fwd, 2720 + 320 + 64 + 4096 + 1024);
  EXPECT_DOUBLE_EQ(layer(w, "block").flops_bwd_weight, 2048 + 4096 + 128);
  // attention (288) + norms (32) + FFN 2·8·16 + 16 + 8
  EXPECT_EQ(layer(w, "narrow").params, 288 + 32 + 256 + 24);
}

TEST(LayerCosts, PoolingWindowsAndCeilMode) {
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [2, 112, 112]},
    {"name": "floor", "type": "maxpool2d", "parents": ["x"], "kernel": 3, "stride": 2},
    {"name": "ceil", "type": "maxpool2d", "parents": ["x"], "kernel": 3, "stride": 2, "ceil_mode": true},
    {"name": "avg", "type": "avgpool2d", "parents": ["x"], "kernel": 2},
    {"name": "adaptive", "type": "adaptive_avgpool2d", "parents": ["x"], "output_size": [7, 7]},
    {"name": "global", "type": "global_maxpool2d", "parents": ["x"]}])");
  EXPECT_EQ(layer(w, "floor").output_shape, (std::vector<std::int64_t>{2, 55, 55}));
  EXPECT_EQ(layer(w, "ceil").output_shape, (std::vector<std::int64_t>{2, 56, 56}));
  EXPECT_EQ(layer(w, "avg").output_shape, (std::vector<std::int64_t>{2, 56, 56}));  // stride defaults to the kernel
  EXPECT_DOUBLE_EQ(layer(w, "avg").flops_fwd, 4.0 * 2 * 56 * 56);                   // kh·kw per output
  EXPECT_EQ(layer(w, "adaptive").output_shape, (std::vector<std::int64_t>{2, 7, 7}));
  EXPECT_EQ(layer(w, "global").output_shape, (std::vector<std::int64_t>{2, 1, 1}));
  EXPECT_DOUBLE_EQ(layer(w, "global").flops_fwd, 2.0 * 112 * 112);
  EXPECT_EQ(layer(w, "global").op_class, OpClass::pooling);
  // Nothing before the pools has weights: no input gradients at all.
  EXPECT_DOUBLE_EQ(w.backward_flops(), 0);
}

TEST(LayerCosts, NormalizationActivationsAndViews) {
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [4, 6, 6]},
    {"name": "conv", "type": "conv2d", "out_channels": 4, "kernel": 1},
    {"name": "bn", "type": "batchnorm"},
    {"name": "act", "type": "gelu"},
    {"name": "drop", "type": "dropout", "rate": 0.1},
    {"name": "flat", "type": "flatten"},
    {"name": "shape", "type": "reshape", "shape": [-1, 12]},
    {"name": "ln", "type": "layernorm", "affine": false},
    {"name": "soft", "type": "softmax"},
    {"name": "loss", "type": "loss", "num_classes": 12}])");
  EXPECT_EQ(layer(w, "bn").params, 8);  // γ and β per channel
  EXPECT_DOUBLE_EQ(layer(w, "bn").flops_fwd, 5.0 * 144);
  EXPECT_DOUBLE_EQ(layer(w, "bn").flops_bwd_weight, 2.0 * 144);
  EXPECT_DOUBLE_EQ(layer(w, "bn").flops_bwd_input, 5.0 * 144);
  EXPECT_EQ(layer(w, "bn").op_class, OpClass::normalization);
  EXPECT_DOUBLE_EQ(layer(w, "act").flops_fwd, 8.0 * 144);
  EXPECT_DOUBLE_EQ(layer(w, "drop").flops_fwd, 2.0 * 144);
  EXPECT_EQ(layer(w, "flat").output_shape, (std::vector<std::int64_t>{144}));
  EXPECT_DOUBLE_EQ(layer(w, "flat").saved_elements, 0);
  EXPECT_EQ(layer(w, "flat").op_class, OpClass::reshape);
  EXPECT_EQ(layer(w, "shape").output_shape, (std::vector<std::int64_t>{12, 12}));
  EXPECT_EQ(layer(w, "ln").params, 0);
  EXPECT_DOUBLE_EQ(layer(w, "ln").flops_bwd_weight, 0);
  EXPECT_DOUBLE_EQ(layer(w, "soft").flops_fwd, 5.0 * 144);
  EXPECT_EQ(layer(w, "loss").output_shape, (std::vector<std::int64_t>{1}));
  EXPECT_DOUBLE_EQ(layer(w, "loss").flops_fwd, 6.0 * 144);
  EXPECT_EQ(layer(w, "loss").op_class, OpClass::loss);
}

TEST(LayerCosts, AddConcatAndMatmul) {
  const Workload w = parse(R"([
    {"name": "x", "type": "input", "shape": [2, 3, 4]},
    {"name": "y", "type": "input", "shape": [2, 4, 5]},
    {"name": "mm", "type": "matmul", "parents": ["x", "y"]},
    {"name": "mm_t", "type": "matmul", "parents": ["mm", "mm"], "transpose_b": true},
    {"name": "sum", "type": "add", "parents": ["mm", "mm", "mm"]},
    {"name": "cat", "type": "concat", "parents": ["mm", "sum"], "axis": -1},
    {"name": "row", "type": "slice", "parents": ["cat"], "axis": 1, "start": 2, "length": 1}])");
  EXPECT_EQ(layer(w, "mm").output_shape, (std::vector<std::int64_t>{2, 3, 5}));
  EXPECT_DOUBLE_EQ(layer(w, "mm").flops_fwd, 2.0 * 2 * 3 * 4 * 5);
  EXPECT_DOUBLE_EQ(layer(w, "mm").flops_bwd_input, 0);  // both operands are data
  EXPECT_EQ(layer(w, "mm_t").output_shape, (std::vector<std::int64_t>{2, 3, 3}));
  EXPECT_DOUBLE_EQ(layer(w, "sum").flops_fwd, 2.0 * 30);  // two additions per element
  EXPECT_EQ(layer(w, "cat").output_shape, (std::vector<std::int64_t>{2, 3, 10}));
  EXPECT_DOUBLE_EQ(layer(w, "cat").flops_fwd, 0);
  EXPECT_DOUBLE_EQ(layer(w, "cat").input_elements, 60);
  EXPECT_EQ(layer(w, "row").output_shape, (std::vector<std::int64_t>{2, 1, 10}));
}

TEST(LayerCosts, EmbeddingAndTiedHead) {
  const Workload w = parse(R"([
    {"name": "tokens", "type": "input", "shape": [3]},
    {"name": "wte", "type": "embedding", "num_embeddings": 10, "dim": 4},
    {"name": "head", "type": "linear", "out_features": 10, "bias": false, "tied_to": "wte"}])");
  EXPECT_EQ(layer(w, "wte").params, 40);
  EXPECT_EQ(layer(w, "wte").output_shape, (std::vector<std::int64_t>{3, 4}));
  EXPECT_DOUBLE_EQ(layer(w, "wte").flops_fwd, 0);
  EXPECT_DOUBLE_EQ(layer(w, "wte").flops_bwd_weight, 12);  // scatter-add of the output gradient
  EXPECT_DOUBLE_EQ(layer(w, "wte").flops_bwd_input, 0);    // token ids have no gradient
  EXPECT_EQ(layer(w, "wte").op_class, OpClass::embedding);
  EXPECT_EQ(layer(w, "head").params, 0);  // shares wte's weight
  EXPECT_DOUBLE_EQ(layer(w, "head").flops_fwd, 2.0 * 3 * 4 * 10);
  EXPECT_DOUBLE_EQ(layer(w, "head").flops_bwd_weight, 240);
  EXPECT_DOUBLE_EQ(layer(w, "head").flops_bwd_input, 240);
  EXPECT_EQ(w.params(), 40);
}

}  // namespace
