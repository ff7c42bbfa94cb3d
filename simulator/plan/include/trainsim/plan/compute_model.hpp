#pragma once
// Per-task GPU time from the kernels the framework launches (workloads/kernels.hpp):
//
//   GEMM-shaped kernel:  flops / (peak(precision) · e_engine · utilisation(m, n, k, SMs))
//                        utilisation = the best tile's fill of the problem (tile quantisation) ×
//                        its waves over the SMs (wave quantisation) × k / (k + k0)
//                        (NVIDIA, "Matrix Multiplication Background User's Guide", Deep Learning
//                        Performance documentation: tile and wave quantisation), floored by its
//                        bytes at the streaming bandwidth
//   fused attention:     flops / (peak · attention_efficiency)
//   memory-bound kernel: bytes / (memory bandwidth · memory_efficiency · the kernel's own
//                        efficiency · the share of SMs its thread blocks occupy)
//   every kernel:        + launch_overhead (the GPU's gap between dependent kernels)
//
// The framework's host floor: an eager framework dispatches every operator from the CPU, so an
// iteration takes at least host_ops · host_op_us; when the host is slower than the GPU every task
// stretches in proportion (the queue of launched kernels runs dry). `graph_capture` (CUDA graphs,
// torch.compile's "reduce-overhead") replays the iteration without dispatching: no floor.
//
// Then calibrated (1 unless calibrated): a measured single-GPU iteration fits one factor, on the
// part of the model that bounds the measured iteration. Host-bound (the dispatch outlasts the GPU
// work): the host's per-operator cost. GPU-bound: the kernel time of the engines the measured
// iteration ran (the memory system always; the CUDA cores, TF32 or 16-bit tensor cores of its
// precision), leaving another precision's arithmetic engine as modelled. It never changes the
// relative cost of the kernels one engine runs.
#include <array>
#include <optional>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/workloads/iteration_graph.hpp"

namespace trainsim::plan {

/// Fractions of peak the GPU's engines reach, the per-kernel gap and the framework's host costs.
/// The per-class efficiencies time tasks without a kernel list (hand-built graphs); the kernel
/// model uses tensor_core_efficiency, cuda_core_efficiency, attention_efficiency and
/// memory_efficiency (sources in simulator/README.md, "Single-GPU compute and memory").
struct ComputeModelOptions {
  double conv_efficiency = 0.55;         ///< convolutions (implicit GEMM / Winograd), task model
  double matmul_efficiency = 0.65;       ///< dense layers, embeddings' projections, matmuls, task model
  double attention_efficiency = 0.35;    ///< fused attention (FlashAttention-2 reaches 35-50% of an H100's peak)
  double other_efficiency = 0.25;        ///< FLOP-bound share of elementwise, norm, pooling, loss, task model
  double memory_efficiency = 0.85;       ///< fraction of peak memory bandwidth a streaming kernel reaches
  double tensor_core_efficiency = 0.75;  ///< a large tf32 GEMM on tensor cores (cuBLAS: 70-80% of the dense peak)
  /// A large fp16/bf16 GEMM on tensor cores: Hopper's 16-bit peak needs wgmma kernels, which
  /// cuDNN's NCHW convolutions and batched GEMMs mostly are not (Ampere-style mma.sync reaches
  /// about two thirds of it: FlashAttention-3, Shah et al. 2024).
  double half_tensor_core_efficiency = 0.6;
  double cuda_core_efficiency = 0.8;  ///< a large fp32 GEMM on CUDA cores (SGEMM)
  double launch_overhead_s = 3e-6;    ///< per kernel: the gap between dependent kernels on the GPU
  double host_op_s = 40e-6;           ///< per operator the eager framework dispatches (Python, dispatcher, launch)
  bool graph_capture = false;         ///< CUDA graphs / torch.compile: no per-operator host cost
  bool fused_attention = true;        ///< attention as scaled_dot_product_attention's fused kernels (false: eager)

  /// Throws InputError (at `where`) when a value is out of range.
  void validate(const JsonNode& where) const;
  /// Reads the scenario's optional `compute` object: keys as the member names.
  static ComputeModelOptions read(const JsonNode& node);
};

/// The parts of a GPU a kernel's time depends on, which a calibration tells apart: streaming
/// memory (memory-bound kernels and the gaps between kernels, the same whatever the precision),
/// the CUDA cores (fp32 GEMMs, fp32 attention), and the tensor cores at TF32 or at 16 bits.
enum class Engine { memory, cuda_cores, tensor_tf32, tensor_16bit };
inline constexpr std::size_t kEngineCount = 4;

/// What a measured single-GPU iteration corrects (see the file comment): a factor on the host's
/// dispatch and one per engine. The identity (all 1) is the uncalibrated model.
struct ComputeCalibration {
  double host = 1;                                      ///< on the framework's per-operator host cost
  std::array<double, kEngineCount> engine{1, 1, 1, 1};  ///< on each Engine's kernel time
  bool host_bound = false;  ///< the measured iteration was modelled host-bound: the host factor was fitted
};

/// One iteration's uncalibrated load: the host's dispatch and the GPU's kernel time per engine,
/// in seconds (accumulation: `steps` forwards and backwards, one update).
struct IterationLoad {
  double host_s = 0;
  std::array<double, kEngineCount> engine_s{0, 0, 0, 0};
  double gpu_s() const;
};
IterationLoad iteration_load(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                             const ComputeModelOptions& options, int steps = 1);

/// The calibration under which an iteration of uncalibrated `load` takes `measured_s` (> 0): the
/// bound side's factor (host, or every engine the iteration used) is measured_s over its time;
/// the other side is scaled down only where it alone would exceed measured_s.
ComputeCalibration fit_calibration(const IterationLoad& load, double measured_s);

/// Uncalibrated time of one task on one GPU, in seconds.
double task_time_s(const workloads::ComputeTask& task, const platforms::GpuSpec& gpu, Precision precision,
                   const ComputeModelOptions& options);

/// Task times of one iteration on one GPU, after calibration.
struct IterationTimes {
  std::vector<double> forward_s;   ///< parallel to IterationGraph::forward
  std::vector<double> backward_s;  ///< parallel to IterationGraph::backward
  double update_s = 0;
  double gpu_s = 0;   ///< the GPU's work, calibrated (before the host's stretch)
  double host_s = 0;  ///< the framework's dispatch, calibrated

  double forward_total_s() const;
  double backward_total_s() const;
  /// Forward + backward + update: one GPU's iteration without communication.
  double total_s() const;
};

/// Times of every task of `graph` on `gpu` under `calibration`.
IterationTimes iteration_times(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                               const ComputeModelOptions& options, const ComputeCalibration& calibration = {});

}  // namespace trainsim::plan
