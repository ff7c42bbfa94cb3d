#pragma once
// Executes a training plan (trainsim/plan/training_plan.hpp) on SimGrid: one synchronous-SGD
// iteration. The plan decides everything (the platform to build, task times, buckets, operations,
// servers, each all-reduce's schedule); the engine runs it and measures, and the plan's analysis
// (plan::analyse_iteration) turns the measurements into the result (simulator/README.md, "Where
// each decision lives").
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
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/training_plan.hpp"

namespace trainsim::engine {

// The result record is plain data shared with the CLI and fitting (trainsim/plan/result.hpp).
using plan::BucketTiming;
using plan::IterationResult;

struct SimulateOptions {
  std::string trace_path;        ///< Chrome trace to write; empty = none
  std::size_t busiest_links = 5; ///< how many links to report
  /// Called with the plan once it is built, before it is executed (e.g. to write it out).
  std::function<void(const plan::TrainingPlan&)> on_plan;
  /// CPU scenarios: called with the CPU plan instead.
  std::function<void(const plan::CpuPlan&)> on_cpu_plan;
  /// Called once the scenario has passed the size limits, just before the platform is built
  /// (e.g. to say that a large one takes a while); not for CPU scenarios.
  std::function<void()> before_build;
  /// SimGrid's full max-min solve instead of its lazy update (SimulationOptions::full_network_solve).
  bool full_network_solve = false;
};

/// Plans and simulates one iteration of `scenario`. Must be called at most once per process
/// (SimGrid keeps global state): sweeps and tests call it in a child process. The simulation a GPU
/// scenario builds (platform, routes) is kept, reachable, until the process ends rather than freed on
/// return, which took 13 % of a 65,536-GPU iteration; no second one can follow in the process
/// anyway. Throws InputError for a scenario that cannot be planned, RunError when the simulation
/// fails (the simulation is then freed).
/// A CPU scenario (`scenario.cpu` set) runs simulate_cpu_iteration instead.
IterationResult simulate_iteration(const plan::Scenario& scenario, const SimulateOptions& options);

/// Simulates one iteration of `plan` as it stands (read from a file, possibly edited): builds its
/// platform and runs its operations, deciding nothing anew. simulate_iteration is build_training_plan
/// then this, so a plan dumped by `simulate --dump-plan` replays to the same result. Refuses (InputError
/// naming `source`, the plan's file, at the plan's pointers) a plan past the size limits
/// (plan::check_simulation_size, the actors Linux allows) or whose SimGrid XML platform has another
/// GPU count. Once per process, as simulate_iteration.
IterationResult simulate_plan(const plan::TrainingPlan& plan, const SimulateOptions& options, const std::string& source = "plan");

/// Plans and simulates one iteration of a CPU scenario on a multi-core SimGrid host
/// (plan/cpu_threading.hpp). Same contract as simulate_iteration: once per process.
IterationResult simulate_cpu_iteration(const plan::Scenario& scenario, const SimulateOptions& options);

/// Simulates the CPU iteration `plan` as it stands (read from a file, possibly edited);
/// simulate_cpu_iteration is build_cpu_plan then this. Once per process.
IterationResult simulate_cpu_plan(const plan::CpuPlan& plan, const SimulateOptions& options);

}  // namespace trainsim::engine
