#pragma once
// Reading layer graphs: trainsim's own layer-graph JSON format and Paleo's network format, both
// turned into a Workload through the same graph building, shape inference and cost model.
// The formats are documented in workloads/README.md.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads {

/// Parses a document in the layer-graph format ({"name": ..., "layers": [ {...}, ... ]}).
/// `source_label` becomes Workload::source. Throws InputError naming the file, the JSON pointer and
/// the layer: unknown keys or layer types, wrong JSON types, sizes < 1, duplicate names, unknown
/// parents, cycles (listing the layers on the cycle) and shape mismatches.
Workload parse_layer_graph(const JsonNode& root, const std::string& source_label);

/// True when `root` has Paleo's shape: an object whose "layers" member is an object keyed by name.
bool is_paleo_graph(const JsonNode& root);

/// Parses a Paleo network ({"name": ..., "layers": {"data": {"type": "Input", ...}, ...}}), Blocks
/// and ModelParallel blocks included. Tensors are NHWC with the batch first; the batch is dropped
/// (a Workload is per sample). Throws InputError like parse_layer_graph.
Workload parse_paleo_graph(const JsonNode& root, const std::string& source_label);

/// Reads a file and parses it with the format its shape shows. Throws InputError.
Workload load_workload_file(const std::filesystem::path& path);

/// The canonical zoo name for a name or alias ("ResNet-50", "resnet_50" → "resnet50"); nullopt
/// when it names no zoo model. Case, '-' and '_' are ignored.
std::optional<std::string> zoo_canonical_name(std::string_view name);

/// A zoo model as a layer-graph JSON document (exactly what a user could write in a file).
/// Throws InputError (source "model") for an unknown name, suggesting the nearest.
Json zoo_layer_graph(const std::string& name);

/// Input sizes that replace a model's own, for zoo models and layer-graph files.
struct InputSize {
  std::optional<std::int64_t> sequence_length;  ///< tokens of every [T] input
  std::optional<std::int64_t> image_size;       ///< height and width of every [C, H, W] input
  bool any() const { return sequence_length || image_size; }
};

/// load_workload with every matching input layer resized. Throws InputError as load_workload does,
/// and (source "model") when a size is given that the model has no input for, or for a Paleo file;
/// errors the new size causes inside the model (an image too small for its windows, a sequence
/// longer than a positional table) name the model's layer.
Workload load_workload(const std::string& model_or_file, const InputSize& input);

/// The layer types of the layer-graph format, sorted.
std::vector<std::string> layer_type_names();

/// The report written by `trainsim workload info --json`: totals and per-layer figures for a
/// mini-batch of `batch` samples at `precision` (FLOPs and activation bytes scale with the batch,
/// parameters and weight bytes do not). `batch` ≥ 1.
Json workload_report(const Workload& workload, std::int64_t batch, Precision precision);

}  // namespace trainsim::workloads
