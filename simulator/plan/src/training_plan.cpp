#include "trainsim/plan/training_plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/plan/all_reduce_schedule.hpp"
#include "trainsim/plan/collective_schedule.hpp"
#include "trainsim/plan/compute_model.hpp"
#include "trainsim/plan/data_parallel.hpp"
#include "trainsim/plan/gpu_memory.hpp"
#include "trainsim/plan/nccl_decision.hpp"
#include "trainsim/plan/nccl_tuner.hpp"

namespace trainsim::plan {

namespace {
constexpr EnumNames<ServerHost, 3> kServerHosts{
    {{{ServerHost::node_cpu, "node_cpu"}, {ServerHost::gpu, "gpu"}, {ServerHost::server_node, "server_node"}}}};
constexpr EnumNames<CommKind, 8> kCommKinds{{{{CommKind::all_reduce, "all_reduce"},
                                              {CommKind::push, "push"},
                                              {CommKind::pull, "pull"},
                                              {CommKind::device_to_host, "device_to_host"},
                                              {CommKind::host_sum, "host_sum"},
                                              {CommKind::host_to_device, "host_to_device"},
                                              {CommKind::reduce_scatter, "reduce_scatter"},
                                              {CommKind::all_gather, "all_gather"}}}};
constexpr EnumNames<CommEndpoints, 2> kCommEndpoints{
    {{{CommEndpoints::gpus, "gpus"}, {CommEndpoints::node_hosts, "node_hosts"}}}};
constexpr EnumNames<CommTrigger, 5> kCommTriggers{{{{CommTrigger::bucket_ready, "bucket_ready"},
                                                    {CommTrigger::backward_done, "backward_done"},
                                                    {CommTrigger::previous_op, "previous_op"},
                                                    {CommTrigger::update_done, "update_done"},
                                                    {CommTrigger::gate_passed, "gate_passed"}}}};
}  // namespace

std::string_view to_string(ServerHost host) {
  return kServerHosts.name(host);
}

std::string_view to_string(CommKind kind) {
  return kCommKinds.name(kind);
}

std::string_view to_string(CommEndpoints endpoints) {
  return kCommEndpoints.name(endpoints);
}

std::string_view to_string(CommTrigger trigger) {
  return kCommTriggers.name(trigger);
}

namespace {

// Deterministic random numbers: mt19937_64's output sequence is fixed by the standard; the
// distributions are written here because std::normal_distribution is implementation-defined.
class Random {
public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double normal() {
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

private:
  std::mt19937_64 engine_;
};

std::vector<double> gpu_slowdowns(const Scenario& s) {
  const int n = s.gpus();
  const auto& h = s.heterogeneity;
  std::vector<double> slow(static_cast<std::size_t>(n), 1.0);
  // GPUs sharing a board's power budget with another GPU of the job run at the board's shared speed
  // (platform.gpu_board); a job of one GPU per node leaves every board with one busy GPU.
  if (!s.platform.simgrid_xml) {
    const std::vector<double> board = platforms::board_speeds(s.platform, s.platform.gpus_per_node);
    for (int r = 0; r < n; ++r) slow[static_cast<std::size_t>(r)] /= board[static_cast<std::size_t>(r % s.platform.gpus_per_node)];
  }
  for (const auto& [node, speed] : h.node_speed)
    for (int local = 0; local < s.platform.gpus_per_node; ++local) slow[node * s.platform.gpus_per_node + local] /= speed;
  for (const auto& [rank, speed] : h.gpu_speed) slow[rank] /= speed;
  if (h.jitter_sigma > 0 || h.straggler_probability > 0) {
    Random random(h.seed);
    for (int r = 0; r < n; ++r) {
      // Mean-one lognormal: exp(σZ − σ²/2).
      if (h.jitter_sigma > 0) slow[r] *= std::exp(h.jitter_sigma * random.normal() - 0.5 * h.jitter_sigma * h.jitter_sigma);
      if (h.straggler_probability > 0 && random.uniform() < h.straggler_probability) slow[r] *= h.straggler_slowdown;
    }
  }
  return slow;
}

Algorithm algorithm_of(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::hierarchical_allreduce: return Algorithm::hierarchical;
    case StrategyKind::tree_allreduce: return Algorithm::tree;
    case StrategyKind::halving_doubling: return Algorithm::halving_doubling;
    default: return Algorithm::ring;
  }
}

// Where the parameter servers run. Colocated: server i on worker node i's host CPU (CPU
// aggregation) or on a GPU of node i (GPU aggregation, competing with that GPU's own compute),
// wrapping around when there are more servers than nodes; a SimGrid XML platform has no node
// CPUs, so its servers sit on GPUs. Dedicated: extra CPU-only nodes, one per server.
std::vector<PlannedServer> place_servers(const Scenario& s) {
  std::vector<PlannedServer> servers;
  const int count = s.strategy.servers;
  const int per_node = s.platform.gpus_per_node;
  const int nodes = std::max(1, s.gpus() / per_node);
  for (int i = 0; i < count; ++i) {
    PlannedServer server;
    server.id = i;
    if (s.strategy.placement == ServerPlacement::dedicated) {
      if (s.platform.simgrid_xml)
        throw s.root().at("strategy").at("server_placement").error(
            "a SimGrid XML platform has no dedicated server nodes: use \"colocated\" (servers on its hosts)");
      server.host = ServerHost::server_node;
      server.index = i;
      server.node = -1;
    } else {
      server.node = i % nodes;
      if (s.strategy.aggregation == Aggregation::gpu || s.platform.simgrid_xml) {
        server.host = ServerHost::gpu;
        server.index = server.node * per_node + (i / nodes) % per_node;
      } else {
        server.host = ServerHost::node_cpu;
        server.index = server.node;
      }
    }
    servers.push_back(server);
  }
  return servers;
}

// Bytes per link class of an all-reduce of one byte over `ranks`, from the schedule the engine
// runs (all_reduce_schedule) with the default collective options (the plan's operations use them).
// Every message from one node to another crosses the network; the rest stays inside a node.
LinkClassBytes all_reduce_link_bytes(Algorithm algorithm, const std::vector<int>& ranks, const platforms::PlatformSpec& spec,
                                     HdOrder hd_order) {
  CollectiveOptions options;
  options.hd_order = hd_order;
  const int g = spec.gpus_per_node;
  LinkClassBytes out;
  auto add = [&](int from, int to, double bytes) { (from / g == to / g ? out.intra_node : out.inter_node) += bytes; };
  auto add_rings = [&](const std::vector<Ring>& rings, double times) {
    for (const Ring& ring : rings) {
      const std::size_t n = ring.ranks.size();
      for (std::size_t i = 0; i < n; ++i) add(ring.ranks[i], ring.ranks[(i + 1) % n], times * ring.steps * ring.chunk_bytes);
    }
  };
  auto add_schedule = [&](const StepSchedule& schedule, const std::vector<int>& order) {
    if (const auto* trees = dynamic_cast<const TreeSchedule*>(&schedule)) {
      // Every edge of every tree carries m chunks up and m down, all of chunk_bytes: the same
      // additions as walking the steps (equal terms, so their order does not matter), without
      // asking every participant for its sends at every step (65,536 GPUs: 16 trees, 46 steps).
      long long intra = 0, inter = 0;
      for (int t = 0; t < trees->trees(); ++t)
        for (int p = 0; p < trees->participants(); ++p)
          if (const int up = trees->parent(t, p); up >= 0)
            (order[std::size_t(p)] / g == order[std::size_t(up)] / g ? intra : inter) += 2LL * trees->chunks();
      for (long long i = 0; i < intra; ++i) out.intra_node += trees->chunk_bytes();
      for (long long i = 0; i < inter; ++i) out.inter_node += trees->chunk_bytes();
      return;
    }
    std::vector<Send> sends;
    for (int step = 0; step < schedule.steps(); ++step)
      for (int p = 0; p < schedule.participants(); ++p) {
        sends.clear();
        schedule.sends(p, step, sends);
        for (const Send& m : sends)
          add(order[static_cast<std::size_t>(p)], order[static_cast<std::size_t>(m.to)], m.bytes);
      }
  };
  std::visit(
      [&](const auto& s) {
        using Shape = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<Shape, RingPhase>) {
          add_rings(s.rings, 1);
        } else if constexpr (std::is_same_v<Shape, HierarchicalPhases>) {
          add_rings(s.intra, 2);  // reduce-scatter before, all-gather after
          add_rings(s.inter, 1);
        } else if constexpr (std::is_same_v<Shape, SharpPhases>) {
          add_rings(s.intra, 1);
          add_rings(s.inter, 1);
        } else if constexpr (std::is_same_v<Shape, NvlsTreePhases>) {
          add_rings(s.intra, 1);
          add_schedule(s.inter.schedule, s.inter.ranks);
        } else {  // RankedHalvingDoubling, NcclTrees, RankedDoubleTree: a step schedule over ranks
          add_schedule(s.schedule, s.ranks);
        }
      },
      all_reduce_schedule(algorithm, ranks, 1.0, spec, options));
  return out;
}

ModelVariables model_variables(const Scenario& s, const workloads::Workload& workload, double single_gpu_iteration_s) {
  ModelVariables v;
  const auto& p = s.platform;
  v.gpus_per_node = p.gpus_per_node;
  v.batch_per_gpu = s.global_batch() / s.gpus();
  v.flops_per_sample = workload.forward_flops();
  v.model_bytes = workload.weight_bytes(s.workload.precision);
  v.params = workload.params();
  v.precision = std::string(trainsim::to_string(s.workload.precision));
  const bool pcie = p.intra_node.kind == platforms::IntraNodeKind::pcie;
  v.intra_node_bandwidth_GBps = bytes_per_s_to_gBps(pcie ? p.intra_node.pcie_bandwidth_Bps : p.intra_node.bandwidth_Bps);
  v.intra_node_latency_us = s_to_us(p.intra_node.latency_s);
  v.network_bandwidth_Gbps = bytes_per_s_to_gbps(p.network.bandwidth_Bps);
  v.network_latency_us = s_to_us(p.network.latency_s);
  v.nics_per_node = p.network.nics_per_node;
  v.servers = s.strategy.kind == StrategyKind::parameter_server ? s.strategy.servers : 0;
  v.single_gpu_time_s = single_gpu_iteration_s;
  v.dataset_samples = s.workload.dataset_samples;
  v.accumulation_steps = s.workload.accumulation_steps;
  return v;
}

ComputeProfile make_profile(const workloads::IterationGraph& graph, const IterationTimes& times) {
  ComputeProfile p;
  p.batch = graph.batch;
  for (std::size_t i = 0; i < graph.forward.size(); ++i) p.forward.push_back({graph.forward[i].layer, times.forward_s[i]});
  for (std::size_t i = 0; i < graph.backward.size(); ++i) p.backward.push_back({graph.backward[i].layer, times.backward_s[i]});
  p.update = {graph.update.layer, times.update_s};
  p.segments_s.push_back(times.forward_total_s());
  std::size_t next = 0;
  for (const auto& bucket : graph.buckets) {
    double segment = 0;
    for (; next <= bucket.ready_after; ++next) segment += times.backward_s[next];
    p.segments_s.push_back(segment);
  }
  double tail = 0;
  for (; next < times.backward_s.size(); ++next) tail += times.backward_s[next];
  p.segments_s.push_back(tail);
  return p;
}

}  // namespace

double ComputeProfile::total_s() const {
  double total = update.seconds;
  for (double s : segments_s) total += s;
  return total;
}

double TrainingPlan::compute_s(int rank) const {
  const GpuPlan& g = gpu_plans.at(static_cast<std::size_t>(rank));
  const ComputeProfile& p = profiles.at(g.profile);
  double total = 0;
  for (double s : p.segments_s) total += s * g.slowdown;
  return total + p.update.seconds * g.slowdown;
}

std::optional<LinkClassBytes> TrainingPlan::link_class_bytes(const CommOp& op) const {
  LinkClassBytes out;
  switch (op.kind) {
    case CommKind::all_reduce:
      if (op.ranks <= 1) return out;
      if (op.transport == Transport::host) {
        // One rank per GPU in a node-major ring: per step, one hop per node crosses the network and
        // the node's other g−1 hops are shared-memory copies (counted as intra-node); 2(n−1) steps of S/n.
        const double g = std::min(gpus_per_node, op.ranks), node_count = std::ceil(op.ranks / g);
        const double chunk = op.bytes / op.ranks, steps = 2.0 * (op.ranks - 1);
        out.inter_node = node_count > 1 ? steps * node_count * chunk : 0;
        out.intra_node = steps * (op.ranks - (node_count > 1 ? node_count : 1)) * chunk;
        return out;
      }
      if (op.first_rank != 0 || op.ranks != gpus) return std::nullopt;
      if (const auto it = all_reduce_bytes_per_byte.find(op.algorithm); it != all_reduce_bytes_per_byte.end()) {
        // The flows carry the protocol's wire bytes (wire_factor, 1 without a protocol).
        out.intra_node = it->second.intra_node * op.bytes * op.wire_factor;
        out.inter_node = it->second.inter_node * op.bytes * op.wire_factor;
        return out;
      }
      return std::nullopt;
    case CommKind::push:
    case CommKind::pull:
      for (int w = op.first_rank; w < op.first_rank + op.ranks; ++w) {
        const bool host = op.endpoints == CommEndpoints::node_hosts;
        const int node = host ? w : w / gpus_per_node;
        for (const auto& server : servers) {
          // A node's host exchanging with a server on that same CPU moves nothing over a link.
          if (host && server.host == ServerHost::node_cpu && server.index == node) continue;
          const double bytes = op.bytes_per_server.at(static_cast<std::size_t>(server.id));
          (server.node == node ? out.intra_node : out.inter_node) += bytes;
        }
      }
      return out;
    case CommKind::device_to_host:
    case CommKind::host_to_device: out.intra_node = op.ranks * op.bytes; return out;
    case CommKind::host_sum: return out;
    case CommKind::reduce_scatter:
    case CommKind::all_gather: {
      if (op.ranks <= 1) return out;
      if (op.first_rank != 0 || op.ranks != gpus) return std::nullopt;
      if (op.node_local) {
        // A ring inside every node: each GPU sends (g−1)/g of the buffer to its neighbour. A
        // reduce-scatter then all-reduces its 1/g shard across the N nodes, one ring per local
        // rank: 2(N−1)/N of S/g from every GPU over the network.
        const double g = gpus_per_node, nodes_n = static_cast<double>(op.ranks) / g;
        out.intra_node = op.ranks * (g - 1) / g * op.bytes;
        if (op.kind == CommKind::reduce_scatter && nodes_n > 1)
          out.inter_node = op.ranks * 2 * (nodes_n - 1) / nodes_n * op.bytes / g;
        return out;
      }
      // The ring all-reduce's flows are a reduce-scatter's followed by an all-gather's on the same
      // ring order (collective_schedule.hpp): each is half of them.
      if (const auto it = all_reduce_bytes_per_byte.find(Algorithm::ring); it != all_reduce_bytes_per_byte.end()) {
        out.intra_node = 0.5 * it->second.intra_node * op.bytes;
        out.inter_node = 0.5 * it->second.inter_node * op.bytes;
        return out;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

DataParallelMemory data_parallel_memory(const Scenario& scenario, const workloads::Workload& workload,
                                        const std::vector<double>& bucket_bytes, int every_layers) {
  DataParallelMemory dp;
  const ShardingConfig& sharding = scenario.strategy.sharding;
  if (sharding.stage > 0) {
    dp.zero_stage = sharding.stage;
    dp.shard_group = sharding.group_size(scenario.gpus(), scenario.platform.gpus_per_node);
    // Accumulating micro-batches keeps whole gradients until the last one's reduce-scatter
    // (FSDP's no_sync holds unsharded gradients; fully_sharded_data_parallel.py).
    dp.whole_gradients = scenario.workload.accumulation_steps > 1;
    if (sharding.stage == 3) {
      // FSDP keeps the group it computes and the one it prefetches gathered, and one group's
      // unsharded gradients until its reduce-scatter (bucket bytes = the group's parameter bytes).
      double pair = 0, largest = 0;
      for (std::size_t i = 0; i < bucket_bytes.size(); ++i) {
        largest = std::max(largest, bucket_bytes[i]);
        pair = std::max(pair, bucket_bytes[i] + (i + 1 < bucket_bytes.size() ? bucket_bytes[i + 1] : 0.0));
      }
      dp.gathered_parameters = pair + largest;
    }
  }
  if (every_layers > 0) {
    // The per-layer saved tensors say which share of the activations the checkpoints keep.
    const Precision p = scenario.workload.precision;
    const double all = activation_bytes_per_sample(workload, p, 0).stored;
    if (all > 0) {
      const ActivationBytes a = activation_bytes_per_sample(workload, p, every_layers);
      dp.stored_share = a.stored / all;
      dp.recompute_share = a.recompute / all;
    }
  }
  return dp;
}

MemoryUsage memory_per_gpu(const Scenario& scenario, const workloads::Workload& workload,
                           const std::vector<double>& bucket_bytes, const LargestBatch& largest) {
  const auto& ck = scenario.workload.checkpointing;
  const DataParallelMemory dp = data_parallel_memory(scenario, workload, bucket_bytes, ck.on() ? ck.every_layers : 0);
  // The largest local batch: a strong-scaling remainder goes to the first ranks.
  MemoryUsage m = memory_usage(estimate_gpu_memory(workload, scenario.iteration_options(scenario.batch_of(0)), dp),
                               scenario.platform.gpu.memory_bytes);
  // The same search, already made with the scenario's segments (largest_batch uses them when it has some).
  m.largest_batch_per_gpu =
      std::min(ck.on() ? largest.with_checkpointing : largest.without_checkpointing, kLargestBatchPerGpuLimit);
  return m;
}

LargestBatch largest_batch(const Scenario& scenario, const workloads::Workload& workload,
                           const std::vector<double>& bucket_bytes) {
  LargestBatch out;
  const auto& ck = scenario.workload.checkpointing;
  out.checkpoint_every_layers = ck.on() ? ck.every_layers : default_checkpoint_every(workload);
  auto fit = [&](int every_layers) {
    return largest_fitting_batch(workload, scenario.iteration_options(1), scenario.platform.gpu.memory_bytes,
                                 data_parallel_memory(scenario, workload, bucket_bytes, every_layers),
                                 kMaxReportedBatch);
  };
  out.without_checkpointing = fit(0);
  out.with_checkpointing = fit(out.checkpoint_every_layers);
  return out;
}

namespace {

// Reduce-scatters and all-gathers of sharded training state (data_parallel.hpp), after the
// per-bucket all-reduces of stage 1 (already in plan.ops). NCCL runs both on rings (the only
// algorithm it has for them without NVLS or PAT, src/enqueue.cc): ring flows, with the ring's
// launch cost per call.
void add_sharded_ops(TrainingPlan& plan, bool overlap, const std::optional<NcclTopology>& topo, int gpu_sms) {
  const std::size_t k = plan.buckets.size();
  const CommTrigger ready = overlap ? CommTrigger::bucket_ready : CommTrigger::backward_done;
  auto make = [&plan, &topo, gpu_sms](CommKind kind, std::size_t bucket, CommTrigger trigger) {
    CommOp op;
    op.kind = kind;
    op.bucket = bucket;
    op.trigger = trigger;
    op.first_rank = 0;
    op.ranks = plan.gpus;
    op.bytes = plan.buckets[bucket].bytes;
    op.algorithm = Algorithm::ring;
    op.launch_s = nccl_launch_s(Algorithm::ring);
    op.node_local = plan.hybrid_sharding;
    // nccl_allreduce: their ring kernels hold SMs as the all-reduces' do (one CTA per channel of
    // the ring NCCL would run for this size), so sharded stages slow overlapped compute alike.
    // The plan's one NCCL decision with the ring pinned (NCCL_ALGO=Ring): only the SMs are taken
    // from it, the ring's launch cost above stays the sharded ops' own. With two or more ranks a
    // Simple ring always runs, so the decision never refuses; one rank holds no SMs.
    if (topo && gpu_sms > 0 && topo->ranks >= 2) {
      NcclRequest request;
      request.tune_algorithm = false;
      request.algorithm = Algorithm::ring;
      request.gpu_sm_count = gpu_sms;
      request.all_reduce = false;
      op.kernel_sms = nccl_decide(*topo, op.bytes, request).kernel_sms;
      if (op.kernel_sms > 0) op.compute_share = double(gpu_sms - op.kernel_sms) / gpu_sms;
    }
    return op;
  };
  auto add = [&plan](CommOp op) {
    op.id = static_cast<int>(plan.ops.size());
    op.after_op = op.id - 1;
    plan.ops.push_back(std::move(op));
  };
  if (plan.zero_stage == 3) {
    // FSDP FULL_SHARD: gather a group's parameters before its forward, the next group's gather
    // issued as the GPUs begin this one (forward_prefetch, limit_all_gathers); in backward gather
    // again, the next group's before this group's reduce-scatter (BackwardPrefetch.BACKWARD_PRE).
    for (std::size_t j = 0; j < k; ++j) {
      CommOp op = make(CommKind::all_gather, k - 1 - j, j == 0 ? CommTrigger::previous_op : CommTrigger::gate_passed);
      op.opens_gate = static_cast<int>(j);
      op.trigger_gate = static_cast<int>(j) - 1;
      add(op);
    }
    for (std::size_t b = 0; b < k; ++b) {
      CommOp op = make(CommKind::all_gather, b, CommTrigger::gate_passed);
      op.opens_gate = static_cast<int>(k + b);
      op.trigger_gate = static_cast<int>(k + b) - 1;
      add(op);
      if (overlap && b >= 1) add(make(CommKind::reduce_scatter, b - 1, ready));
    }
    if (overlap) add(make(CommKind::reduce_scatter, k - 1, ready));
    if (!overlap)
      for (std::size_t b = 0; b < k; ++b) add(make(CommKind::reduce_scatter, b, ready));
    return;
  }
  if (plan.zero_stage == 2)
    for (std::size_t b = 0; b < k; ++b) add(make(CommKind::reduce_scatter, b, ready));
  // Stages 1 and 2: every GPU updates its shard, then all-gathers the updated parameters
  // (DeepSpeed's stage_1_and_2.py all_gather_dp_groups, bucket by bucket).
  for (std::size_t b = 0; b < k; ++b)
    add(make(CommKind::all_gather, b, b == 0 ? CommTrigger::update_done : CommTrigger::previous_op));
}

// What the plan copies from the scenario: names, sizes, options, the platform and report fields.
TrainingPlan plan_header(const Scenario& scenario) {
  TrainingPlan plan;
  plan.name = scenario.name;
  plan.strategy = std::string(to_string(scenario.strategy.kind));
  plan.network_model = platforms::to_string(scenario.platform.network.model);
  plan.gpus = scenario.gpus();
  plan.nodes = scenario.platform.nodes;
  plan.gpus_per_node = scenario.platform.gpus_per_node;
  plan.global_batch = scenario.global_batch();
  plan.overlap = scenario.strategy.overlap;
  plan.representation = scenario.strategy.representation;
  plan.hd_order = scenario.strategy.hd_order;
  plan.aggregate_flops_per_byte = 1.0 / bytes_per_element(scenario.workload.precision);
  plan.server_throughput_Bps = scenario.strategy.server_throughput_Bps;
  plan.host_memory_bandwidth_Bps = scenario.platform.cpu.memory_bandwidth_Bps;
  plan.platform = scenario.platform;
  plan.input_pipeline = scenario.workload.input_pipeline;
  plan.bucket_bytes = scenario.strategy.bucket_bytes;
  plan.scaling = scenario.workload.scaling == Scaling::strong ? "strong" : "weak";
  plan.calibrated = scenario.single_gpu_samples_per_s.has_value();
  plan.gpu_sm_count = scenario.platform.gpu.sm_count;
  return plan;
}

// The compute: calibration, one profile per distinct local batch, every GPU's slowdown, and the
// buckets (from rank 0's graph).
void plan_compute(TrainingPlan& plan, const Scenario& scenario, const workloads::Workload& workload) {
  const auto& gpu = scenario.platform.gpu;
  // Calibration: κ so that one GPU running the same scenario (its whole reference batch)
  // reproduces the measured throughput. One GPU has no communication: its iteration is its compute.
  plan.reference_batch = scenario.reference_batch();
  const int steps = scenario.workload.accumulation_steps;
  const int every = scenario.workload.checkpointing.every_layers;
  if (every > 0 && recomputed_layer_count(workload, every) == 0)
    throw scenario.root()
        .at("workload")
        .at("activation_checkpointing")
        .error(fmt::format(
            "the workload '{}' has {} layers: checkpointing every {} leaves one segment, the last, which is never "
            "recomputed; there is nothing to recompute (use fewer layers per segment, or false)",
            workload.name, workload.layers.size(), every));
  const ShardingConfig& sharding = scenario.strategy.sharding;
  plan.accumulation_steps = steps;
  plan.zero_stage = sharding.stage;
  plan.hybrid_sharding = sharding.hybrid && sharding.stage > 0;
  plan.shard_group = sharding.stage > 0 ? sharding.group_size(plan.gpus, scenario.platform.gpus_per_node) : 1;
  plan.checkpoint_every_layers = every;
  // One GPU's iteration for a micro-batch: the workload's expansion, with the recomputed forward
  // in backward under checkpointing; at the scenario's precision unless another is given.
  auto expand = [&](double batch, std::optional<Precision> precision = std::nullopt) {
    workloads::IterationOptions options = scenario.iteration_options(batch);
    if (precision) options.precision = *precision;
    workloads::IterationGraph graph = workloads::expand_iteration(workload, options);
    if (every > 0) add_recomputation(graph, workload, every);
    return graph;
  };
  const auto single_graph = expand(plan.reference_batch / steps);
  const IterationTimes single_times = iteration_times(single_graph, gpu, scenario.compute);
  // Accumulation: every micro-batch's forward and backward, one optimizer step.
  auto step_s = [steps](const IterationTimes& t) {
    return steps * (t.forward_total_s() + t.backward_total_s()) + t.update_s;
  };
  const double single_model_s = step_s(single_times);
  if (!(single_model_s > 0))
    throw InputError(scenario.source, "/workload", "the workload '" + workload.name + "' does no computation: nothing to simulate");
  ComputeCalibration calibration;
  if (scenario.single_gpu_samples_per_s) {
    // Calibrated where it was measured (calibration.gpu, .precision, .batch_per_gpu: the
    // scenario's unless given), applied to the platform's GPU at the scenario's settings.
    const double measured_batch = scenario.calibration_batch.value_or(plan.reference_batch / steps);
    const workloads::IterationGraph measured_graph = expand(measured_batch, scenario.calibration_precision);
    const double measured_s = measured_batch * steps / *scenario.single_gpu_samples_per_s;
    calibration = fit_calibration(
        iteration_load(measured_graph, scenario.calibration_gpu.value_or(gpu), scenario.compute, steps), measured_s);
  }
  plan.single_gpu_iteration_s = step_s(iteration_times(single_graph, gpu, scenario.compute, calibration));
  // The scenario's own iteration, calibrated over uncalibrated: the measured κ where the
  // measurement ran the scenario's settings on its GPU.
  plan.calibration_factor = plan.single_gpu_iteration_s / single_model_s;
  plan.variables = model_variables(scenario, workload, plan.single_gpu_iteration_s);

  // At most two local batch sizes exist (strong scaling spreads a remainder over the first ranks,
  // so rank 0 has the largest); one profile each.
  const std::vector<double> slowdowns = gpu_slowdowns(scenario);
  std::map<double, std::size_t> profile_of_batch;
  for (int r = 0; r < plan.gpus; ++r) {
    const double batch = scenario.batch_of(r);
    auto [it, fresh] = profile_of_batch.emplace(batch, plan.profiles.size());
    if (fresh) {
      const auto graph = expand(batch);
      const IterationTimes times = iteration_times(graph, gpu, scenario.compute, calibration);
      ComputeProfile profile = make_profile(graph, times);
      profile.accumulation_s = (steps - 1) * (times.forward_total_s() + times.backward_total_s());
      profile.segments_s.front() += profile.accumulation_s;
      // Each GPU steps the optimizer over its shard only.
      profile.update.seconds /= plan.shard_group;
      // Stage 3 gathers each layer group's parameters before its forward; a parameter-server step
      // reads them (CommOp::after_all_pushes): the forward of a group waits for its variables.
      const bool gated_forward = plan.zero_stage == 3 || scenario.strategy.kind == StrategyKind::parameter_server;
      if (gated_forward && !graph.buckets.empty()) {
        const std::size_t k = graph.buckets.size();
        profile.forward_groups_s.assign(k, 0.0);
        const std::vector<std::size_t> groups = forward_groups(graph);
        for (std::size_t i = 0; i < groups.size(); ++i)
          profile.forward_groups_s[k - 1 - groups[i]] += times.forward_s[i];
      }
      plan.profiles.push_back(std::move(profile));
      if (r == 0)
        for (const auto& b : graph.buckets) plan.buckets.push_back(PlannedBucket{b.bytes, b.ready_after, b.layers});
    }
    plan.gpu_plans.push_back(GpuPlan{r, r / scenario.platform.gpus_per_node, it->second, slowdowns[r]});
  }
  std::vector<double> bucket_bytes;
  for (const PlannedBucket& b : plan.buckets) bucket_bytes.push_back(b.bytes);
  plan.largest_batch = largest_batch(scenario, workload, bucket_bytes);
  plan.memory = memory_per_gpu(scenario, workload, bucket_bytes, *plan.largest_batch);
}

// tf_cnn_benchmarks' distributed parameter server sums a worker's towers on its host CPU and
// caches the variables there (simulator/README.md, Parameter servers): the default wherever a node
// has several GPUs, servers aggregate on CPUs and the platform has node CPUs.
WorkerAggregation worker_aggregation_of(const Scenario& scenario) {
  const bool ps = scenario.strategy.kind == StrategyKind::parameter_server;
  return scenario.strategy.worker_aggregation.value_or(ps && scenario.platform.gpus_per_node > 1 &&
                                                               scenario.strategy.aggregation == Aggregation::cpu &&
                                                               !scenario.platform.simgrid_xml
                                                           ? WorkerAggregation::host
                                                           : WorkerAggregation::none);
}

// Parameter servers: where they run and which variables each owns.
void plan_servers(TrainingPlan& plan, const Scenario& scenario, const workloads::Workload& workload) {
  plan.worker_aggregation = std::string(to_string(worker_aggregation_of(scenario)));
  plan.servers = place_servers(scenario);
  plan.variable_placement = std::string(to_string(scenario.strategy.variable_placement));
  std::vector<Variable> variables;  // creation order = forward order
  for (const auto& layer : workload.layers)
    variables.push_back({layer.name, layer.weight_bytes(scenario.workload.precision)});
  if (scenario.strategy.partition_bytes > 0 &&
      partition_count(variables, scenario.strategy.partition_bytes) > kMaxVariablePartitions) {
    const double smallest_MB = smallest_partition_bytes(variables) / kMiB;
    throw scenario.root()
        .at("strategy")
        .at("partition_MB")
        .error(fmt::format("splits the model's variables into more than {} partitions, the most trainsim simulates "
                           "(each is a transfer "
                           "between every worker and its server); for this model partition_MB must be ≥ {:.4g}",
                           kMaxVariablePartitions, smallest_MB));
  }
  plan.placed_variables = place_variables(variables, scenario.strategy.servers, scenario.strategy.variable_placement,
                                          scenario.strategy.partition_bytes);
}

// Appends `op` as the plan's next operation, after the one before it; `kind` and the trigger
// previous_op when chained (a chain of operations after the trigger: each waits for the one before it).
void append_op(TrainingPlan& plan, CommOp op) {
  op.id = static_cast<int>(plan.ops.size());
  op.after_op = op.id - 1;
  plan.ops.push_back(std::move(op));
}
void chain_op(TrainingPlan& plan, CommOp op, CommKind kind) {
  op.kind = kind;
  op.trigger = CommTrigger::previous_op;
  append_op(plan, std::move(op));
}

// A bucket's parameter-server chain from `op` (its bucket, trigger, bytes).
void add_server_chain(TrainingPlan& plan, const Scenario& scenario, CommOp op) {
  // Sharded: every server owns an equal shard of every bucket. Otherwise the bucket's variables go
  // to their owners: one server per variable, several per multi-layer bucket.
  const int servers = static_cast<int>(plan.servers.size());
  if (scenario.strategy.variable_placement == VariablePlacement::sharded)
    op.bytes_per_server.assign(plan.servers.size(), op.bytes / servers);
  else
    op.bytes_per_server = bytes_per_server(plan.placed_variables, plan.buckets[op.bucket].layers, servers);
  // Pushes of different buckets run concurrently: a bucket's first operation waits only for its trigger.
  op.id = static_cast<int>(plan.ops.size());
  op.after_op = -1;
  const int g = plan.gpus_per_node;
  if (plan.worker_aggregation == "host") {
    // GPUs → host copies, the host's sum (reads g copies, writes one), one push and one pull per
    // node, host → GPU copies of the updated variables.
    CommOp nodes_op = op;
    nodes_op.endpoints = CommEndpoints::node_hosts;
    nodes_op.ranks = plan.gpus / g;
    nodes_op.host_seconds = (g + 1) * op.bytes / plan.host_memory_bandwidth_Bps;
    op.kind = CommKind::device_to_host;
    plan.ops.push_back(op);
    if (g > 1) chain_op(plan, nodes_op, CommKind::host_sum);
    chain_op(plan, nodes_op, CommKind::push);
    chain_op(plan, nodes_op, CommKind::pull);
    chain_op(plan, op, CommKind::host_to_device);
  } else {
    op.kind = CommKind::push;
    plan.ops.push_back(op);
    chain_op(plan, op, CommKind::pull);
  }
}

// The NCCL decision for a bucket's all-reduce and what it costs: the same decision
// `trainsim collective --algorithm auto` makes (nccl_decision.hpp).
void apply_nccl_choice(CommOp& op, const NcclTopology& topo, int sm_count) {
  NcclRequest request;
  request.gpu_sm_count = sm_count;
  const NcclDecision decision = nccl_decide(topo, op.bytes, request);
  op.algorithm = decision.choice.algorithm;
  op.protocol = decision.choice.protocol;
  op.launch_s = decision.costs.launch_s;
  op.step_overhead_s = decision.costs.step_overhead_s;
  op.wire_factor = decision.costs.wire_factor;
  op.channels = decision.channels;
  // NCCL's kernel holds one SM per CTA (one CTA per channel, enqueue.cc) for its whole life,
  // waiting for peers included, so compute overlapping it runs on the other SMs. Compute is taken
  // to scale with the SMs it has.
  op.kernel_sms = decision.kernel_sms;
  if (op.kernel_sms > 0) op.compute_share = double(sm_count - op.kernel_sms) / sm_count;
}

// A bucket's all-reduce from `op` (its bucket, trigger, bytes): on the GPUs, or host-staged.
void add_all_reduce(TrainingPlan& plan, const Scenario& scenario, const std::optional<NcclTopology>& topo, CommOp op) {
  op.kind = CommKind::all_reduce;
  op.algorithm = algorithm_of(scenario.strategy.kind);
  if (plan.transport == "host") {
    // Horovod's MPI all-reduce without GPU operations: copy to the host, MPI_Allreduce among the
    // GPUs' processes on host buffers, copy back; one communicator, one operation at a time.
    op.kind = CommKind::device_to_host;
    append_op(plan, op);
    CommOp ring = op;
    ring.transport = Transport::host;
    chain_op(plan, ring, CommKind::all_reduce);
    chain_op(plan, op, CommKind::host_to_device);
    return;
  }
  op.launch_s = calls_per_all_reduce(op.algorithm) * nccl_launch_s(op.algorithm);
  if (topo) apply_nccl_choice(op, *topo, scenario.platform.gpu.sm_count);
  append_op(plan, op);
}

// The plan of a scenario whose platform size is known.
TrainingPlan build_sized_plan(const Scenario& scenario, const workloads::Workload& workload) {
  TrainingPlan plan = plan_header(scenario);
  plan_compute(plan, scenario, workload);
  const bool ps = scenario.strategy.kind == StrategyKind::parameter_server;
  if (ps) plan_servers(plan, scenario, workload);
  if (!ps && scenario.strategy.kind == StrategyKind::ring_allreduce && scenario.strategy.transport == Transport::host)
    plan.transport = "host";
  // nccl_allreduce: NCCL's tuner picks per bucket size, as `trainsim collective --algorithm auto`
  // does; a SimGrid XML platform says nothing of GPUs, fabric or NICs, so there it runs the
  // protocol-less ring (as `collective` does for auto). The fabric's latency is NCCL's Simple step
  // latency (the protocols add their own back per step): the engine builds the platform with it,
  // one GPU included, so it is decided before a one-GPU plan returns.
  std::optional<NcclTopology> topo;
  if (scenario.strategy.kind == StrategyKind::nccl_allreduce && !scenario.platform.simgrid_xml) {
    topo = nccl_topology(scenario.platform, plan.gpus);
    plan.nccl_intra_node_latency_s = std::max(0.0, scenario.platform.intra_node.latency_s - fabric_latency_cut_s(*topo));
  }
  if (plan.gpus == 1 && !ps) return plan;  // one GPU and no servers: nothing to communicate, no stragglers
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    CommOp op;
    op.bucket = b;
    op.trigger = scenario.strategy.overlap ? CommTrigger::bucket_ready : CommTrigger::backward_done;
    op.first_rank = 0;
    op.ranks = plan.gpus;
    op.bytes = plan.buckets[b].bytes;
    if (ps)
      add_server_chain(plan, scenario, op);
    else if (plan.zero_stage >= 2)
      continue;  // reduce-scatters instead of all-reduces: add_sharded_ops below
    else
      add_all_reduce(plan, scenario, topo, op);
  }
  if (plan.zero_stage > 0) add_sharded_ops(plan, scenario.strategy.overlap, topo, scenario.platform.gpu.sm_count);
  plan.all_reduce_bytes_per_byte = plan::all_reduce_bytes_per_byte(plan);
  apply_stack_costs(plan, scenario);
  if (ps && std::none_of(plan.ops.begin(), plan.ops.end(), [](const CommOp& op) { return op.after_all_pushes; }))
    for (ComputeProfile& profile : plan.profiles) profile.forward_groups_s.clear();  // no read gates the forward
  if (ps) plan.server_representation = resolve_server_representation(plan);
  return plan;
}

}  // namespace

TrainingPlan build_training_plan(const Scenario& scenario, const workloads::Workload& workload) {
  if (!scenario.platform.simgrid_xml) return build_sized_plan(scenario, workload);
  // A SimGrid XML platform's size: its hosts, counted from the file before SimGrid builds anything,
  // so the plan (and the limits checked on it) knows every GPU.
  Scenario sized = scenario;
  sized.platform.nodes = platforms::simgrid_xml_nodes(sized.platform);
  check_against_platform(sized);
  return build_sized_plan(sized, workload);
}

std::map<Algorithm, LinkClassBytes> all_reduce_bytes_per_byte(const TrainingPlan& plan) {
  std::map<Algorithm, LinkClassBytes> out;
  std::vector<int> ranks(static_cast<std::size_t>(plan.gpus));
  std::iota(ranks.begin(), ranks.end(), 0);
  // Parameter servers and host-staged rings have no GPU all-reduce schedules to count.
  if (!plan.servers.empty() || plan.transport == "host") return out;
  for (const CommOp& op : plan.ops) {
    // Sharded collectives over all GPUs run as rings: their bytes are the ring all-reduce's halves.
    const bool ring_halves = (op.kind == CommKind::reduce_scatter || op.kind == CommKind::all_gather) && !op.node_local;
    const Algorithm algorithm = ring_halves ? Algorithm::ring : op.algorithm;
    if ((op.kind == CommKind::all_reduce || ring_halves) && !out.contains(algorithm))
      out[algorithm] = all_reduce_link_bytes(algorithm, ranks, plan.platform, plan.hd_order);
  }
  return out;
}

bool TrainingPlan::has_post_update_ops() const {
  return std::any_of(ops.begin(), ops.end(), [](const CommOp& op) { return op.trigger == CommTrigger::update_done; });
}

std::vector<double> TrainingPlan::server_bytes() const {
  std::vector<double> out(servers.size(), 0.0);
  for (const auto& op : ops)
    if (op.kind == CommKind::push)
      for (std::size_t i = 0; i < servers.size(); ++i) out[i] += op.ranks * op.bytes_per_server.at(i);
  return out;
}

platforms::PlatformSpec TrainingPlan::effective_platform() const {
  platforms::PlatformSpec spec = platform;
  // nccl_allreduce: the fabric latency is NCCL's Simple step latency; its protocols add their own
  // back per step, as `trainsim collective` runs a tuned all-reduce.
  if (nccl_intra_node_latency_s) spec.intra_node.latency_s = *nccl_intra_node_latency_s;
  return spec;
}

int TrainingPlan::server_nodes() const {
  return static_cast<int>(std::count_if(servers.begin(), servers.end(),
                                        [](const PlannedServer& s) { return s.host == ServerHost::server_node; }));
}

long long server_flows(const TrainingPlan& plan) {
  long long flows = 0;
  for (const CommOp& op : plan.ops)
    switch (op.kind) {
      case CommKind::device_to_host:
      case CommKind::host_to_device:
        if (op.bytes > 0) flows += op.ranks;
        break;
      case CommKind::push:
      case CommKind::pull:
        for (double b : op.bytes_per_server)
          if (b != 0) flows += op.ranks;
        break;
      case CommKind::all_reduce:
      case CommKind::reduce_scatter:
      case CommKind::all_gather:
      case CommKind::host_sum: break;
    }
  return plan.servers.empty() ? 0 : flows;
}

ServerRepresentation resolve_server_representation(const TrainingPlan& plan) {
  const ServerRepresentation asked = parse_server_representation(plan.representation).value_or(ServerRepresentation::automatic);
  if (asked != ServerRepresentation::automatic) return asked;
  const bool copies = std::any_of(plan.ops.begin(), plan.ops.end(), [](const CommOp& op) {
    return op.kind == CommKind::device_to_host || op.kind == CommKind::host_to_device;
  });
  return !copies || server_flows(plan) > kAutoCoarseServerFlows ? ServerRepresentation::coarse : ServerRepresentation::flow;
}

namespace {

// The size limits at `nodes_at` (GPUs) and `representation_at` of `source`.
void check_size(const TrainingPlan& plan, const std::string& source, const std::string& nodes_at, const std::string& representation_at) {
  if (!plan.servers.empty() && plan.gpus > kMaxServerGpus)
    throw InputError(source, nodes_at,
                     std::to_string(plan.nodes) + " nodes: a parameter-server iteration on " + std::to_string(plan.gpus) +
                         " GPUs is past the " + std::to_string(kMaxServerGpus) +
                         " simulated within about a minute (65,536 GPUs took 217 s and 1 GB; simulator/README.md, Troubleshooting and "
                         "limits): use at most " + std::to_string(kMaxServerGpus / std::max(1, plan.gpus_per_node)) +
                         " nodes of " + std::to_string(plan.gpus_per_node) + " GPUs, or an all-reduce strategy");
  if (!plan.servers.empty() && parse_server_representation(plan.representation) == ServerRepresentation::flow) {
    const long long flows = server_flows(plan);
    if (flows > kMaxFlowLevelServerFlows)
      throw InputError(source, representation_at,
                       "\"flow\" would start " + std::to_string(flows) + " SimGrid flows per iteration (" + std::to_string(plan.gpus) +
                           " GPUs, " + std::to_string(plan.servers.size()) + " servers); flow level runs at most " +
                           std::to_string(kMaxFlowLevelServerFlows) +
                           " within minutes, as SimGrid re-solves every concurrent flow at each one's end (simulator/README.md, Troubleshooting "
                           "and limits): use \"auto\" or \"coarse\", which give every flow the same max-min rate in groups");
  }
  if (plan.servers.empty() && parse_representation(plan.representation) == Representation::step) {
    std::vector<int> all_reduces;  // one entry per bucket's all-reduce
    for (const CommOp& op : plan.ops)
      if (op.kind == CommKind::all_reduce) all_reduces.push_back(op.ranks);
    if (const std::string why = step_refusal(all_reduces); !why.empty())
      throw InputError(source, representation_at, why);
  }
}

}  // namespace

void check_simulation_size(const TrainingPlan& plan, const Scenario& scenario) {
  check_size(plan, scenario.source, "/platform/nodes", "/strategy/representation");
}

void check_simulation_size(const TrainingPlan& plan, const std::string& source) {
  check_size(plan, source, "/platform/nodes", "/representation");
}

}  // namespace trainsim::plan
