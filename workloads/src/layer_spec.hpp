#pragma once
// Private: one layer as read from a file (either format), before shapes are known, and the
// layer-type registry (layer_costs.cpp) that reads its attributes, infers its shape and costs it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads::detail {

using Shape = std::vector<std::int64_t>;

/// The largest size a layer file may give (channels, features, kernel, shape entries, ...) and the
/// largest dimension of a layer's output: 2^31 − 1, so that the shape arithmetic on two sizes
/// (a window's span, padded input, a sum of concatenated dimensions) cannot overflow 64 bits.
constexpr std::int64_t kMaxSize = 2147483647;
/// The most elements a layer's output, and parameters a layer or a whole model, may have: 2^53,
/// below which a double counts exactly.
constexpr double kMaxCount = 9007199254740992.0;

/// An integer size in [min, kMaxSize]; InputError otherwise.
std::int64_t read_size(const JsonNode& node, std::int64_t min);

/// Height and width of a 2-D window attribute (kernel, stride, padding, dilation, output size).
struct Pair2 {
  std::int64_t h = 1;
  std::int64_t w = 1;
};

/// How a convolution or pooling window is padded: explicit sizes, or TensorFlow's SAME / VALID.
enum class PadMode { explicit_size, same, valid };

/// The padding of a convolution or pooling window.
struct Padding {
  PadMode mode = PadMode::explicit_size;
  Pair2 size{0, 0};  ///< per side, with PadMode::explicit_size only
};

/// The type-specific attributes of one layer: each layer type has its own small struct deriving
/// from this one, made by the type's reader and read by its cost estimator (layer_costs.cpp).
///
/// A per-type object rather than a std::variant: a new layer type declares its attributes next to
/// its registry entry in layer_costs.cpp and no central list of alternatives has to grow. Only the
/// structs that Paleo's reader also fills are declared here. The registry checks that an estimator
/// gets the struct its type's reader makes (a mismatch is a broken invariant).
struct LayerAttrs {
  virtual ~LayerAttrs() = default;
};

/// Attributes of the types that have none (activations, add, flatten, global pooling, ...).
struct NoAttrs final : LayerAttrs {};

/// input.
struct InputAttrs final : LayerAttrs {
  Shape shape;  ///< per-sample shape (the batch is not part of it)
};

/// conv2d.
struct Conv2dAttrs final : LayerAttrs {
  std::int64_t out_channels = 1;
  std::int64_t in_channels = 0;  ///< optional check against the input (0 = unchecked)
  Pair2 kernel;
  Pair2 stride;
  Padding padding;
  Pair2 dilation;
  std::int64_t groups = 1;
  bool bias = true;
};

/// maxpool2d and avgpool2d.
struct Pool2dAttrs final : LayerAttrs {
  Pair2 kernel;
  Pair2 stride;
  Padding padding;
  bool ceil_mode = false;
};

/// linear (its `tied_to` is LayerSpec::tied_to).
struct LinearAttrs final : LayerAttrs {
  std::int64_t out_features = 1;
  std::int64_t in_features = 0;  ///< optional check against the input (0 = unchecked)
  bool bias = true;
  bool flatten_input = false;  ///< flatten the whole sample first (Paleo InnerProduct)
};

/// dropout.
struct DropoutAttrs final : LayerAttrs {
  double rate = 0.5;  ///< probability of dropping an element, in [0, 1)
};

/// concat.
struct ConcatAttrs final : LayerAttrs {
  std::int64_t axis = 0;   ///< per-sample axis, negative from the end
  bool nhwc_axis = false;  ///< `axis` is a Paleo NHWC dimension (batch included)
};

/// loss.
struct LossAttrs final : LayerAttrs {
  std::int64_t num_classes = 0;  ///< optional check against the input (0 = unchecked)
};

/// One layer as written in a file. `node` locates it for error messages.
struct LayerSpec {
  std::string name;
  std::string type;
  std::vector<std::string> parents;
  std::vector<JsonNode> parent_nodes;  ///< where each parent is named (for "unknown parent" errors)
  std::string tied_to;                 ///< linear: the layer whose weight matrix it shares ("" = none)
  JsonNode node;
  std::shared_ptr<const LayerAttrs> attrs;  ///< made by the reader of `type`

  /// An InputError at this layer: "file: /pointer: layer 'name': detail".
  [[nodiscard]] InputError error(const std::string& detail) const;
  /// Same, located at a member of the layer's object when it exists.
  [[nodiscard]] InputError error_at(std::string_view key, const std::string& detail) const;
};

/// Shape and costs of one layer for one sample, before the graph decides whether its input
/// gradient is needed.
struct LayerEstimate {
  Shape output;
  OpClass op_class = OpClass::data;
  double params = 0;               ///< counted in double (products of sizes); build_workload checks ≤ kMaxCount
  bool has_weights = false;        ///< true also for tied weights (they receive a gradient)
  double flops_fwd = 0;
  double flops_bwd_internal = 0;   ///< input-gradient work inside the layer, always needed
  double flops_bwd_edge = 0;       ///< gradient w.r.t. the layer's own inputs: only when they need it
  double flops_bwd_weight = 0;
  double saved_elements = 0;
  std::int64_t heads = 0;  ///< attention and transformer: heads
  std::string activation;  ///< transformer: the feed-forward activation
};

/// Every type of the layer-graph format, sorted.
const std::vector<std::string>& layer_types();

/// False for the types that take no parents (input). `type` must be a known type.
bool takes_parents(const std::string& type);

/// Reads the type-specific attributes of a layer-graph layer object into `spec.attrs` (and
/// `spec.tied_to`); rejects unknown keys. `spec.type` must already be a known type.
void read_layer_attrs(LayerSpec& spec);

/// Shape inference and costs. `inputs` are the parents' output shapes, in parent order.
/// `tied_weight` is the [rows, cols] shape of the weight a `tied_to` linear shares (empty otherwise).
/// Throws InputError (via spec.error) on wrong parent counts and shape mismatches.
LayerEstimate estimate_layer(const LayerSpec& spec, const std::vector<Shape>& inputs, const Shape& tied_weight);

/// True for the types whose weight matrix another layer may share (embedding, linear).
bool has_weight_matrix(const LayerSpec& spec);

/// The [rows, cols] weight matrix of an embedding ([num_embeddings, dim]) or linear
/// ([out_features, in_features]) layer, for weight tying; empty for other types, and for a linear
/// when `inputs` does not hold its one input shape (an embedding's needs no inputs).
Shape weight_matrix_shape(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// Number of elements of a shape (1 for the empty shape).
double element_count(const Shape& shape);
/// "[3, 224, 224]".
std::string shape_text(const Shape& shape);

}  // namespace trainsim::workloads::detail
