#pragma once
// What bounds a simulated iteration, in one sentence, and which choices of a plan deserve a
// warning. Pure functions over the plan and the result record (no SimGrid); the engine calls them
// and stores their answers in IterationResult::bound and ::warnings.
//
//   exposed, idle < 5 % of the iteration ─────────────▶ compute
//   idle ≥ exposed ────────────────────────────────────▶ stragglers
//   a connection busy through ≥ half the exposed time ─▶ link (incast: into a server's node)
//   otherwise ─────────────────────────────────────────▶ latency (per-message costs, aggregation)
#include <string>
#include <vector>

#include "trainsim/plan/result.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::plan {

/// A connection (the two directions of a full-duplex link, or a one-way link) as the bound
/// analysis sees it.
struct ConnectionLimit {
  std::string name;        ///< "node 0 NIC 0 ↔ network"
  std::string link_class;  ///< platforms::LinkClass as text
  /// Part of the iteration during which every GPU waited for communication and the connection was
  /// busy in either direction (per operation the busier direction counts), 0..exposed / iteration.
  double limit_share = 0;
  /// The node ("node 0", "server node 1") of the parameter server whose incast it carries: it lies in
  /// that node (a NIC, PCIe uplink, memory bus, or the node's cable into the topology) and carries
  /// the flows of several workers to or from the server. Empty otherwise.
  std::string incast_into;
};

/// Thresholds of find_bound (fractions).
struct BoundThresholds {
  double hidden = 0.05;  ///< exposed communication and idle time both under this share of the iteration: compute-bound
  double busy_through = 0.5;  ///< a connection busy through this much of the exposed communication bounds it
  double tie = 0.01;          ///< connections within this relative difference of the largest limit share limit equally
};

/// The bound of `result` (its breakdown, iteration time and strategy) given every connection that
/// carried bytes during the exposed communication. Kind unknown when the iteration time is not
/// positive. The sentence starts with "The iteration is" and ends with a full stop.
IterationBound find_bound(const IterationResult& result, std::vector<ConnectionLimit> connections,
                          const BoundThresholds& thresholds = {});

/// Warnings about pathological choices of `plan` on `platform`, in this order:
///  - single_server: one parameter server for 8 workers or more (every worker's traffic converges on it);
///  - few_servers: 2 or more parameter servers, each exchanging with 16 or more times a worker's traffic;
///  - overlap_off_buckets: overlap off with several buckets, whose extra collectives' latency
///    (estimated as steps × the latency of one hop, per extra bucket) reaches 5 % of the slowest GPU's compute;
///  - ring_latency: a ring all-reduce across nodes in which buckets holding half the gradient bytes
///    or more move less per step (bucket / ranks) than the network's latency-bandwidth product, so
///    latency dominates their steps.
std::vector<Warning> plan_warnings(const TrainingPlan& plan, const platforms::PlatformSpec& platform);

/// How `plan` will be run, where the user should know: coarse_representation, a parameter-server
/// plan under representation "auto" whose GPU-host copies run coarse (past kAutoCoarseServerFlows
/// flows per iteration), not at flow level. The engine reports these after plan_warnings.
std::vector<Warning> representation_warnings(const TrainingPlan& plan);

/// The plan's input pipeline (if any) applied to `result`, the simulated iteration: its timing for
/// rank 0's batch (the largest) and, when the loaders are slower than the iteration, their wait
/// added to the iteration time and idle time, the throughput and efficiency recomputed, the bound
/// set to the input pipeline and an input_bound warning. Steady state with prefetching.
void apply_input_pipeline(const TrainingPlan& plan, IterationResult& result);

}  // namespace trainsim::plan
