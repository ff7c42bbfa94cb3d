#pragma once
// Data parallelism as large jobs run it (simulator/README.md "Accumulation, sharding and
// recomputation"): gradient accumulation, sharded training state (DeepSpeed ZeRO stages 1–3, PyTorch
// FSDP's sharding strategies) and activation checkpointing. Pure data: what a scenario asks for, and
// what it changes in one GPU's iteration and memory. The plan (training_plan.cpp) turns it into
// compute and communication:
//
//   accumulation k:  [fwd bwd] × (k−1) (no communication, DDP's no_sync) ─ fwd ─ bwd ─▶ buckets reduced ─ update
//   stage 1:         all-reduce per bucket ─ update of the GPU's 1/N shard ─ all-gather of the updated parameters
//   stage 2:         reduce-scatter per bucket ─ update of the shard ─ all-gather of the updated parameters
//   stage 3:         all-gather of group g before its forward (prefetched one group ahead) … again before its
//                    backward … reduce-scatter per bucket ─ update of the shard (parameters stay sharded)
//   hybrid:          the same inside each node; gradients' shards all-reduced across nodes (HYBRID_SHARD)
//
// A layer group of stage 3 is a gradient bucket (FSDP gathers and reduce-scatters one wrapped module's
// FlatParameter at a time; bucket_MB plays the wrap policy's size threshold).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/workloads/iteration_graph.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::plan {

/// How the data-parallel group shards the training state.
struct ShardingConfig {
  int stage = 0;        ///< ZeRO stage: 0 none, 1 optimizer state, 2 + gradients, 3 + parameters
  bool hybrid = false;  ///< shard inside each node, replicate across nodes (FSDP HYBRID_SHARD, _HYBRID_SHARD_ZERO2)
  std::string key;      ///< the scenario key that set it ("zero_stage" or "fsdp"; empty when neither)
  /// GPUs one shard group spans: all of them, or a node's under hybrid.
  int group_size(int gpus, int gpus_per_node) const { return hybrid ? gpus_per_node : gpus; }
};

/// FSDP's ShardingStrategy names and the ZeRO stage and scope each stands for:
/// NO_SHARD 0, SHARD_GRAD_OP 2, FULL_SHARD 3, HYBRID_SHARD 3 hybrid, _HYBRID_SHARD_ZERO2 2 hybrid
/// (torch/distributed/fsdp/api.py).
std::vector<std::string> fsdp_strategy_names();
/// Reads `zero_stage` (0–3) or `fsdp` (a name above) from a strategy object; neither gives stage 0.
/// Both at once: InputError at `fsdp`.
ShardingConfig read_sharding(const JsonNode& strategy);

/// Activation checkpointing: every `every_layers` consecutive layers (in forward order) form a
/// segment whose input alone is kept; its activations are recomputed during backward, just before
/// the segment's first backward task. The last segment is not checkpointed (PyTorch's
/// checkpoint_sequential runs it normally, torch/utils/checkpoint.py), so per-layer checkpointing
/// is every_layers = 1.
struct CheckpointingConfig {
  int every_layers = 0;  ///< 0 = off
  bool on() const { return every_layers > 0; }
};
/// Reads `workload.activation_checkpointing`: true (every layer), false (off), or an integer k ≥ 1
/// (every k layers).
CheckpointingConfig read_checkpointing(const JsonNode& node);

/// One checkpoint segment: layers [first, last] in forward order.
struct CheckpointSegment {
  std::size_t first = 0;
  std::size_t last = 0;
  bool recomputed = false;  ///< its forward runs again in backward (every segment but the last)
};
/// The segments of `workload` for checkpointing every `every_layers` layers (≥ 1).
std::vector<CheckpointSegment> checkpoint_segments(const workloads::Workload& workload, int every_layers);
/// Forward tasks recomputed in backward: those of the recomputed segments' computing layers (data
/// layers read their input again, nothing to recompute). 0 = nothing to recompute.
std::size_t recomputed_layer_count(const workloads::Workload& workload, int every_layers);
/// Inserts the recomputed forward tasks into `graph.backward` (phase backward, the forward's FLOPs
/// and bytes, layer named "<layer> (recompute)"), each segment's just before its first backward
/// task, and moves the buckets' ready_after with them. The graph must come from
/// expand_iteration(workload, …).
void add_recomputation(workloads::IterationGraph& graph, const workloads::Workload& workload, int every_layers);
/// Bytes per sample of the activations kept for backward at precision `p`: every layer's saved
/// activations without checkpointing (every_layers 0); with it, each recomputed segment's input,
/// the last segment's saved activations and the largest recomputed segment's (live while its
/// backward runs).
struct ActivationBytes {
  double stored = 0;     ///< kept through the forward pass: checkpoints and the last segment
  double recompute = 0;  ///< the largest recomputed segment, re-materialised in backward
  double total() const { return stored + recompute; }
};
ActivationBytes activation_bytes_per_sample(const workloads::Workload& workload, Precision p, int every_layers);
/// every_layers for the report's "with checkpointing" figure when the scenario has none: ⌈√L⌉ of
/// L layers (Chen et al., "Training deep nets with sublinear memory cost", 2016).
int default_checkpoint_every(const workloads::Workload& workload);

/// Forward groups of stage 3: for every forward task, the bucket whose parameters it needs (a layer
/// without parameters joins the group of the layer with parameters before it; leading ones the
/// first group's). Parallel to graph.forward; buckets index graph.buckets.
std::vector<std::size_t> forward_groups(const workloads::IterationGraph& graph);

}  // namespace trainsim::plan
