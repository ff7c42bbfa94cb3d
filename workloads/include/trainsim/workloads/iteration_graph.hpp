#pragma once
// One data-parallel training iteration of one GPU as pure data: the contract between workloads and
// the engine. It says what each GPU computes (FLOPs and bytes moved, per task, for its local
// batch), in which order, and when each gradient bucket becomes ready. Every GPU of a
// data-parallel job runs the same graph; the engine replicates it and adds the communication.
//
//   forward:  L0 → L1 → … → Ln-1
//   backward: Ln-1' → … → L1' → L0'        (reverse order; L0 needs no input gradient)
//                 └─ bucket 0 ready   └─ bucket k ready  (gradients grouped in backward order)
//   update:   one optimizer step over all parameters, after the last bucket's collective
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/workloads/kernels.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads {

enum class TaskPhase { forward, backward, update };
std::string_view to_string(TaskPhase phase);

/// One unit of GPU work for the local batch.
struct ComputeTask {
  std::string layer;          ///< layer name ("optimizer" for the update)
  TaskPhase phase = TaskPhase::forward;
  OpClass op_class = OpClass::elementwise;
  double flops = 0;           ///< FLOPs for the local batch
  double bytes = 0;           ///< bytes read and written in device memory for the local batch
  int kernels = 1;            ///< kernel launches (each pays the launch overhead)
  /// The kernels as the framework launches them, with their shapes (kernels.hpp); the compute
  /// model times these. Empty for a task built by hand: then flops and bytes are timed.
  std::vector<Kernel> launches;
  double host_ops = 0;  ///< operators the framework dispatches for this task (kernels.hpp's units)
};

/// A group of gradients reduced together (PyTorch DDP bucket, Horovod fusion buffer).
struct GradientBucket {
  double bytes = 0;               ///< gradient bytes in the bucket
  std::size_t ready_after = 0;    ///< index into IterationGraph::backward: ready once that task ends
  std::vector<std::string> layers;  ///< layers whose gradients it holds, in backward order
};

enum class Optimizer { sgd, momentum, adam };
std::string_view to_string(Optimizer optimizer);
std::vector<std::string> optimizer_names();
/// Inverse of to_string; nullopt for any other name.
std::optional<Optimizer> parse_optimizer(std::string_view name);

/// Knobs of the expansion.
struct IterationOptions {
  double batch = 1;                    ///< samples on this GPU (> 0)
  Precision precision = Precision::fp32;
  double bucket_bytes = 25.0 * kMiB;   ///< bucket capacity; 0 = one bucket per layer with parameters
  double first_bucket_bytes = 0;       ///< capacity of the first bucket (PyTorch DDP: 1 MiB); 0 = bucket_bytes
  Optimizer optimizer = Optimizer::momentum;
  KernelOptions kernels;  ///< how the framework's kernels are chosen (fused attention)
};

/// The expansion of one workload for one GPU.
struct IterationGraph {
  std::string model;
  double batch = 0;
  Precision precision = Precision::fp32;
  std::vector<ComputeTask> forward;   ///< in forward order
  std::vector<ComputeTask> backward;  ///< in backward order
  ComputeTask update;                 ///< the optimizer step
  std::vector<GradientBucket> buckets;  ///< in the order they become ready
  double gradient_bytes = 0;          ///< all gradients, = sum of bucket bytes
  std::int64_t params = 0;

  /// The whole graph as JSON (for inspection, tests and `trainsim simulate --dump-graph`).
  Json to_json() const;
};

/// Expands `workload` into one GPU's iteration. Memory traffic per task is the roofline's bytes:
/// forward reads inputs and weights and writes outputs; backward reads the output gradient, the
/// saved activations and the weights, and writes the input and weight gradients.
IterationGraph expand_iteration(const Workload& workload, const IterationOptions& options);

}  // namespace trainsim::workloads
