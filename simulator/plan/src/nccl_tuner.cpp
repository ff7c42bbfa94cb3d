#include "trainsim/plan/nccl_tuner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

namespace trainsim::plan {

namespace {

// Constants of NVIDIA/nccl src/graph/tuning.cc (ncclTunerConstantsDefaults) and topo.h, commit
// 5067397 (2026). Indices: protocol LL, LL128, Simple.
using PerProtocol = std::array<double, 3>;
constexpr PerProtocol kBaseTree{6.8, 14.0, 8.4}, kBaseRing{6.6, 14.0, 8.4};  // µs
// hwLatencies: per-step latency by link type, µs.
constexpr PerProtocol kNvlinkTree{0.6, 1.25, 4.0}, kNvlinkRing{0.6, 1.9, 3.4}, kNvlinkNvls{0, 0, 25};
constexpr PerProtocol kPciTree{1.0, 1.9, 4.0}, kPciRing{1.0, 2.5, 5.7};
constexpr PerProtocol kNetTree{5.0, 8.5, 14}, kNetRing{2.7, 4.0, 14.0};
// llMaxBws [GPU generation for one node / CPU for several][nodes 1, 2, more], GB/s: across nodes
// tuning.cc reads row 0 on Intel hosts and row 1 on AMD's (ncclTopoTuneModel's index1).
constexpr std::array<double, 3> kLlMaxVolta{39.0, 39.0, 20.4}, kLlMaxAmpere{87.7, 22.5, 19.0},
    kLlMaxHopper{141.0, 45.0, 35.0}, kLlMaxBlackwell{282.0, 90.0, 70.0};
// Per-channel ceilings [generation][nodes 1, 2, more], GB/s.
constexpr std::array<std::array<double, 3>, 4> kPerChRingLl128{{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}}};
constexpr std::array<std::array<double, 3>, 4> kPerChTreeLl128{
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr std::array<std::array<double, 3>, 4> kPerChTree{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr std::array<std::array<double, 3>, 4> kPerChNvlsTree{{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}}};
constexpr std::array<double, 4> kNvlsEfficiency{0, 0, 0.85, 0.74};
constexpr double kNetNvlsTree = 20.9;  // µs, hwLatencies[NET][NVLS_TREE][SIMPLE]
constexpr double kNetNvls = 18;        // µs, hwLatencies[NET][NVLS][SIMPLE]
// CollNet (Simple only): hwLatencies NVLink/PCI and NET of COLLNET_DIRECT and COLLNET_CHAIN, µs,
// and the 0.4 µs arity serialization per local peer of Direct.
constexpr double kIntraCollnetDirect = 3.7, kIntraCollnetChain = 2.8, kNetCollnetDirect = 31, kNetCollnetChain = 30;
constexpr double kCollnetArity = 0.4;
constexpr int kMaxCollnetHeads = 8;  // device.h NCCL_MAX_DIRECT_ARITY + 1
// treeCorrectionFactor [LL, LL128, Simple][log2(bytes / 64)], 64 B to 256 MiB.
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}}};
constexpr double kNvlsChunk = 128 * 1024;    // nvls.cc NCCL_NVLS_CHUNKSIZE default
constexpr int kMaxNvlsArity = 32;            // device.h NCCL_MAX_NVLS_ARITY
constexpr double kCbdCell = 32 * 1024 / 2;   // enqueue.cc MinTrafficPerChannel / all-reduce traffic per byte
constexpr int kMaxRingChannels = 16;  // NCCL's search stops at MAXCHANNELS/2 for one graph
constexpr int kMaxChannels = 64;      // src/include/device.h MAXCHANNELS
constexpr double kNetOverheadIntel = 1.0, kNetOverheadAmd = 2.0;  // µs, tuning.cc getNetOverhead
// Data one FIFO step carries (init.cc DEFAULT_*BUFFSIZE / NCCL_STEPS 8; device.h): Simple's buffer
// (NCCL_BUFFSIZE, 4 MiB by default: NcclTopology::simple_step_bytes) / 8; LL's and LL128's steps
// (kNcclLlStepBytes, kNcclLl128StepBytes) less their flags.
constexpr double kLlStepData = kNcclLlStepBytes / 2;
constexpr double kLl128StepData = kNcclLl128StepBytes * 120 / 128;

int generation_index(int cc) { return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0; }

int compute_capability(const std::string& gpu) {
  auto starts = [&](const char* prefix) { return gpu.rfind(prefix, 0) == 0; };
  if (starts("B200") || starts("GB200")) return 100;
  if (starts("H100") || starts("H200") || starts("H800") || starts("GH200")) return 90;
  if (starts("A100") || starts("A800")) return 80;
  if (starts("T4")) return 75;
  if (starts("V100")) return 70;
  if (starts("P100")) return 60;
  return 37;  // K80 and anything older
}

double nvlink_GBps(int cc) { return cc >= 100 ? 40.1 : cc >= 90 ? 20.6 : cc >= 70 ? 20.0 : 18.0; }

int index_of(Protocol p) { return p == Protocol::ll ? 0 : p == Protocol::ll128 ? 1 : 2; }

// What every intra-node step of a ring across nodes costs at least, µs: the network post overhead
// (tuning.cc getNetOverhead, 1 µs on Intel hosts, 2 on AMD's), three times under Simple (ring_cost:
// "Inter-node rings still have to launch nsteps * net overhead").
double ring_net_overhead_us(const NcclTopology& topo, Protocol p) {
  return (topo.amd_cpu ? kNetOverheadAmd : kNetOverheadIntel) * (p == Protocol::simple ? 3 : 1);
}

// enqueue.cc (topoGetAlgoInfo, "Ring/Tree channel tuning"): ring and tree drop channels from
// `channels` while each would get fewer than threads × threshold bytes (512 threads LL and
// Simple, 640 LL128; 8 bytes LL and LL128, 64 Simple, the ring's LL threshold times the ranks).
int drop_channels(int channels, Algorithm a, Protocol p, int ranks, double bytes) {
  const double threads = p == Protocol::ll128 ? 640 : 512;
  const double threshold = (p == Protocol::simple ? 64.0 : 8.0) * (a == Algorithm::ring && p == Protocol::ll ? ranks : 1);
  while (channels >= 2 && bytes < channels * threads * threshold) --channels;
  return channels;
}

// The speeds NCCL's graph search tries between nodes, fastest first (search.cc speedArrayInter,
// sm90SpeedArrayInter, sm100SpeedArrayInter), and the fastest a NIC of `nic_GBps` carries (0 when
// none does).
double inter_search_speed_GBps(int cc, double nic_GBps) {
  static constexpr std::array<double, 19> kBefore90{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                    7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr std::array<double, 17> kSm90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr std::array<double, 20> kSm100{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                                 20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  auto fastest = [nic_GBps](const auto& speeds) {
    for (double s : speeds)
      if (s <= nic_GBps + 1e-9) return s;
    return 0.0;
  };
  return cc >= 100 ? fastest(kSm100) : cc >= 90 ? fastest(kSm90) : fastest(kBefore90);
}

// NVLS CTAs per collective (src/transport/nvls.cc: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL
// 24 in one node, NVLS_NCHANNELS_SM100 32 across nodes).
int nvls_ctas(const NcclTopology& topo) { return topo.compute_capability >= 100 ? (topo.nodes > 1 ? 32 : 24) : 16; }

// The top speed NCCL's graph search tries between nodes (search.cc speedArrayInter and
// sm90SpeedArrayInter start at 48 GB/s, sm100SpeedArrayInter at 96): no graph channel is faster.
double search_top_GBps(const NcclTopology& topo) { return topo.compute_capability >= 100 ? 96 : 48; }

// The NVLS graph across nodes (search.cc, NCCL_TOPO_PATTERN_NVLS): its per-channel bandwidths.
// Each of the h channels pulls bwIntra through every GPU's NVSwitch port and twice through its
// head's, so h + 1 of them fill a port; bwInter is raised while below twice bwIntra, up to the NIC
// and the search's top speed (NCCL's own search: 40 / 48 on a DGX H100). `intra` is a channel's
// NVLS busbw inside the node (tuning.cc: bwIntra · efficiency · (h−1)/h, × 2 for all-reduce).
struct NvlsGraph {
  double heads = 0, bw_intra = 0, bw_inter = 0, intra = 0;
};
NvlsGraph nvls_graph(const NcclTopology& topo) {
  NvlsGraph g;
  g.heads = topo.nvls_heads;
  if (g.heads < 1) return g;
  g.bw_intra = topo.nvlink_GBps / (g.heads + 1);
  g.bw_inter = std::min({topo.nic_GBps, 2 * g.bw_intra, search_top_GBps(topo)});
  g.intra = g.bw_intra * nvls_efficiency(topo) * (g.heads - 1) / g.heads * 2.0;
  return g;
}

// The CollNet graphs (search.cc; NCCL's own search gives 8 channels of 48 / 48 on a DGX H100, 48 /
// 24 Direct and 30 / 24 Chain on a DGX A100). bwInter is the NIC's, at most the search's top
// speed; bwIntra is raised to twice that (pass 2) while the NVLink ports carry it: Direct's head
// and its g − 1 peers take 2 × bwIntra of every port, Chain's channels each cross every port
// once (no intra-node traffic with one GPU per node). Direct has one channel per head; Chain the
// ring graph's channels (init.cc), as many as the NICs carry at bwInter.
struct CollnetGraph {
  double channels = 0, bw_intra = 0;
};
CollnetGraph collnet_graph(const NcclTopology& topo, Algorithm a) {
  CollnetGraph c;
  const double top = search_top_GBps(topo), inter = std::min(topo.nic_GBps, top);
  c.channels = a == Algorithm::collnet_direct
                   ? std::max(1, topo.collnet_heads)
                   : std::max(1.0, std::min(double(topo.channels), std::floor(topo.nics * topo.nic_GBps / inter + 1e-9)));
  const double g = double(topo.ranks) / topo.nodes;
  const double port = g <= 1 ? top : a == Algorithm::collnet_direct ? topo.nvlink_GBps / 2 : topo.nvlink_GBps / c.channels;
  c.bw_intra = std::min({2 * inter, top, port});
  return c;
}

// The algbw NVLS's own flows reach inside a node of a two-level all-reduce: every port carries
// S(g+1)/g at NVLS's efficiency.
double nvls_flows_algbw_GBps(const NcclTopology& topo) {
  const double g = double(topo.ranks) / topo.nodes;
  return topo.nvlink_GBps * nvls_efficiency(topo) * g / (g + 1);
}

// NVLS_TREE's per-channel ceiling (perChMaxNVLSTreeBws).
double nvls_tree_ceiling_GBps(const NcclTopology& topo) {
  return kPerChNvlsTree[std::size_t(generation_index(topo.compute_capability))][std::size_t(topo.nodes <= 2 ? 1 : 2)];
}
// ncclTopoGetAlgoTime corrects NVLS_TREE's bandwidth by the tree's medium-size factors on
// Blackwell with x86 CPUs (trainsim assumes x86 hosts).
double nvls_tree_correction(const NcclTopology& topo, Protocol p, double bytes) {
  return topo.compute_capability >= 100 ? tree_correction(p, bytes) : 1.0;
}
}  // namespace

NcclTopology nccl_topology(const platforms::PlatformSpec& spec, int ranks) {
  NcclTopology t;
  t.ranks = std::max(1, ranks);
  const int g = std::max(1, spec.gpus_per_node);
  t.nodes = std::max(1, (t.ranks + g - 1) / g);
  t.compute_capability = compute_capability(spec.gpu.name);
  const auto& in = spec.intra_node;
  t.nvlink = in.kind != platforms::IntraNodeKind::pcie;
  t.nvls = in.kind == platforms::IntraNodeKind::nvswitch && t.compute_capability >= 90;
  const double GBps = 1e9;
  if (t.nvlink) {
    // The GPU's NVLink bandwidth toward the ring: an NVSwitch port, or on the cube-mesh the
    // links of the node's ring channels (one NVLink each).
    const double link = nvlink_GBps(t.compute_capability);
    const double total = in.kind == platforms::IntraNodeKind::nvswitch
                             ? in.bandwidth_Bps * in.efficiency / GBps
                             : double(platforms::ring_channels_within_node(spec).size()) * link;
    t.channels = std::clamp(int(std::floor(total / link + 1e-9)), 1, kMaxRingChannels);
    t.bw_intra_GBps = total / t.channels;
  } else {
    t.channels = 1;
    t.bw_intra_GBps = std::min(12.0, in.pcie_bandwidth_Bps * in.efficiency / GBps);
  }
  t.bw_inter_GBps = t.bw_intra_GBps;
  t.nvlink_GBps = t.channels * t.bw_intra_GBps;
  // More NICs than GPUs are one port per GPU of their summed rate, as the platform builder wires
  // them and as the net plugins present them to NCCL (aws-ofi-nccl's RDMA protocol stripes a GPU's
  // traffic over its EFA NICs as one device).
  t.nics = platforms::network_ports(spec);
  t.nic_GBps = spec.network.bandwidth_Bps / GBps * std::max(1, spec.network.nics_per_node) / t.nics;
  // Whole nodes only (the engine's NVLS_TREE runs on whole nodes; partial ones are left out).
  const bool whole = t.ranks % g == 0;
  t.nvls_heads = spec.network.nics_on_gpus && whole ? std::min(t.nics, g) : 0;
  t.nvswitch = in.kind == platforms::IntraNodeKind::nvswitch;
  t.collnet = spec.network.sharp && t.nodes > 1 && whole;
  t.collnet_heads = t.collnet ? std::min({t.nics, g, kMaxCollnetHeads}) : 0;
  t.net_hop_us = spec.network.nccl.hop_latency_s * 1e6;
  t.proxy_step_us = spec.network.nccl.proxy_step_s * 1e6;
  t.ring_efficiency = spec.network.nccl.ring_efficiency;
  if (spec.network.nccl.reported_latency_s) t.reported_hop_us = *spec.network.nccl.reported_latency_s * 1e6;
  t.link_latency_us = spec.network.latency_s * 1e6;
  t.simple_step_bytes = spec.network.nccl.simple_step_bytes();
  t.protocols = spec.network.nccl.protocols;
  t.algorithms = spec.network.nccl.algorithms;
  t.amd_cpu = spec.network.nccl.amd_cpu;
  for (const platforms::NcclTunerRow& row : spec.network.nccl.tuner)
    if (row.collective == "allreduce") t.tuner.push_back(row);
  if (t.nodes > 1) {
    // The ring and tree graphs across nodes (search.cc ncclTopoCompute): every channel leaves the
    // node through a NIC at one of the search's speeds, the fastest the NIC carries, so each NIC
    // holds as many channels as that speed fits in it; ncclTopoDupChannels leaves graphs below
    // 25 GB/s a channel (and from Hopper on below 50 with more than 4 channels) as they are.
    // So 8 channels of 24 GB/s on 8 HDR NICs and of 48 GB/s on 8 NDR NICs, not the node's NVLink
    // channels (12 on a DGX A100, 16 on a DGX H100) spread unevenly over the NICs. At most the
    // NVLink channels where the NICs could carry more.
    const double speed = inter_search_speed_GBps(t.compute_capability, t.nic_GBps);
    const int per_nic = speed > 0 ? std::max(1, int(std::floor(t.nic_GBps / speed + 1e-9))) : 1;
    t.channels = std::clamp(std::min(t.nics * per_nic, std::max(t.channels, t.nics)), 1, kMaxRingChannels);
    t.bw_inter_GBps = speed > 0 ? speed : t.nic_GBps;
  }
  return t;
}

namespace {

// What every cost function below reads of the communicator and the size (ncclTopoTuneModel's
// locals: nsteps, nInter, ppn, the llMaxBw row).
struct TuneContext {
  explicit TuneContext(const NcclTopology& t) : topo(t) {}
  const NcclTopology& topo;
  double bytes = 0;
  int n = 0, nodes = 0, gen = 0, index2 = 0, nsteps = 0, nInter = 0;
  double ppn = 0, llMaxBw = 0, log2_nodes = 0;
  // channels × the per-channel bandwidth of the ring and tree graphs: their bwIntra (graph_bw_intra)
  // on ≤ 2 nodes, bwInter beyond
  double ring_bus_bw = 0, tree_bus_bw = 0;
  NvlsGraph nvls_net;  // NVLS across nodes and NVLS_TREE
};

// The bwIntra of NCCL's ring and tree graphs across nodes (search.cc ncclTopoCompute): the search
// sets bwIntra = bwInter at every speed it tries, and in its second pass raises both together for
// a ring ("increase bw for Ring") but bwIntra alone for a tree, only while bwIntra < 2 · bwInter
// ("increase bwIntra for trees (2 nodes or collnet)"). tuning.cc uses bwIntra on up to 2 nodes, so
// a ring across nodes is held to what its NICs carry and a tree to twice that, however fast the
// NVLink. In one node the graphs have no bwInter to hold them.
double graph_bw_intra(const NcclTopology& topo, Algorithm a) {
  if (topo.nodes < 2) return topo.bw_intra_GBps;
  const double cap = a == Algorithm::ring ? topo.bw_inter_GBps : 2 * topo.bw_inter_GBps;
  return std::min(topo.bw_intra_GBps, cap);
}

TuneContext tune_context(const NcclTopology& topo, double bytes) {
  TuneContext c(topo);
  c.bytes = bytes;
  c.n = topo.ranks;
  c.nodes = topo.nodes;
  c.gen = generation_index(topo.compute_capability);
  c.index2 = c.nodes <= 2 ? c.nodes - 1 : 2;
  c.ppn = double(c.n) / c.nodes;
  // llMaxBws: one node indexed by GPU generation, several by CPU vendor (Intel's row 0, AMD's 1).
  static constexpr std::array<const std::array<double, 3>*, 4> kLlMaxByGen{&kLlMaxVolta, &kLlMaxAmpere, &kLlMaxHopper,
                                                                           &kLlMaxBlackwell};
  const auto& ll_max = c.nodes == 1 ? *kLlMaxByGen[std::size_t(c.gen)] : topo.amd_cpu ? kLlMaxAmpere : kLlMaxVolta;
  c.llMaxBw = ll_max[std::size_t(c.index2)];
  c.nsteps = 2 * (c.n - 1);
  c.nInter = c.nodes == 1 ? 0 : 2 * (c.nodes - 1);
  c.log2_nodes = std::floor(std::log2(double(c.nodes)));
  c.ring_bus_bw = topo.channels * (c.nodes <= 2 ? graph_bw_intra(topo, Algorithm::ring) : topo.bw_inter_GBps);
  c.tree_bus_bw = topo.channels * (c.nodes <= 2 ? graph_bw_intra(topo, Algorithm::tree) : topo.bw_inter_GBps);
  c.nvls_net = nvls_graph(topo);
  return c;
}

// The candidate of (a, p) from the model's latency (µs), busbw and algbw (GB/s):
// ncclTopoGetAlgoTime's time = latency + bytes / algbw. `plateau` is the factor ncclTopoGetAlgoTime
// multiplies the ring's whole latency by: the model's and the tuner's view of the hops (latencyInter
// is part of it), not trainsim's proxy cost; 1 otherwise.
NcclChoice make_choice(const TuneContext& c, Algorithm a, Protocol p, int channels, double lat, double busBw,
                       double algBw, double plateau = 1) {
  lat *= plateau;
  NcclChoice out;
  out.algorithm = a;
  out.protocol = p;
  out.channels = channels;
  // The transport's costs beyond the model, on the communicator's channels for this size (the
  // ring's and tree's: twice the graph's, less enqueue.cc's drop; NVLS_TREE's heads' CTAs).
  // The tuner weighs its own view of them (the reported latency, the flush as a hop); the engine
  // charges what they cost.
  if (c.nodes > 1 && (c.topo.net_hop_us > 0 || c.topo.proxy_step_us > 0 || c.topo.reported_hop_us)) {
    const int comm_channels = a == Algorithm::ring || a == Algorithm::tree
                                  ? drop_channels(nccl_comm_channels(c.topo), a, p, c.n, c.bytes)
                                  : channels;
    const double transfer_s = c.bytes / (algBw * 1e9);
    out.network_software_s = nccl_network_cost(c.topo, a, p, comm_channels, c.bytes, transfer_s).seconds;
    const NcclNetworkCost tuner =
        nccl_network_cost(c.topo, a, p, comm_channels, c.bytes, transfer_s, NetworkCostView::tuner);
    lat += (plateau * tuner.hop_s + tuner.proxy_s) * 1e6;
  }
  out.latency_s = lat * 1e-6;
  out.bus_bandwidth_Bps = busBw * 1e9;
  out.predicted_s = out.latency_s + c.bytes / (algBw * 1e9);
  return out;
}

// LL128 needs Volta or later and NVLink-class paths (tuning.cc enables it per architecture; over
// PCIe NCCL leaves it off).
bool ll128_runs(const NcclTopology& topo, Protocol p) {
  return p != Protocol::ll128 || (topo.compute_capability >= 70 && topo.nvlink);
}

// Ring (tuning.cc ncclTopoTuneModel, NCCL_ALGO_RING):
//   busBw = channels · bw; LL: min(llMaxBw, busBw/2); LL128: min(0.92 busBw, channels ·
//   perChMaxRingLL128Bw); algbw = busBw · n / nsteps;
//   latency = baseLat + (nsteps − nInter) · intraHw + nInter · interHw, where an intra-node step of
//   a ring across nodes costs at least the net overhead ("Inter-node rings still have to launch
//   nsteps * net overhead", getNetOverhead ×3 with Simple), and ncclTopoGetAlgoTime's "Plateau
//   effect of ring" (×1.4, ×1.9 before Ampere) once every channel carries 64 B per rank.
// enqueue.cc drops channels for small sizes (drop_channels).
std::optional<NcclChoice> ring_cost(const TuneContext& c, Protocol p) {
  const NcclTopology& topo = c.topo;
  if (!ll128_runs(topo, p)) return std::nullopt;
  const int pi = index_of(p);
  double busBw = c.ring_bus_bw;
  if (p == Protocol::ll) busBw = std::min(c.llMaxBw, busBw * 0.5);
  if (p == Protocol::ll128)
    busBw = std::min(busBw * 0.92, topo.channels * kPerChRingLl128[std::size_t(c.gen)][std::size_t(c.index2)]);
  const double algBw = busBw * c.n / c.nsteps;
  double intraLat = (topo.nvlink ? kNvlinkRing : kPciRing)[std::size_t(pi)];
  const double interLat = (c.ppn == 1 ? kNetTree : kNetRing)[std::size_t(pi)];
  if (c.nodes > 1) intraLat = std::max(intraLat, ring_net_overhead_us(topo, p));
  double lat = kBaseRing[std::size_t(pi)];
  lat += (c.nsteps - c.nInter) * intraLat + c.nInter * interLat;
  double plateau = 1;
  if (p == Protocol::simple && c.nodes > 1 && std::floor(c.bytes / (nccl_comm_channels(topo) * double(c.n))) >= 64)
    plateau = topo.compute_capability < 80 ? 1.9 : 1.4;
  NcclChoice out = make_choice(c, Algorithm::ring, p, drop_channels(topo.channels, Algorithm::ring, p, c.n, c.bytes),
                               lat, busBw, algBw, plateau);
  out.net_model_latency_s = c.nInter * std::max(0.0, interLat - topo.link_latency_us) * 1e-6;
  return out;
}

// Tree (tuning.cc NCCL_ALGO_TREE): busBw = min(0.92 · channels · bw, channels · perChMaxTreeBw);
// LL: min(busBw / 3.8, llMaxBw); LL128: min(busBw · 7/9 (one node) or 120/128, channels ·
// perChMaxTreeLL128Bw); ncclTopoGetAlgoTime's treeCorrectionFactor for medium sizes; algbw =
// busBw / 2; latency = baseLat + 2 · ((ppn − 1) · intraHw + log2(nodes) · netHw).
std::optional<NcclChoice> tree_cost(const TuneContext& c, Protocol p) {
  const NcclTopology& topo = c.topo;
  if (!ll128_runs(topo, p)) return std::nullopt;
  const int pi = index_of(p);
  double busBw = std::min(c.tree_bus_bw * 0.92, topo.channels * kPerChTree[std::size_t(c.gen)][std::size_t(c.index2)]);
  if (p == Protocol::ll) busBw = std::min(busBw / 3.8, c.llMaxBw);
  if (p == Protocol::ll128)
    busBw = std::min(busBw * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     topo.channels * kPerChTreeLl128[std::size_t(c.gen)][std::size_t(c.index2)]);
  busBw *= tree_correction(p, c.bytes);
  const double algBw = busBw * 0.5;
  const double intraLat = (topo.nvlink ? kNvlinkTree : kPciTree)[std::size_t(pi)];
  const double interLat = kNetTree[std::size_t(pi)];
  double lat = kBaseTree[std::size_t(pi)];
  lat += 2 * ((c.ppn - 1) * intraLat + c.log2_nodes * interLat);
  NcclChoice out = make_choice(c, Algorithm::tree, p, drop_channels(topo.channels, Algorithm::tree, p, c.n, c.bytes),
                               lat, busBw, algBw);
  out.net_model_latency_s = 2 * c.log2_nodes * std::max(0.0, interLat - topo.link_latency_us) * 1e-6;
  return out;
}

// NVLS (tuning.cc NCCL_ALGO_NVLS, Simple only): one NVSwitch node (Hopper on) with two channels or
// more, or several with CollNet ("Collnet+NVLS"). busBw = channels · min(bwIntra · nvlsEfficiency ·
// (h−1)/h · 2, bwInter), across nodes per NVLS head; algbw = busBw · n / nsteps; latency =
// hwLat[NVLINK][NVLS] (+ hwLat[NET][NVLS] across nodes), no base latency.
std::optional<NcclChoice> nvls_cost(const TuneContext& c) {
  const NcclTopology& topo = c.topo;
  if (!topo.nvls || (c.nodes > 1 && (!topo.collnet || c.nvls_net.heads < 2)) || topo.channels < 2) return std::nullopt;
  const double intra =
      topo.bw_intra_GBps * kNvlsEfficiency[std::size_t(c.gen)] * (topo.channels - 1) / topo.channels * 2.0;
  double busBw = topo.channels * std::min(intra, topo.bw_inter_GBps);
  if (c.nodes > 1) busBw = c.nvls_net.heads * std::min(c.nvls_net.intra, c.nvls_net.bw_inter);
  const double algBw = busBw * c.n / c.nsteps;
  const double lat = kNvlinkNvls[2] + (c.nodes > 1 ? kNetNvls : 0);
  return make_choice(c, Algorithm::nvls, Protocol::simple, c.nodes > 1 ? nvls_ctas(topo) : topo.channels, lat, busBw,
                     algBw);
}

// NVLS_TREE (tuning.cc NCCL_ALGO_NVLS_TREE, Simple only; disabled on one node, needs two heads):
// busBw = heads · min(bwIntra-based NVLS busbw, bwInter (× 2: "2 node case of NVLSTree"),
// perChMaxNVLSTreeBw), Blackwell's tree correction; algbw = busBw · n / nsteps; latency =
// hwLat[NVLINK][NVLS] + 2 · log2(nodes) · hwLat[NET][NVLS_TREE], no base latency.
std::optional<NcclChoice> nvls_tree_cost(const TuneContext& c) {
  const NcclTopology& topo = c.topo;
  if (!topo.nvls || c.nodes == 1 || c.nvls_net.heads < 2) return std::nullopt;
  const double inter = c.nvls_net.bw_inter * (c.nodes <= 2 ? 2.0 : 1.0);
  const double busBw = c.nvls_net.heads * std::min({c.nvls_net.intra, inter, nvls_tree_ceiling_GBps(topo)}) *
                       nvls_tree_correction(topo, Protocol::simple, c.bytes);
  const double algBw = busBw * c.n / c.nsteps;
  // The pipeline's fill across the nodes, which NCCL's model leaves out (nvls_tree_pipeline): on
  // two DGX H100-class nodes it is most of the time from 8 to 128 MiB.
  const double fill_s = algBw > 0 ? nvls_tree_pipeline(topo, c.bytes).fill_bytes / (algBw * 1e9) : 0;
  const double lat = kNvlinkNvls[2] + 2 * c.log2_nodes * kNetNvlsTree + fill_s * 1e6;
  NcclChoice out = make_choice(c, Algorithm::nvls_tree, Protocol::simple, nvls_ctas(topo), lat, busBw, algBw);
  out.pipeline_fill_s = fill_s;
  return out;
}

// CollNet Direct and Chain (tuning.cc NCCL_ALGO_COLLNET_*, Simple only; SHARP, at most 8 ranks per
// node (enqueue.cc), Direct needs NVSwitch): busBw = channels · bwIntra of the CollNet graph;
// Direct divided by (ppn/h + 1)/2 ("Collnet+Direct requires all GPUs to have a local NIC to work at
// full speed") and × 0.85 from Hopper on; algbw = busBw / 2; latency Direct 2 · (intraHw + (ppn−1) ·
// arity) + netHw, Chain 2 · (ppn−1) · intraHw + netHw (the tree's net latency with one rank a node).
std::optional<NcclChoice> collnet_cost(const TuneContext& c, Algorithm a) {
  const NcclTopology& topo = c.topo;
  const bool direct = a == Algorithm::collnet_direct;
  if (!topo.collnet || c.ppn > 8 || (direct && !topo.nvswitch)) return std::nullopt;
  const CollnetGraph net = collnet_graph(topo, a);
  double busBw = net.channels * net.bw_intra;
  if (direct) {
    double factor = c.ppn / net.channels;
    factor -= (factor - 1) / 2;
    busBw /= factor;
    if (topo.compute_capability >= 90) busBw *= 0.85;
  }
  const double algBw = busBw * 0.5;
  const double hw_net = c.ppn == 1 ? kNetTree[2] : direct ? kNetCollnetDirect : kNetCollnetChain;
  const double lat = direct
                         ? 2 * (std::min(1.0, c.ppn - 1) * kIntraCollnetDirect + (c.ppn - 1) * kCollnetArity) + hw_net
                         : 2 * (c.ppn - 1) * kIntraCollnetChain + hw_net;
  return make_choice(c, a, Protocol::simple, int(net.channels), lat, busBw, algBw);
}

}  // namespace

int nccl_algorithm_index(Algorithm a) {
  switch (a) {
    case Algorithm::tree: return 1;
    case Algorithm::nvls: return 2;
    case Algorithm::nvls_tree: return 3;
    case Algorithm::collnet_direct: return 4;
    case Algorithm::collnet_chain: return 5;
    default: return 0;
  }
}

std::vector<NcclChoice> nccl_candidates(const NcclTopology& topo, double bytes) {
  std::vector<NcclChoice> out;
  if (topo.ranks < 2) return out;
  const TuneContext c = tune_context(topo, bytes);
  // NCCL_PROTO and NCCL_ALGO (the platform's `network.nccl.protocols` and `algorithms`): enqueue.cc
  // leaves out every algorithm and protocol pair either leaves out (NVLS, NVLS_TREE and CollNet
  // run Simple only).
  auto keep = [&out, &topo](std::optional<NcclChoice> choice) {
    if (choice && topo.protocols[std::size_t(index_of(choice->protocol))] &&
        topo.algorithms[std::size_t(nccl_algorithm_index(choice->algorithm))])
      out.push_back(*choice);
  };
  for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) keep(ring_cost(c, p));
  for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) keep(tree_cost(c, p));
  keep(nvls_cost(c));
  keep(nvls_tree_cost(c));
  keep(collnet_cost(c, Algorithm::collnet_direct));
  keep(collnet_cost(c, Algorithm::collnet_chain));
  return out;
}

NcclNetworkCost nccl_network_cost(const NcclTopology& topo, Algorithm a, Protocol p, int channels, double bytes,
                                  double transfer_s, NetworkCostView view) {
  NcclNetworkCost cost;
  const bool tree_like = a == Algorithm::tree || a == Algorithm::nvls_tree;
  if (topo.nodes < 2 || (a != Algorithm::ring && !tree_like) || bytes <= 0) return cost;
  // Data per FIFO step (init.cc buffer sizes / NCCL_STEPS; LL carries half, LL128 120 of 128 bytes).
  const double step_bytes = p == Protocol::ll      ? kLlStepData
                            : p == Protocol::ll128 ? kLl128StepData
                                                   : topo.simple_step_bytes;
  const double n = topo.ranks, nodes = topo.nodes, ch = std::max(1, channels);
  double steps_per_connection = 0, connections = 0;
  if (a == Algorithm::ring) {
    // ALLREDUCE_CHUNKSTEPS 4 and SLICESTEPS 2 with Simple: a 4-step chunk sent as 2 messages.
    const double chunk = p == Protocol::simple ? 4 * step_bytes : step_bytes;
    const double messages_per_chunk = p == Protocol::simple ? 2 : 1;
    cost.loops = int(std::ceil(bytes / (ch * n * chunk)));
    steps_per_connection = 2 * (n - 1) * cost.loops * messages_per_chunk;
    connections = ch * nodes * 2;  // per channel a send and a receive connection at every node boundary
    cost.hops = 2 * (topo.nodes - 1);
  } else {
    // NVLS_TREE's loop holds one chunk per NVLS head (enqueue.cc: nchunksPerLoop = nvls.nHeads).
    const double chunk = a == Algorithm::nvls_tree ? nvls_tree_pipeline(topo, bytes).chunk_bytes : step_bytes;
    const double per_loop = a == Algorithm::nvls_tree ? std::max(1, topo.nvls_heads) : 1;
    cost.loops = int(std::ceil(bytes / (ch * per_loop * chunk)));
    steps_per_connection = cost.loops;
    connections = ch * nodes * 4;  // up and down, send and receive, at every node's head
    cost.hops = 2 * int(std::floor(std::log2(nodes)));
  }
  cost.proxy_steps = steps_per_connection * connections / n;
  // The proxy posts and completes steps while the NIC moves the earlier ones (proxy.cc progresses
  // every connection in turn): only what its steps take beyond the transfer shows.
  cost.proxy_s = std::max(0.0, cost.proxy_steps * topo.proxy_step_us * 1e-6 - transfer_s);
  // tuning.cc adds NCCL's graph latencyInter (the net plugin's reported latency) to every network
  // hop and, with Simple, once more: "Also add the flush extra latency" (the receiver's GPUDirect
  // flush, net_ib ncclIbIflush). The flush is a read of the received bytes by the receiver's own
  // NIC on a loopback QP (connect.cc), so it crosses no network: the engine charges the hop once,
  // and the flush's PCIe round trip, posted by the proxy with the step, is left to proxy_step_us.
  const double hop_us = view == NetworkCostView::tuner
                            ? topo.reported_hop_us.value_or(topo.net_hop_us) * (p == Protocol::simple ? 2 : 1)
                            : topo.net_hop_us;
  cost.hop_s = cost.hops * hop_us * 1e-6;
  cost.seconds = cost.hop_s + cost.proxy_s;
  return cost;
}

double nccl_tree_channel_ceiling_Bps(const NcclTopology& topo) {
  return kPerChTree[std::size_t(generation_index(topo.compute_capability))][std::size_t(topo.nodes <= 2 ? 1 : 2)] * 1e9;
}

NcclChoice nccl_choose(const NcclTopology& topo, double bytes) {
  const std::vector<NcclChoice> all = nccl_candidates(topo, bytes);
  if (all.empty()) return NcclChoice{};
  return *std::min_element(all.begin(), all.end(),
                           [](const NcclChoice& a, const NcclChoice& b) { return a.predicted_s < b.predicted_s; });
}

NcclChoice nccl_choose(const NcclTopology& topo, double bytes, Algorithm algorithm) {
  std::vector<NcclChoice> all = nccl_candidates(topo, bytes);
  std::erase_if(all, [&](const NcclChoice& c) { return c.algorithm != algorithm; });
  if (all.empty()) return algorithm == Algorithm::ring ? NcclChoice{} : nccl_choose(topo, bytes, Algorithm::ring);
  return *std::min_element(all.begin(), all.end(),
                           [](const NcclChoice& a, const NcclChoice& b) { return a.predicted_s < b.predicted_s; });
}

int nccl_ctas(const NcclTopology& topo, const NcclChoice& choice, double bytes, int comm_channels) {
  if (topo.ranks < 2 || bytes <= 0) return 0;
  if (choice.algorithm == Algorithm::nvls && topo.nodes == 1) return nvls_pipeline(topo, bytes).channels;
  if (choice.algorithm == Algorithm::nvls || choice.algorithm == Algorithm::nvls_tree)  // the channel-by-data split
    return int(std::clamp(std::ceil(bytes / kCbdCell), 1.0, double(nvls_ctas(topo))));
  // connect.cc (ncclTopoPostset): "Duplication should be complete now", comm->nChannels =
  // min(MAXCHANNELS, 2 × the graph's channels); enqueue.cc starts the per-size drop from there.
  if (comm_channels <= 0) comm_channels = nccl_comm_channels(topo);
  return drop_channels(comm_channels, choice.algorithm, choice.protocol, topo.ranks, bytes);
}

int nccl_comm_channels(const NcclTopology& topo) {
  return std::min(kMaxChannels, 2 * topo.channels);
}

int nccl_kernel_sms(const NcclTopology& topo, const NcclChoice& choice, double bytes, int gpu_sm_count, int comm_channels) {
  if (gpu_sm_count <= 1) return 0;
  return std::min(nccl_ctas(topo, choice, bytes, comm_channels), gpu_sm_count - 1);
}

double nccl_launch_s(Algorithm algorithm, Protocol protocol) {
  if (algorithm == Algorithm::nvls || algorithm == Algorithm::nvls_tree) return kNvlinkNvls[2] * 1e-6;
  return (algorithm == Algorithm::tree ? kBaseTree : kBaseRing)[std::size_t(index_of(protocol))] * 1e-6;
}

int calls_per_all_reduce(Algorithm algorithm) { return algorithm == Algorithm::hierarchical ? 3 : 1; }

double tree_correction(Protocol protocol, double bytes) {
  const double units = std::floor(bytes / 64);
  if (units < 1) return 1;
  const int log_size = int(std::floor(std::log2(units)));  // log2i(nBytes >> 6)
  if (log_size >= 23) return 1;
  return kTreeCorrection[std::size_t(index_of(protocol))][std::size_t(log_size)];
}

NvlsPipeline nvls_pipeline(const NcclTopology& topo, double bytes) {
  NvlsPipeline p;
  p.heads = std::clamp(topo.ranks, 1, kMaxNvlsArity);
  p.channels = int(std::clamp(std::ceil(bytes / kCbdCell), 1.0, double(nvls_ctas(topo))));
  const double per_channel = bytes / p.channels;
  // calcCollChunking with nChannels = 1 and the channel's bytes (the channel-by-data path).
  double chunk = kNvlsChunk;
  const double heads = p.heads;
  if (per_channel < 64 * heads * chunk && chunk > 65536) chunk = 65536;
  if (per_channel < 8 * heads * chunk && chunk > 32768) chunk = 32768;
  if (per_channel < 2 * heads * chunk && chunk > 16384) chunk = 16384;
  p.chunk_bytes = chunk;
  p.stage_bytes = std::min(per_channel, heads * chunk);
  p.fill_bytes = 2 * p.stage_bytes * p.channels;
  return p;
}

NvlsTreePipeline nvls_tree_pipeline(const NcclTopology& topo, double bytes) {
  NvlsTreePipeline p;
  p.heads = std::max(1, topo.nvls_heads);
  p.ctas = int(std::clamp(std::ceil(bytes / kCbdCell), 1.0, double(nvls_ctas(topo))));
  // nvls.cc ncclNvlsTuning: the tree's largest chunk, 64 KiB from 4 nodes; Blackwell's
  // ncclNvlsTreeSm100Tuning on 2 nodes of ≥ 48 GB/s NICs: 64 KiB when up to 8 GPUs a node share
  // NICs on their PCIe switches below 96 GB/s (or 16 GPUs a node), 256 KiB with up to 4.
  const double ppn = double(topo.ranks) / topo.nodes;
  double max_chunk = topo.nodes >= 4 ? 65536 : kNvlsChunk;
  if (topo.compute_capability >= 100 && topo.nodes == 2 && topo.nic_GBps >= 48) {
    max_chunk = kNvlsChunk;
    if (ppn <= 4)
      max_chunk = 2 * kNvlsChunk;
    else if (ppn >= 16 || (topo.nvls_heads > 0 && topo.nic_GBps < 96))
      max_chunk = 65536;
  }
  // enqueue.cc calcCollChunking, NCCL_ALGO_NVLS_TREE.
  const double ops = double(p.ctas) * p.heads;
  double chunk = max_chunk;
  if (bytes < 32 * ops * chunk && chunk > 262144) chunk = 262144;
  if (bytes < 16 * ops * chunk && chunk > 131072) chunk = 131072;
  if (bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 1 * ops * chunk && chunk > 32768) chunk = 32768;
  p.chunk_bytes = chunk;
  p.loop_bytes = std::min(bytes, ops * chunk);
  p.stages = 2 + 2 * int(std::ceil(std::log2(double(std::max(2, topo.nodes)))));
  p.fill_bytes = (p.stages - 1) * p.loop_bytes;
  return p;
}

ProtocolCosts protocol_costs(const NcclTopology& topo, const NcclChoice& choice, double bytes) {
  ProtocolCosts c;
  const int pi = index_of(choice.protocol);
  const double raw_busbw = topo.channels * (topo.nodes <= 2 ? topo.bw_intra_GBps : topo.bw_inter_GBps) * 1e9;
  const bool collnet = choice.algorithm == Algorithm::collnet_direct || choice.algorithm == Algorithm::collnet_chain;
  if (collnet || (choice.algorithm == Algorithm::nvls && topo.nodes > 1)) {
    // The flows' own algbw: inside the nodes NVLS (S(g+1)/g per port at its efficiency) or
    // CollNet's scatter to the heads and broadcast back (2S(g−1)/g per port), and S/h on every
    // head's NIC each way, the switches reducing. Where that beats the model, the bytes scale.
    c.launch_s = choice.latency_s;
    const double g = double(topo.ranks) / topo.nodes;
    const double intra = collnet ? topo.nvlink_GBps * g / (2 * (g - 1)) : nvls_flows_algbw_GBps(topo);
    const double inter = (collnet ? topo.collnet_heads : topo.nvls_heads) * topo.nic_GBps;
    const double model = choice.bus_bandwidth_Bps / 1e9 * (collnet ? 0.5 : topo.ranks / (2.0 * (topo.ranks - 1)));
    if (model > 0) c.wire_factor = std::max(1.0, std::min(intra, inter) / model);
    return c;
  }
  if (choice.algorithm == Algorithm::nvls) {
    c.launch_s = nccl_launch_s(Algorithm::nvls);
    c.wire_factor = 1.0 / kNvlsEfficiency[std::size_t(generation_index(topo.compute_capability))];
    // The pipeline's fill, charged as bytes at the same rate (the NVLS flows are alone on the ports).
    if (bytes > 0) c.wire_factor *= (bytes + nvls_pipeline(topo, bytes).fill_bytes) / bytes;
    return c;
  }
  if (choice.algorithm == Algorithm::nvls_tree) {
    c.launch_s = nccl_launch_s(Algorithm::nvls_tree) + choice.network_software_s + choice.pipeline_fill_s;
    // The flows' own busbw: NVLS inside the nodes (the port at NVLS efficiency carries S(g+1)/g)
    // and the heads' trees between them (each NIC S/h each way on two nodes, 2S/h on more, where
    // every node is inner in one tree); the per-channel ceiling, where lower, scales their bytes.
    const double n = topo.ranks, h = topo.nvls_heads, factor = 2 * (n - 1) / n;
    const double intra = factor * nvls_flows_algbw_GBps(topo);
    const double inter = factor * h * topo.nic_GBps / (topo.nodes <= 2 ? 1 : 2);
    const double ceiling = h * nvls_tree_ceiling_GBps(topo);
    if (ceiling > 0) c.wire_factor = std::max(1.0, std::min(intra, inter) / ceiling);
    c.wire_factor /= nvls_tree_correction(topo, choice.protocol, bytes);
    return c;
  }
  const double overhead = choice.protocol == Protocol::ll ? 2.0 : choice.protocol == Protocol::ll128 ? 128.0 / 120.0 : 1.0;
  c.wire_factor = overhead;
  // Across nodes LL's ceiling (llMaxBw, indexed by the hosts' CPU) is the communicator's, which the
  // tuner charges whatever channels enqueue.cc keeps for the size: the raw busbw is that of the
  // channels the engine runs, so that a ring of 4 of 8 channels runs at the tuner's busbw, not half.
  const double ring_raw =
      topo.nodes > 1 ? raw_busbw * std::min(1.0, double(choice.channels) / topo.channels) : raw_busbw;
  if (choice.algorithm == Algorithm::ring) {
    // Across nodes the NICs move the ring's bytes, protocol overhead and all, at ring_efficiency of
    // their line rate, and a ring's hops all run at its slowest's pace; a protocol's ceiling (LL's
    // llMaxBw, LL128's per channel), where it binds first, is the GPU's and the proxy's, below it.
    const double wire = topo.nodes > 1 ? overhead / topo.ring_efficiency : overhead;
    c.wire_factor = choice.bus_bandwidth_Bps > 0 ? std::max(wire, ring_raw / choice.bus_bandwidth_Bps) : wire;
  }
  if (choice.algorithm == Algorithm::tree) {
    // LL's ceilings bind the tree across 2 nodes as they bind the ring (tuning.cc: the tree's busbw
    // / 3.8, at most llMaxBw): the tree graph's raw busbw (what its flows reach) over the model's, on
    // the flows' bytes, then the medium-size correction. Not for LL128 and Simple (0.92 of the
    // graph): at the sizes they run the tree's chunks already keep its flows well below the graph's
    // rate, so that factor would be charged twice (4 MiB on 2 DGX H100: +5 %, against 110 µs
    // measured already 14 % slow). More nodes: the tree's flows are no longer at the graph's rate.
    const double correction = tree_correction(choice.protocol, bytes);
    const double raw_tree = topo.channels * graph_bw_intra(topo, Algorithm::tree) * 1e9;
    if (choice.protocol == Protocol::ll && topo.nodes == 2 && choice.bus_bandwidth_Bps > 0)
      c.wire_factor = std::max(overhead, raw_tree * correction / choice.bus_bandwidth_Bps);
    c.wire_factor /= correction;
  }
  // The transport's per-hop latency and proxy steps (nccl_network_cost) are not on the platform's
  // links: charged once, as the launch is.
  c.launch_s =
      nccl_launch_s(choice.algorithm, choice.protocol) + choice.network_software_s + choice.net_model_latency_s;
  const PerProtocol& hw = choice.algorithm == Algorithm::tree ? (topo.nvlink ? kNvlinkTree : kPciTree)
                                                              : (topo.nvlink ? kNvlinkRing : kPciRing);
  double step_hw = hw[std::size_t(pi)];
  // A ring across nodes: every intra-node step costs at least the network post overhead, as
  // ring_cost charges it.
  if (choice.algorithm == Algorithm::ring && topo.nodes > 1)
    step_hw = std::max(step_hw, ring_net_overhead_us(topo, choice.protocol));
  c.step_overhead_s = std::max(0.0, step_hw - (topo.nvlink ? kNvlinkRing : kPciRing)[0]) * 1e-6;
  return c;
}

double nvls_efficiency(const NcclTopology& topo) {
  return kNvlsEfficiency[std::size_t(generation_index(topo.compute_capability))];
}

double nvls_intra_factor(const NcclTopology& topo) {
  const double efficiency = nvls_efficiency(topo);
  return efficiency > 0 ? 1 / efficiency : 1;
}

bool runs_on_heads(Algorithm a) {
  return a == Algorithm::nvls || a == Algorithm::nvls_tree || a == Algorithm::collnet_direct || a == Algorithm::collnet_chain;
}

double fabric_latency_cut_s(const NcclTopology& topo) {
  const PerProtocol& hw = topo.nvlink ? kNvlinkRing : kPciRing;
  return (hw[2] - hw[0]) * 1e-6;
}

}  // namespace trainsim::plan
