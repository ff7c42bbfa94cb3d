// Shape inference and the cost model of every layer type, per sample.
//
// Conventions (DESIGN.md "Workloads"):
//   * a multiply-add is 2 FLOPs; bias additions are not counted (they are fused into the GEMM /
//     convolution epilogue and are < 0.1% of any zoo model);
//   * backward = input gradient + weight gradient. The input gradient of a layer costs what its
//     forward costs ("edge" work below); it is dropped by the graph when no input of the layer
//     needs a gradient (the first convolution, anything fed only by data). Composite layers
//     (attention, transformer) also have "internal" input-gradient work that is always needed
//     because their own weights sit behind it. Weight gradients cost what the forward
//     multiply-adds cost for convolution, linear and attention projections; 2 FLOPs per element
//     (Σ dy·x̂ and Σ dy) for affine normalization; one add per output element for embeddings.
//   * elementwise, normalization and pooling layers have small FLOP counts but are memory-bound:
//     their element counts matter more than their FLOPs (the compute model uses both).
//   * saved activations: a layer's output, except views (flatten, reshape, slice: 0) and the
//     composites, which save their internal tensors (listed with their formulas).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "layer_spec.hpp"

namespace trainsim::workloads::detail {
namespace {

// FLOPs per element of the elementwise layers (forward; the input gradient costs the same).
constexpr double kReluFlops = 1;       // max(x, 0)
constexpr double kLeakyReluFlops = 2;  // compare, multiply
constexpr double kSigmoidFlops = 4;    // exp, add, divide, negate
constexpr double kTanhFlops = 4;
constexpr double kSiluFlops = 5;       // sigmoid and a multiply
constexpr double kGeluFlops = 8;       // tanh approximation: cube, 2 multiply-adds, tanh, scale
constexpr double kDropoutFlops = 2;    // draw the mask, multiply by mask/(1-p)
constexpr double kSoftmaxFlops = 5;    // max, subtract, exp, sum, divide
constexpr double kNormFlops = 5;       // mean, variance, subtract, divide, scale-and-shift
constexpr double kLossFlops = 6;       // softmax (5) and the log-likelihood of the label (1)

const std::map<std::string, double, std::less<>>& activation_flops() {
  static const std::map<std::string, double, std::less<>> table{
      {"relu", kReluFlops}, {"leaky_relu", kLeakyReluFlops}, {"sigmoid", kSigmoidFlops},
      {"tanh", kTanhFlops}, {"silu", kSiluFlops},           {"gelu", kGeluFlops}};
  return table;
}

const std::vector<std::string> kCommonKeys{"name", "type", "parents"};

// The type-specific keys of each layer type (besides name, type, parents).
const std::map<std::string, std::vector<std::string>>& type_keys() {
  static const std::map<std::string, std::vector<std::string>> table{
      {"input", {"shape"}},
      {"conv2d", {"out_channels", "in_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}},
      {"maxpool2d", {"kernel", "stride", "padding", "ceil_mode"}},
      {"avgpool2d", {"kernel", "stride", "padding", "ceil_mode"}},
      {"adaptive_avgpool2d", {"output_size"}},
      {"global_avgpool2d", {}},
      {"global_maxpool2d", {}},
      {"linear", {"out_features", "in_features", "bias", "tied_to"}},
      {"batchnorm", {"affine"}},
      {"layernorm", {"affine"}},
      {"relu", {}},
      {"leaky_relu", {}},
      {"sigmoid", {}},
      {"tanh", {}},
      {"silu", {}},
      {"gelu", {}},
      {"dropout", {"rate"}},
      {"add", {}},
      {"concat", {"axis"}},
      {"flatten", {}},
      {"reshape", {"shape"}},
      {"slice", {"axis", "start", "length"}},
      {"softmax", {}},
      {"loss", {"num_classes"}},
      {"embedding", {"num_embeddings", "dim"}},
      {"matmul", {"transpose_b"}},
      {"attention", {"heads", "bias", "causal"}},
      {"transformer", {"heads", "ffn_dim", "activation", "causal"}},
  };
  return table;
}

// An int ≥ min, or a [h, w] pair of them.
Pair2 read_pair(const JsonNode& node, std::int64_t min) {
  if (node.is_array()) {
    if (node.size() != 2) throw node.error("expected an integer or a [height, width] pair, got " + describe_json(node.raw()));
    return {node.element(0).int_at_least(min), node.element(1).int_at_least(min)};
  }
  if (!node.is_number()) throw node.error("expected an integer or a [height, width] pair, got " + describe_json(node.raw()));
  const std::int64_t v = node.int_at_least(min);
  return {v, v};
}

void read_padding(const JsonNode& node, LayerAttrs& attrs) {
  if (node.is_string()) {
    attrs.pad_mode = node.one_of({"same", "valid"}) == "same" ? PadMode::same : PadMode::valid;
    return;
  }
  attrs.padding = read_pair(node, 0);
  attrs.pad_mode = PadMode::explicit_size;
}

Shape read_shape(const JsonNode& node, bool allow_infer) {
  node.require_array();
  if (node.size() == 0) throw node.error("expected a non-empty array of sizes");
  Shape shape;
  int inferred = 0;
  for (const auto& element : node.elements()) {
    if (allow_infer && element.is_number() && element.as_int() == -1) {
      if (++inferred > 1) throw element.error("only one size may be -1");
      shape.push_back(-1);
      continue;
    }
    shape.push_back(element.int_at_least(1));
  }
  return shape;
}

std::int64_t normalize_axis(const LayerSpec& spec, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw spec.error_at("axis", "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank));
  return a;
}

void require_inputs(const LayerSpec& spec, const std::vector<Shape>& inputs, std::size_t min, std::size_t max) {
  if (inputs.size() >= min && inputs.size() <= max) return;
  std::string expected = min == max ? std::to_string(min) : (max == SIZE_MAX ? "at least " + std::to_string(min)
                                                                                 : std::to_string(min) + " to " + std::to_string(max));
  throw spec.error_at("parents", spec.type + " takes " + expected + " input(s), got " + std::to_string(inputs.size()));
}

void require_rank(const LayerSpec& spec, const Shape& input, std::size_t rank, const std::string& layout) {
  if (input.size() != rank)
    throw spec.error(spec.type + " needs a " + layout + " input, got shape " + shape_text(input));
}

// Output size of a convolution or pooling window along one dimension.
std::int64_t window_output(const LayerSpec& spec, const char* dim, std::int64_t in, std::int64_t kernel, std::int64_t stride,
                           std::int64_t pad, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  std::int64_t out = 0;
  switch (spec.attrs.pad_mode) {
    case PadMode::same: out = (in + stride - 1) / stride; break;                 // TensorFlow SAME
    case PadMode::valid: out = in >= span ? (in - span) / stride + 1 : 0; break;  // TensorFlow VALID
    case PadMode::explicit_size: {
      const std::int64_t room = in + 2 * pad - span;
      if (room < 0) {
        out = 0;
        break;
      }
      out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
      // PyTorch: with ceil_mode the last window must start inside the input or its left padding.
      if (ceil_mode && (out - 1) * stride >= in + pad) --out;
      break;
    }
  }
  if (out < 1)
    throw spec.error(std::string("the ") + dim + " window (" + std::to_string(span) + ") does not fit the input " + dim +
                     " " + std::to_string(in) + " with the given padding");
  return out;
}

LayerEstimate elementwise(const Shape& shape, double flops_per_element, OpClass op_class = OpClass::elementwise) {
  LayerEstimate e;
  e.output = shape;
  e.op_class = op_class;
  e.flops_fwd = flops_per_element * element_count(shape);
  e.flops_bwd_edge = e.flops_fwd;
  e.saved_elements = element_count(shape);
  return e;
}

// Multi-head self-attention on [T, D] with H heads, Q/K/V/output projections D×D.
//   forward  = 8·T·D² (projections) + 4·T²·D (scores QKᵀ, context PV) + 5·H·T² (softmax)
//   weights  = 8·T·D²
//   internal = 2·T·D² (output projection dX) + 8·T²·D (dQ, dK, dP, dV) + 5·H·T² (softmax)
//   edge     = 6·T·D² (dX through the Q, K, V projections)
//   saved    = 5·T·D (Q, K, V, context, output) + H·T² (probabilities)
// Causal masking is counted dense (as cuBLAS/cuDNN kernels without block skipping compute it).
LayerEstimate attention_costs(double t, double d, double heads, bool bias) {
  LayerEstimate e;
  e.op_class = OpClass::attention;
  e.has_weights = true;
  e.params = static_cast<std::int64_t>(4 * d * d + (bias ? 4 * d : 0));
  e.flops_fwd = 8 * t * d * d + 4 * t * t * d + kSoftmaxFlops * heads * t * t;
  e.flops_bwd_weight = 8 * t * d * d;
  e.flops_bwd_internal = 2 * t * d * d + 8 * t * t * d + kSoftmaxFlops * heads * t * t;
  e.flops_bwd_edge = 6 * t * d * d;
  e.saved_elements = 5 * t * d + heads * t * t;
  return e;
}

}  // namespace

double element_count(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), 1.0, [](double a, std::int64_t b) { return a * static_cast<double>(b); });
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

InputError LayerSpec::error(const std::string& detail) const {
  return node.error("layer '" + name + "': " + detail);
}

InputError LayerSpec::error_at(std::string_view key, const std::string& detail) const {
  if (auto member = node.is_object() ? node.find(key) : std::nullopt) return member->error("layer '" + name + "': " + detail);
  return error(detail);
}

const std::vector<std::string>& layer_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [type, keys] : type_keys()) out.push_back(type);
    return out;
  }();
  return names;
}

void read_layer_attrs(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  const auto& keys = type_keys().at(spec.type);
  std::vector<std::string> allowed = kCommonKeys;
  allowed.insert(allowed.end(), keys.begin(), keys.end());
  node.allow_only(allowed);
  LayerAttrs& a = spec.attrs;
  const std::string& t = spec.type;

  if (t == "input") a.shape = read_shape(node.at("shape"), false);
  if (t == "reshape") a.shape = read_shape(node.at("shape"), true);
  if (t == "conv2d") {
    a.units = node.at("out_channels").int_at_least(1);
    a.kernel = read_pair(node.at("kernel"), 1);
    if (auto v = node.find("in_channels")) a.in_units = v->int_at_least(1);
    if (auto v = node.find("dilation")) a.dilation = read_pair(*v, 1);
    if (auto v = node.find("groups")) a.groups = v->int_at_least(1);
  }
  if (t == "conv2d" || t == "maxpool2d" || t == "avgpool2d") {
    if (t != "conv2d") a.kernel = read_pair(node.at("kernel"), 1);
    a.stride = t == "conv2d" ? Pair2{1, 1} : a.kernel;  // pooling stride defaults to the kernel (PyTorch)
    if (auto v = node.find("stride")) a.stride = read_pair(*v, 1);
    if (auto v = node.find("padding")) read_padding(*v, a);
  }
  if (auto v = node.find("ceil_mode")) a.ceil_mode = v->as_bool();
  if (t == "adaptive_avgpool2d") a.output_size = read_pair(node.at("output_size"), 1);
  if (t == "linear") {
    a.units = node.at("out_features").int_at_least(1);
    if (auto v = node.find("in_features")) a.in_units = v->int_at_least(1);
    if (auto v = node.find("tied_to")) a.tied_to = v->as_string();
  }
  if (auto v = node.find("bias")) a.bias = v->as_bool();
  if (auto v = node.find("affine")) a.affine = v->as_bool();
  if (t == "dropout") {
    if (auto v = node.find("rate")) {
      a.rate = v->number_in(0, 1);
      if (a.rate >= 1) throw v->error("layer '" + spec.name + "': must be < 1 (a dropout rate of 1 drops everything)");
    }
  }
  if (auto v = node.find("axis")) a.axis = v->as_int();
  if (t == "slice") {
    if (auto v = node.find("start")) a.start = v->int_at_least(0);
    if (auto v = node.find("length")) a.length = v->int_at_least(1);
  }
  if (t == "loss")
    if (auto v = node.find("num_classes")) a.units = v->int_at_least(1);
  if (t == "embedding") {
    a.num_embeddings = node.at("num_embeddings").int_at_least(1);
    a.units = node.at("dim").int_at_least(1);
  }
  if (auto v = node.find("transpose_b")) a.transpose_b = v->as_bool();
  if (t == "attention" || t == "transformer") a.heads = node.at("heads").int_at_least(1);
  if (auto v = node.find("causal")) a.causal = v->as_bool();
  if (auto v = node.find("ffn_dim")) a.ffn_dim = v->int_at_least(1);
  if (auto v = node.find("activation")) a.activation = v->one_of({"gelu", "relu", "silu"});
}

Shape weight_matrix_shape(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  if (spec.type == "embedding") return {spec.attrs.num_embeddings, spec.attrs.units};
  if (spec.type == "linear" && inputs.size() == 1 && !inputs[0].empty()) {
    const std::int64_t in = spec.attrs.flatten_input ? static_cast<std::int64_t>(element_count(inputs[0])) : inputs[0].back();
    return {spec.attrs.units, in};
  }
  return {};
}

LayerEstimate estimate_layer(const LayerSpec& spec, const std::vector<Shape>& inputs, const Shape& tied_weight) {
  const LayerAttrs& a = spec.attrs;
  const std::string& t = spec.type;
  double in_elements = 0;
  for (const auto& s : inputs) in_elements += element_count(s);

  if (t == "input") {
    require_inputs(spec, inputs, 0, 0);
    LayerEstimate e;
    e.output = a.shape;
    e.op_class = OpClass::data;
    e.saved_elements = element_count(a.shape);
    return e;
  }
  if (inputs.empty()) throw spec.error_at("parents", t + " needs at least one parent");
  const Shape& x = inputs.front();

  if (t == "conv2d") {
    // forward = 2·kh·kw·(Cin/groups)·Cout·Hout·Wout; params = kh·kw·(Cin/groups)·Cout (+ Cout bias)
    require_inputs(spec, inputs, 1, 1);
    require_rank(spec, x, 3, "[channels, height, width]");
    const std::int64_t cin = x[0];
    if (a.in_units != 0 && a.in_units != cin)
      throw spec.error_at(spec.node.raw().contains("filter") ? "filter" : "in_channels",  // Paleo: filter[2]
                          "declares " + std::to_string(a.in_units) + " input channels but its input " + shape_text(x) + " has " +
                              std::to_string(cin));
    if (cin % a.groups != 0 || a.units % a.groups != 0)
      throw spec.error_at("groups", "groups = " + std::to_string(a.groups) + " must divide the input channels (" + std::to_string(cin) +
                                        ") and out_channels (" + std::to_string(a.units) + ")");
    const std::int64_t ho = window_output(spec, "height", x[1], a.kernel.h, a.stride.h, a.padding.h, a.dilation.h, false);
    const std::int64_t wo = window_output(spec, "width", x[2], a.kernel.w, a.stride.w, a.padding.w, a.dilation.w, false);
    LayerEstimate e;
    e.output = {a.units, ho, wo};
    e.op_class = OpClass::conv;
    e.has_weights = true;
    const std::int64_t weights = a.kernel.h * a.kernel.w * (cin / a.groups) * a.units;
    e.params = weights + (a.bias ? a.units : 0);
    e.flops_fwd = 2.0 * static_cast<double>(weights) * static_cast<double>(ho * wo);
    e.flops_bwd_edge = e.flops_fwd;
    e.flops_bwd_weight = e.flops_fwd;
    e.saved_elements = element_count(e.output);
    return e;
  }
  if (t == "maxpool2d" || t == "avgpool2d") {
    // kh·kw comparisons or additions per output element.
    require_inputs(spec, inputs, 1, 1);
    require_rank(spec, x, 3, "[channels, height, width]");
    const std::int64_t ho = window_output(spec, "height", x[1], a.kernel.h, a.stride.h, a.padding.h, 1, a.ceil_mode);
    const std::int64_t wo = window_output(spec, "width", x[2], a.kernel.w, a.stride.w, a.padding.w, 1, a.ceil_mode);
    const Shape out{x[0], ho, wo};
    return elementwise(out, static_cast<double>(a.kernel.h * a.kernel.w), OpClass::pooling);
  }
  if (t == "adaptive_avgpool2d" || t == "global_avgpool2d" || t == "global_maxpool2d") {
    // Every input element is read and added (or compared) once.
    require_inputs(spec, inputs, 1, 1);
    require_rank(spec, x, 3, "[channels, height, width]");
    const Pair2 out = t == "adaptive_avgpool2d" ? a.output_size : Pair2{1, 1};
    LayerEstimate e = elementwise({x[0], out.h, out.w}, 0, OpClass::pooling);
    e.flops_fwd = element_count(x);
    e.flops_bwd_edge = e.flops_fwd;
    return e;
  }
  if (t == "linear") {
    // forward = 2·rows·in·out, rows = all leading positions (tokens); params = in·out (+ out bias),
    // or only the bias when the weight is tied to another layer's (it still gets a gradient).
    require_inputs(spec, inputs, 1, 1);
    const std::int64_t in = a.flatten_input ? static_cast<std::int64_t>(element_count(x)) : x.back();
    if (a.in_units != 0 && a.in_units != in)
      throw spec.error("declares " + std::to_string(a.in_units) + " input features but its input " + shape_text(x) + " has " +
                       std::to_string(in));
    if (!a.tied_to.empty() && (tied_weight.size() != 2 || tied_weight[0] != a.units || tied_weight[1] != in))
      throw spec.error_at("tied_to", "its weight [" + std::to_string(a.units) + ", " + std::to_string(in) +
                                         "] (out_features, in_features) does not match the weight " + shape_text(tied_weight) +
                                         " of layer '" + a.tied_to + "'");
    LayerEstimate e;
    e.output = a.flatten_input ? Shape{} : Shape(x.begin(), x.end() - 1);
    e.output.push_back(a.units);
    e.op_class = OpClass::matmul;
    e.has_weights = true;
    const double rows = element_count(x) / static_cast<double>(in);
    e.params = (a.tied_to.empty() ? in * a.units : 0) + (a.bias ? a.units : 0);
    e.flops_fwd = 2.0 * rows * static_cast<double>(in) * static_cast<double>(a.units);
    e.flops_bwd_edge = e.flops_fwd;
    e.flops_bwd_weight = e.flops_fwd;
    e.saved_elements = element_count(e.output);
    return e;
  }
  if (t == "batchnorm" || t == "layernorm") {
    // batchnorm: per channel (dim 0); layernorm: over the last dim. Affine: 2 parameters per
    // normalized feature, weight gradient 2 FLOPs per element.
    require_inputs(spec, inputs, 1, 1);
    LayerEstimate e = elementwise(x, kNormFlops, OpClass::normalization);
    if (a.affine) {
      e.has_weights = true;
      e.params = 2 * (t == "batchnorm" ? x.front() : x.back());
      e.flops_bwd_weight = 2 * element_count(x);
    }
    return e;
  }
  if (auto it = activation_flops().find(t); it != activation_flops().end()) {
    require_inputs(spec, inputs, 1, 1);
    return elementwise(x, it->second);
  }
  if (t == "dropout") {
    require_inputs(spec, inputs, 1, 1);
    return elementwise(x, kDropoutFlops);
  }
  if (t == "softmax") {
    require_inputs(spec, inputs, 1, 1);
    return elementwise(x, kSoftmaxFlops);
  }
  if (t == "add") {
    // (n − 1) additions per element for n inputs of one shape.
    require_inputs(spec, inputs, 2, SIZE_MAX);
    for (std::size_t i = 1; i < inputs.size(); ++i)
      if (inputs[i] != x)
        throw spec.error_at("parents", "add needs inputs of the same shape, but '" + spec.parents[0] + "' gives " + shape_text(x) +
                                           " and '" + spec.parents[i] + "' gives " + shape_text(inputs[i]));
    return elementwise(x, static_cast<double>(inputs.size() - 1));
  }
  if (t == "concat") {
    // A copy: no FLOPs, bytes in = bytes out.
    require_inputs(spec, inputs, 1, SIZE_MAX);
    // Paleo counts NHWC dimensions with the batch first: channels (3) are our axis 0 of [C, H, W].
    std::int64_t axis = a.axis;
    if (a.nhwc_axis) axis = x.size() == 3 ? (axis == 3 ? 0 : axis) : axis - 1;
    if (a.nhwc_axis && axis < 0) throw spec.error_at("dim", "cannot concatenate over the batch dimension");
    axis = normalize_axis(spec, axis, x.size());
    Shape out = x;
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      const Shape& s = inputs[i];
      bool compatible = s.size() == x.size();
      for (std::size_t d = 0; compatible && d < s.size(); ++d)
        compatible = static_cast<std::int64_t>(d) == axis || s[d] == x[d];
      if (!compatible)
        throw spec.error_at("parents", "concat over axis " + std::to_string(axis) + " needs all other dimensions equal, but '" +
                                           spec.parents[0] + "' gives " + shape_text(x) + " and '" + spec.parents[i] + "' gives " +
                                           shape_text(s));
      out[static_cast<std::size_t>(axis)] += s[static_cast<std::size_t>(axis)];
    }
    return elementwise(out, 0);
  }
  if (t == "flatten" || t == "reshape" || t == "slice") {
    // Views: no FLOPs, nothing saved.
    require_inputs(spec, inputs, 1, 1);
    Shape out;
    if (t == "flatten") out = {static_cast<std::int64_t>(element_count(x))};
    if (t == "reshape") {
      out = a.shape;
      const double known = -element_count(out);  // the -1, if any, makes the product negative
      const auto infer = std::find(out.begin(), out.end(), -1);
      if (infer != out.end() && known > 0 && std::fmod(element_count(x), known) == 0)
        *infer = static_cast<std::int64_t>(element_count(x) / known);
      if (element_count(out) != element_count(x))
        throw spec.error_at("shape", "cannot reshape " + shape_text(x) + " (" + std::to_string(static_cast<std::int64_t>(element_count(x))) +
                                         " elements) into " + shape_text(a.shape));
    }
    if (t == "slice") {
      const auto axis = static_cast<std::size_t>(normalize_axis(spec, a.axis, x.size()));
      if (a.start + a.length > x[axis])
        throw spec.error("slice [" + std::to_string(a.start) + ", " + std::to_string(a.start + a.length) + ") exceeds size " +
                         std::to_string(x[axis]) + " of axis " + std::to_string(axis) + " of its input " + shape_text(x));
      out = x;
      out[axis] = a.length;
    }
    LayerEstimate e = elementwise(out, 0, OpClass::reshape);
    e.saved_elements = 0;
    return e;
  }
  if (t == "loss") {
    // Softmax cross-entropy: one value per sample.
    require_inputs(spec, inputs, 1, 1);
    if (a.units != 0 && a.units != x.back() && static_cast<double>(a.units) != element_count(x))
      throw spec.error_at("num_classes", "num_classes = " + std::to_string(a.units) + " matches neither the elements nor the last dimension of its input " +
                                             shape_text(x));
    LayerEstimate e;
    e.output = {1};
    e.op_class = OpClass::loss;
    e.flops_fwd = kLossFlops * element_count(x);
    e.flops_bwd_edge = e.flops_fwd;
    e.saved_elements = 1;
    return e;
  }
  if (t == "embedding") {
    // A gather of rows: no FLOPs forward; the weight gradient scatter-adds every output element;
    // token ids have no gradient.
    require_inputs(spec, inputs, 1, 1);
    LayerEstimate e;
    e.output = x;
    e.output.push_back(a.units);
    e.op_class = OpClass::embedding;
    e.has_weights = true;
    e.params = a.num_embeddings * a.units;
    e.flops_bwd_weight = element_count(e.output);
    e.saved_elements = element_count(e.output);
    return e;
  }
  if (t == "matmul") {
    // [..., M, K] × [..., K, N] (or [..., N, K] with transpose_b) = 2·batch·M·K·N; the input
    // gradient covers both operands (2 × forward).
    require_inputs(spec, inputs, 2, 2);
    const Shape& b = inputs[1];
    if (x.size() < 2 || b.size() != x.size() || !std::equal(x.begin(), x.end() - 2, b.begin()))
      throw spec.error_at("parents", "matmul needs two inputs of equal rank ≥ 2 with equal leading dimensions, got " + shape_text(x) +
                                         " and " + shape_text(b));
    const std::int64_t m = x[x.size() - 2], k = x.back();
    const std::int64_t kb = a.transpose_b ? b.back() : b[b.size() - 2];
    const std::int64_t n = a.transpose_b ? b[b.size() - 2] : b.back();
    if (k != kb)
      throw spec.error_at("parents", "matmul inner dimensions differ: " + shape_text(x) + " × " + shape_text(b) +
                                         (a.transpose_b ? "ᵀ" : ""));
    LayerEstimate e;
    e.output = Shape(x.begin(), x.end() - 1);
    e.output.push_back(n);
    e.op_class = OpClass::matmul;
    e.flops_fwd = 2.0 * element_count(Shape(x.begin(), x.end() - 2)) * static_cast<double>(m * k * n);
    e.flops_bwd_edge = 2 * e.flops_fwd;
    e.saved_elements = element_count(e.output);
    return e;
  }
  if (t == "attention" || t == "transformer") {
    require_inputs(spec, inputs, 1, 1);
    require_rank(spec, x, 2, "[tokens, model dim]");
    if (x[1] % a.heads != 0)
      throw spec.error_at("heads", "heads = " + std::to_string(a.heads) + " must divide the model dimension " + std::to_string(x[1]));
    const double tokens = static_cast<double>(x[0]), d = static_cast<double>(x[1]), heads = static_cast<double>(a.heads);
    if (t == "attention") {
      LayerEstimate e = attention_costs(tokens, d, heads, a.bias);
      e.output = x;
      return e;
    }
    // Transformer block (BERT post-LN or GPT-2 pre-LN: the same costs): attention, two layer
    // norms, two residual adds, feed-forward D→F→D with activation a, all with biases.
    //   params   = attention(4D² + 4D) + 2·2D + 2·D·F + F + D     (= 12D² + 13D for F = 4D)
    //   forward  = attention + 2·5·T·D (norms) + 2·T·D (adds) + 4·T·D·F + a·T·F
    //   weights  = 8·T·D² + 4·T·D·F + 2·2·T·D
    //   internal = attention internal + edge of its Q/K/V projections (they read a norm or the
    //              residual stream, both inside the block's graph) — counted as the block's edge —
    //              + 10·T·D + 2·T·D + 4·T·D·F (dX of both FFN linears) + a·T·F
    //   saved    = attention saved + 2·T·D (norm outputs) + T·D (residual) + 2·T·F (FFN hidden) + T·D
    const double f = static_cast<double>(a.ffn_dim != 0 ? a.ffn_dim : 4 * x[1]);
    const double act = activation_flops().at(a.activation);
    LayerEstimate e = attention_costs(tokens, d, heads, true);
    e.output = x;
    e.params += static_cast<std::int64_t>(2 * 2 * d + 2 * d * f + f + d);
    e.flops_fwd += 2 * kNormFlops * tokens * d + 2 * tokens * d + 4 * tokens * d * f + act * tokens * f;
    e.flops_bwd_weight += 4 * tokens * d * f + 2 * 2 * tokens * d;
    e.flops_bwd_internal += 2 * kNormFlops * tokens * d + 2 * tokens * d + 4 * tokens * d * f + act * tokens * f;
    e.saved_elements += 4 * tokens * d + 2 * tokens * f;
    return e;
  }
  throw spec.error_at("type", "no cost model for layer type '" + t + "'");
}

}  // namespace trainsim::workloads::detail
