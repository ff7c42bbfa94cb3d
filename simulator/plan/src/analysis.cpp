#include "trainsim/plan/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "trainsim/core/natural_order.hpp"
#include "trainsim/core/units.hpp"

namespace trainsim::plan {

namespace {

/// How a sentence names a link class.
std::string class_words(const std::string& link_class) {
  if (link_class == "nvlink") return "NVLink";
  if (link_class == "nvswitch") return "NVSwitch";
  if (link_class == "pcie") return "PCIe";
  if (link_class == "nic") return "NIC";
  if (link_class == "unknown") return "unclassified";
  return link_class;  // memory, fabric
}

/// "a", "a and b", "a, b and c".
std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " and " : ", ";
    out += words[i];
  }
  return out;
}

double percent(double fraction) {
  return 100 * fraction;
}

/// A bound that names no link.
IterationBound bound_of(BoundKind kind, double share, std::string sentence) {
  IterationBound b;
  b.kind = kind;
  b.share = share;
  b.sentence = std::move(sentence);
  return b;
}

IterationBound compute_bound(const IterationResult& r) {
  const double share = r.breakdown.compute_s / r.iteration_time_s;
  if (r.breakdown.communication_s == 0)
    return bound_of(BoundKind::compute, share, "The iteration is compute-bound: there is no communication.");
  // Hidden communication still costs compute where its kernels hold SMs (nccl_allreduce).
  const std::string kernels =
      r.breakdown.comm_kernel_slowdown_s > 0
          ? fmt::format(", though its kernels' SMs slow that compute by {} ({:.1f} % of the iteration)",
                        format_seconds(r.breakdown.comm_kernel_slowdown_s),
                        percent(r.breakdown.comm_kernel_slowdown_s / r.iteration_time_s))
          : std::string();
  if (r.breakdown.exposed_communication_s == 0)
    return bound_of(BoundKind::compute, share,
                    "The iteration is compute-bound: communication is fully hidden behind compute" + kernels + ".");
  return bound_of(BoundKind::compute, share,
                  fmt::format("The iteration is compute-bound: communication is hidden behind compute but for {:.1f} % "
                              "of the iteration{}.",
                              percent(r.breakdown.exposed_communication_s / r.iteration_time_s), kernels));
}

IterationBound link_bound(const std::vector<ConnectionLimit>& tied, double limit_share, double exposed) {
  const ConnectionLimit& first = tied.front();
  IterationBound b;
  const bool incast =
      std::all_of(tied.begin(), tied.end(), [](const ConnectionLimit& c) { return !c.incast_into.empty(); });
  const bool one_server = std::all_of(tied.begin(), tied.end(),
                                      [&](const ConnectionLimit& c) { return c.incast_into == first.incast_into; });
  b.kind = incast ? BoundKind::incast : BoundKind::link;
  b.resource = first.name;
  b.connections = static_cast<int>(tied.size());
  b.share = limit_share;
  std::vector<std::string> classes, words;
  for (const auto& c : tied)
    if (std::find(classes.begin(), classes.end(), c.link_class) == classes.end()) classes.push_back(c.link_class);
  std::sort(classes.begin(), classes.end());
  for (const auto& c : classes) {
    b.link_class += (b.link_class.empty() ? "" : "+") + c;
    words.push_back(class_words(c));
  }
  // The window the limit share is measured in and the exposed time agree up to round-off.
  const std::string busy = fmt::format("busy through {:.0f} % of the exposed communication, {:.1f} % of the iteration",
                                       percent(std::min(1.0, limit_share / exposed)), percent(limit_share));
  if (tied.size() == 1) {
    b.sentence = fmt::format("The iteration is bound by {} ({}){}: it is {}.", first.name, join_words(words),
                             incast ? ", the parameter server's incast" : "", busy);
  } else if (incast) {
    b.sentence = fmt::format("The iteration is bound by the parameter {}: {} {} connections ({}, …) are equally {}.",
                             one_server ? "server's incast into " + first.incast_into : std::string("servers' incast"),
                             tied.size(), join_words(words), first.name, busy);
  } else {
    b.sentence = fmt::format("The iteration is bound by {} {} connections ({}, …), equally {}.", tied.size(),
                             join_words(words), first.name, busy);
  }
  return b;
}

}  // namespace

IterationBound find_bound(const IterationResult& r, std::vector<ConnectionLimit> connections,
                          const BoundThresholds& thresholds) {
  const double t = r.iteration_time_s;
  if (!(t > 0)) return {};
  const double exposed = r.breakdown.exposed_communication_s / t, idle = r.breakdown.idle_s / t;
  if (std::max(exposed, idle) < thresholds.hidden) return compute_bound(r);
  if (idle >= exposed)
    return bound_of(BoundKind::stragglers, idle,
                    fmt::format("The iteration is bound by stragglers: GPUs wait {} on average ({:.1f} % of the "
                                "iteration) for the slowest one.",
                                format_seconds(r.breakdown.idle_s), percent(idle)));
  std::sort(connections.begin(), connections.end(), [](const ConnectionLimit& a, const ConnectionLimit& b) {
    return a.limit_share != b.limit_share ? a.limit_share > b.limit_share : natural_less(a.name, b.name);
  });
  const double top = connections.empty() ? 0.0 : connections.front().limit_share;
  if (top < thresholds.busy_through * exposed)
    return bound_of(BoundKind::latency, exposed,
                    fmt::format("The iteration is bound by communication latency{}: communication is exposed for "
                                "{:.1f} % of the iteration, but no link is busy through more than {:.0f} % of it.",
                                r.strategy == "parameter_server" ? ", per-message overheads or the servers' aggregation"
                                                                 : " and per-message overheads",
                                percent(exposed), percent(top / exposed)));
  std::vector<ConnectionLimit> tied;
  for (const auto& c : connections)
    if (c.limit_share >= top * (1 - thresholds.tie)) tied.push_back(c);
  // Equals are named in natural order, whatever round-off made one of them the largest.
  std::stable_sort(tied.begin(), tied.end(),
                   [](const ConnectionLimit& a, const ConnectionLimit& b) { return natural_less(a.name, b.name); });
  return link_bound(tied, top, exposed);
}

namespace {

/// Where a parameter server's traffic enters, for a warning.
std::string server_entry(const PlannedServer& s) {
  if (s.host == ServerHost::server_node) return fmt::format("server node {}'s NICs", s.index);
  return fmt::format("node {}'s NIC", s.node);
}

/// Steps of one collective operation whose latencies add up (ring: 2(n−1); tree and
/// halving-doubling: 2⌈log2 n⌉; hierarchical: its intra-node and inter-node rings; NVLS: 1;
/// NVLS_TREE: 1 + 2⌈log2 nodes⌉; CollNet: 3, to the heads, through the switches, back; push or pull: 1).
double latency_steps(const CommOp& op, int gpus_per_node) {
  const double n = op.ranks;
  switch (op.kind) {
    case CommKind::push:
    case CommKind::pull:
    case CommKind::device_to_host:
    case CommKind::host_to_device: return 1;
    case CommKind::host_sum: return 0;
    case CommKind::reduce_scatter:
    case CommKind::all_gather: {
      // A ring's n−1 steps; inside a node, g−1 (a hybrid reduce-scatter adds its cross-node ring's 2(N−1)).
      if (!op.node_local) return n - 1;
      const double g = std::min<double>(gpus_per_node, n), nodes = std::ceil(n / g);
      return (g - 1) + (op.kind == CommKind::reduce_scatter ? 2 * (nodes - 1) : 0);
    }
    case CommKind::all_reduce: break;
  }
  switch (op.algorithm) {
    case Algorithm::ring: return 2 * (n - 1);
    case Algorithm::nvls: return 1;
    case Algorithm::nvls_tree: return 1 + 2 * std::ceil(std::log2(std::ceil(n / std::min<double>(gpus_per_node, n))));
    case Algorithm::collnet_direct:
    case Algorithm::collnet_chain: return 3;
    case Algorithm::halving_doubling:
    case Algorithm::tree: return 2 * std::ceil(std::log2(n));
    case Algorithm::hierarchical: {
      const double g = std::min<double>(gpus_per_node, n), nodes = std::ceil(n / g);
      return 2 * 2 * (g - 1) + 2 * (nodes - 1);
    }
  }
  return 1;
}

}  // namespace

std::vector<Warning> plan_warnings(const TrainingPlan& plan, const platforms::PlatformSpec& platform) {
  std::vector<Warning> out;
  // First: the other findings are moot on a configuration that cannot run at all.
  if (!plan.memory.fits())
    out.push_back(
        {"out_of_memory",
         fmt::format("the configuration does not fit in GPU memory: needs {} per GPU, {} has {}{}",
                     format_bytes(plan.memory.required), platform.gpu.name, format_bytes(plan.memory.available),
                     plan.memory.largest_batch_per_gpu > 0
                         ? fmt::format("; the largest batch per GPU that fits is {}", plan.memory.largest_batch_per_gpu)
                     : plan.memory.largest_batch_per_gpu == 0 ? std::string("; not even one sample per GPU fits")
                                                              : std::string())});
  // Under worker aggregation each node's host pushes and pulls once for its GPUs.
  const int workers = plan.worker_aggregation == "host" ? plan.nodes : plan.gpus;
  const auto servers = static_cast<int>(plan.servers.size());
  if (servers == 1 && workers >= 8)
    out.push_back({"single_server",
                   fmt::format("one parameter server for {} workers: it receives every worker's gradients and sends "
                               "every worker the parameters, {} times a worker's traffic, through {} (an incast); use "
                               "a server per node or an all-reduce strategy",
                               workers, workers, server_entry(plan.servers.front()))});
  if (servers >= 2 && servers * 16 <= workers)
    out.push_back(
        {"few_servers",
         fmt::format("{} parameter servers for {} workers: each server exchanges its shard with every worker, "
                     "{:g} times a worker's traffic in each direction (16 or more is an incast); use more "
                     "servers (one per node) or an all-reduce strategy",
                     servers, workers, static_cast<double>(workers) / servers)});

  if (!plan.overlap && plan.buckets.size() >= 2 && !plan.ops.empty()) {
    // Without overlap the collectives run back to back after backward: splitting the gradients
    // into K buckets moves the same bytes in K operations and adds K−1 operations' latency.
    const double hop_s = plan.nodes > 1 ? platform.network.latency_s : platform.intra_node.latency_s;
    double extra_s = 0, bytes = 0;
    std::vector<bool> first(plan.buckets.size(), true);
    for (const CommOp& op : plan.ops) {
      const bool later = op.bucket > 0;  // every bucket after the first is an extra one
      if (later) extra_s += latency_steps(op, plan.gpus_per_node) * hop_s + op.launch_s;
      if (first[op.bucket]) bytes += plan.buckets[op.bucket].bytes;
      first[op.bucket] = false;
    }
    double compute_s = 0;
    for (int r = 0; r < plan.gpus; ++r) compute_s = std::max(compute_s, plan.compute_s(r));
    if (compute_s > 0 && extra_s >= 0.05 * compute_s)
      out.push_back({"overlap_off_buckets",
                     fmt::format("overlap is off, yet the gradients go in {} buckets: nothing hides the latency of the "
                                 "{} extra collectives, about {} ({:.0f} % of the compute); use one bucket "
                                 "(bucket_MB ≥ {:.0f}) or turn overlap on",
                                 plan.buckets.size(), plan.buckets.size() - 1, format_seconds(extra_s),
                                 percent(extra_s / compute_s), std::ceil(bytes / kMiB))});
  }

  // A ring step moves S/n bytes and costs α + S/(nβ): below S/n = αβ the latency term dominates.
  const double alpha_beta = platform.network.latency_s * platform.network.bandwidth_Bps;
  double ring_bytes = 0, latency_bytes = 0;
  int ranks = 0;
  for (const CommOp& op : plan.ops)
    if (op.kind == CommKind::all_reduce && op.algorithm == Algorithm::ring && op.ranks > plan.gpus_per_node) {
      ring_bytes += op.bytes;
      if (op.bytes / op.ranks < alpha_beta) latency_bytes += op.bytes;
      ranks = std::max(ranks, op.ranks);
    }
  if (ring_bytes > 0 && latency_bytes >= 0.5 * ring_bytes)
    out.push_back(
        {"ring_latency",
         fmt::format("in a ring all-reduce over {} GPUs, buckets holding {:.0f} % of the gradients move less "
                     "per step than the network's latency-bandwidth product {} ({} × {}), so latency "
                     "dominates their steps; use hierarchical_allreduce, halving_doubling or "
                     "tree_allreduce, or larger buckets",
                     ranks, percent(latency_bytes / ring_bytes), format_bytes(alpha_beta),
                     format_seconds(platform.network.latency_s), format_rate_GBps(platform.network.bandwidth_Bps))});
  return out;
}

std::vector<Warning> representation_warnings(const TrainingPlan& plan) {
  std::vector<Warning> out;
  // `auto` runs GPU-host copies at flow level up to kAutoCoarseServerFlows flows, coarse above; the
  // user should know which one ran.
  if (!plan.servers.empty() && plan.representation == "auto" && resolve_server_representation(plan) == ServerRepresentation::coarse &&
      std::any_of(plan.ops.begin(), plan.ops.end(), [](const CommOp& op) { return op.kind == CommKind::device_to_host; }))
    out.push_back({"coarse_representation",
                   fmt::format("{} SimGrid flows per iteration at flow level (GPU-host copies, pushes and pulls) is past the {} up to "
                               "which representation \"auto\" runs them as flows: ran them coarse (the same max-min rates, in groups; "
                               "simulator/README.md, Parameter-server representations)",
                               server_flows(plan), kAutoCoarseServerFlows)});
  return out;
}

void apply_input_pipeline(const TrainingPlan& plan, IterationResult& result) {
  if (const auto& pipeline = plan.input_pipeline) {
    // Steady state with prefetching: the next batch loads during this iteration; loaders slower
    // than the iteration make every GPU wait (as idle time) for the difference.
    // Rank 0 has the largest batch (strong scaling gives the remainder to the first ranks).
    result.input_pipeline = input_pipeline_timing(*pipeline, plan.profile_of(0).batch, plan.gpus_per_node, result.iteration_time_s);
    const double wait_s = result.input_pipeline->wait_s;
    if (wait_s > 0) {
      result.iteration_time_s += wait_s;
      result.breakdown.idle_s += wait_s;
      result.samples_per_s = result.global_batch / result.iteration_time_s;
      result.scaling_efficiency = result.samples_per_s / (plan.gpus * result.single_gpu_samples_per_s);
      result.bound = IterationBound{BoundKind::input, "input pipeline", "", 0, wait_s / result.iteration_time_s,
                                          fmt::format("The iteration is bound by the input pipeline: the GPUs wait for data {:.1f} % of it.",
                                                      100 * wait_s / result.iteration_time_s)};
      result.warnings.push_back(Warning{
          "input_bound", fmt::format("the GPUs wait {} per iteration for data: {} loader thread{} per GPU decode a batch in {} against an "
                                     "iteration of {}; more loader threads (up to the host's cores), cheaper augmentation or "
                                     "preprocessed data would remove the wait",
                                     format_seconds(wait_s), pipeline->loader_threads, pipeline->loader_threads == 1 ? "" : "s",
                                     format_seconds(result.input_pipeline->load_s), format_seconds(result.input_pipeline->compute_iteration_s))});
    }
  }

}

double measured_iteration_s(const MeasuredIteration& measured) {
  return measured.end_s.empty() ? 0.0 : *std::max_element(measured.end_s.begin(), measured.end_s.end());
}

double communication_time(std::vector<BucketTiming> buckets) {
  // A bucket's read at the step's start is an interval of its own.
  const std::size_t gradients = buckets.size();
  for (std::size_t i = 0; i < gradients; ++i)
    if (buckets[i].has_read()) buckets.push_back(BucketTiming{0, 0, buckets[i].read_start_s, buckets[i].read_end_s});
  std::sort(buckets.begin(), buckets.end(),
            [](const BucketTiming& a, const BucketTiming& b) { return a.start_s < b.start_s; });
  double total = 0;
  bool open = false;
  double begin = 0, end = 0;
  for (const auto& t : buckets) {
    if (open && t.start_s < end) {
      end = std::max(end, t.end_s);
      continue;
    }
    if (open) total += end - begin;
    begin = t.start_s;
    end = t.end_s;
    open = true;
  }
  if (open) total += end - begin;
  return total;
}

IterationResult analyse_iteration(const TrainingPlan& plan, MeasuredIteration measured) {
  IterationResult result;
  result.name = plan.name;
  result.gpus = plan.gpus;
  result.nodes = plan.nodes;
  result.global_batch = plan.global_batch;
  result.iteration_time_s = measured_iteration_s(measured);
  result.samples_per_s = result.global_batch / result.iteration_time_s;
  result.single_gpu_samples_per_s = plan.reference_batch / plan.single_gpu_iteration_s;
  result.scaling_efficiency = result.samples_per_s / (plan.gpus * result.single_gpu_samples_per_s);
  double max_compute = 0, sum_compute = 0;
  for (int r = 0; r < plan.gpus; ++r) {
    const double c = plan.compute_s(r);
    max_compute = std::max(max_compute, c);
    sum_compute += c;
  }
  // Compute lost to collective kernels' SMs is its own part of the breakdown: exposed
  // communication is what the iteration took beyond every GPU's compute and that loss.
  double max_busy = 0;
  for (int r = 0; r < plan.gpus; ++r) {
    const double lost = measured.kernel_slowdown_s.at(static_cast<std::size_t>(r));
    result.breakdown.comm_kernel_slowdown_s = std::max(result.breakdown.comm_kernel_slowdown_s, lost);
    max_busy = std::max(max_busy, plan.compute_s(r) + lost);
  }
  result.breakdown.compute_s = max_compute;
  result.breakdown.exposed_communication_s = std::max(0.0, result.iteration_time_s - max_busy);
  result.breakdown.idle_s = std::max(0.0, max_compute - sum_compute / plan.gpus);  // round-off makes equal GPUs −0
  // Stragglers: the simulated GPUs run their mean times; synchronous SGD waits, every iteration,
  // for the slowest of them, plan.straggler_s later on average. The wait is idle time.
  result.iteration_time_s += plan.straggler_s;
  result.breakdown.idle_s += plan.straggler_s;
  result.samples_per_s = result.global_batch / result.iteration_time_s;
  result.scaling_efficiency = result.samples_per_s / (plan.gpus * result.single_gpu_samples_per_s);
  result.buckets = std::move(measured.buckets);
  result.breakdown.communication_s = communication_time(result.buckets);
  const std::vector<double> server_bytes = plan.server_bytes();
  for (const auto& server : plan.servers)
    result.servers.push_back(ServerLoad{server.id, std::string(to_string(server.host)), server.node,
                                        server_bytes[static_cast<std::size_t>(server.id)]});
  result.variable_placement = plan.variable_placement;
  result.memory = plan.memory;
  result.largest_batch = plan.largest_batch;
  result.strategy = plan.strategy;
  result.transport = plan.transport;
  result.representation = plan.representation;
  result.network_model = plan.network_model;
  result.calibration_factor = plan.calibration_factor;
  result.variables = plan.variables;
  result.network_bytes = measured.network_bytes;
  result.busiest_links = std::move(measured.busiest_links);
  result.bound = find_bound(result, std::move(measured.connections));
  result.warnings = plan_warnings(plan, plan.platform);
  for (Warning& w : representation_warnings(plan)) result.warnings.push_back(std::move(w));
  apply_input_pipeline(plan, result);
  return result;
}

}  // namespace trainsim::plan
