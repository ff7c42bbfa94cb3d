#pragma once
// Collectives as reusable blocking calls for the training simulation, and a convenience that times
// a collective on a fresh simulation (`trainsim collective`).
//
// Every collective is called from INSIDE a SimGrid actor and returns when it is complete on all
// ranks (simulated time advances). Flows are created when they become ready, never up front.
//
// Representations (S bytes, n ranks, K steps, c bytes per step, o = step_overhead_s):
//   step:   each rank is an actor that sends its step-k chunk when it has received step k−1 and its
//           own step-(k−1) send is done, plus `o` before every send: exact under contention.
//   coarse: one flow per ring hop carrying the phase's K·c bytes, then K−1 further latencies of
//           the critical hop (largest α_h + c/β_h) and K·o are slept. Exact when no link is
//           oversubscribed by the phase's flows at their lone rates and the critical hop's K-step
//           flow also finishes last: time = K·(o + α* + c/β*), the step-level result.
//   lockstep: one step of every ring is simulated (n flows of c bytes, sharing and latency phases
//           as SimGrid computes them), then K−1 more steps of the same duration are slept. Exact
//           for rings whose K steps move the same flows and proceed together; within 1% of step
//           on the platforms tests cover, at the cost of one step.
//   automatic: coarse where its condition holds under the ideal network model; else lockstep when
//           the rings run together have the same step count; else step.
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "trainsim/engine/collective_timing.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::engine {

class GroupedFlows;  // engine-private: the parameter servers' coarse executor (grouped_flows.hpp)

// Algorithms, representations, options and operations are the plan's vocabulary (no SimGrid).
using plan::Algorithm;
using plan::bus_bandwidth_factor;
using plan::CollectiveOp;
using plan::CollectiveOptions;
using plan::parse_representation;
using plan::Representation;
using plan::representation_names;
using plan::to_string;

/// What one collective did.
struct CollectiveStats {
  Representation used = Representation::step;  ///< the representation actually run (never automatic)
  long long flows = 0;                          ///< flows created
  int channels = 1;                             ///< parallel rings or trees the collective ran on
};

/// All-reduce of `bytes` over `ranks` (indices into Simulation::gpu). bytes ≥ 0; a single rank or zero bytes
/// returns at once. Halving-doubling handles non-powers of two by folding the extra ranks in.
CollectiveStats all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes, Algorithm algorithm,
                           const CollectiveOptions& options = {});
/// Reduce-scatter of `bytes` (the full input per rank; each rank ends with bytes/n) around a ring.
CollectiveStats reduce_scatter(Simulation& sim, const std::vector<int>& ranks, double bytes,
                               const CollectiveOptions& options = {});
/// All-gather producing `bytes` on every rank (each contributes bytes/n) around a ring.
CollectiveStats all_gather(Simulation& sim, const std::vector<int>& ranks, double bytes,
                           const CollectiveOptions& options = {});
/// Hybrid sharding: a reduce-scatter (all-gather) of `bytes` inside every node of `ranks` at once,
/// one ring per node; with `reduce_scatter_and_all_reduce`, each GPU's 1/g shard is then
/// all-reduced across the nodes, one ring per local rank (FSDP HYBRID_SHARD's gradient reduction).
/// `ranks` fill whole nodes (as hierarchical_all_reduce requires).
CollectiveStats node_local_collective(Simulation& sim, const std::vector<int>& ranks, double bytes,
                                      bool reduce_scatter_and_all_reduce, const CollectiveOptions& options = {});
/// Broadcast of `bytes` from ranks[0] along a pipelined chain (NCCL's ring broadcast).
CollectiveStats broadcast(Simulation& sim, const std::vector<int>& ranks, double bytes,
                          const CollectiveOptions& options = {});

/// Parameter-server options.
struct ParameterServerOptions {
  /// FLOPs a server spends per byte it receives to aggregate it (one add per fp32 element = 0.25).
  double aggregate_flops_per_byte = 0.25;
  /// The servers' and workers' software queues (null = no software cost): shared by every
  /// operation on a server.
  class ServerSoftware* software = nullptr;
  /// The operation's software seconds on each server (parallel to the servers; null or empty =
  /// none) and on each worker's side (plan::CommOp::server_software_s, worker_software_s).
  const std::vector<double>* server_software_s = nullptr;
  double worker_software_s = 0;
  /// The coarse representation's executor (engine-private; null = flow level: one SimGrid flow
  /// per worker and server). With it, the flows of a push or pull that share a server, a size and
  /// a route latency move as one group at the max-min rate SimGrid would give each (simulator/README.md
  /// "Parameter-server representations").
  class GroupedFlows* grouped = nullptr;
};

/// Each parameter server's software (RPC handling, (de)serialisation, accumulation) as one FIFO
/// queue of seconds, and the workers' side (alike on every worker) as one more: the seconds an
/// operation costs are processed from max(its start, the end of the work reserved before it) on,
/// overlapping the operation's flows; the operation ends when its flows and its processing are
/// done. So all of a server's connections share its software, in the order their operations
/// started. (The plan turns rates, RPC counts and threads into seconds: plan::apply_stack_costs.)
class ServerSoftware {
public:
 explicit ServerSoftware(std::size_t servers);
 /// Reserves `seconds` on server i from `now_s`; returns when that processing ends, seconds.
 double reserve(std::size_t server, double seconds, double now_s);
 /// Reserves `seconds` on every worker's side from `now_s`; returns when it ends.
 double reserve_workers(double seconds, double now_s);

private:
  std::vector<double> free_at_s_;
  double workers_free_at_s_ = 0;
};
/// Push: every worker sends bytes_per_server[i] to servers[i] (all at once: the incast is the
/// point), then every server aggregates what it received (time from its speed). servers
/// non-empty; bytes_per_server parallel to it, each ≥ 0; a zero entry creates no flow and no
/// aggregation on that server.
CollectiveStats push_to_servers(Simulation& sim, const std::vector<int>& workers,
                                const std::vector<simgrid::s4u::Host*>& servers,
                                const std::vector<double>& bytes_per_server, const ParameterServerOptions& options = {});
/// Pull: servers[i] sends bytes_per_server[i] back to every worker (zero entries: no flow).
CollectiveStats pull_from_servers(Simulation& sim, const std::vector<int>& workers,
                                  const std::vector<simgrid::s4u::Host*>& servers,
                                  const std::vector<double>& bytes_per_server, const ParameterServerOptions& options = {});
/// Push and pull with arbitrary worker hosts (a node's CPU under per-worker aggregation). A worker
/// that is its server's host exchanges nothing over a link (a local copy), but the server still
/// processes and aggregates its bytes.
CollectiveStats push_to_servers(Simulation& sim, const std::vector<simgrid::s4u::Host*>& workers,
                                const std::vector<simgrid::s4u::Host*>& servers,
                                const std::vector<double>& bytes_per_server, const ParameterServerOptions& options = {});
CollectiveStats pull_from_servers(Simulation& sim, const std::vector<simgrid::s4u::Host*>& workers,
                                  const std::vector<simgrid::s4u::Host*>& servers,
                                  const std::vector<double>& bytes_per_server, const ParameterServerOptions& options = {});

/// Host staging. Every GPU of `ranks` copies `bytes` to its node's host CPU (device_to_host) or
/// receives them from it (host_to_device), all at once over the node's PCIe tree and host memory
/// link. Needs node CPUs (not a SimGrid XML platform). With `grouped` (the parameter servers'
/// coarse executor) the copies are one batch of it, so that the pushes and pulls it runs, which
/// may cross the same PCIe links, share them with the copies at their max-min rates.
CollectiveStats copy_to_hosts(Simulation& sim, const std::vector<int>& ranks, double bytes, GroupedFlows* grouped = nullptr);
CollectiveStats copy_from_hosts(Simulation& sim, const std::vector<int>& ranks, double bytes, GroupedFlows* grouped = nullptr);
/// Every node CPU of `nodes` computes for `seconds` at once (a host-side sum).
void compute_on_hosts(Simulation& sim, const std::vector<int>& nodes, double seconds);

/// Horovod's MPI_Allreduce on host buffers: one rank per GPU of `ranks` (whole nodes, node-major),
/// each rank's buffer in its node's host memory, a ring of 2(n−1) steps of S/n. Per step every
/// node sends one chunk to the next node's CPU over the network while its other g−1 ring hops are
/// shared-memory copies (read + write, 2·S/n each through the node's memory); in the
/// reduce-scatter steps each of the node's g ranks then adds the received chunk into its own (read
/// two, write one: 3·S/n each). Memory work runs at `host_memory_Bps` on the node CPU. The first
/// step of each phase is simulated and the other n−2 of it repeat its duration (every step moves the
/// same flows), their bytes counted on the links.
/// With `reduce_Bps` > 0 every rank's memory work runs on one core at that rate, the node's ranks
/// in parallel up to host_memory_Bps in all (MPI's reduction on host buffers is one core's loop per
/// rank); with `stream_Bps` > 0 each node-to-node hop is one TCP stream bounded by that rate.
CollectiveStats host_ring_all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes,
                                     double host_memory_Bps, double reduce_Bps = 0, double stream_Bps = 0);

}  // namespace trainsim::engine
