#include "trainsim/engine/collectives.hpp"

#include <algorithm>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "collective_runner.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/plan/collective_schedule.hpp"
#include "trainsim/plan/nccl_tuner.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

/// Intra-node reduce-scatter, inter-node all-reduces, intra-node all-gather. Reports step when a
/// phase ran step-level (or ran nothing, as the intra phases do with one GPU per node), else
/// coarse: a phase that ran lockstep counts as coarse.
CollectiveStats run_hierarchical(Simulation& sim, const plan::HierarchicalPhases& phases,
                                 const CollectiveOptions& options) {
  CollectiveStats stats;
  stats.used = Representation::coarse;
  for (const std::vector<plan::Ring>* phase : {&phases.intra, &phases.inter, &phases.intra}) {
    const CollectiveStats ran = run_rings(sim, *phase, options);
    if (ran.used == Representation::step) stats.used = Representation::step;
    stats.flows += ran.flows;
    if (phase == &phases.inter) stats.channels = ran.channels;
  }
  return stats;
}

}  // namespace

CollectiveStats all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes, Algorithm algorithm,
                           const CollectiveOptions& options) {
  TRAINSIM_CHECK(bytes >= 0, "all_reduce bytes must be ≥ 0");
  const int n = static_cast<int>(ranks.size());
  // Nothing to reduce: NCCL returns at once for a count of 0 without launching a kernel.
  if (n < 2 || bytes == 0) return {};
  const plan::RingLayout layout = plan::ring_layout(sim.spec());
  if (options.launch_s > 0) sg4::this_actor::sleep_for(options.launch_s);
  switch (algorithm) {
    case Algorithm::nvls: return run_rings(sim, plan::nvls_all_reduce(ranks, bytes, layout, options), options);
    case Algorithm::ring: return run_rings(sim, plan::ring_all_reduce(ranks, bytes, layout, options), options);
    case Algorithm::hierarchical:
      return run_hierarchical(sim, plan::hierarchical_all_reduce(ranks, bytes, layout, options), options);
    case Algorithm::halving_doubling:
      return run_halving_doubling(sim, ranks, plan::HalvingDoublingSchedule(n, bytes), options);
    case Algorithm::tree: {
      // Across nodes as NCCL builds it: chains inside nodes, a double binary tree of nodes.
      if (plan::nccl_tree_applies(ranks, layout))
        return run_trees(sim, plan::nccl_tree_all_reduce(ranks, bytes, layout, options), options);
      const std::vector<int> ordered = plan::ring_order(ranks, layout, options);
      CollectiveStats stats = run_schedule(sim, ordered, plan::double_tree_all_reduce(n, bytes, options), options);
      stats.channels = 2;  // the two trees
      return stats;
    }
  }
  return {};
}

CollectiveStats reduce_scatter(Simulation& sim, const std::vector<int>& ranks, double bytes,
                               const CollectiveOptions& options) {
  if (ranks.size() < 2 || bytes == 0) return {};
  return run_rings(sim, plan::ring_reduce_scatter(ranks, bytes, plan::ring_layout(sim.spec()), options), options);
}

CollectiveStats all_gather(Simulation& sim, const std::vector<int>& ranks, double bytes,
                           const CollectiveOptions& options) {
  return reduce_scatter(sim, ranks, bytes, options);  // the same flows: n−1 steps of bytes/n around the ring
}

CollectiveStats broadcast(Simulation& sim, const std::vector<int>& ranks, double bytes,
                          const CollectiveOptions& options) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || bytes == 0) return {};
  return run_schedule(sim, plan::broadcast_order(ranks, plan::ring_layout(sim.spec()), options),
                      plan::chain_broadcast(n, bytes, options), options);
}

ServerSoftware::ServerSoftware(std::size_t servers, double throughput_Bps)
    : free_at_s_(servers, 0.0), throughput_Bps_(throughput_Bps) {
  TRAINSIM_CHECK(throughput_Bps > 0, "a server software rate must be > 0");
}

double ServerSoftware::reserve(std::size_t server, double bytes, double now_s) {
  double& free_at = free_at_s_.at(server);
  free_at = std::max(free_at, now_s) + bytes / throughput_Bps_;
  return free_at;
}

namespace {

// Reserves every server's share of an operation on its software; returns when the last ends
// (now when there is no software limit).
double reserve_software(const std::vector<int>& workers, const std::vector<double>& bytes_per_server,
                        const ParameterServerOptions& options) {
  const double now = sg4::Engine::get_clock();
  double end = now;
  if (options.software)
    for (std::size_t i = 0; i < bytes_per_server.size(); ++i)
      if (bytes_per_server[i] != 0) end = std::max(end, options.software->reserve(i, double(workers.size()) * bytes_per_server[i], now));
  return end;
}

void wait_until(double end_s) {
  const double now = sg4::Engine::get_clock();
  if (end_s > now) sg4::this_actor::sleep_for(end_s - now);
}

}  // namespace

CollectiveStats push_to_servers(Simulation& sim, const std::vector<int>& workers,
                                const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                const ParameterServerOptions& options) {
  TRAINSIM_CHECK(!servers.empty(), "push_to_servers needs at least one server");
  TRAINSIM_CHECK(bytes_per_server.size() == servers.size(), "push_to_servers needs one byte count per server");
  CollectiveStats stats;
  std::vector<sg4::CommPtr> comms;
  for (int w : workers)
    for (std::size_t i = 0; i < servers.size(); ++i)
      if (bytes_per_server[i] != 0) comms.push_back(sim.start_flow(sim.gpu(w), servers[i], bytes_per_server[i]));
  stats.flows = static_cast<long long>(comms.size());
  const double software_end = reserve_software(workers, bytes_per_server, options);
  for (auto& c : comms) c->wait();
  wait_until(software_end);
  // Every server adds up the shards it received, all servers in parallel.
  std::vector<sg4::ExecPtr> execs;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const double flops = double(workers.size()) * bytes_per_server[i] * options.aggregate_flops_per_byte;
    if (flops > 0) execs.push_back(servers[i]->exec_async(flops));
  }
  for (auto& e : execs) e->wait();
  return stats;
}

CollectiveStats pull_from_servers(Simulation& sim, const std::vector<int>& workers,
                                  const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                  const ParameterServerOptions& options) {
  TRAINSIM_CHECK(!servers.empty(), "pull_from_servers needs at least one server");
  TRAINSIM_CHECK(bytes_per_server.size() == servers.size(), "pull_from_servers needs one byte count per server");
  CollectiveStats stats;
  std::vector<sg4::CommPtr> comms;
  for (std::size_t i = 0; i < servers.size(); ++i)
    if (bytes_per_server[i] != 0)
      for (int w : workers) comms.push_back(sim.start_flow(servers[i], sim.gpu(w), bytes_per_server[i]));
  stats.flows = static_cast<long long>(comms.size());
  const double software_end = reserve_software(workers, bytes_per_server, options);
  for (auto& c : comms) c->wait();
  wait_until(software_end);
  return stats;
}

namespace {

/// The tuner's pick for one size of an `nccl` request, and the options that charge its costs.
struct TunedRun {
  plan::NcclChoice choice;
  CollectiveOptions options;
  double wire_factor = 1;
};

TunedRun tune(const plan::NcclTopology& topo, const CollectiveRequest& request, double bytes) {
  std::vector<plan::NcclChoice> candidates = plan::nccl_candidates(topo, bytes);
  std::erase_if(candidates, [&](const plan::NcclChoice& c) {
    return (!request.tune_algorithm && c.algorithm != request.algorithm) ||
           (request.protocol && c.protocol != *request.protocol);
  });
  if (candidates.empty()) {
    const bool nvls = !request.tune_algorithm && request.algorithm == Algorithm::nvls;
    throw InputError("collective request", nvls && !request.protocol ? "algorithm" : "protocol",
                     nvls ? "NCCL runs NVLS only with the Simple protocol, on one node of Hopper or later GPUs on NVSwitch"
                          : "NCCL does not run " + to_string(request.tune_algorithm ? Algorithm::ring : request.algorithm) +
                                " with " + (request.protocol ? plan::to_string(*request.protocol) : std::string("any protocol")) +
                                " here (LL128 needs NVLink and Volta or later)");
  }
  TunedRun run;
  run.choice = *std::min_element(candidates.begin(), candidates.end(),
                                 [](const auto& a, const auto& b) { return a.predicted_s < b.predicted_s; });
  const plan::ProtocolCosts costs = plan::protocol_costs(topo, run.choice);
  run.options = request.options;
  run.options.launch_s = costs.launch_s;
  run.options.step_overhead_s += costs.step_overhead_s;
  run.wire_factor = costs.wire_factor;
  // A ring runs on NCCL's channels unless the request sets them (--channels); a tree across
  // nodes has them as its graph channels, each used by both trees (connect.cc duplicates them).
  if (run.choice.algorithm != Algorithm::nvls && run.options.channels == 0) run.options.channels = run.choice.channels;
  return run;
}

}  // namespace

std::vector<CollectiveTiming> time_collectives(const platforms::PlatformSpec& given, const CollectiveRequest& request,
                                               const std::vector<double>& sizes_bytes) {
  // A SimGrid XML platform says nothing of GPUs, fabric or NICs: `auto` runs the protocol-less ring
  // there, and asking for a protocol or NVLS is an error.
  const bool xml_auto = given.simgrid_xml && request.tune_algorithm && !request.protocol;
  const bool nccl = request.nccl && request.op == CollectiveOp::allreduce && !xml_auto;
  if (nccl && given.simgrid_xml)
    throw InputError("collective request", "algorithm",
                     "NCCL's protocols and NVLS need a platform description (GPU, fabric, NICs), not a SimGrid XML "
                     "file; use auto or a textbook algorithm without --protocol");
  if (nccl && !request.tune_algorithm && request.algorithm != Algorithm::ring && request.algorithm != Algorithm::tree &&
      request.algorithm != Algorithm::nvls)
    throw InputError("collective request", "protocol",
                     "protocols are modelled for NCCL's algorithms (ring, tree, nvls), not " + to_string(request.algorithm));
  // A protocol-aware run: the platform's fabric latency is NCCL's Simple step latency; take the
  // protocol-independent part off and let each size's protocol add its own (nccl_tuner.hpp).
  platforms::PlatformSpec spec = given;
  const int n_asked = request.gpus == 0 ? given.total_gpus() : request.gpus;
  const plan::NcclTopology topo = plan::nccl_topology(given, n_asked);
  if (nccl) spec.intra_node.latency_s = std::max(0.0, spec.intra_node.latency_s - plan::fabric_latency_cut_s(topo));
  Simulation sim(spec);
  const int total = sim.gpu_count();
  const int n = request.gpus == 0 ? total : request.gpus;
  if (n > total)
    throw InputError("collective request", "gpus",
                     "the platform has " + std::to_string(total) + " GPUs, asked for " + std::to_string(n));
  if (request.op == CollectiveOp::allreduce && request.algorithm == Algorithm::hierarchical &&
      n % sim.gpus_per_node() != 0)
    throw InputError("collective request", "gpus",
                     "hierarchical all-reduce needs whole nodes: " + std::to_string(n) + " is not a multiple of " +
                         std::to_string(sim.gpus_per_node()) + " GPUs per node");
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[std::size_t(i)] = i;
  // Tuned before simulating: a request NCCL would not run is bad input, not a failure inside an actor.
  std::vector<TunedRun> tuned;
  if (nccl)
    for (double bytes : sizes_bytes) tuned.push_back(tune(topo, request, bytes));
  std::vector<CollectiveTiming> timings;
  sg4::Actor::create("collective", sim.gpu(0), [&] {
    for (std::size_t i = 0; i < sizes_bytes.size(); ++i) {
      const double bytes = sizes_bytes[i];
      const double start = sim.now();
      CollectiveStats stats;
      if (nccl) {
        const TunedRun& run = tuned[i];
        stats = all_reduce(sim, ranks, bytes * run.wire_factor, run.choice.algorithm, run.options);
        // NCCL's channel count, or the rings asked for (the engine runs a ring's channels as rings,
        // a tree across nodes as its channels of both trees, and NVLS as one flow per port).
        const bool asked = (request.options.channels > 0 && run.choice.algorithm == Algorithm::ring) ||
                           (run.choice.algorithm == Algorithm::tree && topo.nodes > 1);
        timings.push_back({bytes, sim.now() - start, stats.used, asked ? stats.channels : run.choice.channels,
                           run.choice.algorithm,
                           run.choice.protocol, run.choice.predicted_s});
        continue;
      }
      switch (request.op) {
        case CollectiveOp::allreduce: stats = all_reduce(sim, ranks, bytes, request.algorithm, request.options); break;
        case CollectiveOp::reduce_scatter: stats = reduce_scatter(sim, ranks, bytes, request.options); break;
        case CollectiveOp::all_gather: stats = all_gather(sim, ranks, bytes, request.options); break;
        case CollectiveOp::broadcast: stats = broadcast(sim, ranks, bytes, request.options); break;
      }
      timings.push_back({bytes, sim.now() - start, stats.used, stats.channels, request.algorithm, std::nullopt, 0.0});
    }
  });
  sim.run();
  return timings;
}

}  // namespace trainsim::engine
