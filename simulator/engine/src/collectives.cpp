#include "trainsim/engine/collectives.hpp"

#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "collective_runner.hpp"
#include "grouped_flows.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/plan/all_reduce_schedule.hpp"
#include "trainsim/plan/collective_schedule.hpp"
#include "trainsim/plan/nccl_decision.hpp"
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

/// NVLS_TREE's two levels at once (NCCL pipelines them; NVSwitch ports and the NICs' PCIe paths
/// share no link): the NVLS rings inside the nodes in a helper actor, the heads' trees in the
/// caller; done when both are. Reports the trees' representation and channels.
CollectiveStats run_nvls_tree(Simulation& sim, const plan::NvlsTreePhases& phases, const CollectiveOptions& options) {
  CollectiveStats intra;
  const sg4::ActorPtr nodes = sg4::Actor::create("intra-node", sg4::this_actor::get_host(),
                                                 [&] { intra = run_rings(sim, phases.intra, options); });
  CollectiveStats stats;
  try {
    stats = run_trees(sim, phases.inter, options);
  } catch (...) {
    nodes->join();  // the helper refers to this frame
    throw;
  }
  nodes->join();
  stats.flows += intra.flows;
  return stats;
}

/// A SHARP all-reduce's two levels as one ring phase (plan::SharpPhases): on PCIe nodes the
/// node's rings and the heads' NIC paths cross the same links, so they are shared in one solve.
/// Reports the heads' rings as the channels.
CollectiveStats run_sharp(Simulation& sim, const plan::SharpPhases& phases, const CollectiveOptions& options) {
  std::vector<plan::Ring> rings = phases.intra;
  rings.insert(rings.end(), phases.inter.begin(), phases.inter.end());
  CollectiveStats stats = run_rings(sim, rings, options);
  stats.channels = int(phases.inter.size());
  return stats;
}

}  // namespace

CollectiveStats all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes, Algorithm algorithm,
                           const CollectiveOptions& options) {
  TRAINSIM_CHECK(bytes >= 0, "all_reduce bytes must be ≥ 0");
  // Nothing to reduce: NCCL returns at once for a count of 0 without launching a kernel.
  if (ranks.size() < 2 || bytes == 0) return {};
  // The plan decides the schedule (plan::all_reduce_schedule); this runs it.
  const plan::AllReduceSchedule schedule = plan::all_reduce_schedule(algorithm, ranks, bytes, sim.spec(), options);
  if (options.launch_s > 0) sg4::this_actor::sleep_for(options.launch_s);
  return std::visit(
      [&](const auto& s) -> CollectiveStats {
        using Shape = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<Shape, plan::RingPhase>) return run_rings(sim, s.rings, options);
        if constexpr (std::is_same_v<Shape, plan::HierarchicalPhases>) return run_hierarchical(sim, s, options);
        if constexpr (std::is_same_v<Shape, plan::SharpPhases>) return run_sharp(sim, s, options);
        if constexpr (std::is_same_v<Shape, plan::NvlsTreePhases>) return run_nvls_tree(sim, s, options);
        if constexpr (std::is_same_v<Shape, plan::RankedHalvingDoubling>)
          return run_halving_doubling(sim, s.ranks, s.schedule, options);
        if constexpr (std::is_same_v<Shape, plan::NcclTrees>) return run_trees(sim, s, options);
        if constexpr (std::is_same_v<Shape, plan::RankedDoubleTree>) {
          CollectiveStats stats = run_schedule(sim, s.ranks, s.schedule, options);
          stats.channels = 2;  // the two trees
          return stats;
        }
      },
      schedule);
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

CollectiveStats node_local_collective(Simulation& sim, const std::vector<int>& ranks, double bytes,
                                      bool reduce_scatter_and_all_reduce, const CollectiveOptions& options) {
  if (ranks.size() < 2 || bytes == 0) return {};
  // The hierarchical all-reduce's phases: its intra-node rings are every node's reduce-scatter
  // (all-gather: the same flows), its inter-node rings all-reduce the 1/g shards across nodes.
  const plan::HierarchicalPhases phases =
      plan::hierarchical_all_reduce(ranks, bytes, plan::ring_layout(sim.spec()), options);
  CollectiveStats stats = run_rings(sim, phases.intra, options);
  if (reduce_scatter_and_all_reduce) {
    const CollectiveStats inter = run_rings(sim, phases.inter, options);
    stats.flows += inter.flows;
    if (inter.used == Representation::step) stats.used = Representation::step;
  }
  return stats;
}

CollectiveStats broadcast(Simulation& sim, const std::vector<int>& ranks, double bytes,
                          const CollectiveOptions& options) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || bytes == 0) return {};
  return run_schedule(sim, plan::broadcast_order(ranks, plan::ring_layout(sim.spec()), options),
                      plan::chain_broadcast(n, bytes, options), options);
}

ServerSoftware::ServerSoftware(std::size_t servers) : free_at_s_(servers, 0.0) {}

double ServerSoftware::reserve(std::size_t server, double seconds, double now_s) {
  double& free_at = free_at_s_.at(server);
  free_at = std::max(free_at, now_s) + seconds;
  return free_at;
}

double ServerSoftware::reserve_workers(double seconds, double now_s) {
  workers_free_at_s_ = std::max(workers_free_at_s_, now_s) + seconds;
  return workers_free_at_s_;
}

namespace {

// Starts `flops` of work on `host`. SimGrid 3.32's Host::exec_async runs the work on the calling
// actor's host, not on `host` (measured: a node CPU's exec ran at the calling GPU's speed), so the
// host is set explicitly.
sg4::ExecPtr exec_on(sg4::Host* host, double flops) {
  sg4::ExecPtr exec = sg4::this_actor::exec_init(flops);
  exec->set_host(host);
  exec->start();
  return exec;
}

// Reserves every server's share of an operation on its software; returns when the last ends
// (now when there is no software limit).
double reserve_software(const ParameterServerOptions& options) {
  const double now = sg4::Engine::get_clock();
  double end = now;
  if (!options.software) return end;
  if (options.server_software_s)
    for (std::size_t i = 0; i < options.server_software_s->size(); ++i)
      if ((*options.server_software_s)[i] > 0)
        end = std::max(end, options.software->reserve(i, (*options.server_software_s)[i], now));
  if (options.worker_software_s > 0)
    end = std::max(end, options.software->reserve_workers(options.worker_software_s, now));
  return end;
}

// Moves bytes_per_server[i] between every worker and servers[i] (to the servers when `push`), all
// at once, and returns when all have arrived: one SimGrid flow per worker and server at flow
// level; under the coarse representation, one batch per server for GroupedFlows. Both count the
// same bytes on every link.
CollectiveStats move_server_bytes(Simulation& sim, const std::vector<sg4::Host*>& workers, const std::vector<sg4::Host*>& servers,
                                  const std::vector<double>& bytes_per_server, const ParameterServerOptions& options,
                                  bool push) {
  CollectiveStats stats;
  if (options.grouped) {
    std::vector<GroupedFlows::Batch> batches;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (bytes_per_server[i] == 0) continue;
      GroupedFlows::Batch& b = batches.emplace_back();
      b.bytes = bytes_per_server[i];
      for (sg4::Host* w : workers) {
        if (w == servers[i]) continue;  // a worker on its server's own host exchanges nothing over a link
        b.srcs.push_back(push ? w : servers[i]);
        b.dsts.push_back(push ? servers[i] : w);
      }
      stats.flows += static_cast<long long>(b.srcs.size());
      if (b.srcs.empty()) batches.pop_back();
    }
    stats.used = Representation::coarse;
    if (!batches.empty()) options.grouped->transfer(batches);
    return stats;
  }
  std::vector<sg4::CommPtr> comms;
  if (push) {
    for (sg4::Host* w : workers)
      for (std::size_t s = 0; s < servers.size(); ++s)
        if (bytes_per_server[s] != 0 && w != servers[s]) comms.push_back(sim.start_flow(w, servers[s], bytes_per_server[s]));
  } else {
    for (std::size_t s = 0; s < servers.size(); ++s)
      if (bytes_per_server[s] != 0)
        for (sg4::Host* w : workers)
          if (w != servers[s]) comms.push_back(sim.start_flow(servers[s], w, bytes_per_server[s]));
  }
  stats.flows = static_cast<long long>(comms.size());
  for (auto& c : comms) c->wait();
  return stats;
}

void wait_until(double end_s) {
  const double now = sg4::Engine::get_clock();
  if (end_s > now) sg4::this_actor::sleep_for(end_s - now);
}

}  // namespace

CollectiveStats push_to_servers(Simulation& sim, const std::vector<sg4::Host*>& workers,
                                const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                const ParameterServerOptions& options) {
  TRAINSIM_CHECK(!servers.empty(), "push_to_servers needs at least one server");
  TRAINSIM_CHECK(bytes_per_server.size() == servers.size(), "push_to_servers needs one byte count per server");
  const double software_end = reserve_software(options);
  CollectiveStats stats = move_server_bytes(sim, workers, servers, bytes_per_server, options, true);
  wait_until(software_end);
  // Every server adds up the shards it received, all servers in parallel.
  std::vector<sg4::ExecPtr> execs;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const double flops = double(workers.size()) * bytes_per_server[i] * options.aggregate_flops_per_byte;
    if (flops > 0) execs.push_back(exec_on(servers[i], flops));
  }
  for (auto& e : execs) e->wait();
  return stats;
}

CollectiveStats pull_from_servers(Simulation& sim, const std::vector<sg4::Host*>& workers,
                                  const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                  const ParameterServerOptions& options) {
  TRAINSIM_CHECK(!servers.empty(), "pull_from_servers needs at least one server");
  TRAINSIM_CHECK(bytes_per_server.size() == servers.size(), "pull_from_servers needs one byte count per server");
  const double software_end = reserve_software(options);
  CollectiveStats stats = move_server_bytes(sim, workers, servers, bytes_per_server, options, false);
  wait_until(software_end);
  return stats;
}

namespace {

sg4::Host* node_cpu(const Simulation& sim, int node) {
  TRAINSIM_CHECK(static_cast<std::size_t>(node) < sim.node_cpus().size(), "host staging needs the node CPUs of a described platform");
  return sim.node_cpus()[static_cast<std::size_t>(node)];
}

// Runs `seconds` of work on each of `hosts` at once and waits for all. SimGrid 3.32 removes an
// ended activity from its actor's list by a scan of that list, so one actor waiting on E execs
// costs O(E²): 16,384 node CPUs' host sums per bucket took most of a 4,096-node parameter-server
// iteration. Above kExecsPerActor hosts the execs are started from helper actors of at most that
// many each (all start at the same instant either way: same results).
constexpr std::size_t kExecsPerActor = 128;
void compute_seconds_on(const std::vector<sg4::Host*>& hosts, double seconds) {
  if (seconds <= 0) return;
  auto batch = [&hosts, seconds](std::size_t begin, std::size_t end) {
    std::vector<sg4::ExecPtr> execs;
    execs.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) execs.push_back(exec_on(hosts[i], seconds * hosts[i]->get_speed()));
    for (auto& e : execs) e->wait();
  };
  if (hosts.size() <= kExecsPerActor) {
    batch(0, hosts.size());
    return;
  }
  std::vector<sg4::ActorPtr> actors;
  for (std::size_t b = 0; b < hosts.size(); b += kExecsPerActor)
    actors.push_back(sg4::Actor::create("execs" + std::to_string(b), sg4::this_actor::get_host(),
                                        [batch, b, &hosts] { batch(b, std::min(hosts.size(), b + kExecsPerActor)); }));
  for (auto& a : actors) a->join();
}

}  // namespace

CollectiveStats push_to_servers(Simulation& sim, const std::vector<int>& workers,
                                const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                const ParameterServerOptions& options) {
  return push_to_servers(sim, hosts_of(sim, workers), servers, bytes_per_server, options);
}

CollectiveStats pull_from_servers(Simulation& sim, const std::vector<int>& workers,
                                  const std::vector<sg4::Host*>& servers, const std::vector<double>& bytes_per_server,
                                  const ParameterServerOptions& options) {
  return pull_from_servers(sim, hosts_of(sim, workers), servers, bytes_per_server, options);
}

namespace {

// Every GPU of `ranks` and its node's CPU exchange `bytes` (GPU → CPU when `to_host`), all at once.
CollectiveStats copy_between_gpus_and_hosts(Simulation& sim, const std::vector<int>& ranks, double bytes, GroupedFlows* grouped,
                                            bool to_host) {
  CollectiveStats stats;
  if (bytes <= 0) return stats;
  stats.flows = static_cast<long long>(ranks.size());
  if (grouped) {
    GroupedFlows::Batch batch;
    batch.bytes = bytes;
    for (int r : ranks) {
      sg4::Host* gpu = sim.gpu(r);
      sg4::Host* cpu = node_cpu(sim, sim.node_of(r));
      batch.srcs.push_back(to_host ? gpu : cpu);
      batch.dsts.push_back(to_host ? cpu : gpu);
    }
    stats.used = Representation::coarse;
    if (!batch.srcs.empty()) grouped->transfer({batch});
    return stats;
  }
  std::vector<sg4::CommPtr> comms;
  for (int r : ranks) {
    sg4::Host* gpu = sim.gpu(r);
    sg4::Host* cpu = node_cpu(sim, sim.node_of(r));
    comms.push_back(to_host ? sim.start_flow(gpu, cpu, bytes) : sim.start_flow(cpu, gpu, bytes));
  }
  for (auto& c : comms) c->wait();
  return stats;
}

}  // namespace

CollectiveStats copy_to_hosts(Simulation& sim, const std::vector<int>& ranks, double bytes, GroupedFlows* grouped) {
  return copy_between_gpus_and_hosts(sim, ranks, bytes, grouped, true);
}

CollectiveStats copy_from_hosts(Simulation& sim, const std::vector<int>& ranks, double bytes, GroupedFlows* grouped) {
  return copy_between_gpus_and_hosts(sim, ranks, bytes, grouped, false);
}

void compute_on_hosts(Simulation& sim, const std::vector<int>& nodes, double seconds) {
  std::vector<sg4::Host*> hosts;
  for (int node : nodes) hosts.push_back(node_cpu(sim, node));
  compute_seconds_on(hosts, seconds);
}

CollectiveStats host_ring_all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes,
                                     double host_memory_Bps, double reduce_Bps, double stream_Bps) {
  TRAINSIM_CHECK(host_memory_Bps > 0, "a host-staged all-reduce needs the host memory bandwidth");
  CollectiveStats stats;
  stats.used = Representation::lockstep;
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || bytes <= 0) return stats;
  // The nodes in ring order (ranks are node-major) and the ranks each holds.
  std::vector<int> nodes;
  std::vector<int> per_node;
  for (int r : ranks) {
    const int node = sim.node_of(r);
    if (nodes.empty() || nodes.back() != node) {
      nodes.push_back(node);
      per_node.push_back(0);
    }
    ++per_node.back();
  }
  std::vector<sg4::Host*> cpus;
  for (int node : nodes) cpus.push_back(node_cpu(sim, node));
  const double chunk = bytes / n;
  const std::size_t count = nodes.size();
  // The memory rate of `ranks` ranks working at once on one node: one core each when the stack
  // gives a core's rate, all of them within the node's memory bandwidth.
  auto memory_Bps = [&](int working) {
    return reduce_Bps > 0 ? std::min(host_memory_Bps, working * reduce_Bps) : host_memory_Bps;
  };
  // One step: the node-to-node hops as flows and each node's shared-memory hops as memory work,
  // concurrently; then, when reducing, each node's ranks add the received chunks.
  auto step = [&](bool reduce, bool simulate) {
    std::vector<sg4::CommPtr> comms;
    const double step_start = sim.now();
    if (count > 1)
      for (std::size_t k = 0; k < count; ++k) {
        sg4::Host* to = cpus[(k + 1) % count];
        if (simulate)
          comms.push_back(sim.start_flow(cpus[k], to, chunk));
        else
          sim.account_flow(cpus[k], to, chunk);
      }
    if (!simulate) return;
    stats.flows += static_cast<long long>(comms.size());
    std::vector<sg4::ExecPtr> copies;
    for (std::size_t k = 0; k < count; ++k) {
      // count == 1: the ring closes inside the node, all g hops are shared memory.
      const int shm_hops = count > 1 ? per_node[k] - 1 : per_node[k];
      if (shm_hops > 0)
        copies.push_back(exec_on(cpus[k], 2.0 * shm_hops * chunk / memory_Bps(shm_hops) * cpus[k]->get_speed()));
    }
    for (auto& c : comms) c->wait();
    // One TCP stream per hop cannot exceed its cap. SimGrid 3.32 refuses set_rate() on host-to-host
    // comms, so the cap is a floor on the hop's time (as the CPU engine's bandwidth caps): the
    // flow shares the links as an uncapped one would, and the step lasts at least chunk / cap.
    if (count > 1 && stream_Bps > 0 && sim.now() < step_start + chunk / stream_Bps)
      sg4::this_actor::sleep_until(step_start + chunk / stream_Bps);
    for (auto& e : copies) e->wait();
    if (reduce) {
      std::vector<sg4::ExecPtr> sums;
      for (std::size_t k = 0; k < count; ++k)
        sums.push_back(exec_on(cpus[k], 3.0 * per_node[k] * chunk / memory_Bps(per_node[k]) * cpus[k]->get_speed()));
      for (auto& e : sums) e->wait();
    }
  };
  for (bool reduce : {true, false}) {  // reduce-scatter, then all-gather: n−1 steps each
    const double start = sim.now();
    step(reduce, true);
    const double duration = sim.now() - start;
    for (int s = 1; s < n - 1; ++s) step(reduce, false);
    if (n > 2) sg4::this_actor::sleep_for(duration * (n - 2));
  }
  return stats;
}

namespace {

/// The plan's NCCL decision for one size of an `nccl` request (plan::nccl_decide, the same
/// function `simulate` plans its buckets with), and the options that charge its costs.
struct TunedRun {
  plan::NcclDecision decision;
  CollectiveOptions options;
};

TunedRun tune(const plan::NcclTopology& topo, const CollectiveRequest& request, double bytes, int gpu_sm_count) {
  plan::NcclRequest asked;
  asked.tune_algorithm = request.tune_algorithm;
  asked.algorithm = request.algorithm;
  asked.protocol = request.protocol;
  asked.channels = request.options.channels;
  asked.gpu_sm_count = gpu_sm_count;
  TunedRun run;
  run.decision = plan::nccl_decide(topo, bytes, asked);
  run.options = request.options;
  run.options.launch_s = run.decision.costs.launch_s;
  run.options.step_overhead_s += run.decision.costs.step_overhead_s;
  run.options.nccl_protocol = run.decision.choice.protocol;
  // A ring runs on NCCL's channels unless the request sets them (--channels); a tree across
  // nodes has them as its graph channels, each used by both trees (connect.cc duplicates them).
  run.options.channels = run.decision.channels;
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
      request.algorithm != Algorithm::nvls && request.algorithm != Algorithm::nvls_tree &&
      request.algorithm != Algorithm::collnet_direct && request.algorithm != Algorithm::collnet_chain)
    throw InputError("collective request", "protocol",
                     "protocols are modelled for NCCL's algorithms (ring, tree, nvls, nvls_tree, collnet_direct, "
                     "collnet_chain), not " +
                         to_string(request.algorithm));
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
  // Known here for a SimGrid XML platform (its hosts), checked before anything runs.
  if (request.options.representation == plan::Representation::step) {
    const std::string why = plan::step_representation_refusal(n);
    if (!why.empty()) throw InputError("collective request", "representation", why);
  }
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[std::size_t(i)] = i;
  // Tuned before simulating: a request NCCL would not run is bad input, not a failure inside an actor.
  std::vector<TunedRun> tuned;
  if (nccl)
    for (double bytes : sizes_bytes) tuned.push_back(tune(topo, request, bytes, spec.gpu.sm_count));
  std::vector<CollectiveTiming> timings;
  sg4::Actor::create("collective", sim.gpu(0), [&] {
    for (std::size_t i = 0; i < sizes_bytes.size(); ++i) {
      const double bytes = sizes_bytes[i];
      const double start = sim.now();
      CollectiveStats stats;
      if (nccl) {
        const TunedRun& run = tuned[i];
        const plan::NcclChoice& choice = run.decision.choice;
        stats = all_reduce(sim, ranks, bytes * run.decision.costs.wire_factor, choice.algorithm, run.options);
        // NCCL's channel count, or the rings asked for (the engine runs a ring's channels as rings,
        // a tree across nodes as its channels of both trees, and NVLS as one flow per port).
        const bool asked = ((request.options.channels > 0 || !run.decision.tuner_row.empty()) &&
                            choice.algorithm == Algorithm::ring) ||
                           (choice.algorithm == Algorithm::tree && topo.nodes > 1);
        timings.push_back({bytes, sim.now() - start, stats.used, asked ? stats.channels : choice.channels,
                           choice.algorithm, choice.protocol, choice.predicted_s, run.decision.kernel_sms});
        timings.back().tuner_row = run.decision.tuner_row;
        continue;
      }
      switch (request.op) {
        case CollectiveOp::allreduce: stats = all_reduce(sim, ranks, bytes, request.algorithm, request.options); break;
        case CollectiveOp::reduce_scatter: stats = reduce_scatter(sim, ranks, bytes, request.options); break;
        case CollectiveOp::all_gather: stats = all_gather(sim, ranks, bytes, request.options); break;
        case CollectiveOp::broadcast: stats = broadcast(sim, ranks, bytes, request.options); break;
      }
      timings.push_back({bytes, sim.now() - start, stats.used, stats.channels, request.algorithm, std::nullopt, 0.0, 0});
    }
  });
  sim.run();
  for (CollectiveTiming& t : timings) t.gpus = n;
  return timings;
}

}  // namespace trainsim::engine
