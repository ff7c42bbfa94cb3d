// The layer-type registry: for every type of the layer-graph format, its keys, its reader, its
// shape inference and cost model (per sample), and its shareable weight matrix if it has one.
// Each type's functions stand together below, its cost formulas beside them; registry() at the
// end is the one table that lists the types. Adding a type is adding its functions and one entry.
//
// Conventions (workloads/README.md):
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
#include <functional>
#include <map>
#include <numeric>

#include "layer_spec.hpp"

namespace trainsim::workloads::detail {
namespace {

using Inputs = std::vector<Shape>;

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

const std::vector<std::string> kCommonKeys{"name", "type", "parents"};

// ---- Readers and checks shared by several types ----

// An int ≥ min, or a [h, w] pair of them.
Pair2 read_pair(const JsonNode& node, std::int64_t min) {
  if (node.is_array()) {
    if (node.size() != 2) throw node.error("expected an integer or a [height, width] pair, got " + describe_json(node.raw()));
    return {read_size(node.element(0), min), read_size(node.element(1), min)};
  }
  if (!node.is_number()) throw node.error("expected an integer or a [height, width] pair, got " + describe_json(node.raw()));
  const std::int64_t v = read_size(node, min);
  return {v, v};
}

Padding read_padding(const JsonNode& node) {
  if (node.is_string()) return {node.one_of({"same", "valid"}) == "same" ? PadMode::same : PadMode::valid, {0, 0}};
  return {PadMode::explicit_size, read_pair(node, 0)};
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
    shape.push_back(read_size(element, 1));
  }
  return shape;
}

NoAttrs read_nothing(LayerSpec&) { return {}; }

std::int64_t normalize_axis(const LayerSpec& spec, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw spec.error_at("axis", "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank));
  return a;
}

void require_inputs(const LayerSpec& spec, const Inputs& inputs, std::size_t min, std::size_t max) {
  if (inputs.size() >= min && inputs.size() <= max) return;
  std::string expected = min == max ? std::to_string(min) : (max == SIZE_MAX ? "at least " + std::to_string(min)
                                                                                 : std::to_string(min) + " to " + std::to_string(max));
  throw spec.error_at("parents", spec.type + " takes " + expected + " input(s), got " + std::to_string(inputs.size()));
}

void require_rank(const LayerSpec& spec, const Shape& input, std::size_t rank, const std::string& layout) {
  if (input.size() != rank)
    throw spec.error(spec.type + " needs a " + layout + " input, got shape " + shape_text(input));
}

// The one input of a 2-D layer, checked to be [C, H, W].
const Shape& image_input(const LayerSpec& spec, const Inputs& inputs) {
  require_rank(spec, inputs.front(), 3, "[channels, height, width]");
  return inputs.front();
}

// Output size of a convolution or pooling window along one dimension.
std::int64_t window_output(const LayerSpec& spec, const char* dim, std::int64_t in, std::int64_t kernel, std::int64_t stride,
                           PadMode mode, std::int64_t pad, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  std::int64_t out = 0;
  switch (mode) {
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

// Output height and width of a window sliding over a [C, H, W] input (height checked first).
Pair2 window_output_2d(const LayerSpec& spec, const Shape& x, Pair2 kernel, Pair2 stride, const Padding& padding, Pair2 dilation,
                       bool ceil_mode) {
  const std::int64_t ho = window_output(spec, "height", x[1], kernel.h, stride.h, padding.mode, padding.size.h, dilation.h, ceil_mode);
  const std::int64_t wo = window_output(spec, "width", x[2], kernel.w, stride.w, padding.mode, padding.size.w, dilation.w, ceil_mode);
  return {ho, wo};
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

// The activations, softmax: a fixed number of FLOPs per element. A reference, not a double, as the
// template argument: clang 14 (the fuzz build's compiler) has no floating-point template arguments.
template <const double& kFlopsPerElement>
LayerEstimate estimate_elementwise(const LayerSpec&, const NoAttrs&, const Inputs& inputs, const Shape&) {
  return elementwise(inputs.front(), kFlopsPerElement);
}

// ---- input ----

InputAttrs read_input(LayerSpec& spec) {
  InputAttrs a;
  a.shape = read_shape(spec.node.at("shape"), false);
  return a;
}

LayerEstimate estimate_input(const LayerSpec&, const InputAttrs& a, const Inputs&, const Shape&) {
  LayerEstimate e;
  e.output = a.shape;
  e.op_class = OpClass::data;
  e.saved_elements = element_count(a.shape);
  return e;
}

// ---- conv2d ----
// forward = 2·kh·kw·(Cin/groups)·Cout·Hout·Wout; params = kh·kw·(Cin/groups)·Cout (+ Cout bias)

Conv2dAttrs read_conv2d(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  Conv2dAttrs a;
  a.out_channels = read_size(node.at("out_channels"), 1);
  a.kernel = read_pair(node.at("kernel"), 1);
  if (auto v = node.find("in_channels")) a.in_channels = read_size(*v, 1);
  if (auto v = node.find("dilation")) a.dilation = read_pair(*v, 1);
  if (auto v = node.find("groups")) a.groups = read_size(*v, 1);
  if (auto v = node.find("stride")) a.stride = read_pair(*v, 1);
  if (auto v = node.find("padding")) a.padding = read_padding(*v);
  if (auto v = node.find("bias")) a.bias = v->as_bool();
  return a;
}

LayerEstimate estimate_conv2d(const LayerSpec& spec, const Conv2dAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = image_input(spec, inputs);
  const std::int64_t cin = x[0];
  if (a.in_channels != 0 && a.in_channels != cin)
    throw spec.error_at(spec.node.raw().contains("filter") ? "filter" : "in_channels",  // Paleo: filter[2]
                        "declares " + std::to_string(a.in_channels) + " input channels but its input " + shape_text(x) + " has " +
                            std::to_string(cin));
  if (cin % a.groups != 0 || a.out_channels % a.groups != 0)
    throw spec.error_at("groups", "groups = " + std::to_string(a.groups) + " must divide the input channels (" + std::to_string(cin) +
                                      ") and out_channels (" + std::to_string(a.out_channels) + ")");
  const Pair2 out = window_output_2d(spec, x, a.kernel, a.stride, a.padding, a.dilation, false);
  LayerEstimate e;
  e.output = {a.out_channels, out.h, out.w};
  e.op_class = OpClass::conv;
  e.has_weights = true;
  const double weights = static_cast<double>(a.kernel.h) * static_cast<double>(a.kernel.w) * static_cast<double>(cin / a.groups) *
                         static_cast<double>(a.out_channels);
  e.params = weights + (a.bias ? static_cast<double>(a.out_channels) : 0);
  e.flops_fwd = 2.0 * weights * static_cast<double>(out.h) * static_cast<double>(out.w);
  e.flops_bwd_edge = e.flops_fwd;
  e.flops_bwd_weight = e.flops_fwd;
  e.saved_elements = element_count(e.output);
  return e;
}

// ---- maxpool2d, avgpool2d ----
// kh·kw comparisons or additions per output element.

Pool2dAttrs read_pool2d(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  Pool2dAttrs a;
  a.kernel = read_pair(node.at("kernel"), 1);
  a.stride = a.kernel;  // pooling stride defaults to the kernel (PyTorch)
  if (auto v = node.find("stride")) a.stride = read_pair(*v, 1);
  if (auto v = node.find("padding")) a.padding = read_padding(*v);
  if (auto v = node.find("ceil_mode")) a.ceil_mode = v->as_bool();
  return a;
}

LayerEstimate estimate_pool2d(const LayerSpec& spec, const Pool2dAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = image_input(spec, inputs);
  const Pair2 out = window_output_2d(spec, x, a.kernel, a.stride, a.padding, {1, 1}, a.ceil_mode);
  return elementwise({x[0], out.h, out.w}, static_cast<double>(a.kernel.h * a.kernel.w), OpClass::pooling);
}

// ---- adaptive_avgpool2d, global_avgpool2d, global_maxpool2d ----
// Every input element is read and added (or compared) once.

struct AdaptivePool2dAttrs final : LayerAttrs {
  Pair2 output_size;
};

AdaptivePool2dAttrs read_adaptive_pool2d(LayerSpec& spec) {
  AdaptivePool2dAttrs a;
  a.output_size = read_pair(spec.node.at("output_size"), 1);
  return a;
}

LayerEstimate pool_to_size(const LayerSpec& spec, const Inputs& inputs, Pair2 out) {
  const Shape& x = image_input(spec, inputs);
  LayerEstimate e = elementwise({x[0], out.h, out.w}, 0, OpClass::pooling);
  e.flops_fwd = element_count(x);
  e.flops_bwd_edge = e.flops_fwd;
  return e;
}

LayerEstimate estimate_adaptive_pool2d(const LayerSpec& spec, const AdaptivePool2dAttrs& a, const Inputs& inputs, const Shape&) {
  return pool_to_size(spec, inputs, a.output_size);
}

LayerEstimate estimate_global_pool2d(const LayerSpec& spec, const NoAttrs&, const Inputs& inputs, const Shape&) {
  return pool_to_size(spec, inputs, {1, 1});
}

// ---- linear ----
// forward = 2·rows·in·out, rows = all leading positions (tokens); params = in·out (+ out bias),
// or only the bias when the weight is tied to another layer's (it still gets a gradient).

LinearAttrs read_linear(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  LinearAttrs a;
  a.out_features = read_size(node.at("out_features"), 1);
  if (auto v = node.find("in_features")) a.in_features = read_size(*v, 1);
  if (auto v = node.find("tied_to")) spec.tied_to = v->as_string();
  if (auto v = node.find("bias")) a.bias = v->as_bool();
  return a;
}

std::int64_t linear_input_features(const LinearAttrs& a, const Shape& x) {
  return a.flatten_input ? static_cast<std::int64_t>(element_count(x)) : x.back();
}

LayerEstimate estimate_linear(const LayerSpec& spec, const LinearAttrs& a, const Inputs& inputs, const Shape& tied_weight) {
  const Shape& x = inputs.front();
  const std::int64_t in = linear_input_features(a, x);
  if (a.in_features != 0 && a.in_features != in)
    throw spec.error("declares " + std::to_string(a.in_features) + " input features but its input " + shape_text(x) + " has " +
                     std::to_string(in));
  if (!spec.tied_to.empty() && (tied_weight.size() != 2 || tied_weight[0] != a.out_features || tied_weight[1] != in))
    throw spec.error_at("tied_to", "its weight [" + std::to_string(a.out_features) + ", " + std::to_string(in) +
                                       "] (out_features, in_features) does not match the weight " + shape_text(tied_weight) +
                                       " of layer '" + spec.tied_to + "'");
  LayerEstimate e;
  e.output = a.flatten_input ? Shape{} : Shape(x.begin(), x.end() - 1);
  e.output.push_back(a.out_features);
  e.op_class = OpClass::matmul;
  e.has_weights = true;
  const double rows = element_count(x) / static_cast<double>(in);
  e.params = (spec.tied_to.empty() ? static_cast<double>(in) * static_cast<double>(a.out_features) : 0) +
             (a.bias ? static_cast<double>(a.out_features) : 0);
  e.flops_fwd = 2.0 * rows * static_cast<double>(in) * static_cast<double>(a.out_features);
  e.flops_bwd_edge = e.flops_fwd;
  e.flops_bwd_weight = e.flops_fwd;
  e.saved_elements = element_count(e.output);
  return e;
}

Shape linear_weight_matrix(const LinearAttrs& a, const Inputs& inputs) {
  if (inputs.size() != 1 || inputs[0].empty()) return {};
  return {a.out_features, linear_input_features(a, inputs[0])};
}

// ---- batchnorm, layernorm ----
// batchnorm: per channel (dim 0); layernorm: over the last dim. Affine: 2 parameters per
// normalized feature, weight gradient 2 FLOPs per element.

struct NormAttrs final : LayerAttrs {
  bool affine = true;
};

NormAttrs read_norm(LayerSpec& spec) {
  NormAttrs a;
  if (auto v = spec.node.find("affine")) a.affine = v->as_bool();
  return a;
}

// `feature_dim`: the dimension of `x` whose entries each have their own scale and shift.
LayerEstimate normalization(const NormAttrs& a, const Shape& x, std::size_t feature_dim) {
  LayerEstimate e = elementwise(x, kNormFlops, OpClass::normalization);
  if (a.affine) {
    e.has_weights = true;
    e.params = 2.0 * static_cast<double>(x[feature_dim]);
    e.flops_bwd_weight = 2 * element_count(x);
  }
  return e;
}

LayerEstimate estimate_batchnorm(const LayerSpec&, const NormAttrs& a, const Inputs& inputs, const Shape&) {
  return normalization(a, inputs.front(), 0);
}

LayerEstimate estimate_layernorm(const LayerSpec&, const NormAttrs& a, const Inputs& inputs, const Shape&) {
  return normalization(a, inputs.front(), inputs.front().size() - 1);
}

// ---- dropout ----

DropoutAttrs read_dropout(LayerSpec& spec) {
  DropoutAttrs a;
  if (auto v = spec.node.find("rate")) {
    a.rate = v->number_in(0, 1);
    if (a.rate >= 1) throw v->error("layer '" + spec.name + "': must be < 1 (a dropout rate of 1 drops everything)");
  }
  return a;
}

LayerEstimate estimate_dropout(const LayerSpec&, const DropoutAttrs&, const Inputs& inputs, const Shape&) {
  return elementwise(inputs.front(), kDropoutFlops);
}

// ---- add ----
// (n − 1) additions per element for n inputs of one shape.

LayerEstimate estimate_add(const LayerSpec& spec, const NoAttrs&, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
  for (std::size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i] != x)
      throw spec.error_at("parents", "add needs inputs of the same shape, but '" + spec.parents[0] + "' gives " + shape_text(x) +
                                         " and '" + spec.parents[i] + "' gives " + shape_text(inputs[i]));
  return elementwise(x, static_cast<double>(inputs.size() - 1));
}

// ---- concat ----
// A copy: no FLOPs, bytes in = bytes out.

ConcatAttrs read_concat(LayerSpec& spec) {
  ConcatAttrs a;
  if (auto v = spec.node.find("axis")) a.axis = v->as_int();
  return a;
}

LayerEstimate estimate_concat(const LayerSpec& spec, const ConcatAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
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

// ---- flatten, reshape, slice ----
// Views: no FLOPs, nothing saved.

LayerEstimate view(const Shape& out) {
  LayerEstimate e = elementwise(out, 0, OpClass::reshape);
  e.saved_elements = 0;
  return e;
}

LayerEstimate estimate_flatten(const LayerSpec&, const NoAttrs&, const Inputs& inputs, const Shape&) {
  return view({static_cast<std::int64_t>(element_count(inputs.front()))});
}

struct ReshapeAttrs final : LayerAttrs {
  Shape shape;  ///< the target shape; one size may be -1 (inferred)
};

ReshapeAttrs read_reshape(LayerSpec& spec) {
  ReshapeAttrs a;
  a.shape = read_shape(spec.node.at("shape"), true);
  return a;
}

LayerEstimate estimate_reshape(const LayerSpec& spec, const ReshapeAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
  Shape out = a.shape;
  const double known = -element_count(out);  // the -1, if any, makes the product negative
  const auto infer = std::find(out.begin(), out.end(), -1);
  if (infer != out.end() && known > 0 && std::fmod(element_count(x), known) == 0)
    *infer = static_cast<std::int64_t>(element_count(x) / known);
  if (element_count(out) != element_count(x))
    throw spec.error_at("shape", "cannot reshape " + shape_text(x) + " (" + std::to_string(static_cast<std::int64_t>(element_count(x))) +
                                     " elements) into " + shape_text(a.shape));
  return view(out);
}

struct SliceAttrs final : LayerAttrs {
  std::int64_t axis = 0;  ///< per-sample axis, negative from the end
  std::int64_t start = 0;
  std::int64_t length = 1;
};

SliceAttrs read_slice(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  SliceAttrs a;
  if (auto v = node.find("axis")) a.axis = v->as_int();
  if (auto v = node.find("start")) a.start = read_size(*v, 0);
  if (auto v = node.find("length")) a.length = read_size(*v, 1);
  return a;
}

LayerEstimate estimate_slice(const LayerSpec& spec, const SliceAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
  const auto axis = static_cast<std::size_t>(normalize_axis(spec, a.axis, x.size()));
  if (a.start + a.length > x[axis])
    throw spec.error("slice [" + std::to_string(a.start) + ", " + std::to_string(a.start + a.length) + ") exceeds size " +
                     std::to_string(x[axis]) + " of axis " + std::to_string(axis) + " of its input " + shape_text(x));
  Shape out = x;
  out[axis] = a.length;
  return view(out);
}

// ---- loss ----
// Softmax cross-entropy: one value per sample.

LossAttrs read_loss(LayerSpec& spec) {
  LossAttrs a;
  if (auto v = spec.node.find("num_classes")) a.num_classes = read_size(*v, 1);
  return a;
}

LayerEstimate estimate_loss(const LayerSpec& spec, const LossAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
  if (a.num_classes != 0 && a.num_classes != x.back() && static_cast<double>(a.num_classes) != element_count(x))
    throw spec.error_at("num_classes", "num_classes = " + std::to_string(a.num_classes) +
                                           " matches neither the elements nor the last dimension of its input " + shape_text(x));
  LayerEstimate e;
  e.output = {1};
  e.op_class = OpClass::loss;
  e.flops_fwd = kLossFlops * element_count(x);
  e.flops_bwd_edge = e.flops_fwd;
  e.saved_elements = 1;
  return e;
}

// ---- embedding ----
// A gather of rows: no FLOPs forward; the weight gradient scatter-adds every output element;
// token ids have no gradient.

struct EmbeddingAttrs final : LayerAttrs {
  std::int64_t num_embeddings = 1;
  std::int64_t dim = 1;
  bool positional = false;  ///< a table of positions (BERT, GPT-2): the sequence may not be longer
};

EmbeddingAttrs read_embedding(LayerSpec& spec) {
  EmbeddingAttrs a;
  a.num_embeddings = read_size(spec.node.at("num_embeddings"), 1);
  a.dim = read_size(spec.node.at("dim"), 1);
  if (auto v = spec.node.find("positional")) a.positional = v->as_bool();
  return a;
}

LayerEstimate estimate_embedding(const LayerSpec& spec, const EmbeddingAttrs& a, const Inputs& inputs, const Shape&) {
  if (a.positional && !inputs.front().empty() && inputs.front().front() > a.num_embeddings)
    throw spec.error_at("num_embeddings", "a table of " + std::to_string(a.num_embeddings) + " positions cannot hold a sequence of " +
                                              std::to_string(inputs.front().front()) + " tokens");
  LayerEstimate e;
  e.output = inputs.front();
  e.output.push_back(a.dim);
  e.op_class = OpClass::embedding;
  e.has_weights = true;
  e.params = static_cast<double>(a.num_embeddings) * static_cast<double>(a.dim);
  e.flops_bwd_weight = element_count(e.output);
  e.saved_elements = element_count(e.output);
  return e;
}

Shape embedding_weight_matrix(const EmbeddingAttrs& a, const Inputs&) { return {a.num_embeddings, a.dim}; }

// ---- matmul ----
// [..., M, K] × [..., K, N] (or [..., N, K] with transpose_b) = 2·batch·M·K·N; the input
// gradient covers both operands (2 × forward).

struct MatmulAttrs final : LayerAttrs {
  bool transpose_b = false;
};

MatmulAttrs read_matmul(LayerSpec& spec) {
  MatmulAttrs a;
  if (auto v = spec.node.find("transpose_b")) a.transpose_b = v->as_bool();
  return a;
}

LayerEstimate estimate_matmul(const LayerSpec& spec, const MatmulAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = inputs.front();
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
  e.flops_fwd = 2.0 * element_count(Shape(x.begin(), x.end() - 2)) * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  e.flops_bwd_edge = 2 * e.flops_fwd;
  e.saved_elements = element_count(e.output);
  return e;
}

// ---- attention ----
// Multi-head self-attention on [T, D] with H heads, Q/K/V/output projections D×D.
//   forward  = 8·T·D² (projections) + 4·T²·D (scores QKᵀ, context PV) + 5·H·T² (softmax)
//   weights  = 8·T·D²
//   internal = 2·T·D² (output projection dX) + 8·T²·D (dQ, dK, dP, dV) + 5·H·T² (softmax)
//   edge     = 6·T·D² (dX through the Q, K, V projections)
//   saved    = 5·T·D (Q, K, V, context, output) + H·T² (probabilities)
// Causal masking is counted dense (as cuBLAS/cuDNN kernels without block skipping compute it).

struct AttentionAttrs final : LayerAttrs {
  std::int64_t heads = 1;
  bool bias = true;
  bool causal = false;  ///< recorded; FLOPs are counted dense
};

AttentionAttrs read_attention(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  AttentionAttrs a;
  if (auto v = node.find("bias")) a.bias = v->as_bool();
  a.heads = read_size(node.at("heads"), 1);
  if (auto v = node.find("causal")) a.causal = v->as_bool();
  return a;
}

// The one input of attention or a transformer block, checked to be [T, D] with D split evenly
// over `heads` heads.
const Shape& token_input(const LayerSpec& spec, const Inputs& inputs, std::int64_t heads) {
  const Shape& x = inputs.front();
  require_rank(spec, x, 2, "[tokens, model dim]");
  if (x[1] % heads != 0)
    throw spec.error_at("heads", "heads = " + std::to_string(heads) + " must divide the model dimension " + std::to_string(x[1]));
  return x;
}

LayerEstimate attention_costs(double t, double d, double heads, bool bias) {
  LayerEstimate e;
  e.op_class = OpClass::attention;
  e.has_weights = true;
  e.params = 4 * d * d + (bias ? 4 * d : 0);
  e.flops_fwd = 8 * t * d * d + 4 * t * t * d + kSoftmaxFlops * heads * t * t;
  e.flops_bwd_weight = 8 * t * d * d;
  e.flops_bwd_internal = 2 * t * d * d + 8 * t * t * d + kSoftmaxFlops * heads * t * t;
  e.flops_bwd_edge = 6 * t * d * d;
  e.saved_elements = 5 * t * d + heads * t * t;
  return e;
}

LayerEstimate estimate_attention(const LayerSpec& spec, const AttentionAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = token_input(spec, inputs, a.heads);
  const double tokens = static_cast<double>(x[0]), d = static_cast<double>(x[1]), heads = static_cast<double>(a.heads);
  LayerEstimate e = attention_costs(tokens, d, heads, a.bias);
  e.output = x;
  e.heads = a.heads;
  return e;
}

// ---- transformer ----
// Transformer block (BERT post-LN or GPT-2 pre-LN: the same costs): attention, two layer
// norms, two residual adds, feed-forward D→F→D with activation a, all with biases.
//   params   = attention(4D² + 4D) + 2·2D + 2·D·F + F + D     (= 12D² + 13D for F = 4D)
//   forward  = attention + 2·5·T·D (norms) + 2·T·D (adds) + 4·T·D·F + a·T·F
//   weights  = 8·T·D² + 4·T·D·F + 2·2·T·D
//   internal = attention internal + edge of its Q/K/V projections (they read a norm or the
//              residual stream, both inside the block's graph) — counted as the block's edge —
//              + 10·T·D + 2·T·D + 4·T·D·F (dX of both FFN linears) + a·T·F
//   saved    = attention saved + 2·T·D (norm outputs) + T·D (residual) + 2·T·F (FFN hidden) + T·D

// The feed-forward activations a block may use, with their FLOPs per element.
const std::map<std::string, double, std::less<>>& feed_forward_activations() {
  static const std::map<std::string, double, std::less<>> table{
      {"gelu", kGeluFlops}, {"gelu_new", kGeluFlops}, {"relu", kReluFlops}, {"silu", kSiluFlops}};
  return table;
}

struct TransformerAttrs final : LayerAttrs {
  std::int64_t heads = 1;
  std::int64_t ffn_dim = 0;  ///< 0 = 4 × model dim
  std::string activation = "gelu";
  bool causal = false;  ///< recorded; FLOPs are counted dense
};

TransformerAttrs read_transformer(LayerSpec& spec) {
  const JsonNode& node = spec.node;
  TransformerAttrs a;
  a.heads = read_size(node.at("heads"), 1);
  if (auto v = node.find("causal")) a.causal = v->as_bool();
  if (auto v = node.find("ffn_dim")) a.ffn_dim = read_size(*v, 1);
  if (auto v = node.find("activation")) {
    std::vector<std::string> names;
    for (const auto& [name, flops] : feed_forward_activations()) names.push_back(name);
    a.activation = v->one_of(names);
  }
  return a;
}

LayerEstimate estimate_transformer(const LayerSpec& spec, const TransformerAttrs& a, const Inputs& inputs, const Shape&) {
  const Shape& x = token_input(spec, inputs, a.heads);
  const double tokens = static_cast<double>(x[0]), d = static_cast<double>(x[1]), heads = static_cast<double>(a.heads);
  const double f = static_cast<double>(a.ffn_dim != 0 ? a.ffn_dim : 4 * x[1]);
  const double act = feed_forward_activations().at(a.activation);
  LayerEstimate e = attention_costs(tokens, d, heads, true);
  e.output = x;
  e.heads = a.heads;
  e.activation = a.activation;
  e.params += 2 * 2 * d + 2 * d * f + f + d;
  e.flops_fwd += 2 * kNormFlops * tokens * d + 2 * tokens * d + 4 * tokens * d * f + act * tokens * f;
  e.flops_bwd_weight += 4 * tokens * d * f + 2 * 2 * tokens * d;
  e.flops_bwd_internal += 2 * kNormFlops * tokens * d + 2 * tokens * d + 4 * tokens * d * f + act * tokens * f;
  e.saved_elements += 4 * tokens * d + 2 * tokens * f;
  return e;
}

// ---- The registry ----

// How many parents a type takes.
struct Arity {
  std::size_t min;
  std::size_t max;  // SIZE_MAX: no limit
};
constexpr Arity kNoInput{0, 0};
constexpr Arity kOneInput{1, 1};
constexpr Arity kTwoInputs{2, 2};
constexpr Arity kOneOrMore{1, SIZE_MAX};
constexpr Arity kTwoOrMore{2, SIZE_MAX};

// Everything the workloads module knows about one layer type.
struct LayerType {
  std::vector<std::string> keys;  // its keys besides name, type and parents, in the order errors list them
  Arity arity;
  std::function<std::shared_ptr<const LayerAttrs>(LayerSpec&)> read;
  std::function<LayerEstimate(const LayerSpec&, const Inputs&, const Shape&)> estimate;  // after the arity check
  std::function<Shape(const LayerSpec&, const Inputs&)> weight_matrix;  // empty: none another layer may share
};

template <class Attrs>
const Attrs& attrs_of(const LayerSpec& spec) {
  const auto* attrs = dynamic_cast<const Attrs*>(spec.attrs.get());
  TRAINSIM_CHECK(attrs != nullptr, "layer '" + spec.name + "' has no attributes of its type " + spec.type);
  return *attrs;
}

// One entry from a type's typed functions; the compiler checks that they agree on its attributes.
template <class Attrs>
LayerType entry(std::vector<std::string> keys, Arity arity, Attrs (*read)(LayerSpec&),
                LayerEstimate (*estimate)(const LayerSpec&, const Attrs&, const Inputs&, const Shape&),
                Shape (*weight_matrix)(const Attrs&, const Inputs&) = nullptr) {
  LayerType type{std::move(keys), arity, {}, {}, {}};
  type.read = [read](LayerSpec& spec) { return std::shared_ptr<const LayerAttrs>(std::make_shared<const Attrs>(read(spec))); };
  type.estimate = [estimate](const LayerSpec& spec, const Inputs& inputs, const Shape& tied_weight) {
    return estimate(spec, attrs_of<Attrs>(spec), inputs, tied_weight);
  };
  if (weight_matrix != nullptr)
    type.weight_matrix = [weight_matrix](const LayerSpec& spec, const Inputs& inputs) {
      return weight_matrix(attrs_of<Attrs>(spec), inputs);
    };
  return type;
}

const std::map<std::string, LayerType, std::less<>>& registry() {
  static const std::map<std::string, LayerType, std::less<>> table{
      {"input", entry({"shape"}, kNoInput, read_input, estimate_input)},
      {"conv2d", entry({"out_channels", "in_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}, kOneInput,
                       read_conv2d, estimate_conv2d)},
      {"maxpool2d", entry({"kernel", "stride", "padding", "ceil_mode"}, kOneInput, read_pool2d, estimate_pool2d)},
      {"avgpool2d", entry({"kernel", "stride", "padding", "ceil_mode"}, kOneInput, read_pool2d, estimate_pool2d)},
      {"adaptive_avgpool2d", entry({"output_size"}, kOneInput, read_adaptive_pool2d, estimate_adaptive_pool2d)},
      {"global_avgpool2d", entry({}, kOneInput, read_nothing, estimate_global_pool2d)},
      {"global_maxpool2d", entry({}, kOneInput, read_nothing, estimate_global_pool2d)},
      {"linear", entry({"out_features", "in_features", "bias", "tied_to"}, kOneInput, read_linear, estimate_linear,
                       linear_weight_matrix)},
      {"batchnorm", entry({"affine"}, kOneInput, read_norm, estimate_batchnorm)},
      {"layernorm", entry({"affine"}, kOneInput, read_norm, estimate_layernorm)},
      {"relu", entry({}, kOneInput, read_nothing, estimate_elementwise<kReluFlops>)},
      {"leaky_relu", entry({}, kOneInput, read_nothing, estimate_elementwise<kLeakyReluFlops>)},
      {"sigmoid", entry({}, kOneInput, read_nothing, estimate_elementwise<kSigmoidFlops>)},
      {"tanh", entry({}, kOneInput, read_nothing, estimate_elementwise<kTanhFlops>)},
      {"silu", entry({}, kOneInput, read_nothing, estimate_elementwise<kSiluFlops>)},
      {"gelu", entry({}, kOneInput, read_nothing, estimate_elementwise<kGeluFlops>)},
      {"dropout", entry({"rate"}, kOneInput, read_dropout, estimate_dropout)},
      {"add", entry({}, kTwoOrMore, read_nothing, estimate_add)},
      {"concat", entry({"axis"}, kOneOrMore, read_concat, estimate_concat)},
      {"flatten", entry({}, kOneInput, read_nothing, estimate_flatten)},
      {"reshape", entry({"shape"}, kOneInput, read_reshape, estimate_reshape)},
      {"slice", entry({"axis", "start", "length"}, kOneInput, read_slice, estimate_slice)},
      {"softmax", entry({}, kOneInput, read_nothing, estimate_elementwise<kSoftmaxFlops>)},
      {"loss", entry({"num_classes"}, kOneInput, read_loss, estimate_loss)},
      {"embedding", entry({"num_embeddings", "dim", "positional"}, kOneInput, read_embedding, estimate_embedding, embedding_weight_matrix)},
      {"matmul", entry({"transpose_b"}, kTwoInputs, read_matmul, estimate_matmul)},
      {"attention", entry({"heads", "bias", "causal"}, kOneInput, read_attention, estimate_attention)},
      {"transformer", entry({"heads", "ffn_dim", "activation", "causal"}, kOneInput, read_transformer, estimate_transformer)},
  };
  return table;
}

// The entry of a type the caller has already checked (or set, as Paleo's reader does).
const LayerType& registered(const std::string& type) {
  const auto it = registry().find(type);
  TRAINSIM_CHECK(it != registry().end(), "layer type '" + type + "' is not registered");
  return it->second;
}

}  // namespace

std::int64_t read_size(const JsonNode& node, std::int64_t min) {
  const std::int64_t v = node.int_at_least(min);
  if (v > kMaxSize) throw node.error("must be ≤ " + std::to_string(kMaxSize) + ", got " + std::to_string(v));
  return v;
}

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
    for (const auto& [name, type] : registry()) out.push_back(name);
    return out;
  }();
  return names;
}

bool takes_parents(const std::string& type) { return registered(type).arity.max > 0; }

void read_layer_attrs(LayerSpec& spec) {
  const LayerType& type = registered(spec.type);
  std::vector<std::string> allowed = kCommonKeys;
  allowed.insert(allowed.end(), type.keys.begin(), type.keys.end());
  spec.node.allow_only(allowed);
  spec.attrs = type.read(spec);
}

bool has_weight_matrix(const LayerSpec& spec) { return static_cast<bool>(registered(spec.type).weight_matrix); }

Shape weight_matrix_shape(const LayerSpec& spec, const std::vector<Shape>& inputs) {
  const LayerType& type = registered(spec.type);
  return type.weight_matrix ? type.weight_matrix(spec, inputs) : Shape{};
}

LayerEstimate estimate_layer(const LayerSpec& spec, const std::vector<Shape>& inputs, const Shape& tied_weight) {
  const LayerType& type = registered(spec.type);
  if (type.arity.min > 0 && inputs.empty()) throw spec.error_at("parents", spec.type + " needs at least one parent");
  require_inputs(spec, inputs, type.arity.min, type.arity.max);
  return type.estimate(spec, inputs, tied_weight);
}

}  // namespace trainsim::workloads::detail
