#pragma once
// The input pipeline of a GPU job: loader threads on the node's host CPU decode and augment each
// sample before the GPU sees it. Loaders prefetch (PyTorch DataLoader's prefetch_factor,
// tf.data's prefetch), so in steady state loading the next batch overlaps the current iteration
// and the iteration lasts max(simulated iteration, batch load time): when the loaders are slower,
// the GPUs wait for data. Pure data, no SimGrid.
#include <optional>

#include "trainsim/core/json_reader.hpp"

namespace trainsim::plan {

/// `workload.input_pipeline`.
struct InputPipelineConfig {
  double decode_s_per_sample = 0;  ///< `decode_ms_per_sample`: CPU time of one sample on one core (decode + augment)
  int loader_threads = 1;          ///< per GPU (PyTorch num_workers)
  int host_cores = 48;             ///< physical cores of a node's host CPUs, shared by its GPUs' loaders (default: 2 × Xeon 8168, the DGX-1 host)

  /// Reads the object (keys: decode_ms_per_sample, loader_threads, host_cores). Throws InputError.
  static InputPipelineConfig read(const JsonNode& node);
};

/// What the input pipeline did to one iteration.
struct InputPipelineTiming {
  int loader_threads = 0;       ///< per GPU, as configured
  double cores_per_gpu = 0;     ///< cores a GPU's loaders get: min(loader_threads, host_cores / GPUs per node)
  double load_s = 0;            ///< one GPU's batch: batch × decode time / cores_per_gpu
  double compute_iteration_s = 0;  ///< the iteration as simulated, without waiting for data
  double wait_s = 0;            ///< max(0, load_s − compute_iteration_s): GPUs waiting for data
  bool bound() const { return wait_s > 0; }

  Json to_json() const;
  static InputPipelineTiming from_json(const JsonNode& node);
};

/// The pipeline's timing for `batch` samples per GPU with `gpus_per_node` GPUs sharing the host,
/// against an iteration of `iteration_s` without it.
InputPipelineTiming input_pipeline_timing(const InputPipelineConfig& config, double batch, int gpus_per_node, double iteration_s);

}  // namespace trainsim::plan
