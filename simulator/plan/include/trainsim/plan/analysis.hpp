#pragma once
// The result of a simulated iteration read against its plan: what the engine measured becomes
// the iteration time, breakdown and throughput, what bounds it in one sentence, which choices of
// the plan deserve a warning, and the input pipeline's wait. Pure functions over the plan and the
// measurements (no SimGrid): the engine measures and calls analyse_iteration, deciding nothing.
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

/// What the engine measured running one iteration of a plan, and nothing it judged.
struct MeasuredIteration {
  std::vector<double> end_s;                 ///< per GPU: when its optimizer step ended
  std::vector<double> kernel_slowdown_s;     ///< per GPU: compute time lost to collective kernels' SMs
  std::vector<BucketTiming> buckets;         ///< per bucket: its first operation's start to its last one's end
  double network_bytes = 0;                  ///< bytes of every flow
  std::vector<LinkLoad> busiest_links;       ///< by busy time, most first
  std::vector<ConnectionLimit> connections;  ///< every connection busy inside the exposed window
};

/// The iteration time: when the last GPU ended (what the link analysis weighs the links against).
double measured_iteration_s(const MeasuredIteration& measured);

/// Time some bucket's communication was in progress: the length of the union of the buckets'
/// intervals; intervals that only touch are summed apart, so operations run one after another
/// (all-reduces) give exactly the sum of their durations.
double communication_time(std::vector<BucketTiming> buckets);

/// The result of one iteration of `plan` from what the engine measured: the iteration time and
/// throughput, the breakdown (compute of the slowest GPU, the loss to collective kernels' SMs as
/// its own part, exposed communication beyond both, idle, communication in progress), the
/// plan's figures (servers' loads, memory, variables), find_bound, plan_warnings then
/// representation_warnings, and last apply_input_pipeline.
IterationResult analyse_iteration(const TrainingPlan& plan, MeasuredIteration measured);

/// The plan's input pipeline (if any) applied to `result`, the simulated iteration: its timing for
/// rank 0's batch (the largest) and, when the loaders are slower than the iteration, their wait
/// added to the iteration time and idle time, the throughput and efficiency recomputed, the bound
/// set to the input pipeline and an input_bound warning. Steady state with prefetching.
void apply_input_pipeline(const TrainingPlan& plan, IterationResult& result);

}  // namespace trainsim::plan
