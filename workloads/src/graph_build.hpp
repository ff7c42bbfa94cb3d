#pragma once
// Private: from layer specs (either format) to a Workload — the Boost.Graph DAG, cycle detection,
// the forward order, shape inference and the gradient-need analysis.
#include <string>
#include <vector>

#include "layer_spec.hpp"

namespace trainsim::workloads::detail {

/// Builds the graph of `specs` (in file order) and computes every layer's costs.
/// Throws InputError (duplicate names, unknown parents, cycles naming their layers, bad weight
/// ties, shape mismatches, sizes past kMaxSize or counts past kMaxCount), always naming the file, the
/// JSON pointer and the layer.
Workload build_workload(std::string name, std::string source, std::vector<LayerSpec> specs);

/// Runs `body`; an InputError from it that does not yet name the layer gets "layer 'name': " in
/// front of its detail (errors of the generic JSON accessors know the pointer, not the layer).
template <typename Body>
void with_layer_context(const std::string& layer_name, Body&& body) {
  try {
    body();
  } catch (const InputError& e) {
    if (e.detail().rfind("layer '", 0) == 0) throw;
    throw InputError(e.source(), e.location(), "layer '" + layer_name + "': " + e.detail());
  }
}

}  // namespace trainsim::workloads::detail
