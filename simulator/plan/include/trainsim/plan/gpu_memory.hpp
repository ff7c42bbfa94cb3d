#pragma once
// One GPU's memory as PyTorch spends it in a training iteration (simulator/README.md, "Single-GPU
// compute and memory"):
//
//   peak allocated = weights + optimizer state
//                    + max(saved activations + autocast's weight copies + the backward's working set,
//                          gradients + the optimizer step's temporaries)
//   peak reserved  = peak allocated · (1 + allocator slack) + cuDNN's benchmark workspace
//   on the device  = peak reserved + the CUDA context (outside PyTorch's allocator)
//
// Saved activations are the tensors autograd keeps for the backward, each storage counted once:
// a layer's output is kept when a consumer's backward needs its input (convolution, linear, norms,
// GELU, max-pool) or the layer's own backward needs its output (ReLU, softmax, sigmoid, tanh);
// an in-place ReLU and views share their input's storage; dropout keeps a byte mask, max-pool
// int64 indices, the loss its fp32 log-probabilities; a transformer block keeps its internal
// tensors (eager attention: the T×T probabilities, their dropout mask and dropped copy).
// Under autocast a GEMM keeps the low-precision copy of an fp32 input, and the weights' casts
// are cached for the iteration.
#include "trainsim/core/units.hpp"
#include "trainsim/plan/result.hpp"
#include "trainsim/workloads/iteration_graph.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::plan {

/// What data-parallel training changes in one GPU's memory (data_parallel.hpp). ZeRO stage 1
/// divides the optimizer state (and the step's temporaries) by the shard group, stage 2 the fp32
/// gradients too, stage 3 the fp32 weights too — PyTorch's autocast keeps weights and gradients in
/// fp32, so FSDP and ZeroRedundancyOptimizer shard fp32 tensors.
struct DataParallelMemory {
  int zero_stage = 0;
  double shard_group = 1;
  bool whole_gradients = false;    ///< accumulating micro-batches keeps unsharded gradients (no_sync)
  double gathered_parameters = 0;  ///< bytes: stage 3's gathered layer groups, live through the passes
  /// Activation checkpointing: the shares of the saved activations kept through the forward pass
  /// (checkpoints and the last segment) and re-materialised at once (the largest recomputed
  /// segment); 1 and 0 without it.
  double stored_share = 1;
  double recompute_share = 0;
};

/// What one GPU holds at the peak of an iteration, bytes.
struct MemoryEstimate {
  double weights = 0;                ///< fp32 parameters (autocast keeps fp32 weights)
  double gradients = 0;              ///< fp32 gradients
  double optimizer_state = 0;        ///< momentum buffers, Adam moments
  double activations = 0;            ///< saved for the backward, with autocast's cached weight copies
  double working = 0;                ///< the backward's largest transient tensors at its start
  double optimizer_temporaries = 0;  ///< the foreach step's intermediate lists
  double allocator_slack = 0;        ///< caching allocator: rounding to 2 MiB blocks and blocks cached but free
  /// Under recomputation: free blocks inside segments that live tensors hold, which freeing the
  /// cache does not return.
  double fragmentation = 0;
  double workspace = 0;              ///< cuDNN algorithm search (cudnn.benchmark) workspaces kept reserved
  double cuda_context = 0;           ///< CUDA context and library handles, outside the allocator
  double gathered_parameters = 0;    ///< DataParallelMemory's, live through forward and backward
  double recompute_activations = 0;  ///< the largest recomputed segment's, live in its backward

  double peak_allocated() const;  ///< what torch.cuda.max_memory_allocated reports
  double peak_reserved() const;   ///< what torch.cuda.max_memory_reserved reports
  double on_device() const;       ///< peak_reserved + cuda_context: what the process holds at its peak
  /// What must fit in the device: when cudaMalloc fails, PyTorch's caching allocator frees every
  /// cached block no tensor holds and retries (c10/cuda/CUDACachingAllocator.cpp,
  /// release_cached_blocks), so the free blocks and cuDNN's cached workspaces give way; the
  /// fragmentation stays.
  double required() const;
};

/// The CUDA context and library handles of a PyTorch process on one GPU.
inline constexpr double kCudaContextBytes = 0.5 * kGiB;
/// Fraction of a GPU's nominal memory the driver lets a process use (an "80 GB" H100 reports
/// 79.2 GiB of 80 GiB: 0.99).
inline constexpr double kUsableMemoryFraction = 0.99;

/// The estimate for `batch` samples of `workload` at `options`' precision and optimizer, with the
/// data-parallel terms of `dp`.
MemoryEstimate estimate_gpu_memory(const workloads::Workload& workload, const workloads::IterationOptions& options,
                                   const DataParallelMemory& dp = {});

/// The estimate as the result's memory record for a GPU of `device_bytes` nominal memory.
MemoryUsage memory_usage(const MemoryEstimate& estimate, double device_bytes);

/// The most memory_per_gpu_bytes.largest_batch_per_gpu reports.
inline constexpr std::int64_t kLargestBatchPerGpuLimit = 1 << 20;

/// The largest batch per GPU (≥ 1) whose memory fits in `device_bytes`, or 0 when not even one
/// sample fits; at most `limit`.
std::int64_t largest_fitting_batch(const workloads::Workload& workload, workloads::IterationOptions options,
                                   double device_bytes, const DataParallelMemory& dp = {},
                                   std::int64_t limit = kLargestBatchPerGpuLimit);

}  // namespace trainsim::plan
