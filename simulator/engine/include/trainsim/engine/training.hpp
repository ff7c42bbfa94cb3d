#pragma once
// One synchronous-SGD iteration of a scenario, simulated on SimGrid.
//
//   GPU actor r (one per GPU):  forward ─ bwd segment 0 ─▶ bucket 0 ready ─ … ─ bwd tail ─ wait ─ update
//   communicator actor:          wait bucket 0 ready on all GPUs ─ collective(bucket 0) ─ … ─ release GPUs
//
// Compute runs as SimGrid executions on the GPU hosts, one per segment of consecutive tasks between
// two bucket boundaries: a GPU host runs nothing else, so a segment lasts exactly the sum of its
// task times, and per-layer events are reconstructed from it. Communication runs on the simulated
// network (flow-level, max-min bandwidth sharing), so strategies and contention are modelled where
// they matter. One collective at a time per communicator, as in NCCL/DDP.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/engine/scenario.hpp"

namespace trainsim::engine {

struct Breakdown {
  double compute_s = 0;                ///< compute time of the slowest GPU
  double communication_s = 0;          ///< time during which a collective (or PS exchange) was in progress
  double exposed_communication_s = 0;  ///< iteration time − compute of the slowest GPU
  double idle_s = 0;                   ///< mean time GPUs waited for slower GPUs
};

/// Device memory needed per GPU (the GPU with the largest batch), in bytes.
struct MemoryUsage {
  double weights = 0;          ///< parameters (plus fp32 master copy in half precision)
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;      ///< saved for backward, for the local batch
  double framework = 0;        ///< CUDA context, workspace and allocator slack
  double total = 0;
  double available = 0;        ///< the GPU's memory
  bool fits() const { return total <= available; }
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
};

/// Memory per GPU of a scenario (pure arithmetic, no simulation).
MemoryUsage memory_per_gpu(const Scenario& scenario, const workloads::Workload& workload);

/// Simulates one iteration. Must be called at most once per process (SimGrid keeps global state):
/// sweeps and tests call it in a child process. Throws RunError when the simulation fails.
IterationResult simulate_iteration(const Scenario& scenario, const SimulateOptions& options);

}  // namespace trainsim::engine
