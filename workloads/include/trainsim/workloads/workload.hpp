#pragma once
// A workload is a neural network seen by the simulator: its layers in forward order, each with the
// parameters, FLOPs and tensor sizes of ONE sample (one image, or one whole sequence for sequence
// models). Multiply by the batch size for a mini-batch.
//
// Cost conventions (workloads/README.md): a multiply-add is 2 FLOPs; backward = gradient with
// respect to the layer's input (skipped when nothing upstream needs it, e.g. the first convolution)
// + gradient with respect to the weights (zero for layers without weights). The per-type formulas
// are documented in workloads/src/layer_costs.cpp and workloads/README.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/units.hpp"

namespace trainsim::workloads {

/// Operation class, used by the compute model to pick an efficiency.
enum class OpClass { data, conv, matmul, attention, elementwise, normalization, pooling, embedding, reshape, loss };

/// "data", "conv", "matmul", "attention", "elementwise", "normalization", "pooling", "embedding",
/// "reshape", "loss".
std::string_view to_string(OpClass op_class);

/// Costs of one layer for ONE sample (multiply by the batch size). FLOPs are FLOPs (2 per
/// multiply-add). Element counts are tensor elements, independent of the precision.
struct LayerCost {
  std::string name;                       ///< unique layer name
  std::string type;                       ///< layer type as written in the format ("conv2d", "linear", ...)
  OpClass op_class = OpClass::data;       ///< what kind of kernel runs it
  std::int64_t params = 0;                ///< trainable parameters owned by this layer (shared weights count once)
  double flops_fwd = 0;                   ///< per sample
  double flops_bwd_input = 0;             ///< per sample: gradient w.r.t. the layer's input (0 when not needed)
  double flops_bwd_weight = 0;            ///< per sample: gradient w.r.t. the weights (0 without weights)
  double input_elements = 0;              ///< per sample, summed over all inputs
  double output_elements = 0;             ///< per sample
  double saved_elements = 0;              ///< per sample, activations kept for backward (usually = output)
  std::vector<std::string> parents;       ///< names of the layers whose outputs feed this one, in input order
  std::vector<std::int64_t> output_shape; ///< per-sample output shape ([C, H, W] images, [T, D] sequences)
  std::int64_t heads = 0;                 ///< attention and transformer blocks: attention heads (0 otherwise)
  std::string activation;                 ///< transformer blocks: the feed-forward activation ("gelu", "gelu_new", …)

  /// Bytes of the output activation at precision p: output_elements × bytes_per_element(p).
  double activation_bytes(Precision p) const;
  /// Bytes of the parameters at precision p: params × bytes_per_element(p).
  double weight_bytes(Precision p) const;
  /// flops_bwd_input + flops_bwd_weight.
  double flops_bwd() const { return flops_bwd_input + flops_bwd_weight; }
};

/// A layer graph with costs, layers in a deterministic topological order (forward order): when the
/// file lists the layers in a valid order that order is kept, otherwise the ready layer that comes
/// first in the file goes first.
struct Workload {
  std::string name;                 ///< the model's name (zoo name, or the file's "name")
  std::string source;               ///< "zoo" or the file path
  std::vector<LayerCost> layers;    ///< forward order

  /// Sum of the layers' trainable parameters.
  std::int64_t params() const;
  /// Per sample, FLOPs.
  double forward_flops() const;
  /// Per sample, FLOPs (input gradients + weight gradients).
  double backward_flops() const;
  /// Per sample, bytes of all saved activations at precision p.
  double activation_bytes(Precision p) const;
  /// Bytes of all parameters at precision p (also the size of one full gradient).
  double weight_bytes(Precision p) const;
  /// The layer with this name; nullptr when there is none.
  const LayerCost* find_layer(std::string_view layer_name) const;
};

/// Loads a zoo model by name (or a listed alias such as "resnet-50", "bert_base", "gpt2-small"), or
/// a layer-graph / Paleo JSON file by path (recognised by its shape: "layers" is an array in the
/// layer-graph format, an object keyed by layer name in Paleo's). A name containing '/' or ending
/// in ".json" is always treated as a path.
/// Throws InputError (unknown model: suggests the nearest zoo name; bad file: file, JSON pointer, layer).
Workload load_workload(const std::string& model_or_file);

/// Zoo entries: name, one-line description, reference parameter count (0 if none).
struct ZooEntry {
  std::string name;
  std::string description;
  std::int64_t reference_params;
};

/// Every zoo model, in a fixed order (CNNs, the small Kavarakuntla et al. models, transformers).
std::vector<ZooEntry> zoo();

}  // namespace trainsim::workloads
