#pragma once
// The result of one simulated iteration (the result object of `simulate --json`) as one typed record, the line of
// a sweep's results.jsonl around it, and the one CSV schema every command writes results in:
//
//   engine::simulate_iteration ──▶ IterationResult ──to_json──▶ simulate --json, results.jsonl
//                                        ▲  from_json (checked)       │
//                                        └────────────────────────────┘  sweep --resume, plan, report
//   ResultRecord ──result_csv_cells──▶ results.csv, simulate --csv ──▶ fit, compare
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/input_pipeline.hpp"

namespace trainsim::plan {

struct Breakdown {
  double compute_s = 0;                ///< compute time of the slowest GPU
  double communication_s = 0;          ///< time during which a collective (or PS exchange) was in progress
  double exposed_communication_s = 0;  ///< iteration time − (compute + comm_kernel_slowdown) of the slowest GPU
  double idle_s = 0;                   ///< mean time GPUs waited for slower GPUs
  /// Compute time a GPU lost to collective kernels holding SMs while it computed (nccl_allreduce),
  /// the largest over GPUs; 0 for strategies whose collectives take nothing from compute.
  double comm_kernel_slowdown_s = 0;
};

/// Device memory needed per GPU (the GPU with the largest batch), in bytes.
struct MemoryUsage {
  double weights = 0;          ///< parameters (plus fp32 master copy in half precision)
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;      ///< saved for backward, for the local batch
  double framework = 0;        ///< CUDA context, workspace, allocator slack and fragmentation
  double total = 0;            ///< what the process holds at its peak: reserved memory and the CUDA context
  double required = 0;         ///< what must fit (gpu_memory.hpp, MemoryEstimate::required); ≤ total
  double available = 0;  ///< the GPU's memory that a process may use
  /// Sharded parameters (zero_stage 3): the layer groups gathered at once (the one computing and the
  /// one prefetched) and one group's unsharded gradients before its reduce-scatter.
  double gathered_parameters = 0;
  /// Activation checkpointing: the largest recomputed segment's activations, live while its
  /// backward runs (`activations` then holds the checkpoints and the last segment's).
  double recompute_activations = 0;
  /// The largest batch per GPU whose memory fits (0: not even one sample; unset: not computed, e.g. a
  /// result read from an older line).
  std::int64_t largest_batch_per_gpu = -1;
  bool fits() const { return required <= available; }
  /// {"weights", "gradients", "optimizer_state", "activations", "framework", "total", "required", "available"},
  /// then "gathered_parameters" and "recompute_activations" where not 0, and "largest_batch_per_gpu"
  /// where computed.
  Json to_json() const;
};

/// The largest micro-batch per GPU whose memory fits the GPU, without and with activation
/// checkpointing (memory grows linearly in the batch: activations; the rest is fixed).
struct LargestBatch {
  std::int64_t without_checkpointing = 0;  ///< 0: not even one sample fits
  std::int64_t with_checkpointing = 0;
  int checkpoint_every_layers = 0;  ///< the segments "with" assumes: the scenario's, or ⌈√layers⌉
  /// {"without_checkpointing", "with_checkpointing", "checkpoint_every_layers"}.
  Json to_json() const;
  static LargestBatch from_json(const JsonNode& node);
};

/// One direction of one link over the iteration (platforms/link_names.hpp names them).
struct LinkLoad {
  std::string name;                    ///< "node 0 NIC 0 → network", "leaf 2 → spine 0"; an XML platform's link id
  std::string link_class = "unknown";  ///< nvlink, nvswitch, pcie, memory, nic, fabric or unknown
  double bytes = 0;
  /// Busy time over the iteration time, 0..1. Busy time = bytes / (bandwidth × the network model's
  /// bandwidth factor): how long the link needed at full rate for what it carried.
  double busy_fraction = 0;
  /// The part of the iteration during which every GPU waited for communication and this link was
  /// busy, 0..exposed_communication_s / iteration_time_s: its busy time inside the exposed window
  /// (from the end of the last GPU's backward pass to the end of the last communication
  /// operation), each operation's bytes on the link spread evenly over that operation. 0 in
  /// results written before it existed.
  double limit_share = 0;
};

/// What bounds an iteration (plan/analysis.hpp decides).
enum class BoundKind {
  unknown,     ///< not analysed (results written before the analysis existed)
  compute,     ///< communication is hidden (exposed and idle time under 5 % of the iteration)
  stragglers,  ///< GPUs wait for slower GPUs longer than they wait for communication
  latency,     ///< communication is exposed but no link is busy through half of it: latency, overheads, aggregation
  link,        ///< one link, or several equally limiting ones, busy through most of the exposed communication
  incast,      ///< as link, and the link carries many workers' traffic into a parameter server's node
  input,       ///< the GPUs wait for their loaders (workload.input_pipeline)
};
std::string_view to_string(BoundKind kind);

/// The bound of an iteration in one sentence, and what the sentence is made of.
struct IterationBound {
  BoundKind kind = BoundKind::unknown;
  std::string resource;    ///< link, incast: the limiting connection ("node 0 NIC 0 ↔ network"; the first of equals)
  std::string link_class;  ///< link, incast: its class; the classes of equally limiting connections joined by '+'
  int connections = 0;     ///< link, incast: how many connections limit equally (within 1 %)
  /// The part of the iteration the bound accounts for: compute: compute_s; stragglers: idle_s;
  /// latency: exposed_communication_s; link, incast: the connection's limit share (both directions).
  /// Over iteration_time_s.
  double share = 0;
  std::string sentence;  ///< "The iteration is bound by …."; empty when unknown
};

/// A configuration the simulator can run but that a user should not choose without knowing.
struct Warning {
  std::string kind;     ///< single_server, few_servers, overlap_off_buckets, ring_latency
  std::string message;  ///< one sentence: what, why it hurts, what to do instead
};

struct BucketTiming {
  double bytes = 0;
  double ready_s = 0;   ///< gradient ready on every GPU
  double start_s = 0;   ///< its first communication operation started (after the previous one)
  double end_s = 0;     ///< its last operation ended
  /// Parameter servers whose step reads the variables (CommOp::after_all_pushes): that read, at the
  /// iteration's start, apart from the gradient's operations above. read_end_s ≤ read_start_s: none.
  double read_start_s = 0;
  double read_end_s = 0;
  bool has_read() const { return read_end_s > read_start_s; }
};

/// The variables of Kavarakuntla et al.'s generic model for one configuration (fitting/README.md): what
/// `trainsim fit --model NAME` reads from a results.csv. Known before simulating (the plan's).
struct ModelVariables {
  int gpus_per_node = 0;
  double batch_per_gpu = 0;          ///< samples per GPU (strong scaling: global_batch / gpus)
  double flops_per_sample = 0;       ///< forward FLOPs of one sample
  double model_bytes = 0;            ///< gradient bytes of one iteration (all parameters at the precision)
  std::int64_t params = 0;
  std::string precision;
  double intra_node_bandwidth_GBps = 0;  ///< one GPU's fabric link (NVLink, NVSwitch port or PCIe)
  double intra_node_latency_us = 0;
  double network_bandwidth_Gbps = 0;     ///< one NIC
  double network_latency_us = 0;
  int nics_per_node = 0;
  int servers = 0;                   ///< parameter servers (0 for all-reduce strategies)
  double single_gpu_time_s = 0;      ///< the scenario scaled down to one GPU: its iteration time (calibrated models)
  double dataset_samples = 0;        ///< samples in one epoch (workload.dataset_samples)
  /// micro-batches per optimizer step (workload.accumulation_steps); batch_per_gpu counts all of them
  int accumulation_steps = 1;

  /// accumulation_steps is written only when above 1 (and read as 1 when absent).
  Json to_json() const;
  static ModelVariables from_json(const JsonNode& node);
};

/// One op of a CPU iteration as it ran: its threads and when.
struct CpuOpUse {
  std::string name;
  int threads = 1;
  double start_s = 0;
  double end_s = 0;
};

/// How a CPU iteration used the node (CPU scenarios only; absent from GPU results).
struct CpuReport {
  std::string cpu;                 ///< catalog name
  int sockets = 0;
  int physical_cores = 0;
  int logical_cores = 0;
  int inter_op_pools = 0;
  int intra_op_threads = 0;        ///< per pool, resolved
  std::string mode;                ///< training or inference
  double average_width = 0;        ///< Wang et al.'s graph width (heavy ops / longest heavy chain)
  double core_utilisation = 0;     ///< core-seconds of work / (physical cores × iteration time), 0..1
  double mean_concurrent_ops = 0;  ///< op-seconds / iteration time
  double mean_threads_per_op = 0;  ///< op-seconds weighted
  double memory_busy_fraction = 0; ///< the memory link's busy time / iteration time
  std::vector<CpuOpUse> ops;       ///< in graph order

  Json to_json() const;
  static CpuReport from_json(const JsonNode& node);
};

/// The result object of `simulate --json` plus detail.
/// What one parameter server carries in an iteration.
struct ServerLoad {
  int id = 0;
  std::string host;   ///< node_cpu, gpu or server_node (PlannedServer::host)
  int node = -1;      ///< worker node it shares a NIC with; −1 for a dedicated server node
  double bytes = 0;   ///< received from all workers (it sends as many back)
};

/// The band of a prediction: the iteration with every software stack constant at the fast and at
/// the slow end of its published range (software_stack.hpp), and the constant whose range alone
/// widens it most.
struct ResultBand {
  double iteration_time_low_s = 0;   ///< every constant at its fast end
  double iteration_time_high_s = 0;  ///< every constant at its slow end
  std::string widest;                ///< the stack key ("rpc_GBps"), empty when not measured
  std::string sentence;              ///< names the widest constant and its share of the band
};

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
  std::vector<LinkLoad> busiest_links;  ///< by busy time, most first
  IterationBound bound;
  std::vector<Warning> warnings;
  MemoryUsage memory;
  std::optional<LargestBatch> largest_batch;  ///< GPU scenarios: "largest_batch"
  std::string strategy;
  std::string transport = "gpu";        ///< all-reduce strategies: "gpu" or "host" (JSON only when "host")
  std::string representation = "auto";  ///< the flows' representation asked for (JSON only when not "auto")
  std::string network_model;
  double calibration_factor = 1;
  std::vector<BucketTiming> buckets;
  std::string variable_placement;   ///< parameter servers: round_robin, greedy or sharded
  std::vector<ServerLoad> servers;  ///< parameter servers (empty for all-reduce strategies)
  ModelVariables variables;
  std::optional<CpuReport> cpu;   ///< CPU scenarios: thread use and core utilisation
  /// With workload.input_pipeline: the loaders' time per batch and how long GPUs waited for it
  /// (already in iteration_time_s and breakdown_s.idle).
  std::optional<InputPipelineTiming> input_pipeline;
  /// Over the software stack constants' ranges (JSON samples_per_s_range, iteration_time_s_range
  /// and band); unset when no acting constant has a range.
  std::optional<ResultBand> band;
  double sim_wall_s = 0;

  /// The server that receives the most bytes (the first on ties); nullptr without servers.
  const ServerLoad* most_loaded_server() const;
  /// dataset_samples / samples_per_s: one epoch at this throughput.
  double epoch_time_s() const { return variables.dataset_samples / samples_per_s; }
  /// The band's throughput, samples/s: {slow end, fast end}; none without a band.
  std::optional<std::pair<double, double>> samples_per_s_range() const {
    if (!band) return std::nullopt;
    return std::pair{global_batch / band->iteration_time_high_s, global_batch / band->iteration_time_low_s};
  }
  /// The result object; key order is fixed (deterministic output).
  Json to_json() const;
  /// Reads a result object back. The core fields (gpus, global_batch, iteration_time_s,
  /// samples_per_s, scaling_efficiency, breakdown_s, network_bytes, sim_wall_s) and
  /// memory_per_gpu_bytes.total and fits_in_memory are required; the detail written since is read
  /// when present (a line without `bound` reads as BoundKind::unknown, a link without `class` as
  /// "unknown"). Throws InputError at the offending pointer.
  static IterationResult from_json(const JsonNode& node);
};

/// One line of a sweep's results.jsonl: a point's result, or why it has none.
struct ResultRecord {
  std::size_t index = 0;           ///< the point's position in the sweep
  std::string scenario_key;        ///< fingerprint of the point's scenario (see app/sweep.hpp)
  std::string name;
  Json point = Json::object();     ///< dotted path → value
  std::optional<IterationResult> result;
  std::string error;               ///< set when there is no result

  bool ok() const { return result.has_value(); }
  /// {"index", "scenario_key", then the result object (with this point), or name, point, error}.
  Json to_json() const;
  /// Reads a line back; throws InputError when it has neither a result's fields nor an error.
  static ResultRecord from_json(const JsonNode& node);
};

/// The results CSV: columns after `index` and the sweep's axes, in order. fit and compare read
/// these names (iteration_time_s, samples_per_s, gpus, …).
const std::vector<std::string>& result_csv_columns();
/// The header line: index, the axes, result_csv_columns(); no newline.
std::string result_csv_header(const std::vector<std::string>& axes);
/// One row for `record` under result_csv_header(axes); no newline. An error row leaves the
/// result's cells empty and fills `error`.
std::string result_csv_row(const ResultRecord& record, const std::vector<std::string>& axes);

}  // namespace trainsim::plan
