#pragma once
// Executes a training plan (trainsim/plan/training_plan.hpp) on SimGrid: one synchronous-SGD
// iteration. The plan decides everything (task times, buckets, operations, servers); the engine
// only runs it.
//
//   GPU actor r (one per GPU):  forward ─ bwd segment 0 ─▶ bucket 0 ready ─ … ─ bwd tail ─ wait ─ update
//   communicator actor:          op 0 when its trigger holds ─ op 1 ─ … ─ release GPUs
//
// Compute runs as SimGrid executions on the GPU hosts, one per segment of consecutive tasks between
// two bucket boundaries: a GPU host runs nothing else, so a segment lasts exactly the sum of its
// task times, and per-layer events are reconstructed from it. Communication runs on the simulated
// network (flow-level, max-min bandwidth sharing), so strategies and contention are modelled where
// they matter.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/training_plan.hpp"

namespace trainsim::engine {

using plan::MemoryUsage;

struct Breakdown {
  double compute_s = 0;                ///< compute time of the slowest GPU
  double communication_s = 0;          ///< time during which a collective (or PS exchange) was in progress
  double exposed_communication_s = 0;  ///< iteration time − compute of the slowest GPU
  double idle_s = 0;                   ///< mean time GPUs waited for slower GPUs
};

struct LinkLoad {
  std::string name;
  double bytes = 0;
  double busy_fraction = 0;    ///< average utilisation over the iteration (0..1)
};

struct BucketTiming {
  double bytes = 0;
  double ready_s = 0;   ///< gradient ready on every GPU
  double start_s = 0;   ///< collective started (after the previous one)
  double end_s = 0;
};

/// The result object of SPEC.md plus detail.
struct IterationResult {
  std::string name;
  Json point = Json::object();   ///< sweep coordinates (empty for a single run)
  int gpus = 0;
  int nodes = 0;
  double global_batch = 0;
  double iteration_time_s = 0;
  double samples_per_s = 0;
  double scaling_efficiency = 0;
  double single_gpu_samples_per_s = 0;
  Breakdown breakdown;
  double network_bytes = 0;
  std::vector<LinkLoad> busiest_links;
  MemoryUsage memory;
  std::string strategy;
  std::string network_model;
  double calibration_factor = 1;
  std::vector<BucketTiming> buckets;
  double sim_wall_s = 0;

  /// The result object; key order is fixed (deterministic output).
  Json to_json() const;
};

struct SimulateOptions {
  std::string trace_path;        ///< Chrome trace to write; empty = none
  std::size_t busiest_links = 5; ///< how many links to report
  /// Called with the plan once it is built, before it is executed (e.g. to write it out).
  std::function<void(const plan::TrainingPlan&)> on_plan;
};

/// Plans and simulates one iteration of `scenario`. Must be called at most once per process
/// (SimGrid keeps global state): sweeps and tests call it in a child process. Throws InputError
/// for a scenario that cannot be planned, RunError when the simulation fails.
IterationResult simulate_iteration(const plan::Scenario& scenario, const SimulateOptions& options);

}  // namespace trainsim::engine
