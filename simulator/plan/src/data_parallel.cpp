#include "trainsim/plan/data_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "trainsim/core/error.hpp"

namespace trainsim::plan {

std::vector<std::string> fsdp_strategy_names() {
  return {"NO_SHARD", "SHARD_GRAD_OP", "FULL_SHARD", "HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"};
}

ShardingConfig read_sharding(const JsonNode& strategy) {
  ShardingConfig c;
  const auto stage = strategy.find("zero_stage");
  const auto fsdp = strategy.find("fsdp");
  if (stage && fsdp) throw fsdp->error("give either 'zero_stage' or 'fsdp' (FSDP's name for a ZeRO stage), not both");
  if (stage) {
    c.stage = stage->int_in(0, 3);
    c.key = "zero_stage";
  }
  if (fsdp) {
    // torch.distributed.fsdp.ShardingStrategy: FULL_SHARD shards parameters, gradients and
    // optimizer state (ZeRO-3); SHARD_GRAD_OP keeps parameters whole between forward and backward
    // (ZeRO-2); the hybrid ones do either inside a node and replicate across nodes.
    const std::string name = fsdp->one_of(fsdp_strategy_names());
    c.stage = name == "NO_SHARD" ? 0 : (name == "SHARD_GRAD_OP" || name == "_HYBRID_SHARD_ZERO2") ? 2 : 3;
    c.hybrid = name == "HYBRID_SHARD" || name == "_HYBRID_SHARD_ZERO2";
    c.key = "fsdp";
  }
  return c;
}

CheckpointingConfig read_checkpointing(const JsonNode& node) {
  CheckpointingConfig c;
  if (node.is_bool()) {
    c.every_layers = node.as_bool() ? 1 : 0;
    return c;
  }
  if (!node.is_number())
    throw node.error("must be true (every layer), false, or a number of layers k ≥ 1 (every k layers), got " +
                     node.raw().dump());
  c.every_layers = node.int_in(1, 1'000'000);
  return c;
}

std::vector<CheckpointSegment> checkpoint_segments(const workloads::Workload& workload, int every_layers) {
  TRAINSIM_CHECK(every_layers >= 1, "checkpoint segments need every_layers ≥ 1");
  std::vector<CheckpointSegment> out;
  const std::size_t n = workload.layers.size();
  const auto k = static_cast<std::size_t>(every_layers);
  for (std::size_t first = 0; first < n; first += k) out.push_back({first, std::min(n, first + k) - 1, true});
  if (!out.empty()) out.back().recomputed = false;
  return out;
}

namespace {

bool computes(const workloads::LayerCost& layer) {
  return layer.op_class != workloads::OpClass::data;
}

}  // namespace

std::size_t recomputed_layer_count(const workloads::Workload& workload, int every_layers) {
  std::size_t count = 0;
  for (const CheckpointSegment& s : checkpoint_segments(workload, every_layers))
    if (s.recomputed)
      for (std::size_t i = s.first; i <= s.last; ++i) count += computes(workload.layers[i]) ? 1 : 0;
  return count;
}

void add_recomputation(workloads::IterationGraph& graph, const workloads::Workload& workload, int every_layers) {
  TRAINSIM_CHECK(graph.forward.size() == workload.layers.size(), "the graph is the workload's expansion");
  std::unordered_map<std::string, std::size_t> position;  // layer → forward index
  for (std::size_t i = 0; i < workload.layers.size(); ++i) position.emplace(workload.layers[i].name, i);
  const std::vector<CheckpointSegment> segments = checkpoint_segments(workload, every_layers);
  std::vector<std::size_t> segment_of(workload.layers.size());
  for (std::size_t s = 0; s < segments.size(); ++s)
    for (std::size_t i = segments[s].first; i <= segments[s].last; ++i) segment_of[i] = s;

  // Backward runs layers in reverse, so a segment's backward begins with its last computing layer:
  // its forward is recomputed right before (the checkpoint's backward hook runs the segment's
  // forward from the saved input, then its backward).
  std::vector<workloads::ComputeTask> backward;
  std::vector<std::size_t> moved(graph.backward.size());  // old backward index → new
  std::vector<char> done(segments.size(), 0);
  for (std::size_t t = 0; t < graph.backward.size(); ++t) {
    const std::size_t s = segment_of.at(position.at(graph.backward[t].layer));
    if (segments[s].recomputed && !done[s]) {
      done[s] = 1;
      for (std::size_t i = segments[s].first; i <= segments[s].last; ++i) {
        if (!computes(workload.layers[i])) continue;
        workloads::ComputeTask task = graph.forward[i];
        task.layer += " (recompute)";
        task.phase = workloads::TaskPhase::backward;
        backward.push_back(std::move(task));
      }
    }
    moved[t] = backward.size();
    backward.push_back(graph.backward[t]);
  }
  graph.backward = std::move(backward);
  for (auto& bucket : graph.buckets) bucket.ready_after = moved.at(bucket.ready_after);
}

ActivationBytes activation_bytes_per_sample(const workloads::Workload& workload, Precision p, int every_layers) {
  ActivationBytes out;
  const double element = bytes_per_element(p);
  if (every_layers <= 0) {
    out.stored = workload.activation_bytes(p);
    return out;
  }
  for (const CheckpointSegment& s : checkpoint_segments(workload, every_layers)) {
    double saved = 0;
    for (std::size_t i = s.first; i <= s.last; ++i) saved += workload.layers[i].saved_elements * element;
    if (!s.recomputed) {
      out.stored += saved;
      continue;
    }
    // The checkpoint keeps the segment's input: what its first layer reads.
    out.stored += workload.layers[s.first].input_elements * element;
    out.recompute = std::max(out.recompute, saved);
  }
  return out;
}

int default_checkpoint_every(const workloads::Workload& workload) {
  return std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(workload.layers.size())))));
}

std::vector<std::size_t> forward_groups(const workloads::IterationGraph& graph) {
  std::unordered_map<std::string, std::size_t> bucket_of;
  for (std::size_t b = 0; b < graph.buckets.size(); ++b)
    for (const std::string& layer : graph.buckets[b].layers) bucket_of.emplace(layer, b);
  std::vector<std::size_t> out(graph.forward.size(), graph.buckets.empty() ? 0 : graph.buckets.size() - 1);
  std::optional<std::size_t> current;
  for (std::size_t i = 0; i < graph.forward.size(); ++i) {
    if (const auto it = bucket_of.find(graph.forward[i].layer); it != bucket_of.end()) current = it->second;
    if (current) out[i] = *current;
  }
  // Leading layers without parameters run in the first group's forward.
  std::size_t first = 0;
  while (first < out.size() && !bucket_of.contains(graph.forward[first].layer)) ++first;
  if (first < out.size())
    for (std::size_t i = 0; i < first; ++i) out[i] = out[first];
  return out;
}

}  // namespace trainsim::plan
