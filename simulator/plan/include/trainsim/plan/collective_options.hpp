#pragma once
// The vocabulary of collectives that plans and scenarios speak (no SimGrid): algorithms, flow
// representations, the knobs of every collective call, the operations of `trainsim collective`.
// The engine implements them (trainsim/engine/collectives.hpp).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::plan {

/// All-reduce algorithm.
enum class Algorithm {
  ring,              ///< reduce-scatter + all-gather around one ring, 2(n−1) steps of S/n
  hierarchical,      ///< intra-node reduce-scatter, g parallel inter-node ring all-reduces on S/g, intra-node all-gather
  halving_doubling,  ///< recursive halving reduce-scatter + recursive doubling all-gather, 2·log2(n) steps
  tree,              ///< double binary tree (each tree S/2), reduce then broadcast, pipelined in chunks
  nvls,              ///< NVLink SHARP: the NVSwitch reduces and multicasts; each GPU port carries S(n+1)/n each way
  nvls_tree,         ///< NCCL's NVLS_TREE across nodes: NVLS inside each node, a double binary tree of nodes per NIC head on S/heads
  collnet_direct,    ///< NCCL's CollNet Direct (SHARP): every GPU scatters to the node's NIC heads, the switches reduce, heads broadcast back
  collnet_chain,     ///< NCCL's CollNet Chain (SHARP): a chain per channel reduces to its head, the switches reduce, the chain broadcasts back
};

/// The order in which halving-doubling exchanges with its partners (simulator/README.md "halving_doubling").
///   near  distance 1 first while halving (the big halves stay inside a node: ranks are
///         node-major), distance 1 last while doubling; extra ranks of a non-power-of-two count
///         fold into their neighbour (rank 2i into 2i+1). MPICH's `rab_rdb`, NCCL-era libraries.
///   far   distance n/2 first while halving, 1 first while doubling; extra ranks fold into rank
///         i − p2. Open MPI's and SMPI's `rab1`.
enum class HdOrder { near, far };

/// "near", "far" → the order; nullopt otherwise.
std::optional<HdOrder> parse_hd_order(const std::string& name);
/// The names parse_hd_order accepts.
std::vector<std::string> hd_order_names();

/// NCCL's protocols (src/device/prims_*.h): LL sends 4 data bytes with a 4-byte flag per 8 bytes,
/// LL128 120 data bytes per 128-byte line, Simple whole buffers with a fence per step.
enum class Protocol { ll, ll128, simple };
/// One FIFO step of the LL and LL128 buffers (init.cc DEFAULT_LL_BUFFSIZE and DEFAULT_LL128_BUFFSIZE
/// over NCCL_STEPS 8), wire bytes: LL 8 lines × 512 threads × 16 B, half of it flags; LL128 120
/// elements × 640 threads × 8 B, 120 of each 128 bytes data.
inline constexpr double kNcclLlStepBytes = 8.0 * 512 * 16;
inline constexpr double kNcclLl128StepBytes = 120.0 * 640 * 8;

/// How the engine represents a collective's flows (see trainsim/engine/collectives.hpp).
enum class Representation { automatic, coarse, lockstep, step };

/// "auto", "coarse", "lockstep", "step" → the representation; nullopt otherwise.
std::optional<Representation> parse_representation(const std::string& name);
/// The most GPUs a collective may take part in under an explicit `step` representation. A ring's
/// step level is one actor per GPU and 2(n−1) steps of n flows per channel (2 n² flows, n × 2(n−1)
/// arrival counters): 65,536 GPUs took 17.8 GB before SimGrid aborted. Measured on the project's
/// 2-core VM under load (simulator/README.md, Troubleshooting and limits), 1 MiB ring all-reduce on DGX A100
/// nodes (8 channels): 64 GPUs 1.3 s, 128 GPUs 8.2 s, 256 GPUs 60 s, 1,024 GPUs past 10 minutes.
/// `auto`, `coarse` and `lockstep` have no such limit.
inline constexpr int kMaxStepRanks = 256;
/// The most step-level transfers (2 n(n−1) per all-reduce of n GPUs: a ring's steps × flows of one
/// channel) a training iteration may run under `step`: a training iteration runs one all-reduce per
/// bucket, so kMaxStepRanks alone let 256 GPUs of per-layer buckets run for minutes. The work of one
/// all-reduce at kMaxStepRanks (about a minute). Measured on the 2-core VM under load, ResNet-50 on
/// DGX A100 nodes: 32 GPUs of 5 buckets (9,920) 4.1 s, of 65 1-MB buckets (128,960) 3.5 s at load 4,
/// of 107 per-layer buckets (212,288) 54 s while a two-job build ran (the bound is conservative).
inline constexpr long long kMaxStepTransfers = 2LL * kMaxStepRanks * (kMaxStepRanks - 1);
/// The step limit, in one place: why `step` cannot run all-reduces of these participant counts (one
/// entry per all-reduce of a training iteration, or the one collective `trainsim collective` times)
/// within about a minute — one of them on more than kMaxStepRanks GPUs, or together more than
/// kMaxStepTransfers step-level transfers — saying what to use instead; "" when it can.
std::string step_refusal(const std::vector<int>& all_reduce_ranks);
/// step_refusal of one all-reduce on `ranks` GPUs.
std::string step_representation_refusal(int ranks);
/// The names parse_representation accepts.
std::vector<std::string> representation_names();

/// How the engine represents a parameter server's pushes and pulls: `flow`, one SimGrid flow per
/// worker and server; `coarse`, the flows of one server, size and route latency as one group
/// advanced at SimGrid's max-min rate (trainsim/engine/collectives.hpp, ParameterServerOptions);
/// `automatic` picks coarse for dedicated servers and flow for colocated ones (simulator/README.md
/// "Parameter-server representations": both agree; the choice is by speed).
enum class ServerRepresentation { automatic, coarse, flow };

/// "auto", "coarse", "flow" → the representation; nullopt otherwise.
std::optional<ServerRepresentation> parse_server_representation(const std::string& name);
/// The names parse_server_representation accepts.
std::vector<std::string> server_representation_names();

/// Knobs of every collective call. Defaults describe NCCL-like behaviour on an ideal network.
struct CollectiveOptions {
  Representation representation = Representation::automatic;
  /// Software latency added before every step's send (seconds, ≥ 0); the route latency comes
  /// from the platform and is paid by each flow.
  double step_overhead_s = 0;
  /// Chunk size of pipelined algorithms (tree, broadcast), bytes > 0 (NCCL: 512 KiB slices of a 4 MiB
  /// buffer). The tuner's Simple tree across nodes takes the platform's step instead
  /// (network.nccl.buffsize_bytes / 8, plan::all_reduce_schedule).
  double pipeline_chunk_bytes = 512.0 * 1024.0;
  /// Largest number of chunks a pipeline is cut into (bounds the step count), ≥ 1.
  int max_pipeline_chunks = 64;
  /// Order ring ranks topology-aware (by node, then the node's ring order, e.g. the NVLink ring of
  /// a DGX-1) instead of the order given.
  bool topology_aware_ring = true;
  /// Ring algorithms split the buffer over the node's ring channels (the four link-disjoint
  /// NVLink rings of a DGX-1 cube-mesh, as NCCL does; one ring elsewhere), all run at once.
  /// Needs topology_aware_ring.
  bool multi_ring = true;
  /// Parallel rings (NCCL's channels) a ring phase runs on, each carrying 1/channels of the
  /// buffer; 0 = as NCCL picks them: the node's ring channels, and at least one per NIC when the
  /// ring spans nodes, rail-aligned (channel k leaves every node through NIC k mod nics). Needs
  /// multi_ring and topology_aware_ring; ≥ 0.
  int channels = 0;
  /// Halving-doubling's exchange order (HdOrder); near by default: on multi-GPU nodes far sends
  /// the largest halves across the NICs.
  HdOrder hd_order = HdOrder::near;
  /// Slept once before the collective's first flow: its launch cost (NCCL's base latency), s ≥ 0.
  double launch_s = 0;
  /// The protocol NCCL's tuner chose (unset: a textbook algorithm without protocols). Set, a ring
  /// across nodes pays its route latencies as tuning.cc charges them, (nsteps − nInter) steps at its
  /// intra-node hops' latency and nInter = 2(nodes − 1) at its network hops', instead of every
  /// lockstep step waiting for the slowest hop (the textbook ring, which the SMPI agreement tests
  /// hold); and a tree across nodes cuts its pipeline into the protocol's chunks (enqueue.cc).
  std::optional<Protocol> nccl_protocol = std::nullopt;
};

/// The collective operations of `trainsim collective`.
enum class CollectiveOp { allreduce, reduce_scatter, all_gather, broadcast };

/// nccl-tests' bus-bandwidth factor: 2(n−1)/n all-reduce, (n−1)/n reduce-scatter / all-gather, 1 broadcast.
double bus_bandwidth_factor(CollectiveOp op, int ranks);

std::string to_string(Algorithm a);
std::string to_string(Protocol p);
std::string to_string(Representation r);
std::string to_string(CollectiveOp op);
std::string to_string(HdOrder order);
/// Inverses of to_string (nullopt for anything else) and the names they accept, in one table per enum.
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::vector<std::string> algorithm_names();
std::optional<Protocol> parse_protocol(std::string_view name);
std::optional<CollectiveOp> parse_collective_op(std::string_view name);
std::vector<std::string> collective_op_names();

}  // namespace trainsim::plan
