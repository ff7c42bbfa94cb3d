#pragma once
// One synchronous-SGD iteration as pure data: the contract between planning and the engine.
//
//   scenario + workload ──build_training_plan──▶ TrainingPlan ──engine::simulate_plan──▶ IterationResult
//
// What every GPU computes and for how long (calibrated, slowed down), which gradient buckets become
// ready after which backward task, and every communication operation with its participants, the
// parameter servers' placement (which server owns which bytes of which bucket), the bytes moved
// and what each operation waits for. Built without SimGrid; the engine executes it and decides
// nothing. `trainsim simulate --dump-plan FILE|-` writes it (to_json) and `trainsim simulate --plan
// FILE` replays it (from_json, then engine::simulate_plan): the JSON holds the platform too, in base
// units, so a dumped plan runs on its own and a hand-edited one runs as edited.
//
//   GPU r:  forward ─ bwd segment 0 ─▶ bucket 0 ready ─ … ─ bwd segment K−1 ─▶ bucket K−1 ready ─ bwd tail ─ (wait) ─ update
//   comm:   op 0 (after its bucket is ready on every participant, or after backward without overlap) ─ op 1 ─ … ─ release GPUs
//
// Parameter servers: one chain per bucket, concurrent with the other buckets' chains: push ─ pull,
// or with worker_aggregation "host" device_to_host ─ host_sum ─ push ─ pull ─ host_to_device (push
// and pull from the nodes' CPUs). transport "host" (ring_allreduce): device_to_host ─ all_reduce on
// the CPUs ─ host_to_device per bucket, in the communicator's order.
//
// Task times are stored once per distinct local batch (a ComputeProfile: one, or two when strong
// scaling spreads a remainder) and each GPU scales its profile by its own slowdown: task i of GPU r
// lasts profiles[gpus[r].profile].backward[i].seconds × gpus[r].slowdown. This keeps the plan of a
// 16,384-GPU job as small as the one of a single GPU.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/gpu_memory.hpp"
#include "trainsim/plan/input_pipeline.hpp"
#include "trainsim/plan/result.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/server_placement.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::plan {

/// What the scenario's data parallelism changes in one GPU's memory (gpu_memory.hpp): ZeRO / FSDP
/// sharding over the shard group, stage 3's gathered layer groups (the two largest adjacent groups
/// of `bucket_bytes` and the largest group's unsharded gradients), accumulation under stage 2
/// keeping whole gradients (FSDP's no_sync), and checkpointing every `every_layers` layers (0: none).
DataParallelMemory data_parallel_memory(const Scenario& scenario, const workloads::Workload& workload,
                                        const std::vector<double>& bucket_bytes, int every_layers);
/// The most largest_batch reports (a model whose activations take no memory fits any batch).
inline constexpr std::int64_t kMaxReportedBatch = 1'000'000'000;
/// The largest micro-batch per GPU that fits, without and with checkpointing (the scenario's
/// segments, or ⌈√layers⌉ without), every other term as the scenario has it.
LargestBatch largest_batch(const Scenario& scenario, const workloads::Workload& workload,
                           const std::vector<double>& bucket_bytes);
/// Memory per GPU of a scenario (pure arithmetic), its data-parallel terms included; its largest
/// batch per GPU is `largest`'s for the scenario's own checkpointing (at most
/// kLargestBatchPerGpuLimit).
MemoryUsage memory_per_gpu(const Scenario& scenario, const workloads::Workload& workload,
                           const std::vector<double>& bucket_bytes, const LargestBatch& largest);

/// One layer's forward or backward work (or the optimizer step) on one GPU.
struct PlannedTask {
  std::string layer;
  double seconds = 0;  ///< after calibration, before the GPU's slowdown
};

/// The compute of one local batch size.
struct ComputeProfile {
  double batch = 0;                   ///< samples per GPU
  std::vector<PlannedTask> forward;   ///< forward order
  std::vector<PlannedTask> backward;  ///< backward order
  PlannedTask update;                 ///< the optimizer step (of the GPU's shard under zero_stage ≥ 1)
  /// Sums of consecutive tasks between bucket boundaries: [0] forward, [1..K] backward up to and
  /// including bucket k−1's last gradient, [K+1] the rest of backward. K+2 entries. [0] begins with
  /// accumulation_s.
  std::vector<double> segments_s;
  /// Gradient accumulation: forward and backward of the accumulation_steps − 1 micro-batches before
  /// the last, which communicate nothing (DDP's no_sync); 0 without accumulation.
  double accumulation_s = 0;
  /// The forward split by layer group, in forward order (group j needs bucket K−1−j's parameters),
  /// where the forward waits for them: zero_stage 3 (their all-gathers) and parameter servers whose
  /// step reads the variables (pulls with CommOp::after_all_pushes); sums to segments_s[0] −
  /// accumulation_s. Empty otherwise.
  std::vector<double> forward_groups_s;

  /// Forward + backward + update, seconds (before slowdown).
  double total_s() const;
};

/// One GPU of the job.
struct GpuPlan {
  int rank = 0;
  int node = 0;
  std::size_t profile = 0;  ///< index into TrainingPlan::profiles
  double slowdown = 1;      ///< time multiplier from heterogeneity (≥ 0; 1 = nominal)
};

/// A group of gradients reduced together (DDP bucket, Horovod fusion buffer, or one variable).
struct PlannedBucket {
  double bytes = 0;
  std::size_t ready_after = 0;       ///< index of the backward task after which it is ready
  std::vector<std::string> layers;   ///< whose gradients it holds, in backward order
};

/// Where a parameter server runs.
enum class ServerHost {
  node_cpu,    ///< the host CPU of worker node `index` (colocated, CPU aggregation)
  gpu,         ///< GPU rank `index` (colocated, GPU aggregation, or a platform without node CPUs)
  server_node  ///< dedicated server node `index` (CPU only)
};
std::string_view to_string(ServerHost host);

struct PlannedServer {
  int id = 0;
  ServerHost host = ServerHost::node_cpu;
  int index = 0;   ///< node, GPU rank or dedicated server node, per `host`
  int node = -1;   ///< worker node it shares a NIC with; −1 for a dedicated server node
};

enum class CommKind {
  all_reduce,      ///< every participant ends with the sum of everyone's bucket
  push,            ///< every worker sends its share of the bucket to each server, which aggregates it
  pull,            ///< every server sends its share of the updated parameters to every worker
  device_to_host,  ///< every participating GPU copies the bucket to its node's host memory (PCIe)
  host_sum,        ///< every participating node's CPU adds up its GPUs' copies (memory-bandwidth bound)
  host_to_device,  ///< every participating node's CPU copies the bucket to each of its GPUs (PCIe)
  reduce_scatter,  ///< sharded gradients: every participant ends with its 1/n of the bucket's sum
  all_gather       ///< sharded parameters: every participant ends with the whole bucket from everyone's 1/n
};
std::string_view to_string(CommKind kind);

/// What a communication operation waits for besides the previous operation.
enum class CommTrigger {
  bucket_ready,   ///< its bucket's last gradient is computed on every participant (overlap)
  backward_done,  ///< every participant finished backward (no overlap)
  previous_op,    ///< only the previous operation (a pull after its push)
  update_done,    ///< every GPU finished its optimizer step (the all-gathers of updated parameters, zero_stage 1–2)
  gate_passed     ///< every GPU began the compute after gate `trigger_gate` (zero_stage 3's prefetch)
};
std::string_view to_string(CommTrigger trigger);

/// Who an operation's participants are.
enum class CommEndpoints {
  gpus,       ///< GPU ranks first_rank … first_rank+ranks−1
  node_hosts  ///< the host CPUs of nodes first_rank … first_rank+ranks−1 (one worker per node)
};
std::string_view to_string(CommEndpoints endpoints);

/// One communication operation. All-reduces run one at a time in `ops` order on one communicator
/// (NCCL's stream, DDP's reducer): op i starts when op i−1 (its after_op) is done and its trigger
/// holds. Parameter-server operations are per-variable RPCs that run concurrently, as TensorFlow's
/// send/recv ops do: a push waits only for its trigger (after_op −1), a pull for its push.
struct CommOp {
  int id = 0;
  CommKind kind = CommKind::all_reduce;
  std::size_t bucket = 0;
  CommTrigger trigger = CommTrigger::bucket_ready;
  int after_op = -1;                        ///< the operation it waits for; −1 for none
  int first_rank = 0;                       ///< participants first_rank … first_rank+ranks−1 (GPUs or nodes, per endpoints)
  int ranks = 0;
  CommEndpoints endpoints = CommEndpoints::gpus;  ///< push, pull: node_hosts under worker aggregation; host_sum: node_hosts
  double bytes = 0;                         ///< bucket bytes per participant
  Algorithm algorithm = Algorithm::ring;    ///< all_reduce
  Transport transport = Transport::gpu;     ///< all_reduce: host = an MPI ring on the nodes' CPUs over host copies
  /// all_reduce: its launch cost, slept once before its first flow: NCCL's base latency of the
  /// algorithm with the Simple protocol per collective call it makes (nccl_tuner.hpp nccl_launch_s).
  double launch_s = 0;
  /// all_reduce of nccl_allreduce: the tuner's protocol (unset: the platform's latencies, no protocol)
  /// and what it costs the flows (nccl_tuner.hpp ProtocolCosts): the extra latency of every step,
  /// the bytes carried per data byte, and the channels (0 = as the engine picks them).
  std::optional<Protocol> protocol;
  double step_overhead_s = 0;
  double wire_factor = 1;
  int channels = 0;
  /// all_reduce of nccl_allreduce: SMs its kernel holds on every participating GPU while it runs
  /// (NCCL's CTAs, nccl_tuner.hpp nccl_ctas; at most the GPU's SMs − 1), and the share of the
  /// GPU's speed left to compute that overlaps it, (SMs − kernel_sms) / SMs; 0 and 1 when the
  /// collective takes nothing from compute (textbook kinds, no SM count).
  int kernel_sms = 0;
  double compute_share = 1;
  std::vector<double> bytes_per_server;     ///< push/pull: what each worker exchanges with server i
  double host_seconds = 0;                  ///< host_sum: each node CPU's time to add up its GPUs' copies
  /// Software stack costs (software_stack.hpp; zero or empty under `stack.model: "ideal"`).
  /// push/pull: seconds server i's RPC software spends on this operation for all its workers
  /// (parallel to bytes_per_server; empty = none), and what each worker's side spends.
  std::vector<double> server_software_s;
  double worker_software_s = 0;
  /// all_reduce on host buffers: each node-to-node TCP stream's rate cap (0 = none), one rank's
  /// reduction memory rate (0 = the node's memory bandwidth shared by its ranks), and the seconds
  /// of Horovod's fusion-buffer copies and negotiation wait before the ring.
  double stream_Bps = 0;
  double reduce_Bps = 0;
  double software_s = 0;
  /// pull: the step's read of the variables, once every push of the previous step has ended and
  /// the servers' token queues have let the workers through (TensorFlow's synchronous barrier at the
  /// step's end, TrainingPlan::barrier_s). The engine runs it at the iteration's start, in steady
  /// state, and the forward of its bucket's layers waits for it (ComputeProfile::forward_groups_s);
  /// the other operations of its chain after it (host_to_device) go with it.
  bool after_all_pushes = false;
  /// pull: the variable's own barrier, seconds from the end of its push (every worker's) to the
  /// read: TensorFlow's per-variable token queues (tf_cnn_benchmarks' distributed_replicated mode);
  /// 0 for none.
  double variable_barrier_s = 0;
  /// reduce_scatter, all_gather: within each node (hybrid sharding; a reduce-scatter then all-reduces
  /// its shard across nodes, one ring per local rank) instead of over all participants.
  bool node_local = false;
  /// all_gather of zero_stage 3: the compute gate it opens (TrainingPlan::gates); −1 for none.
  int opens_gate = -1;
  /// trigger gate_passed: the gate every GPU must have passed.
  int trigger_gate = -1;
};

/// Bytes an operation moves, split by the class of link they cross (closed forms over the plan's
/// topology: GPUs numbered node-major, gpus_per_node per node).
struct LinkClassBytes {
  double intra_node = 0;  ///< NVLink / NVSwitch / PCIe inside a node
  double inter_node = 0;  ///< through NICs and the network
};

/// One iteration of one scenario, ready to execute.
struct TrainingPlan {
  std::string name;
  std::string strategy;                 ///< the scenario's strategy kind
  std::string network_model;
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  double global_batch = 0;
  bool overlap = true;
  std::string representation = "auto"; ///< collectives' flow representation
  HdOrder hd_order = HdOrder::near;     ///< halving-doubling's exchange order (strategy.hd_order)
  double reference_batch = 0;           ///< the one-GPU batch the calibration refers to
  double single_gpu_iteration_s = 0;    ///< one GPU running reference_batch, calibrated
  /// κ: single_gpu_iteration_s over the uncalibrated model's; the factor on every task when the
  /// measurement ran the scenario's own settings on its GPU (compute_model.hpp: what it corrects).
  double calibration_factor = 1;
  int gpu_sm_count = 0;                 ///< SMs of the platform's GPU (0: unknown)
  double aggregate_flops_per_byte = 0;  ///< parameter servers: one add per gradient element
  double server_throughput_Bps = 0;     ///< parameter servers: per-server software rate; 0 = unlimited
  std::string worker_aggregation;       ///< parameter servers: "host" or "none" (resolved default)
  std::string transport = "gpu";        ///< all-reduce strategies: "gpu" or "host"
  /// Bytes per second a node CPU streams through memory (host sums and host-staged reductions).
  double host_memory_bandwidth_Bps = 0;
  MemoryUsage memory;                   ///< per GPU (the GPU with the largest batch)
  ModelVariables variables;             ///< what the fitting models read (copied into the result)
  /// The platform the engine builds: the scenario's, with an XML platform's node count known
  /// (nccl_intra_node_latency_s replaces its intra-node latency for an NCCL plan).
  platforms::PlatformSpec platform;
  /// The input pipeline of every GPU (workload.input_pipeline): analyse_iteration (analysis.hpp)
  /// adds its wait to the simulated iteration, for the batch of rank 0 (the largest).
  std::optional<InputPipelineConfig> input_pipeline;
  /// For reports only (the summary's first lines): the scenario's bucket size (0 = per layer), its
  /// scaling ("weak" or "strong") and whether a measured one-GPU throughput calibrated it.
  double bucket_bytes = 0;
  std::string scaling = "weak";
  bool calibrated = false;

  std::vector<ComputeProfile> profiles;
  std::vector<GpuPlan> gpu_plans;       ///< one per GPU, by rank
  std::vector<PlannedBucket> buckets;   ///< in the order they become ready
  std::vector<PlannedServer> servers;   ///< parameter servers (empty for all-reduce strategies)
  std::string variable_placement;       ///< parameter servers: round_robin, greedy or sharded
  std::vector<PlacedVariable> placed_variables;  ///< owner of every variable (empty when sharded)
  std::vector<CommOp> ops;              ///< in execution order
  /// Data parallelism (data_parallel.hpp): micro-batches per step, ZeRO stage, hybrid sharding,
  /// the shard group's GPUs and checkpointing's segment length (0 = off).
  int accumulation_steps = 1;
  int zero_stage = 0;
  bool hybrid_sharding = false;
  int shard_group = 1;
  int checkpoint_every_layers = 0;
  std::optional<LargestBatch> largest_batch;
  /// zero_stage 3: compute gates, each waited for by every GPU until the all-gather that opens it
  /// is done: K before the forward groups (forward order), then K before backward segments 1..K
  /// (bucket order). 0 otherwise.
  int gates() const { return zero_stage == 3 ? 2 * static_cast<int>(buckets.size()) : 0; }
  /// Operations that run after the GPUs' optimizer step (trigger update_done and what follows).
  bool has_post_update_ops() const;
  /// Parameter servers: how the engine runs the pushes, pulls and copies, decided by the plan from
  /// `representation` and the operations (resolve_server_representation; never automatic once
  /// planned or read). Derived: not written to the plan's JSON.
  ServerRepresentation server_representation = ServerRepresentation::automatic;
  /// The expected lag of the slowest GPU behind the mean per iteration (stragglers of synchronous
  /// SGD: iteration_cv × E[max of `gpus` standard normals] × compute), seconds; added to the
  /// iteration by the plan's analysis (plan::analyse_iteration).
  double straggler_s = 0;
  /// Parameter servers under TensorFlow's synchronous barrier: the token queues' time (each worker
  /// enqueues and dequeues its tokens on the ps tasks), seconds, at the step's end once every push
  /// and every pull of the step is done (tf_cnn_benchmarks' `sync_queues_step_end_`); the next
  /// step's reads (CommOp::after_all_pushes) follow it.
  double barrier_s = 0;

  const ComputeProfile& profile_of(int rank) const { return profiles.at(gpu_plans.at(static_cast<std::size_t>(rank)).profile); }
  /// Compute of GPU `rank` over the iteration (segments and update, slowed down), seconds.
  double compute_s(int rank) const;
  /// Bytes `op` moves per link class. All-reduces: from the very schedules the engine runs
  /// (collective_schedule.hpp) over all GPUs, per byte of buffer, scaled; parameter servers: from
  /// the placement. nullopt for an all-reduce over a subset of the GPUs (the plan makes none).
  std::optional<LinkClassBytes> link_class_bytes(const CommOp& op) const;
  /// The all-reduces' bytes per link class for one byte of buffer over all GPUs, per algorithm the
  /// plan's all-reduces use (empty without all-reduce operations).
  std::map<Algorithm, LinkClassBytes> all_reduce_bytes_per_byte;
  /// nccl_allreduce: the platform's intra-node latency less fabric_latency_cut_s (NCCL's Simple
  /// step latency is the preset's; each protocol adds its own back per step), seconds; unset otherwise.
  std::optional<double> nccl_intra_node_latency_s;

  /// Per server: bytes it receives from all workers in one iteration (= bytes it sends back).
  std::vector<double> server_bytes() const;

  /// The platform the engine builds and runs the plan on: `platform`, its intra-node latency
  /// replaced by nccl_intra_node_latency_s in an NCCL plan. The engine decides nothing about it.
  platforms::PlatformSpec effective_platform() const;
  /// The CPU-only nodes the engine adds for dedicated parameter servers (ServerHost::server_node).
  int server_nodes() const;

  /// The plan as JSON (deterministic key order). Every number the engine reads is written as the
  /// double it is (base units, shortest round-trip form), so from_json(to_json()) runs the same
  /// iteration to the last bit. Derived values (compute_s, link_class_bytes, a server's bytes and
  /// variables) are written for readers and ignored by from_json.
  Json to_json() const;
  /// Reads a plan written by to_json, possibly edited. Checks every value and every reference
  /// (profiles, buckets, servers, operations, ranks and nodes against the platform) and throws
  /// InputError at the offending value's pointer; unknown keys are refused. A relative SimGrid XML
  /// platform path is resolved against the plan file's directory. Derived data
  /// (all_reduce_bytes_per_byte) is derived anew from the plan's operations and platform.
  static TrainingPlan from_json(const JsonNode& node);
};

/// Charges the software stack's costs to `plan` (built from `scenario` with `placed` variables):
/// TensorFlow's gRPC costs on every push and pull, Horovod's on host-staged all-reduces, the
/// stragglers' lag (simulator/README.md "Software stack constants and bands").
void apply_stack_costs(TrainingPlan& plan, const Scenario& scenario);

/// The all-reduces' bytes per link class for one byte of buffer over all GPUs, per algorithm the
/// plan's all-reduce operations use (the value of TrainingPlan::all_reduce_bytes_per_byte).
std::map<Algorithm, LinkClassBytes> all_reduce_bytes_per_byte(const TrainingPlan& plan);

/// Builds the plan of `scenario`. A SimGrid XML platform's size is counted from its file first
/// (platforms::simgrid_xml_nodes, then check_against_platform), so every plan knows its GPUs
/// before SimGrid builds anything. Throws InputError when the workload computes nothing, or for
/// an XML platform whose hosts do not fit the scenario.
TrainingPlan build_training_plan(const Scenario& scenario, const workloads::Workload& workload);

/// Parameter servers: the SimGrid flows one iteration starts at flow level (every GPU ↔ host copy,
/// and every worker's push to and pull from each server that owns bytes of the bucket; a worker on
/// its server's own host counted too). 0 for all-reduce plans.
long long server_flows(const TrainingPlan& plan);
/// `auto` runs a parameter-server plan with GPU ↔ host copies at flow level up to this many flows
/// per iteration (the golden results of such plans are SimGrid's flow level) and coarse above it,
/// copies included (simulator/README.md "Parameter-server representations"). Flow level grows about as the
/// square of the flows (SimGrid re-solves every concurrent flow at each one's end); measured on
/// the audit's ResNet-18 scenario, 2-core VM under load: 26 k flows 0.9 s, 52 k 3.7 s, 105 k 18 s,
/// 210 k 103 s; coarse 0.08–0.35 s on the same points, the same iteration times.
inline constexpr long long kAutoCoarseServerFlows = 50'000;
/// `representation: "flow"` above this many flows per iteration is refused before anything is
/// built (about a minute on that VM; twice as many took 103 s).
inline constexpr long long kMaxFlowLevelServerFlows = 150'000;
/// A parameter-server plan of more GPUs than this is refused before anything is built, whatever
/// the representation: its iteration grows faster than linearly with the workers (route
/// declarations, and max-min solves over the copies' and pushes' members). Measured on the audit's
/// ResNet-18 scenario (a push per variable, nodes of 4 GPUs, 16 servers), 2-core VM under load:
/// 16,384 GPUs 8–11 s, 32,768 GPUs 20–41 s and 0.5 GB, 65,536 GPUs 217 s and 1 GB.
inline constexpr int kMaxServerGpus = 32'768;
/// The representation the engine runs a parameter-server plan's operations in (never automatic):
/// coarse when asked, or under auto without GPU ↔ host copies or above kAutoCoarseServerFlows.
ServerRepresentation resolve_server_representation(const TrainingPlan& plan);
/// Refuses (InputError of `scenario`) a plan that could not run within the limits simulator/README.md
/// documents: a parameter server above kMaxServerGpus (at /platform/nodes) or at flow level above
/// kMaxFlowLevelServerFlows, step-level all-reduces above kMaxStepRanks GPUs or an iteration's above
/// kMaxStepTransfers (at
/// /strategy/representation). Pure arithmetic on the plan: call it before
/// building the platform.
void check_simulation_size(const TrainingPlan& plan, const Scenario& scenario);
/// The same for a plan read from `source` (a plan file): errors at the plan's own pointers
/// (/platform/nodes, /representation).
void check_simulation_size(const TrainingPlan& plan, const std::string& source);

}  // namespace trainsim::plan
