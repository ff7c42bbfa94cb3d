#pragma once
// Reading an ONNX model (what torch.onnx.export writes) as a Workload: its nodes become layers
// costed from the shapes ONNX's own shape inference gives, after the model's dynamic dimensions
// have been bound (the batch to the per-GPU batch, a sequence to sequence_length, an image side to
// image_size). The operators it costs and the conventions are in workloads/README.md ("ONNX
// models"); an operator it does not know is an error naming it, never dropped.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads {

/// The largest ONNX file trainsim reads: 2 GiB − 1, protobuf's own limit for one message (larger
/// models keep their weights in external data files, which trainsim never reads: it needs the
/// initializers' shapes, not their values).
inline constexpr std::size_t kMaxOnnxBytes = 2147483647u;

/// The most nodes an ONNX graph may have: 1,000,000 (GPT-2 XL as torch exports it has about 5,000).
inline constexpr std::size_t kMaxOnnxNodes = 1'000'000;

/// How the model's dynamic dimensions (a dim_param such as "batch", or a dimension with no value)
/// are bound before shapes are inferred.
struct OnnxBindings {
  std::int64_t batch = 1;                       ///< dimension 0 of every graph input (≥ 1)
  std::optional<std::int64_t> sequence_length;  ///< dimension 1 of a graph input of rank 2 or 3
  std::optional<std::int64_t> image_size;       ///< dimensions 2 and 3 of a graph input of rank 4
  std::map<std::string, std::int64_t> dims;     ///< any dim_param by its name (wins over the rules above)
};

/// True when `path` names an ONNX file (ends in ".onnx", any case).
bool is_onnx_path(std::string_view path);

/// Parses the bytes of an ONNX model. `source_label` names the file in errors. Per-sample costs:
/// the graph's totals divided by its batch (the bound batch, or the file's static one).
/// Throws InputError "file: node 'name' (Op): detail" for a model that does not parse (truncated),
/// a cycle (naming its nodes), a value no node produces, an unresolved dynamic dimension (naming
/// the input and the dimension), a shape ONNX cannot infer, a size past the limits, and operators
/// trainsim does not cost (each by name, with its count and a suggestion).
Workload parse_onnx_model(std::string_view bytes, const std::string& source_label, const OnnxBindings& bindings);

/// Reads `path` (at most kMaxOnnxBytes) and parses it with parse_onnx_model. Throws InputError.
Workload load_onnx_workload(const std::filesystem::path& path, const OnnxBindings& bindings);

/// The ONNX operators trainsim costs, sorted.
std::vector<std::string> onnx_operator_names();

}  // namespace trainsim::workloads
