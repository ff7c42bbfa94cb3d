#pragma once
// Private: one layer as read from a file (either format), before shapes are known, and the
// per-type shape inference and cost formulas applied to it.
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads::detail {

using Shape = std::vector<std::int64_t>;

/// Height and width of a 2-D window attribute (kernel, stride, padding, dilation, output size).
struct Pair2 {
  std::int64_t h = 1;
  std::int64_t w = 1;
};

/// How a convolution or pooling window is padded: explicit sizes, or TensorFlow's SAME / VALID.
enum class PadMode { explicit_size, same, valid };

/// Attributes of a layer; which ones mean something depends on the type (see layer_costs.cpp).
struct LayerAttrs {
  Shape shape;                    ///< input: per-sample shape; reshape: target shape (one -1 allowed)
  std::int64_t units = 0;         ///< conv2d out_channels, linear out_features, embedding dim, loss num_classes
  std::int64_t in_units = 0;      ///< optional check: conv2d in_channels, linear in_features (0 = unchecked)
  Pair2 kernel{1, 1};
  Pair2 stride{1, 1};
  Pair2 padding{0, 0};
  Pair2 dilation{1, 1};
  Pair2 output_size{1, 1};        ///< adaptive_avgpool2d
  PadMode pad_mode = PadMode::explicit_size;
  std::int64_t groups = 1;
  std::int64_t heads = 1;         ///< attention, transformer
  std::int64_t ffn_dim = 0;       ///< transformer (0 = 4 × model dim)
  std::int64_t num_embeddings = 0;
  std::int64_t axis = 0;          ///< concat, slice, softmax (per-sample axes, negative from the end)
  std::int64_t start = 0;         ///< slice
  std::int64_t length = 1;        ///< slice
  bool bias = true;
  bool affine = true;             ///< batchnorm, layernorm
  bool ceil_mode = false;         ///< pooling
  bool flatten_input = false;     ///< linear: flatten the whole sample first (Paleo InnerProduct)
  bool nhwc_axis = false;         ///< concat: `axis` is a Paleo NHWC dimension (batch included)
  bool transpose_b = false;       ///< matmul
  bool causal = false;            ///< attention, transformer (recorded; FLOPs are counted dense)
  double rate = 0.5;              ///< dropout probability
  std::string activation = "gelu";///< transformer feed-forward activation
  std::string tied_to;            ///< linear: layer whose weight matrix this one shares
};

/// One layer as written in a file. `node` locates it for error messages.
struct LayerSpec {
  std::string name;
  std::string type;
  std::vector<std::string> parents;
  std::vector<JsonNode> parent_nodes;  ///< where each parent is named (for "unknown parent" errors)
  JsonNode node;
  LayerAttrs attrs;

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
  std::int64_t params = 0;
  bool has_weights = false;        ///< true also for tied weights (they receive a gradient)
  double flops_fwd = 0;
  double flops_bwd_internal = 0;   ///< input-gradient work inside the layer, always needed
  double flops_bwd_edge = 0;       ///< gradient w.r.t. the layer's own inputs: only when they need it
  double flops_bwd_weight = 0;
  double saved_elements = 0;
};

/// Every type of the layer-graph format, sorted.
const std::vector<std::string>& layer_types();

/// Reads the type-specific attributes of a layer-graph layer object (rejects unknown keys).
/// `spec.type` must already be a known type.
void read_layer_attrs(LayerSpec& spec);

/// Shape inference and costs. `inputs` are the parents' output shapes, in parent order.
/// `tied_weight` is the [rows, cols] shape of the weight a `tied_to` linear shares (empty otherwise).
/// Throws InputError (via spec.error) on wrong parent counts and shape mismatches.
LayerEstimate estimate_layer(const LayerSpec& spec, const std::vector<Shape>& inputs, const Shape& tied_weight);

/// The [rows, cols] weight matrix of an embedding ([num_embeddings, dim]) or linear
/// ([out_features, in_features]) layer, for weight tying; empty for other types.
Shape weight_matrix_shape(const LayerSpec& spec, const std::vector<Shape>& inputs);

/// Number of elements of a shape (1 for the empty shape).
double element_count(const Shape& shape);
/// "[3, 224, 224]".
std::string shape_text(const Shape& shape);

}  // namespace trainsim::workloads::detail
