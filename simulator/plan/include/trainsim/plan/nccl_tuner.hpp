#pragma once
// NCCL's tuner: which algorithm, protocol and channel count NCCL runs an all-reduce of a given
// size with, from its published cost model (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime; constants of commit 5067397, 2026). Pure data, no SimGrid: the engine
// simulates the choice (trainsim/engine/collectives.hpp), this only predicts and picks.
//
// Per algorithm a and protocol p (times in µs, bandwidths in GB/s):
//   time(S)  = latency(a, p) + S / (1000 · algbw(a, p))
//   ring     latency = base(a,p) + (nsteps − nInter)·hw_intra(a,p) + nInter·hw_net(a,p),
//            nsteps = 2(n−1), nInter = 2(nodes−1); across nodes hw_intra is at least the net
//            overhead (1 µs, 3 with Simple) and a Simple ring's latency is ×1.4 (×1.9 before
//            Ampere) once each channel carries 64 bytes per rank ("plateau effect of ring")
//   tree     latency = base(a,p) + 2·((ppn−1)·hw_intra + log2(nodes)·hw_net)
//   nvls     latency = hw_intra(nvls, simple) (25 µs on NVLink); one node, NVSwitch gen 3+ (Hopper on)
//   nvls     across nodes (SHARP): per head min(bwIntra·eff·(h−1)/h·2, bwInter), latency 25 + 18 µs
//   collnet  (SHARP; Simple only) per head bwIntra = min(2·bwInter, search max, NVLink share),
//            Direct divided by (ppn/h + 1)/2 and × 0.85 from Hopper on, algbw = busbw / 2;
//            latency Direct 2·(3.7 + (ppn−1)·0.4) + 31 µs, Chain 2·(ppn−1)·2.8 + 30 µs
//   nvls_tree latency = 25 µs + 2·log2(nodes)·20.9 µs; several such nodes with NICs on the GPUs:
//            per head (channel) min(bwIntra·eff·(h−1)/h·2, bwInter·(2 on two nodes), perChMaxNVLSTreeBw),
//            the NVLS graph's bwIntra = NVLink / (h+1) (every GPU carries each channel, its head's twice)
//            and bwInter = min(NIC, 2·bwIntra) (search.cc raises it while below twice bwIntra)
//   busbw    = channels · per-channel bandwidth, then the protocol's fraction and ceiling
//            (LL: ×0.5 up to llMaxBw; LL128: ×0.92 up to channels·perChMaxRingLL128Bw; tree:
//            ×0.92 up to channels·perChMaxTreeBw, LL ×1/3.8, LL128 ×7/9 in one node ×120/128 across);
//   algbw    = busbw · n/nsteps (ring, nvls) or busbw / 2 (tree), the tree's times NCCL's
//            medium-size correction (tree_correction, as ncclTopoGetAlgoTime applies it).
// The engine charges the pick (protocol_costs) and, for NVLS, its chunk pipeline's fill, which
// NCCL's model leaves out (nvls_pipeline).
// The per-channel bandwidth and channel count stand in for NCCL's topology search (search.cc):
// one channel per NVLink of the generation's rate (topo.h: 18, 20, 20, 20.6, 40.1 GB/s for sm60 to
// sm100) up to 16, over the node's fabric bandwidth × efficiency; PCIe 12 GB/s, one channel. Across
// nodes the ring graph's: one channel per NIC at the fastest search speed the NIC carries
// (speedArrayInter), and on up to two nodes the ring rated at that speed, the tree at most twice it
// (the search's bwIntra).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::plan {

/// What NCCL's tuner sees of a communicator (derived from the platform by nccl_topology).
struct NcclTopology {
  int ranks = 1;              ///< ≥ 1
  int nodes = 1;              ///< nodes the ranks span, ≥ 1
  int compute_capability = 80;  ///< 60 P100, 70 V100, 75 T4, 80 A100, 90 H100/H200, 100 B200
  bool nvlink = true;         ///< NVLink or NVSwitch inside the node (else PCIe)
  bool nvls = false;          ///< NVSwitch with in-switch reduction (NVLink SHARP: NVSwitch gen 3, Hopper and later)
  int channels = 1;           ///< NCCL's channels of the ring and tree graphs (across nodes: per NIC)
  double bw_intra_GBps = 0;   ///< per channel, the NVLink share inside a node
  double bw_inter_GBps = 0;   ///< per channel, the search's speed between nodes (= bw_intra_GBps in one node)
  double nvlink_GBps = 0;     ///< one GPU's NVLink/NVSwitch bandwidth (fabric × efficiency; PCIe's without NVLink)
  double nic_GBps = 0;        ///< one NIC (a GPU's NICs together where they outnumber the GPUs)
  /// NVLS heads across nodes (search.cc, NVLS pattern: one per NIC with a GPU of its own, at most
  /// the GPUs of a node); 0 when the NICs hang off the host bridge, where NCCL finds none, and
  /// when the ranks do not fill whole nodes.
  int nvls_heads = 0;
  bool nvswitch = false;      ///< an NVSwitch inside the node (CollNet Direct needs one)
  /// Across whole nodes whose switches run SHARP and NCCL's CollNet plugin (network.sharp):
  /// CollNet Direct and Chain, and NVLS across nodes, are available.
  bool collnet = false;
  /// CollNet heads per node (search.cc, COLLNET_DIRECT pattern): one per NIC, at most 8
  /// (NCCL_MAX_DIRECT_ARITY + 1) and the node's GPUs; 0 without collnet.
  int collnet_heads = 0;
  int nics = 1;  ///< NICs per node, at most one per GPU (more act as one port per GPU)
  /// NCCL's transport beyond tuning.cc's model (platform `network.nccl`, NcclNetSpec): latency
  /// each network hop adds, and the proxy thread's CPU time per network step, µs. 0: as the model.
  double net_hop_us = 0;
  double proxy_step_us = 0;
  /// The share of a NIC's line rate NCCL's ring moves its bytes at across nodes
  /// (NcclNetSpec::ring_efficiency); the engine's, not the tuner's: NCCL's model leaves it out.
  double ring_efficiency = 1;
  /// The latency the net plugin reports to NCCL (NcclNetSpec::reported_latency_s), µs, which the
  /// tuner weighs every hop by instead of net_hop_us; none: the tuner weighs net_hop_us.
  std::optional<double> reported_hop_us;
  double link_latency_us = 0;  ///< the platform's node-to-node latency (what the engine's flows carry)
  /// One step of Simple's buffer (NcclNetSpec::simple_step_bytes: NCCL_BUFFSIZE / NCCL_STEPS), 512
  /// KiB by default. A tree's Simple chunk and a network message's data under Simple.
  double simple_step_bytes = 512.0 * 1024;
  /// The protocols NCCL may use (NcclNetSpec::protocols, NCCL_PROTO), indexed LL, LL128, Simple.
  std::array<bool, 3> protocols{true, true, true};
  /// The algorithms NCCL may use (NcclNetSpec::algorithms, NCCL_ALGO), indexed as
  /// platforms::kNcclAlgorithmNames: ring, tree, NVLS, NVLS_TREE, CollNet Direct, CollNet Chain.
  std::array<bool, 6> algorithms{true, true, true, true, true, true};
  bool amd_cpu = false;  ///< the hosts' CPUs are AMD's (NcclNetSpec::amd_cpu): NCCL's AMD figures across nodes
  /// A tuner plugin's table (NcclNetSpec::tuner): its all-reduce rows, in order.
  std::vector<platforms::NcclTunerRow> tuner;
};

/// NcclTopology::algorithms' index of one of NCCL's algorithms (ring 0, tree 1, NVLS 2, NVLS_TREE 3,
/// CollNet Direct 4, CollNet Chain 5; every other kind counts as the ring).
int nccl_algorithm_index(Algorithm a);

/// The topology NCCL would find for the first `ranks` GPUs of `spec` (node-major).
NcclTopology nccl_topology(const platforms::PlatformSpec& spec, int ranks);

/// One candidate of the tuner: its predicted time and the costs the engine charges for it.
struct NcclChoice {
  Algorithm algorithm = Algorithm::ring;  ///< ring, tree, nvls, nvls_tree, collnet_direct or collnet_chain
  Protocol protocol = Protocol::simple;
  int channels = 1;             ///< channels NCCL launches for this size (enqueue.cc drops some for small sizes)
  double latency_s = 0;         ///< the model's latency: launch plus per-step latencies
  double bus_bandwidth_Bps = 0; ///< the model's busbw
  double predicted_s = 0;       ///< the model's time for the size asked
  /// What NCCL's network transport costs beyond tuning.cc's model as the engine charges it
  /// (nccl_network_cost's engine view): extra per-hop latency and the proxy's per-step cost. 0 in
  /// one node and without `network.nccl`. latency_s holds the tuner's view of the same (the
  /// reported latency, and under Simple the flush as a second hop), which differs where the
  /// plugin reports a figure of its own or, with a hop latency above 0, under Simple.
  double network_software_s = 0;
  /// Of latency_s, NVLS_TREE's pipeline fill across nodes (nvls_tree_pipeline); 0 for the others.
  double pipeline_fill_s = 0;
  /// Of latency_s, for the ring and the tree across nodes: tuning.cc's per-hop NET latency
  /// (hwLatencies[NET]) beyond the platform's node-to-node latency, on every hop of the model
  /// (ring 2(nodes − 1), tree 2·log2(nodes)). The engine's flows carry only the link's latency, so
  /// it is charged with the launch. 0 in one node.
  double net_model_latency_s = 0;
};

/// What NCCL's network transport costs one all-reduce beyond tuning.cc's latencies: the extra
/// latency of every network hop on the critical path and the proxy's per-step CPU time, both from
/// the platform's `network.nccl` (NcclTopology::net_hop_us, proxy_step_us).
struct NcclNetworkCost {
  int hops = 0;            ///< network hops on a chunk's critical path (ring 2(nodes−1), trees 2·log2(nodes))
  int loops = 0;           ///< loops over the buffer (enqueue.cc calcCollChunking: nLoops)
  double proxy_steps = 0;  ///< network steps one GPU's proxy thread posts and completes
  double proxy_s =
      0;  ///< what the proxy's steps take beyond the transfer: max(0, proxy_steps × proxy_step_us − transfer_s)
  double hop_s = 0;    ///< hops × the view's hop latency (the tuner's: twice under Simple)
  double seconds = 0;  ///< hop_s + proxy_s
};
/// The network cost of running `a` with `p` on `channels` (the communicator's, after enqueue.cc's
/// per-size drop) for an all-reduce of `bytes`. Per network connection NCCL's proxy handles
/// nstepsPerLoop × nLoops × chunkSteps FIFO steps (enqueue.cc), one network message per slice:
///   ring   2(n−1) steps a loop, loop = channels × n × chunk (Simple: 4 steps in 2 slices, a step
///          NcclTopology::simple_step_bytes, 512 KiB by default; LL 32 KiB, LL128 576,000 B data
///          a step, one slice); each channel's ring enters and leaves every node once (a send and
///          a receive connection per node)
///   tree   1 step a loop, loop = channels × chunk (Simple one step); each node's tree head has an
///          up and a down connection each way (both trees of the channel share the proxy)
///   nvls_tree as tree on NVLS's CTAs, a loop of channels × heads × the NVLS tree chunk (nvls.cc:
///          128 KiB, 64 KiB from 4 nodes)
/// The steps of all connections are spread over the GPUs' proxy threads (one per GPU, proxy.cc),
/// which work beside the transfers: `transfer_s` (the data's time at the model's algbw) hides as
/// much of them. Each hop adds the hop latency: the tuner's view weighs hops by the reported
/// latency where there is one, and under Simple twice, as tuning.cc adds latencyInter once more
/// for the receiver's GPUDirect flush; the engine's view charges the hop's own latency once. The
/// flush crosses no network: it is an RDMA read of the received data by the receiver's own NIC,
/// on a QP connected to itself (net_ib connect.cc: "Flush QP is a loopback QP"; aws-ofi-nccl's
/// fi_read likewise), a PCIe round trip that its proxy posts with the step, which only
/// proxy_step_us would carry (0 unless given or calibrated). Zero in one node and for NVLS and
/// CollNet (their network side is SHARP's).
enum class NetworkCostView { engine, tuner };
NcclNetworkCost nccl_network_cost(const NcclTopology& topo, Algorithm a, Protocol p, int channels, double bytes,
                                  double transfer_s = 0, NetworkCostView view = NetworkCostView::engine);

/// Every (algorithm, protocol) NCCL would consider for an all-reduce of `bytes` on `topo`, with
/// the model's time; those NCCL disables (NVLS across nodes without SHARP, NVLS_TREE inside one
/// node, CollNet without SHARP, CollNet Direct without NVSwitch, LL128 before Volta) are
/// left out. NVLS_TREE is NCCL's algorithm across NVSwitch nodes whose GPUs have NICs (Hopper on).
/// bytes ≥ 0.
std::vector<NcclChoice> nccl_candidates(const NcclTopology& topo, double bytes);
/// The fastest candidate (NCCL's pick); ties go to the earlier of ring, tree, nvls, nvls_tree,
/// collnet_direct, collnet_chain and LL, LL128, Simple.
NcclChoice nccl_choose(const NcclTopology& topo, double bytes);
/// The fastest candidate of `algorithm` (NCCL_ALGO set to it, protocol still chosen); nvls where
/// unsupported falls back to ring.
NcclChoice nccl_choose(const NcclTopology& topo, double bytes, Algorithm algorithm);

/// CUDA blocks (CTAs) NCCL launches for `choice` on an all-reduce of `bytes`: one per channel
/// (enqueue.cc ncclLaunchKernel: grid = the plan's channels, block = up to NCCL_MAX_NTHREADS
/// threads), each resident on an SM for the kernel's whole life. Ring and tree: the
/// communicator's channels, twice the graph's (connect.cc duplicates them, at most MAXCHANNELS
/// 64), less the channels enqueue.cc drops for small sizes; NVLS: 16 CTAs on Hopper, 24 on
/// Blackwell (nvls.cc), fewer below 256 KiB (nvls_pipeline's channels); NVLS_TREE: 16 on Hopper,
/// 32 on Blackwell across nodes, fewer below 256 (512) KiB by the same channel-by-data split. 0 when nothing runs
/// (fewer than 2 ranks or no bytes). `comm_channels` > 0 sets the communicator's channels instead
/// (NCCL_MIN/MAX_NCHANNELS, `--channels`).
int nccl_ctas(const NcclTopology& topo, const NcclChoice& choice, double bytes, int comm_channels = 0);
/// The communicator's channels for the ring and tree: twice the graph's (connect.cc
/// ncclTopoPostset), at most MAXCHANNELS 64.
int nccl_comm_channels(const NcclTopology& topo);

/// SMs the kernel of `choice` holds on a GPU of `gpu_sm_count` SMs: its CTAs (one block per SM),
/// at most gpu_sm_count − 1 so that compute always keeps one; 0 when the SM count is unknown (≤ 1).
int nccl_kernel_sms(const NcclTopology& topo, const NcclChoice& choice, double bytes, int gpu_sm_count,
                    int comm_channels = 0);

/// What running protocol `p` costs the simulated flows (see the engine), beyond the platform:
struct ProtocolCosts {
  /// Bytes the flows carry per data byte. At least the protocol's wire overhead (LL 2: a 4-byte
  /// flag per 4 data bytes; LL128 128/120; a ring's across nodes divided by its ring_efficiency),
  /// raised to raw busbw / the protocol's busbw where its ceiling binds first (NCCL's llMaxBw,
  /// per-channel LL128 ceilings, NVLS efficiency): SimGrid 3.32 cannot cap a host-to-host flow's
  /// rate (Comm::set_rate aborts), so a protocol that moves data at a fraction of the fabric's
  /// rate is represented by proportionally more bytes.
  double wire_factor = 1;
  double launch_s = 0;          ///< slept once before the collective: NCCL's base latency of (a, p)
  /// Added to every step on a fabric whose latency was cut by fabric_latency_cut_s:
  /// hw_intra(a, p) − hw_intra(ring, LL), so that a Simple ring step costs the preset's latency again.
  double step_overhead_s = 0;
};
/// NCCL's base latency of (algorithm, protocol) (tuning.cc baseLat: ring 6.6 / 14 / 8.4 µs, tree
/// 6.8 / 14 / 8.4 for LL / LL128 / Simple; NVLS 25 µs): the fixed cost of launching one collective
/// kernel, paid once per call whatever its size. Textbook algorithms NCCL lacks (hierarchical,
/// halving-doubling) pay the ring's, once per collective call they make (calls_per_all_reduce).
double nccl_launch_s(Algorithm algorithm, Protocol protocol = Protocol::simple);
/// Collective calls one all-reduce of `algorithm` makes: 3 for hierarchical (Horovod's
/// NCCLHierarchicalAllreduce: an intra-node reduce-scatter, the inter-node all-reduce, an
/// intra-node all-gather), 1 otherwise.
int calls_per_all_reduce(Algorithm algorithm);
/// The costs of `choice` on `topo` for an all-reduce of `bytes` (see ProtocolCosts): besides the
/// protocol's, a tree's wire bytes carry NCCL's medium-size correction (tree_correction), NVLS's
/// its pipeline fill (nvls_pipeline), NVLS_TREE's its per-channel ceiling (perChMaxNVLSTreeBw:
/// raised to the busbw the flows would reach without it, over h × the ceiling). NVLS across nodes
/// and CollNet: launch is the model's whole latency (SHARP's switch round trip and the CollNet
/// proxy are not on the platform's links) and the flows' bytes are scaled to the model's algbw
/// where the flows alone would beat it.
ProtocolCosts protocol_costs(const NcclTopology& topo, const NcclChoice& choice, double bytes);

/// NCCL's correction of a tree's bandwidth for medium sizes (tuning.cc treeCorrectionFactor,
/// applied in ncclTopoGetAlgoTime: "Trees are not perfectly sticking to the model for medium
/// sizes"), indexed by log2(bytes / 64) from 64 B to 256 MiB: 0.4–1.0; 1 outside that range.
double tree_correction(Protocol protocol, double bytes);

/// How NCCL's single-node NVLS all-reduce kernel walks `bytes` (all_reduce.h, RunWorkColl
/// NVLS/Simple, oneNode): each of `channels` CTAs takes its share and loops over it `heads` chunks
/// at a time; every loop passes three warp groups in turn (scatter into the NVLS buffers, the
/// switch's reduce-and-multicast of this rank's head chunk, gather into the output). Chunk size
/// from enqueue.cc calcCollChunking (per channel, NVLS_CHUNKSIZE 128 KiB halved to 64, 32, 16 KiB
/// as the channel's bytes fall below 64, 8, 2 × heads × chunk); channels from enqueue.cc's
/// channel-by-data split (one 16 KiB cell each at least, up to nvls.cc's 16 / 24).
struct NvlsPipeline {
  int channels = 0;         ///< CTAs that get data
  int heads = 0;            ///< ranks in the node (connect.cc connectNvls: every GPU heads one chunk per loop)
  double chunk_bytes = 0;   ///< per head and loop
  double stage_bytes = 0;   ///< what one loop moves per channel: min(channel's bytes, heads × chunk)
  /// The pipeline's fill in bytes at the collective's bandwidth: the first loop passes scatter
  /// and reduce before gather starts and the last passes reduce and gather after scatter ends,
  /// each stage taken at the loop's transfer time, so 2 × stage_bytes per channel.
  double fill_bytes = 0;
};
/// NCCL's NVLS pipeline for an all-reduce of `bytes` (> 0) on one node of `topo`.
NvlsPipeline nvls_pipeline(const NcclTopology& topo, double bytes);

/// How NCCL's NVLS_TREE all-reduce walks `bytes` across nodes (all_reduce.h, RunWorkColl
/// NVLS_TREE/Simple): every loop hands each of the CTAs' NVLS heads one chunk, which passes the
/// switch's reduce inside the node, the tree between the nodes (up log2(nodes) levels, down as
/// many) and the switch's multicast back, one stage after the other. Chunk from nvls.cc
/// (ncclNvlsTuning: NVLS_CHUNKSIZE 128 KiB, the tree's maximum 64 KiB from 4 nodes;
/// ncclNvlsTreeSm100Tuning on Blackwell: 64 KiB with 8 GPUs a node on 2 nodes of 400 Gb/s NICs
/// under the GPUs' PCIe switches) and enqueue.cc calcCollChunking (halved to 64 KiB below 4 ×
/// and to 32 KiB below 1 × concurrentOps × chunk, concurrentOps = CTAs × heads).
struct NvlsTreePipeline {
  int ctas = 0;            ///< CTAs (nccl_ctas)
  int heads = 0;           ///< NVLS heads a node (NcclTopology::nvls_heads)
  double chunk_bytes = 0;  ///< per head and loop
  double loop_bytes = 0;   ///< what one loop moves: min(bytes, ctas × heads × chunk)
  int stages = 0;          ///< 2 + 2·ceil(log2(nodes)): reduce, tree up, tree down, multicast
  /// The pipeline's fill in bytes at the collective's algbw: the first loop passes every stage
  /// before the last starts, (stages − 1) × loop_bytes.
  double fill_bytes = 0;
};
/// NCCL's NVLS_TREE pipeline for an all-reduce of `bytes` (> 0) across the nodes of `topo`.
NvlsTreePipeline nvls_tree_pipeline(const NcclTopology& topo, double bytes);
/// NCCL's NVLS efficiency (tuning.cc nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell; 0 before): the
/// share of an NVSwitch port's bandwidth NVLS moves data at. NVLS charges it in its wire_factor;
/// NVLS_TREE's intra-node flows carry 1/efficiency more bytes than its NIC flows
/// (plan::nvls_tree_all_reduce), since the efficiency binds NVLink, not the network.
double nvls_efficiency(const NcclTopology& topo);
/// Bytes NVLS's intra-node flows carry per byte in a two-level all-reduce (NVLS_TREE, NVLS across
/// nodes): 1 / nvls_efficiency, 1 where NVLS has none.
double nvls_intra_factor(const NcclTopology& topo);
/// What one channel of NCCL's tree across nodes moves through each of its hops at most under
/// Simple, bytes/s: the per-channel tree ceiling (tuning.cc perChMaxTreeBws by generation and
/// node count: Hopper 41.4 GB/s on 2 nodes, 36 on more; Ampere 23.6 and 17.8), held to every
/// channel the engine runs: on a fabric whose links would move a channel's step faster, the step
/// takes bytes / ceiling (plan::NcclTrees::channel_Bps). NCCL's model caps the tree's busbw at the
/// graph's channels × it, half the communicator's; the engine's tree (each chunk reduced up, then
/// broadcast down) reaches a channel's busbw at its hops' rate, so at large sizes it allows twice
/// the model's cap (simulator/README.md: at half, two of the three curves it moves read worse).
double nccl_tree_channel_ceiling_Bps(const NcclTopology& topo);
/// Whether NCCL runs `a` on its heads (NVLS, NVLS_TREE, CollNet) rather than on the ring's and
/// tree's channels, which `--channels` sets.
bool runs_on_heads(Algorithm a);
/// Platform fabric latencies are NCCL's Simple per-step ring latency (presets: 3.4 µs NVLink,
/// 5.7 µs PCIe); a protocol-aware run takes hw_intra(ring, Simple) − hw_intra(ring, LL) off them
/// (2.8 µs NVLink, 4.7 µs PCIe) and adds each protocol's step_overhead_s back.
double fabric_latency_cut_s(const NcclTopology& topo);

}  // namespace trainsim::plan
