#pragma once
// A platform as pure, validated data: GPUs, the fabric inside a node, NICs, the inter-node topology
// and the network model. Read from the `platform` object of a scenario (preset + overrides, a
// `file`, or a full description) or from a standalone file. No SimGrid here; the builder that turns
// a PlatformSpec into SimGrid netzones lives in simgrid_builder.hpp (target platforms_simgrid).
//
// Inside a node (every link is split-duplex: each direction has the full bandwidth):
//
//        NVSwitch (nvswitch) / NVLink pairs (nvlink) / nothing (pcie)
//          |    |    |    |                 <- fabric links, intra_node.bandwidth_GBps
//        GPU0 GPU1 GPU2 GPU3 ... GPUg-1
//          |    |    |    |                 <- PCIe links, intra_node.pcie_bandwidth_GBps
//        PCIe switch 0   PCIe switch 1 ...  (intra_node.pcie_switches; 0 = GPUs on the host bridge)
//             \           /      NICs (network.nics_per_node) hang off a PCIe switch ("gpu") or
//             host bridge -- CPU  the host bridge ("host") and lead to the node's gateway, which is
//                                 one leaf of the inter-node topology (switch, fat tree, torus, dragonfly).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/platforms/gpu_catalog.hpp"

namespace trainsim::platforms {

/// How SimGrid turns latency and bandwidth into transfer times.
enum class NetworkModel {
  ideal,    ///< CM02, no cross-traffic, factors 1, no TCP window: time = latency + bytes/bandwidth, max-min sharing
  tcp,      ///< SimGrid's default LV08 TCP-like model (latency ×13.01, bandwidth ×0.97, cross-traffic)
  factors,  ///< CM02 with the explicit NetworkFactors below
};

/// The factors of NetworkModel::factors.
struct NetworkFactors {
  double latency_factor = 1.0;    ///< multiplies every route's latency (> 0)
  double bandwidth_factor = 1.0;  ///< multiplies every link's bandwidth, in (0, 1]
  double tcp_gamma_bytes = 0.0;   ///< TCP window; 0 = no window limit
  bool crosstraffic = false;      ///< whether acknowledgements load the reverse path
};

/// The fabric between the GPUs of one node.
enum class IntraNodeKind {
  pcie,      ///< PCIe only: GPUs under PCIe switches under the host bridge
  nvlink,    ///< DGX-1 NVLink hybrid cube-mesh (its first gpus_per_node ≤ 8 GPUs; bandwidth_GBps per link)
  nvswitch,  ///< every GPU has one port of bandwidth_GBps into a non-blocking NVSwitch
};

/// The node's internal fabric. Bandwidths are per direction.
struct IntraNodeSpec {
  IntraNodeKind kind = IntraNodeKind::pcie;
  double bandwidth_Bps = 0;       ///< nvlink: one link; nvswitch: a GPU's port; pcie: unused (see pcie_bandwidth_Bps)
  double latency_s = 0;           ///< GPU-to-GPU latency over the fabric (split across the links of the path)
  double efficiency = 1.0;        ///< achievable fraction of the fabric's and PCIe's bandwidth, (0, 1]
  double pcie_bandwidth_Bps = 0;  ///< one PCIe link (GPU, NIC or switch uplink)
  int pcie_switches = 0;          ///< 0 = every GPU on the host bridge; else GPU i under switch i·switches/g
};

/// The inter-node topology.
enum class TopologyKind { single_switch, fat_tree, torus, dragonfly };

/// Fat tree shape in SimGrid's terms: `down[i]` children per level-(i+1) switch; the product of
/// `down` is the node count; `oversubscription` divides the uplinks of the first switch level.
struct FatTreeShape {
  std::vector<unsigned> down;
  unsigned oversubscription = 1;
};

/// Dragonfly shape in SimGrid's terms; groups·chassis·routers·nodes_per_router is the node count.
struct DragonflyShape {
  unsigned groups = 1, group_links = 1;
  unsigned chassis = 1, chassis_links = 1;
  unsigned routers = 1, router_links = 1;
  unsigned nodes_per_router = 1;
};

/// GPUs that share one board and its power budget (a Tesla K80 carries two GK210 dies behind one
/// 300 W limit). With GPU Boost on, a die runs slower while its board siblings are busy than alone:
/// `shared_speed` is that relative speed (clock with the siblings busy / clock alone, in (0, 1]).
/// The one-GPU calibration runs a die alone, so only GPUs with a busy sibling in the job slow down.
/// The default 1 changes nothing: no published figure gives it for a workload (platforms/README.md).
struct GpuBoardSpec {
  int gpus = 1;               ///< consecutive GPUs of a node per board (K80: 2)
  double shared_speed = 1.0;  ///< relative speed of a GPU whose board has another GPU of the job
};

/// The network transport NCCL drives (`network.nccl.transport`): InfiniBand verbs (net_ib), RoCE
/// (net_ib over Ethernet), Google's GPUDirect-TCPXO and GPUDirect-TCPX plugins, NCCL's own
/// host-bounced TCP sockets (net_socket), or AWS EFA through the aws-ofi-nccl plugin. Unspecified:
/// NCCL's model as is.
enum class NcclTransport { unspecified, ib, roce, tcpxo, tcpx, socket, efa };
/// The transport's name ("" when unspecified).
std::string to_string(NcclTransport transport);
/// The per-message latency a network hop of `transport` adds to tuning.cc's NET latency when the
/// platform gives no `hop_latency_us`, s: 4 µs for InfiniBand verbs and RoCE (the median of what
/// the published curves over them imply beyond tuning.cc's constants), a host's TCP one-way
/// latency for the TCP transports, 20 µs for EFA (aws-ofi-nccl's own tuner model of p5: an 8-byte
/// RDMA write between two nodes; simulator/README.md "NCCL across nodes at every size" gives the
/// sources).
double default_hop_latency_s(NcclTransport transport);
/// The share of a NIC's line rate NCCL's ring reaches through `transport` when the platform gives
/// no `ring_efficiency`: 0.94 over InfiniBand and RoCE verbs, the middle of the 46–48 GB/s per
/// 400 Gb/s NDR NIC that NCCL's maintainers give for a two-node ring (NVIDIA/nccl-tests issue
/// 290, 2025-03-03: "For NDR @ 400Gbps you should see 46-48GB/s per NIC", with NCCL_ALGO=RING);
/// 1 for the others, which publish no such figure.
double default_ring_efficiency(NcclTransport transport);
/// The lowest share of its line rate a NIC is taken to reach: below a quarter it is misconfigured,
/// not slow. It bounds a platform's ring efficiency (below it an LL ring's bytes would also outgrow
/// what a plan's wire factor may hold, 16) and the NICs' efficiency `calibrate nccl-tests` fits.
constexpr double kMinLineRateShare = 0.25;
/// The latency `transport`'s net plugin reports to NCCL (getProperties' props->latency), which
/// NCCL's tuner adds to every network hop, when the platform gives no `reported_latency_us`, s:
/// 75 µs for EFA (aws-ofi-nccl on p4d, p4de, p5 and p5e); none for the others (NCCL's net_ib and
/// net_socket report 0, and the tuner is then given the hop latency itself).
std::optional<double> default_reported_latency_s(NcclTransport transport);

/// One row of the table NCCL's example tuner plugin reads (NCCL's plugins/tuner/example,
/// NCCL_TUNER_CONFIG_FILE): `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,
/// nNodes,nRanks[,numPipeOps[,regBuff]]`, -1 for "any" (channels: NCCL's own). A cluster run with a
/// tuner plugin (Google's on A3 Mega, AWS's on p5 from 3 nodes) picks by such a table.
struct NcclTunerRow {
  std::string collective;  ///< allreduce, allgather, reducescatter, broadcast or reduce
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::string algorithm;  ///< tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree or pat
  std::string protocol;   ///< ll, ll128 or simple
  int channels = -1;      ///< NCCL's nChannels for the collective, 1–64; -1: NCCL's own
  int nodes = -1;         ///< nNodes to match; -1: any
  int ranks = -1;         ///< nRanks to match; -1: any
  int pipe_ops = -1;      ///< numPipeOps to match; -1 (or absent): any
  int reg_buff = -1;      ///< registered buffer (1) or not (0) to match; -1 (or absent): any
  std::string text;       ///< the row as written, which the platform writes back
};

/// The software between NCCL and the wire (simulator/README.md "NCCL across nodes at every size"):
/// what a calibration (`trainsim calibrate nccl-tests`) or the user knows of NCCL's network
/// transport beyond the NIC's bandwidth. Both costs default to 0 and nothing is reported, NCCL's
/// own cost model (tuning.cc's per-hop NET latencies) taken as is, unless the platform names its
/// transport.
struct NcclNetSpec {
  /// The transport (NcclTransport::unspecified when not given); sets hop_latency_s's,
  /// reported_latency_s's and ring_efficiency's defaults.
  NcclTransport transport = NcclTransport::unspecified;
  /// Latency each network hop of a collective's critical path adds to tuning.cc's NET latency, s
  /// (a host-bounced or TCP transport's per-message latency; a few µs on InfiniBand verbs and RoCE),
  /// once: the receiver's GPUDirect flush is a read by its own NIC and crosses no network. The
  /// tuner weighs it as NCCL's graph latencyInter (twice under Simple) unless reported_latency_s is
  /// given.
  double hop_latency_s = 0;
  /// The latency the net plugin reports to NCCL, s, where it is not what a hop costs: NCCL's tuner
  /// (tuning.cc: graph latencyInter, twice under Simple) then weighs every hop by it while the
  /// hop costs hop_latency_s. aws-ofi-nccl reports 75 µs on p5 (for NCCL's choices: "Empirical
  /// testing on P5 had shown that NCCL's internal tuner choices work better with this value") where
  /// its own model of the hop is 20 µs. None: the tuner weighs hop_latency_s.
  std::optional<double> reported_latency_s;
  /// CPU time NCCL's proxy thread spends per network step it posts or completes (net.cc
  /// sendProxyProgress / recvProxyProgress: one step per slice of each connection), s. The proxy
  /// is one thread per GPU, so a collective's steps serialise on it.
  double proxy_step_s = 0;
  /// The share of each NIC's line rate at which NCCL's ring moves its bytes across nodes
  /// ([kMinLineRateShare, 1]): the transport's and the fabric's overheads beyond the protocol's
  /// own (LL's flags, LL128's 8 bytes a line), which NCCL's cost model leaves out. Its default is
  /// the transport's (default_ring_efficiency); a user who measured their ring sets their own.
  double ring_efficiency = 1;
  std::string calibrated_from;  ///< the nccl-tests file(s) the constants were fitted to ("" when not)
  /// The protocols NCCL may use (NCCL_PROTO as the cluster's profile sets it), indexed LL, LL128,
  /// Simple; all three by default. Google's TCPXO profiles for A3 Mega leave LL out (2024's LL128 too).
  std::array<bool, 3> protocols{true, true, true};
  /// The algorithms NCCL may use (NCCL_ALGO, and NCCL_NVLS_ENABLE=0 leaving NVLS and NVLS_TREE out),
  /// indexed as kNcclAlgorithmNames; all by default. Google's 2024 TCPXO profile for A3 Mega keeps
  /// Ring and Tree only.
  std::array<bool, 6> algorithms{true, true, true, true, true, true};
  /// The hosts' CPUs are AMD's (NCCL's cpuVendor): tuning.cc then charges 2 µs instead of 1 per
  /// network post (getNetOverhead) and caps LL across nodes at the AMD row of llMaxBws (22.5 GB/s
  /// on 2 nodes instead of 39). Intel's figures by default.
  bool amd_cpu = false;
  /// A tuner plugin's table (NcclTunerRow), in order: the first all-reduce row matching a
  /// collective whose algorithm and protocol NCCL runs there is the pick. Empty: NCCL's own tuner.
  std::vector<NcclTunerRow> tuner;
  /// NCCL_BUFFSIZE, bytes: Simple's buffer per connection, NCCL_STEPS = 8 steps of it (a tree's
  /// chunk under Simple is one step, enqueue.cc computeCollChunkInfo); 0: NCCL's default, 4 MiB.
  double buffsize_bytes = 0;
  /// One step of Simple's buffer, whole bytes: buffsize_bytes (NCCL's 4 MiB when 0) / NCCL_STEPS.
  double simple_step_bytes() const;
  bool all_protocols() const { return protocols[0] && protocols[1] && protocols[2]; }
  bool all_algorithms() const {
    return std::all_of(algorithms.begin(), algorithms.end(), [](bool on) { return on; });
  }
  /// The enabled protocols' NCCL_PROTO names, in kNcclProtocolNames' order.
  std::vector<std::string> protocol_names() const;
  /// The enabled algorithms' NCCL_ALGO names, in kNcclAlgorithmNames' order.
  std::vector<std::string> algorithm_names() const;
  /// Whether the transport's costs were given (or calibrated); the ring efficiency, the protocols
  /// and the algorithms are apart.
  bool given() const {
    return hop_latency_s > 0 || proxy_step_s > 0 || reported_latency_s || !calibrated_from.empty() ||
           transport != NcclTransport::unspecified;
  }
};
/// NCCL_PROTO's names, in NcclNetSpec::protocols' order.
inline constexpr std::array<const char*, 3> kNcclProtocolNames{"LL", "LL128", "Simple"};
/// NCCL_ALGO's names of the algorithms trainsim models, in NcclNetSpec::algorithms' order.
inline constexpr std::array<const char*, 6> kNcclAlgorithmNames{"Ring",     "Tree",          "NVLS",
                                                                "NVLSTree", "CollNetDirect", "CollNetChain"};
/// NCCL_ALGO's names of the algorithms `enabled` turns on (NcclNetSpec::algorithms' indexing), in
/// kNcclAlgorithmNames' order.
std::vector<std::string> nccl_algorithm_names(const std::array<bool, 6>& enabled);

/// Network between nodes.
struct NetworkSpec {
  TopologyKind topology = TopologyKind::single_switch;
  double bandwidth_Bps = 0;  ///< one NIC port; switch links carry nics_per_node times this
  double latency_s = 0;      ///< node-to-node latency through one switch (each cable carries half)
  int nics_per_node = 1;
  bool nics_on_gpus = false; ///< NICs under the GPUs' PCIe switches (true) or on the host bridge
  /// The switches reduce in the network (InfiniBand SHARP) and NCCL runs its CollNet plugin
  /// (NCCL_COLLNET_ENABLE=1): NCCL's CollNet algorithms, and NVLS across nodes, become available.
  bool sharp = false;
  NetworkModel model = NetworkModel::ideal;
  NetworkFactors factors;    ///< used when model == factors
  FatTreeShape fat_tree;     ///< used when topology == fat_tree (derived from `nodes` when not given)
  std::vector<unsigned> torus_dimensions;  ///< used when topology == torus
  DragonflyShape dragonfly;  ///< used when topology == dragonfly
  NcclNetSpec nccl;          ///< `network.nccl`: NCCL's transport costs beyond the NIC
};

/// The most GPUs one node may hold. SimGrid routes every pair of a node zone's hosts, so building a
/// node costs time and memory growing with its GPUs squared (measured: 1,024 GPUs 1.2 s and 190 MB,
/// 4,096 GPUs 28 s and 1.9 GB); the largest NVLink domain sold, GB200 NVL72, has 72.
constexpr int kMaxGpusPerNode = 1024;
/// The most GPUs a platform may hold (nodes × gpus_per_node): what a one-iteration all-reduce run
/// was measured to fit in (131,072 GPUs of DGX A100 nodes: about 34 s and 2.2 GB, tests/README.md,
/// Performance); SimGrid 3.32 builds and routes larger platforms but slowly (simulator/README.md,
/// Troubleshooting and limits).
constexpr std::int64_t kMaxGpus = 131072;

/// The physical ranges trainsim simulates (simulator/README.md, Troubleshooting and limits). SimGrid's solver
/// rounds rates below its precision to 0 and then deadlocks (a 1e-300 bandwidth or speed crashed
/// trainsim), and numbers far outside any machine print as 280-digit times: every link bandwidth
/// lies in 1 kbit/s .. 1 Pbit/s (a modem to 70x NVLink 5), every latency in 0 .. 10 s, every host
/// speed in 1 Mflop/s .. 1 Zflop/s, and every relative speed factor (a GPU's or node's speed, a
/// shared board's speed) in 1e-6 .. 1e6.
constexpr double kMinBandwidth_Bps = 125.0;
constexpr double kMaxBandwidth_Bps = 1.25e14;
constexpr double kMaxLatency_s = 10.0;
constexpr double kMinSpeed_flops = 1e6;
constexpr double kMaxSpeed_flops = 1e21;
constexpr double kMinSpeedFactor = 1e-6;
constexpr double kMaxSpeedFactor = 1e6;

/// A validated platform. Invariants (checked by read_platform_spec): nodes ≥ 1, gpus_per_node ≥ 1,
/// every bandwidth > 0, every latency ≥ 0, topology shape matches `nodes`.
struct PlatformSpec {
  std::string name;                 ///< preset name, file name, or "custom"
  std::string source;               ///< where the numbers come from (presets) or the file read
  GpuSpec gpu;
  GpuSpec cpu;                      ///< the host CPU of every node (used by colocated parameter servers)
  int nodes = 1;
  int gpus_per_node = 1;
  IntraNodeSpec intra_node;
  GpuBoardSpec gpu_board;
  NetworkSpec network;
  std::optional<double> price_per_gpu_hour;  ///< USD, on-demand list price where public
  std::optional<std::string> simgrid_xml;    ///< path of a SimGrid XML platform used as is

  int total_gpus() const { return nodes * gpus_per_node; }
};

/// Reads a `platform` object at `node`: `preset` plus overrides, `file` (platform JSON or SimGrid XML,
/// relative to the referencing file's directory) plus overrides, or a full description. Throws
/// InputError naming node.source() and the JSON pointer of the offending value.
PlatformSpec read_platform_spec(const JsonNode& node);

/// The nodes of the SimGrid XML platform `spec` (spec.simgrid_xml set), from its hosts counted
/// in the file as SimGrid will build them, before SimGrid reads it: what a plan needs to know of
/// the platform's size. Throws InputError naming the file when it defines no host or hosts that
/// are not a multiple of spec.gpus_per_node (as building it would), or is malformed.
int simgrid_xml_nodes(const PlatformSpec& spec);

/// The same platform with `nodes` nodes. A topology shape belongs to its node count, so the fat
/// tree's down counts, the torus dimensions and the dragonfly shape are derived anew (the fat tree
/// keeps its levels and oversubscription). Throws InputError at `source`'s /network/fat_tree when
/// the oversubscription does not divide the new first level, at /nodes when nodes is out of range.
/// `server_nodes` of the `nodes` are CPU-only parameter-server nodes: they hold no GPUs and count
/// as one host each toward kMaxGpus.
PlatformSpec with_nodes(const PlatformSpec& spec, int nodes, const std::string& source, int server_nodes = 0);

/// A preset name, or a path to a platform JSON / SimGrid XML file (for the CLI). Throws InputError
/// (unknown preset with a suggestion among GPU and CPU presets, a CPU preset, unreadable file,
/// invalid content); errors about the name are located at `argument` ("--platform", "PLATFORM").
PlatformSpec load_platform(const std::string& preset_or_file, const std::string& argument = "--platform");

/// GPU preset names in catalog order.
std::vector<std::string> preset_names();
/// GPU then CPU (cpu-*) preset names: what an unknown preset's suggestion chooses from.
std::vector<std::string> all_preset_names();

/// One row of `trainsim platform list`.
struct PresetInfo {
  std::string name;
  std::string description;
  std::string source;
  std::optional<double> price_per_gpu_hour;
};
/// Every preset with its description and source.
std::vector<PresetInfo> preset_catalog();

/// The preset called `name` (InputError with a suggestion at source/location otherwise).
PlatformSpec preset_by_name(const std::string& name, const std::string& source = "command line",
                            const std::string& location = "");

/// The relative speed of every GPU of a job of `gpus_per_node` GPUs per node on this platform's
/// boards: `gpu_board.shared_speed` for a GPU whose board holds another GPU of the job, 1 otherwise
/// (local GPU i sits on board i / gpu_board.gpus). One entry per local GPU.
std::vector<double> board_speeds(const PlatformSpec& spec, int gpus_per_node);

/// Order in which the GPUs of one node are visited by a ring so that consecutive GPUs share the
/// fastest link (NVLink cube-mesh: 0 1 5 4 7 6 2 3 without the GPUs ≥ g; otherwise 0 … g−1).
std::vector<int> ring_order_within_node(const PlatformSpec& spec);

/// Rings over the GPUs of one node that together use the fabric like NCCL's channels: on the
/// NVLink cube-mesh two link-disjoint NVLink rings (0 1 5 4 7 6 2 3 and 0 2 1 3 7 5 6 4), each in both
/// directions (four rings, no directed link shared; with fewer than 8 GPUs the rings skip the
/// missing ones and may share links); otherwise the single ring_order_within_node.
std::vector<std::vector<int>> ring_channels_within_node(const PlatformSpec& spec);

/// A node's network ports, ≥ 1: its NICs, at most one per GPU. More NICs than GPUs (AWS p5: 32 for
/// 8) act as one port per GPU of their summed rate, as NCCL's net plugins stripe a GPU's traffic
/// over its NICs; the platform builder, the ring layout and NCCL's tuner all see these ports.
int network_ports(const PlatformSpec& spec);

/// Number of NVLink links between local GPUs a and b of a DGX-1 hybrid cube-mesh (0, 1 or 2;
/// P100 generation has single links only when `doubled_links` is false).
int nvlink_links_between(int a, int b, bool doubled_links);

/// Analytic summary of the network: bisection bandwidth (bytes/s, one direction) of the inter-node
/// topology and of one node's fabric.
struct NetworkSummary {
  double node_injection_Bps = 0;       ///< nics × NIC bandwidth
  double bisection_Bps = 0;            ///< of the inter-node topology (0 for one node)
  double intra_node_bisection_Bps = 0; ///< of one node's GPU fabric
};
NetworkSummary summarize_network(const PlatformSpec& spec);

/// JSON description of a spec (the same format read_platform_spec reads, fully expanded), for
/// `trainsim platform info --json` and for result objects.
Json to_json(const PlatformSpec& spec);

std::string to_string(NetworkModel m);
std::string to_string(IntraNodeKind k);
std::string to_string(TopologyKind k);

}  // namespace trainsim::platforms
