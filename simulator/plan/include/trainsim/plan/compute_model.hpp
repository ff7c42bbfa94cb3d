#pragma once
// Per-task GPU time: Paleo's "platform percent of peak", made per operation class.
//
//   t = max(flops / (peak(precision) · efficiency(op_class)), bytes / (memory_bandwidth · memory_efficiency))
//       + kernels · launch_overhead
//
// then multiplied by a calibration factor κ (1 unless calibrated). Calibration fits κ alone, so
// that one GPU running the scenario reproduces a measured throughput; it never changes the
// relative cost of layers.
#include <optional>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/workloads/iteration_graph.hpp"

namespace trainsim::plan {

/// Fractions of peak reached by each operation class, and the per-kernel launch overhead.
/// Defaults are typical of cuDNN/cuBLAS on large batches (Paleo reports 40–70% for convolutions);
/// calibration absorbs the absolute level, these set the shape.
struct ComputeModelOptions {
  double conv_efficiency = 0.55;         ///< convolutions (implicit GEMM / Winograd)
  double matmul_efficiency = 0.65;       ///< dense layers, embeddings' projections, matmuls
  double attention_efficiency = 0.45;    ///< attention score/context products and softmax
  double other_efficiency = 0.25;        ///< FLOP-bound share of elementwise, norm, pooling, loss
  double memory_efficiency = 0.75;       ///< fraction of peak memory bandwidth reached by streaming kernels
  double launch_overhead_s = 4e-6;       ///< per kernel (CUDA launch + framework dispatch)

  /// Throws InputError (at `where`) when a value is out of range.
  void validate(const JsonNode& where) const;
  /// Reads the scenario's optional `compute` object: keys as the member names.
  static ComputeModelOptions read(const JsonNode& node);
};

/// Uncalibrated time of one task on one GPU, in seconds.
double task_time_s(const workloads::ComputeTask& task, const platforms::GpuSpec& gpu, Precision precision,
                   const ComputeModelOptions& options);

/// Task times of one iteration on one GPU, after calibration.
struct IterationTimes {
  std::vector<double> forward_s;   ///< parallel to IterationGraph::forward
  std::vector<double> backward_s;  ///< parallel to IterationGraph::backward
  double update_s = 0;
  double calibration_factor = 1;   ///< κ applied to every task

  double forward_total_s() const;
  double backward_total_s() const;
  /// Forward + backward + update: one GPU's iteration without communication.
  double total_s() const;
};

/// Times of every task of `graph` on `gpu`, multiplied by `calibration_factor`.
IterationTimes iteration_times(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                               const ComputeModelOptions& options, double calibration_factor = 1.0);

}  // namespace trainsim::plan
