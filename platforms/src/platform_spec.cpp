#include "trainsim/platforms/platform_spec.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "nccl_tuner_table.hpp"
#include "presets.hpp"
#include "simgrid_xml_check.hpp"
#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"

namespace trainsim::platforms {

namespace {
// One name table per enum of the platform format, in the order error messages list the names. A
// string model names ideal or tcp; "factors" is the object form's name (to_string only).
constexpr EnumNames<NetworkModel, 2> kStringModels{{{{NetworkModel::ideal, "ideal"}, {NetworkModel::tcp, "tcp"}}}};
constexpr EnumNames<NetworkModel, 3> kNetworkModels{
    {{{NetworkModel::ideal, "ideal"}, {NetworkModel::tcp, "tcp"}, {NetworkModel::factors, "factors"}}}};
constexpr EnumNames<IntraNodeKind, 3> kIntraNodeKinds{
    {{{IntraNodeKind::pcie, "pcie"}, {IntraNodeKind::nvlink, "nvlink"}, {IntraNodeKind::nvswitch, "nvswitch"}}}};
constexpr EnumNames<TopologyKind, 4> kTopologies{{{{TopologyKind::single_switch, "switch"},
                                                   {TopologyKind::fat_tree, "fat_tree"},
                                                   {TopologyKind::torus, "torus"},
                                                   {TopologyKind::dragonfly, "dragonfly"}}}};
constexpr EnumNames<bool, 2> kNicAttach{{{{false, "host"}, {true, "gpu"}}}};
// `network.nccl.transport`'s names (unspecified has none).
constexpr EnumNames<NcclTransport, 6> kNcclTransports{{{{NcclTransport::ib, "ib"},
                                                        {NcclTransport::roce, "roce"},
                                                        {NcclTransport::tcpxo, "tcpxo"},
                                                        {NcclTransport::tcpx, "tcpx"},
                                                        {NcclTransport::socket, "socket"},
                                                        {NcclTransport::efa, "efa"}}}};
}  // namespace

std::string to_string(NetworkModel m) {
  return std::string(kNetworkModels.name(m));
}

std::string to_string(IntraNodeKind k) {
  return std::string(kIntraNodeKinds.name(k));
}

std::string to_string(TopologyKind k) {
  return std::string(kTopologies.name(k));
}

std::string to_string(NcclTransport transport) {
  return transport == NcclTransport::unspecified ? "" : std::string(kNcclTransports.name(transport));
}

// The transports' default per-message latency (NcclNetSpec::hop_latency_s when the platform gives
// none). InfiniBand verbs and RoCE: net_ib's getProperties reports no latency of its own
// ("props->latency = 0; // Not set"; the same in net_socket.cc), so NCCL charges tuning.cc's NET
// latencies alone, and no public figure isolates what a hop costs beyond them. The four published
// 2-node nccl-tests curves over InfiniBand and RoCE (tests/data/validation/
// nccl_allreduce_multinode_curves.csv: Azure ND A100 v4, Nebius H100, Lambda B200, Google Cloud A4),
// each calibrated alone, imply 1, 3, 5 and 5.5 µs a hop; the default is their median, 4 µs. Those
// curves' figures as written are therefore partly in-sample: held out one at a time (the other
// three's median, 5, 5, 3 and 3 µs) they are 13.1, 7.1, 27.1 and 8.0 % (simulator/README.md, "NCCL
// across nodes at every size"). The TCP transports (NCCL's net_socket, Google's
// GPUDirect-TCPX and TCPXO plugins): every NCCL message crosses both hosts' kernel network stacks
// (the plugins send a control message over a kernel TCP socket before each payload; TCPX/TCPXO
// offload the payload's copy into GPU memory, not that path), which a host-to-host one-way time
// measures. No published per-message latency of the plugins themselves was found; the default is
// half the mean round trip of a flood ping between two VMs in one Google Cloud zone, 72 µs
// (tech.zarmory.com, "Quick test for GCP inter-zone networking", 2017: n1-highmem-8 in
// us-central1-a, rtt min/avg 41/72 µs), so 36 µs. Chosen without the A3 Mega nccl-tests curve
// (tests/data/validation), which checks it. AWS EFA (the aws-ofi-nccl plugin over libfabric's efa
// provider): what a hop costs is the plugin's own tuner model of p5 and p5e, 20 µs (aws-ofi-nccl
// src/tuner/nccl_ofi_model.cpp, net_lat, "2 nodes, 8B RDMA w/imm lat" in
// include/tuner/nccl_ofi_tuner_model.h; 18 on p5en). What the plugin reports to NCCL
// (default_reported_latency_s) is another figure. Chosen without the p5 curve, which checks it;
// the model covers no p4d or p4de, whose platforms give their hop as the reported 75 µs
// (simulator/README.md). `calibrate nccl-tests` fits the user's own.
double default_hop_latency_s(NcclTransport transport) {
  switch (transport) {
    case NcclTransport::tcpxo:
    case NcclTransport::tcpx:
    case NcclTransport::socket: return 36e-6;
    case NcclTransport::efa: return 20e-6;
    case NcclTransport::ib:
    case NcclTransport::roce: return 4e-6;
    case NcclTransport::unspecified: return 0;
  }
  return 0;
}

double default_ring_efficiency(NcclTransport transport) {
  return transport == NcclTransport::ib || transport == NcclTransport::roce ? 0.94 : 1.0;
}

// aws-ofi-nccl reports 75 µs to NCCL (getProperties' props->latency, which tuning.cc adds per
// network hop as for every plugin) on p4d, p4de, p5 and p5e and on platforms it does not know
// (src/platform-aws.cpp platform_data_map; 35 µs from p5en on, 150 on p3dn: set
// reported_latency_us): a weight for NCCL's choices, not the hop's cost. Its commit 40110dc
// ("Variable internode latency reported to NCCL", 2023) lowered it from 150, as "a value below
// 75µs ... makes NCCL choose the wrong algorithm for the 2 nodes case"; its fallback's comment:
// "Empirical testing on P5 had shown that NCCL's internal tuner choices work better with this
// value". NCCL's own transports report 0 ("Not set"), as does Google's TCPXO plugin; trainsim's
// tuner is then given the hop latency, so that `auto` picks by what the engine simulates.
std::optional<double> default_reported_latency_s(NcclTransport transport) {
  if (transport == NcclTransport::efa) return 75e-6;
  return std::nullopt;
}

namespace {
template <std::size_t N>
std::vector<std::string> enabled_names(const std::array<bool, N>& enabled, const std::array<const char*, N>& names) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < N; ++i)
    if (enabled[i]) out.emplace_back(names[i]);
  return out;
}
}  // namespace

std::vector<std::string> NcclNetSpec::protocol_names() const {
  return enabled_names(protocols, kNcclProtocolNames);
}

std::vector<std::string> nccl_algorithm_names(const std::array<bool, 6>& enabled) {
  return enabled_names(enabled, kNcclAlgorithmNames);
}

std::vector<std::string> NcclNetSpec::algorithm_names() const {
  return nccl_algorithm_names(algorithms);
}

namespace {

constexpr double kGBps = 1e9;

constexpr std::uint64_t kMaxNodes = 1'000'000;

/// The product of a topology's sizes (each in [1, 1000000]), capped at kMaxNodes + 1: a 64-bit
/// product of many sizes wraps around and could equal `nodes`.
std::uint64_t product(const std::vector<unsigned>& v) {
  std::uint64_t p = 1;
  for (unsigned x : v) p = std::min(p * x, kMaxNodes + 1);
  return p;
}

/// "has N nodes" for a product from product().
std::string count_text(std::uint64_t p) { return p > kMaxNodes ? "more than " + std::to_string(kMaxNodes) : std::to_string(p); }

std::string join(const std::vector<unsigned>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

/// Largest divisor of n that is ≤ limit (at least 1).
unsigned largest_divisor_at_most(unsigned n, unsigned limit) {
  for (unsigned d = std::min(n, std::max(1u, limit)); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

/// Fat-tree shape for n leaves and `levels` levels: near-equal arities, exact product.
std::vector<unsigned> derive_fat_tree(unsigned n, unsigned levels) {
  std::vector<unsigned> down;
  unsigned rem = n;
  for (unsigned i = 0; i + 1 < levels; ++i) {
    const auto target = static_cast<unsigned>(std::ceil(std::pow(double(rem), 1.0 / double(levels - i)) - 1e-9));
    unsigned d = std::max(1u, target);
    while (rem % d != 0) ++d;
    down.push_back(d);
    rem /= d;
  }
  down.push_back(rem);
  return down;
}

/// Torus dimensions for n nodes: up to three near-equal factors, largest first.
std::vector<unsigned> derive_torus(unsigned n) {
  const unsigned a = largest_divisor_at_most(n, static_cast<unsigned>(std::llround(std::cbrt(double(n)))));
  const unsigned rem = n / a;
  const unsigned b = largest_divisor_at_most(rem, static_cast<unsigned>(std::floor(std::sqrt(double(rem)))));
  std::vector<unsigned> dims{a, b, rem / b};
  dims.erase(std::remove(dims.begin(), dims.end(), 1u), dims.end());
  if (dims.empty()) dims.push_back(1);
  std::sort(dims.rbegin(), dims.rend());
  return dims;
}

/// Dragonfly shape for n nodes after Cray Aries: 4 nodes per router, 16 routers per chassis, 6
/// chassis per group, as many groups as needed (smaller where n does not divide).
DragonflyShape derive_dragonfly(unsigned n) {
  DragonflyShape d;
  d.nodes_per_router = largest_divisor_at_most(n, 4);
  unsigned rem = n / d.nodes_per_router;
  d.routers = largest_divisor_at_most(rem, 16);
  rem /= d.routers;
  d.chassis = largest_divisor_at_most(rem, 6);
  d.groups = rem / d.chassis;
  return d;
}

/// A number as the shortest text that reads back the same ("1e-06", "125").
std::string short_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// The bandwidth at `node` (in units of `unit_Bps` bytes per second, named `unit`) in bytes per
/// second, within the physical range (kMinBandwidth_Bps .. kMaxBandwidth_Bps): 1e-300 deadlocks
/// SimGrid, 1e300 GB/s overflows.
double bandwidth_in_range(const JsonNode& node, double unit_Bps, const char* unit) {
  const double v = node.positive_number();
  const double Bps = v * unit_Bps;
  if (!(Bps >= kMinBandwidth_Bps && Bps <= kMaxBandwidth_Bps))
    throw node.error("must be in [" + short_number(kMinBandwidth_Bps / unit_Bps) + ", " + short_number(kMaxBandwidth_Bps / unit_Bps) +
                     "] " + unit + " (1 kbit/s to 1 Pbit/s, the physical range trainsim simulates), got " + node.raw().dump());
  return Bps;
}

/// A latency in microseconds at `node`, in seconds, within [0, kMaxLatency_s].
double latency_in_range(const JsonNode& node) {
  const double us = node.non_negative_number();
  if (us > kMaxLatency_s * 1e6)
    throw node.error("must be in [0, " + short_number(kMaxLatency_s * 1e6) + "] us (at most 10 s, the physical range trainsim simulates), got " +
                     node.raw().dump());
  return us_to_s(us);
}

unsigned read_unsigned(const JsonNode& n, std::int64_t min) {
  const std::int64_t v = n.int_at_least(min);
  if (v > 1'000'000) throw n.error("must be ≤ 1000000, got " + std::to_string(v));
  return static_cast<unsigned>(v);
}

int read_gpus_per_node(const JsonNode& n) {
  const std::int64_t v = n.int_at_least(1);
  if (v > kMaxGpusPerNode)
    throw n.error("must be ≤ " + std::to_string(kMaxGpusPerNode) + ", got " + std::to_string(v) +
                  ": SimGrid routes every pair of a node's GPUs, so time and memory grow with their square "
                  "(4096 GPUs in one node take 28 s and 1.9 GB to build)");
  return static_cast<int>(v);
}

std::string too_many_gpus(std::int64_t nodes, std::int64_t gpus_per_node) {
  return "nodes × gpus_per_node = " + std::to_string(nodes * gpus_per_node) + " GPUs, more than the " + std::to_string(kMaxGpus) +
         " trainsim simulates: SimGrid 3.32 builds larger platforms too slowly (simulator/README.md, Troubleshooting and limits)";
}

NetworkModel read_model(const JsonNode& node, NetworkFactors& factors) {
  if (node.is_string()) return kStringModels.read(node);
  if (!node.is_object())
    throw node.error("expected \"ideal\", \"tcp\" or an object of factors, got " + describe_json(node.raw()));
  node.allow_only({"latency_factor", "bandwidth_factor", "tcp_gamma_bytes", "crosstraffic"});
  // SimGrid takes the factors as text printed with 6 decimals (simgrid_builder.cpp), so 1e-7 would
  // become 0; and a factor of 1e300 makes every latency 1e294 s. LV08's own factor is 13.01.
  if (auto f = node.find("latency_factor")) {
    factors.latency_factor = f->positive_number();
    if (factors.latency_factor < 1e-3 || factors.latency_factor > 1e3)
      throw f->error("must be in [0.001, 1000] (LV08 uses 13.01), got " + f->raw().dump());
  }
  if (auto f = node.find("bandwidth_factor")) {
    factors.bandwidth_factor = f->positive_number();
    if (factors.bandwidth_factor > 1) throw f->error("must be in (0, 1], got " + f->raw().dump());
  }
  if (auto f = node.find("tcp_gamma_bytes")) {
    // The TCP window caps a flow at window / (2 latency): a window of 1e-300 bytes is a rate SimGrid
    // rounds to 0 (deadlock). 0 turns the cap off.
    factors.tcp_gamma_bytes = f->non_negative_number();
    if (factors.tcp_gamma_bytes != 0 && (factors.tcp_gamma_bytes < 1024 || factors.tcp_gamma_bytes > 1e12))
      throw f->error("must be 0 (no window) or in [1024, 1e12] bytes (SimGrid's default is 4194304), got " + f->raw().dump());
  }
  if (auto f = node.find("crosstraffic")) factors.crosstraffic = f->as_bool();
  return NetworkModel::factors;
}

void read_intra_node(const JsonNode& node, PlatformSpec& spec) {
  node.require_object();
  node.allow_only({"kind", "bandwidth_GBps", "latency_us", "efficiency", "pcie_bandwidth_GBps", "pcie_switches"});
  IntraNodeSpec& in = spec.intra_node;
  const JsonNode kind = node.at("kind");
  in.kind = kIntraNodeKinds.read(kind);
  const JsonNode bandwidth = node.at("bandwidth_GBps");
  in.bandwidth_Bps = bandwidth_in_range(bandwidth, kGBps, "GB/s");
  in.latency_s = latency_in_range(node.at("latency_us"));
  if (auto e = node.find("efficiency")) {
    in.efficiency = e->positive_number();
    if (in.efficiency > 1) throw e->error("must be in (0, 1], got " + e->raw().dump());
  }
  if (in.kind == IntraNodeKind::pcie) {
    if (auto p = node.find("pcie_bandwidth_GBps"))
      throw p->error("not used with kind \"pcie\": bandwidth_GBps is the PCIe link bandwidth");
    in.pcie_bandwidth_Bps = in.bandwidth_Bps;
  } else {
    const JsonNode pcie = node.at("pcie_bandwidth_GBps");
    in.pcie_bandwidth_Bps = bandwidth_in_range(pcie, kGBps, "GB/s");
  }
  if (auto s = node.find("pcie_switches")) {
    in.pcie_switches = s->int_in(0, kMaxGpusPerNode);
    if (in.pcie_switches > spec.gpus_per_node)
      throw s->error("must be ≤ gpus_per_node (" + std::to_string(spec.gpus_per_node) + "), got " +
                     std::to_string(in.pcie_switches));
  }
  if (in.kind == IntraNodeKind::nvlink && spec.gpus_per_node > 8)
    throw kind.error("the NVLink hybrid cube-mesh connects at most 8 GPUs, but gpus_per_node is " +
                     std::to_string(spec.gpus_per_node) + " (use \"nvswitch\" or \"pcie\")");
}

/// `fat_tree.down`: one down count per level, as many as `levels` when that is given
/// (`levels_given`), whose product is the node count `n`.
void read_fat_tree_down(const JsonNode& d, bool levels_given, unsigned levels, unsigned n,
                        std::vector<unsigned>& down) {
  d.require_array();
  if (d.size() == 0) throw d.error("must list at least one level");
  down.clear();
  for (const auto& e : d.elements()) down.push_back(read_unsigned(e, 1));
  if (levels_given && levels != down.size())
    throw d.error("has " + std::to_string(down.size()) + " entries but levels is " + std::to_string(levels));
  if (product(down) != n)
    throw d.error("a fat tree with down [" + join(down, ", ") + "] has " + count_text(product(down)) +
                  " leaves, but nodes is " + std::to_string(n));
}

/// `network.fat_tree` (optional): the levels' down counts, given or derived for `n` leaves (two
/// levels unless `levels` says otherwise), and the oversubscription of the first level.
void read_fat_tree(const JsonNode& network, unsigned n, FatTreeShape& fat_tree) {
  unsigned levels = 2;
  if (auto ft = network.find("fat_tree")) {
    ft->require_object();
    ft->allow_only({"levels", "down", "oversubscription"});
    if (auto l = ft->find("levels")) levels = read_unsigned(*l, 1);
    if (auto o = ft->find("oversubscription")) fat_tree.oversubscription = read_unsigned(*o, 1);
    if (auto d = ft->find("down")) read_fat_tree_down(*d, ft->has("levels"), levels, n, fat_tree.down);
    if (fat_tree.down.empty()) fat_tree.down = derive_fat_tree(n, levels);
    if (fat_tree.down.size() >= 2 && fat_tree.down[0] % fat_tree.oversubscription != 0)
      throw ft->error("oversubscription " + std::to_string(fat_tree.oversubscription) +
                      " must divide the first level's down count " + std::to_string(fat_tree.down[0]));
  }
  if (fat_tree.down.empty()) fat_tree.down = derive_fat_tree(n, levels);
}

/// `network.torus` (optional): the dimensions, given (their product must be `n`) or derived.
void read_torus(const JsonNode& network, unsigned n, std::vector<unsigned>& dimensions) {
  auto t = network.find("torus");
  if (!t) {
    dimensions = derive_torus(n);
    return;
  }
  t->require_object();
  t->allow_only({"dimensions"});
  const JsonNode d = t->at("dimensions");
  d.require_array();
  if (d.size() == 0) throw d.error("must list at least one dimension");
  for (const auto& e : d.elements()) dimensions.push_back(read_unsigned(e, 1));
  if (product(dimensions) != n)
    throw d.error("a " + join(dimensions, "x") + " torus has " + count_text(product(dimensions)) +
                  " nodes, but nodes is " + std::to_string(n));
}

/// `network.dragonfly` (optional): the shape, given (its product must be `n`) or derived.
void read_dragonfly(const JsonNode& network, unsigned n, DragonflyShape& s) {
  auto df = network.find("dragonfly");
  if (!df) {
    s = derive_dragonfly(n);
    return;
  }
  df->require_object();
  df->allow_only({"groups", "group_links", "chassis", "chassis_links", "routers", "router_links", "nodes_per_router"});
  s.groups = read_unsigned(df->at("groups"), 1);
  s.chassis = read_unsigned(df->at("chassis"), 1);
  s.routers = read_unsigned(df->at("routers"), 1);
  s.nodes_per_router = read_unsigned(df->at("nodes_per_router"), 1);
  if (auto l = df->find("group_links")) s.group_links = read_unsigned(*l, 1);
  if (auto l = df->find("chassis_links")) s.chassis_links = read_unsigned(*l, 1);
  if (auto l = df->find("router_links")) s.router_links = read_unsigned(*l, 1);
  const std::uint64_t total = product({s.groups, s.chassis, s.routers, s.nodes_per_router});
  if (total != n)
    throw df->error("groups x chassis x routers x nodes_per_router = " + count_text(total) + ", but nodes is " +
                    std::to_string(n));
}

/// The topology's shape: only the object of the chosen topology may appear, and it is read (or the
/// shape derived from the node count) by that topology's reader.
void read_topology_shape(const JsonNode& network, PlatformSpec& spec) {
  NetworkSpec& net = spec.network;
  const auto n = static_cast<unsigned>(spec.nodes);
  const std::string topo = to_string(net.topology);
  for (const char* key : {"fat_tree", "torus", "dragonfly"})
    if (auto sub = network.find(key); sub && topo != key)
      throw sub->error(std::string("only allowed with topology \"") + key + "\", but topology is \"" + topo + "\"");
  switch (net.topology) {
    case TopologyKind::fat_tree: read_fat_tree(network, n, net.fat_tree); break;
    case TopologyKind::torus: read_torus(network, n, net.torus_dimensions); break;
    case TopologyKind::dragonfly: read_dragonfly(network, n, net.dragonfly); break;
    case TopologyKind::single_switch: break;
  }
}

// A list of NCCL's names (NCCL_PROTO's or NCCL_ALGO's), each once and at least one: which are on.
template <std::size_t N>
void read_enabled(const JsonNode& list, const std::array<const char*, N>& names, std::array<bool, N>& enabled) {
  list.require_array();
  if (list.size() == 0) {
    std::string all;
    for (const char* n : names) all += (all.empty() ? "" : ", ") + std::string(n);
    throw list.error("must name at least one of " + all);
  }
  enabled.fill(false);
  for (const auto& e : list.elements()) {
    const std::string name = e.one_of({names.begin(), names.end()});
    const auto i = static_cast<std::size_t>(
        std::find_if(names.begin(), names.end(), [&](const char* n) { return name == n; }) - names.begin());
    if (enabled[i]) throw e.error("names " + name + " twice");
    enabled[i] = true;
  }
}

// `network.nccl`: NCCL's transport costs (NcclNetSpec). Bounded by what any transport measures:
// a hop up to 10 ms, a proxy step up to 1 ms. `protocols` as NCCL_PROTO names them, `algorithms`
// as NCCL_ALGO does, each once.
// `cpu_vendor` as NCCL's topology detection reports the hosts' CPUs (intel, the default, or amd).
// `transport` names the transport (kNcclTransports); its default hop and reported latencies and
// ring efficiency apply where `hop_latency_us`, `reported_latency_us` and `ring_efficiency` (a
// share of the line rate from kMinLineRateShare to 1) are absent. `tuner` holds a tuner plugin's
// table, one CSV row of NCCL's example plugin a string (nccl_tuner_table.hpp). `buffsize_bytes` is
// NCCL_BUFFSIZE, a whole number of bytes from 64 KiB (eight 8 KiB steps) to 1 GiB.
void read_nccl_net(const JsonNode& node, NcclNetSpec& nccl) {
  node.require_object();
  node.allow_only({"transport", "hop_latency_us", "reported_latency_us", "proxy_step_us", "ring_efficiency",
                   "calibrated_from", "protocols", "algorithms", "cpu_vendor", "tuner", "buffsize_bytes"});
  if (auto t = node.find("transport")) {
    nccl.transport = kNcclTransports.read(*t);
    nccl.hop_latency_s = default_hop_latency_s(nccl.transport);
    nccl.reported_latency_s = default_reported_latency_s(nccl.transport);
    nccl.ring_efficiency = default_ring_efficiency(nccl.transport);
  }
  if (auto h = node.find("hop_latency_us")) nccl.hop_latency_s = h->number_in(0, 1e4) * 1e-6;
  if (auto r = node.find("reported_latency_us")) nccl.reported_latency_s = r->number_in(0, 1e4) * 1e-6;
  if (auto p = node.find("proxy_step_us")) nccl.proxy_step_s = p->number_in(0, 1e3) * 1e-6;
  if (auto e = node.find("ring_efficiency")) nccl.ring_efficiency = e->number_in(kMinLineRateShare, 1);
  if (auto c = node.find("calibrated_from")) nccl.calibrated_from = c->as_string();
  if (auto v = node.find("cpu_vendor")) nccl.amd_cpu = v->one_of({"intel", "amd"}) == "amd";
  if (auto list = node.find("protocols")) read_enabled(*list, kNcclProtocolNames, nccl.protocols);
  if (auto list = node.find("algorithms")) read_enabled(*list, kNcclAlgorithmNames, nccl.algorithms);
  if (auto b = node.find("buffsize_bytes")) {
    const double bytes = b->as_number();
    if (!(bytes >= 65536 && bytes <= 1073741824) || bytes != std::floor(bytes))
      throw b->error("expected a whole number of bytes from 65536 (64 KiB) to 1073741824 (1 GiB), got " +
                     b->raw().dump());
    nccl.buffsize_bytes = bytes;
  }
  if (auto table = node.find("tuner")) {
    table->require_array();
    if (table->size() > kMaxNcclTunerRows)
      throw table->error("at most " + std::to_string(kMaxNcclTunerRows) + " rows, got " +
                         std::to_string(table->size()));
    nccl.tuner.clear();
    for (const JsonNode& row : table->elements()) nccl.tuner.push_back(read_nccl_tuner_row(row));
  }
}

void read_network(const JsonNode& node, PlatformSpec& spec) {
  node.require_object();
  node.allow_only({"topology", "bandwidth_Gbps", "latency_us", "nics_per_node", "nic_attach", "sharp", "model",
                   "fat_tree", "torus", "dragonfly", "nccl"});
  NetworkSpec& net = spec.network;
  net.topology = kTopologies.read(node.at("topology"));
  const JsonNode bandwidth = node.at("bandwidth_Gbps");
  net.bandwidth_Bps = bandwidth_in_range(bandwidth, gbps_to_bytes_per_s(1), "Gbit/s");
  net.latency_s = latency_in_range(node.at("latency_us"));
  if (auto n = node.find("nics_per_node")) {
    net.nics_per_node = static_cast<int>(read_unsigned(*n, 1));
    // More NICs than GPUs act as one port per GPU (the GPU's NICs together, as NCCL's net plugins
    // stripe a GPU's traffic over them): whole groups only.
    if (net.nics_per_node > spec.gpus_per_node && net.nics_per_node % spec.gpus_per_node != 0)
      throw n->error("more NICs than GPUs per node must be a multiple of the " + std::to_string(spec.gpus_per_node) +
                     " GPUs (each GPU's NICs act as one port), got " + std::to_string(net.nics_per_node));
  }
  if (auto a = node.find("nic_attach")) net.nics_on_gpus = kNicAttach.read(*a);
  if (auto s = node.find("sharp")) net.sharp = s->as_bool();
  if (auto m = node.find("model")) net.model = read_model(*m, net.factors);
  if (auto c = node.find("nccl")) read_nccl_net(*c, net.nccl);
  read_topology_shape(node, spec);
}

/// `check_tiling`: whether the board size was given here (a full description or an override), not
/// inherited from a preset whose node the user made smaller. An inherited board of 2 on a 1- or
/// 3-GPU node keeps its documented meaning (the job's GPUs on each board share it); a board size the
/// user gives must tile the node, because a board that straddles two nodes does not exist.
void read_gpu_board(const JsonNode& node, int gpus_per_node, bool check_tiling, GpuBoardSpec& board) {
  node.require_object();
  node.allow_only({"gpus", "shared_speed"});
  if (auto g = node.find("gpus")) {
    board.gpus = static_cast<int>(read_unsigned(*g, 1));
    if (check_tiling && gpus_per_node % board.gpus != 0) {
      std::string divisors;
      for (int d = 1; d <= gpus_per_node; ++d)
        if (gpus_per_node % d == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(d);
      throw g->error("boards of " + std::to_string(board.gpus) + " GPUs do not tile a node of " + std::to_string(gpus_per_node) +
                     " GPUs: gpus must divide gpus_per_node (one of " + divisors + ")");
    }
  }
  if (auto s = node.find("shared_speed")) {
    board.shared_speed = s->positive_number();
    if (board.shared_speed < kMinSpeedFactor || board.shared_speed > 1)
      throw s->error("must be in [1e-06, 1] (the speed with busy board siblings relative to alone), got " + s->raw().dump());
    // A shared speed on one-GPU boards would change nothing; saying nothing would let the user
    // believe it was modelled (every other option that does not apply is an error too).
    if (board.gpus == 1 && board.shared_speed != 1)
      throw s->error("has no effect: boards hold 1 GPU, so no GPU shares its board; set gpu_board.gpus too (e.g. "
                     "{\"gpus\": 2, \"shared_speed\": " + s->raw().dump() + "})");
  }
}

const std::vector<std::string>& platform_keys() {
  static const std::vector<std::string> keys = {"preset", "file", "name", "description", "source", "gpu", "cpu",
                                                "nodes", "gpus_per_node", "intra_node", "gpu_board", "network",
                                                "price_per_gpu_hour"};
  return keys;
}

/// Reads a complete description (no preset, no file). `board_given`: see read_gpu_board.
PlatformSpec read_full(const JsonNode& node, bool board_given = true) {
  PlatformSpec spec;
  spec.name = "custom";
  if (auto n = node.find("name")) spec.name = n->as_string();
  if (auto s = node.find("source")) spec.source = s->as_string();
  if (auto d = node.find("description")) (void)d->as_string();
  spec.gpu = read_gpu(node.at("gpu"));
  spec.cpu = cpu_host();
  if (auto c = node.find("cpu")) spec.cpu = gpu_by_name(c->as_string(), c->source(), c->pointer());
  spec.nodes = static_cast<int>(read_unsigned(node.at("nodes"), 1));
  spec.gpus_per_node = read_gpus_per_node(node.at("gpus_per_node"));
  if (std::int64_t(spec.nodes) * spec.gpus_per_node > kMaxGpus)
    throw node.at("nodes").error(too_many_gpus(spec.nodes, spec.gpus_per_node));
  read_intra_node(node.at("intra_node"), spec);
  if (auto b = node.find("gpu_board")) read_gpu_board(*b, spec.gpus_per_node, board_given, spec.gpu_board);
  read_network(node.at("network"), spec);
  if (auto p = node.find("price_per_gpu_hour")) spec.price_per_gpu_hour = p->non_negative_number();
  return spec;
}

std::filesystem::path resolve_relative(const std::string& file, const std::string& referencing_source) {
  std::filesystem::path p(file);
  if (p.is_absolute()) return p;
  const std::filesystem::path ref(referencing_source);
  std::error_code ec;
  if (ref.has_parent_path() && std::filesystem::is_regular_file(ref, ec)) return ref.parent_path() / p;
  return p;
}

bool has_xml_extension(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".xml";
}

void apply_xml_overrides(PlatformSpec& spec, const JsonNode& o);

/// A spec for a SimGrid XML platform: hosts come from the file; `overrides` may name the GPU model
/// (for memory and per-precision figures) and how hosts group into nodes.
PlatformSpec xml_platform(const std::filesystem::path& path, const std::optional<JsonNode>& overrides) {
  detail::check_simgrid_xml(path);
  PlatformSpec spec;
  spec.name = path.filename().string();
  spec.source = path.string();
  spec.simgrid_xml = path.string();
  spec.gpu = gpu_by_name("V100-SXM2-16GB");
  spec.gpu.source = "SimGrid XML host speeds; memory figures of V100-SXM2-16GB";
  spec.cpu = cpu_host();
  spec.intra_node.bandwidth_Bps = spec.intra_node.pcie_bandwidth_Bps = 15.75e9;
  spec.network.bandwidth_Bps = 1.25e9;
  if (overrides) apply_xml_overrides(spec, *overrides);
  spec.nodes = 0;  // taken from the XML's hosts when the platform is built
  return spec;
}

}  // namespace

int simgrid_xml_nodes(const PlatformSpec& spec) {
  TRAINSIM_CHECK(spec.simgrid_xml.has_value(), "simgrid_xml_nodes needs a SimGrid XML platform");
  const std::string& file = *spec.simgrid_xml;
  const std::uint64_t hosts = detail::check_simgrid_xml(file);
  // The same refusals, in the same words, as building the platform (simgrid_builder.cpp load_xml).
  if (hosts == 0) throw InputError(file, "", "the platform defines no host");
  if (hosts % static_cast<std::uint64_t>(spec.gpus_per_node) != 0)
    throw InputError(file, "",
                     "has " + std::to_string(hosts) + " hosts, not a multiple of gpus_per_node " +
                         std::to_string(spec.gpus_per_node));
  return static_cast<int>(hosts / static_cast<std::uint64_t>(spec.gpus_per_node));
}

namespace {

/// What a JSON platform may say beside a SimGrid XML file (`xml_platform`), applied to `spec`.
void apply_xml_overrides(PlatformSpec& spec, const JsonNode& o) {
  {
    for (const auto& [key, value] : o.members())
      if (key != "file" && key != "gpu" && key != "gpus_per_node" && key != "name" && key != "network" &&
          key != "price_per_gpu_hour" && key != "description")
        throw value.error("not allowed beside a SimGrid XML file (the XML describes the platform)");
    if (auto n = o.find("name")) spec.name = n->as_string();
    if (auto g = o.find("gpu")) spec.gpu = read_gpu(*g);
    if (auto g = o.find("gpus_per_node")) spec.gpus_per_node = read_gpus_per_node(*g);
    if (auto p = o.find("price_per_gpu_hour")) spec.price_per_gpu_hour = p->non_negative_number();
    if (auto net = o.find("network")) {
      net->require_object();
      net->allow_only({"model"});
      if (auto m = net->find("model")) spec.network.model = read_model(*m, spec.network.factors);
    }
  }
}

PlatformSpec read_with_base(const JsonNode& node, const Json& base, const std::string& name) {
  Json merged = base;
  Json overrides = node.raw();
  overrides.erase("preset");
  overrides.erase("file");
  // A shape given by the base belongs to its node count; a new node count without a new shape
  // re-derives it.
  if (overrides.contains("nodes") && merged.contains("network")) {
    for (const char* key : {"fat_tree", "torus", "dragonfly"}) {
      const bool overridden = overrides.contains("network") && overrides["network"].is_object() &&
                              overrides["network"].contains(key);
      if (!overridden) merged["network"].erase(key);
    }
  }
  // Fewer (or more) GPUs than the base keep its GPUs per PCIe switch unless switches are given.
  if (overrides.contains("gpus_per_node") && overrides["gpus_per_node"].is_number_integer() &&
      !(overrides.contains("intra_node") && overrides["intra_node"].is_object() &&
        overrides["intra_node"].contains("pcie_switches")) &&
      merged.contains("intra_node") && merged["intra_node"].contains("pcie_switches")) {
    const double base_g = merged["gpus_per_node"].get<double>();
    const double base_s = merged["intra_node"]["pcie_switches"].get<double>();
    const auto g = overrides["gpus_per_node"].get<std::int64_t>();
    if (base_s > 0 && g >= 1)
      merged["intra_node"]["pcie_switches"] =
          std::clamp<std::int64_t>(std::llround(double(g) * base_s / base_g), 1, g);
  }
  // A new intra-node kind makes the base's fabric figures meaningless (an NVLink link is not a PCIe
  // link). Going to PCIe keeps the base's PCIe link and takes NCCL's PCIe figures (presets.cpp:
  // 5.7 us per step, 12 of 15.75 GB/s); going to NVLink or NVSwitch needs the new bandwidth from
  // the user, and the base's PCIe link stays the PCIe link. Figures the user gives always win.
  if (overrides.contains("intra_node") && overrides["intra_node"].is_object() && overrides["intra_node"].contains("kind") &&
      overrides["intra_node"]["kind"].is_string() && merged.contains("intra_node") && merged["intra_node"].is_object() &&
      merged["intra_node"].contains("kind") && merged["intra_node"]["kind"] != overrides["intra_node"]["kind"]) {
    Json& in = merged["intra_node"];
    const bool from_pcie = in["kind"] == "pcie";
    const bool to_pcie = overrides["intra_node"]["kind"] == "pcie";
    const Json pcie_link = from_pcie ? in.value("bandwidth_GBps", Json()) : in.value("pcie_bandwidth_GBps", Json());
    // NVLink <-> NVSwitch stays on the same NVLink links: NCCL's per-step latency and efficiency
    // (presets.cpp) carry over; only the bandwidth's meaning changes (per link vs per GPU).
    const bool nvlink_family = !from_pcie && !to_pcie;
    const Json base_bandwidth = in.value("bandwidth_GBps", Json());
    const std::string base_kind = in["kind"].get<std::string>();
    for (const char* key : {"bandwidth_GBps", "latency_us", "efficiency", "pcie_bandwidth_GBps"})
      if (!nvlink_family || std::string(key) == "bandwidth_GBps") in.erase(key);
    if (!to_pcie && !overrides["intra_node"].contains("bandwidth_GBps")) {
      const std::string to_kind = overrides["intra_node"]["kind"].get<std::string>();
      const bool to_nvlink = to_kind == "nvlink";
      throw node.at("intra_node").error(
          "kind \"" + to_kind + "\" replaces " + name + "'s " + base_kind + " fabric, whose bandwidth_GBps (" +
          (base_bandwidth.is_null() ? std::string("?") : base_bandwidth.dump()) + ", " +
          (base_kind == "nvswitch" ? "per GPU into the switch" : base_kind == "nvlink" ? "per NVLink link" : "the PCIe link") +
          ") means something else there: give intra_node.bandwidth_GBps too, " +
          (to_nvlink ? "GB/s per NVLink link (20 on P100, 25 on V100 and A100)"
                     : "GB/s per GPU into the switch (150 on DGX-2, 300 on A100, 450 on H100)") +
          (nvlink_family ? "; latency_us and efficiency stay " + name + "'s" : ""));
    }
    if (to_pcie) {
      if (!pcie_link.is_null()) in["bandwidth_GBps"] = pcie_link;
      in["latency_us"] = 5.7;
      in["efficiency"] = 12.0 / 15.75;
    } else if (!pcie_link.is_null()) {
      in["pcie_bandwidth_GBps"] = pcie_link;
    }
  }
  const bool board_given = overrides.contains("gpu_board") && overrides["gpu_board"].is_object() && overrides["gpu_board"].contains("gpus");
  // Boards of one GPU share nothing: the base's shared speed goes with its board size.
  if (board_given && overrides["gpu_board"]["gpus"] == 1 && !overrides["gpu_board"].contains("shared_speed") &&
      merged.contains("gpu_board") && merged["gpu_board"].is_object())
    merged["gpu_board"].erase("shared_speed");
  merged.merge_patch(overrides);
  merged["name"] = overrides.contains("name") ? overrides["name"] : Json(name);
  auto doc = std::make_shared<const Json>(std::move(merged));
  const JsonNode merged_node(doc, doc.get(), std::make_shared<const std::string>(node.source()), node.pointer());
  return read_full(merged_node, board_given);
}

}  // namespace

std::vector<double> board_speeds(const PlatformSpec& spec, int gpus_per_node) {
  std::vector<double> speeds(static_cast<std::size_t>(std::max(gpus_per_node, 0)), 1.0);
  const int per_board = std::max(spec.gpu_board.gpus, 1);
  for (int local = 0; local < gpus_per_node; ++local) {
    const int first = local / per_board * per_board;
    const int on_board = std::min(first + per_board, gpus_per_node) - first;  // the job's GPUs on this board
    if (on_board > 1) speeds[static_cast<std::size_t>(local)] = spec.gpu_board.shared_speed;
  }
  return speeds;
}

PlatformSpec with_nodes(const PlatformSpec& spec, int nodes, const std::string& source, int server_nodes) {
  if (nodes < 1) throw InputError(source, "/nodes", "must be ≥ 1, got " + std::to_string(nodes));
  if (std::int64_t(nodes - server_nodes) * spec.gpus_per_node + server_nodes > kMaxGpus)
    throw InputError(source, "/nodes", too_many_gpus(nodes - server_nodes, spec.gpus_per_node));
  PlatformSpec out = spec;
  out.nodes = nodes;
  const auto n = static_cast<unsigned>(nodes);
  NetworkSpec& net = out.network;
  switch (net.topology) {
    case TopologyKind::fat_tree: {
      const auto levels = static_cast<unsigned>(std::max<std::size_t>(1, net.fat_tree.down.size()));
      net.fat_tree.down = derive_fat_tree(n, levels);
      if (net.fat_tree.down.size() >= 2 && net.fat_tree.down[0] % net.fat_tree.oversubscription != 0)
        throw InputError(source, "/network/fat_tree",
                         "oversubscription " + std::to_string(net.fat_tree.oversubscription) +
                             " must divide the first level's down count " + std::to_string(net.fat_tree.down[0]));
      break;
    }
    case TopologyKind::torus: net.torus_dimensions = derive_torus(n); break;
    case TopologyKind::dragonfly: net.dragonfly = derive_dragonfly(n); break;
    case TopologyKind::single_switch: break;
  }
  return out;
}

PlatformSpec preset_by_name(const std::string& name, const std::string& source, const std::string& location) {
  if (cpu_preset_or_null(name))
    throw InputError(source, location,
                     "'" + name + "' is a CPU preset, and a GPU platform is expected here (a CPU preset goes in a scenario's "
                     "platform.preset; simulator/README.md: CPU training)");
  // Presets are read once per process and copied out as data.
  static std::map<std::string, PlatformSpec, std::less<>> read;
  if (const auto it = read.find(name); it != read.end()) return it->second;
  for (const auto& p : detail::preset_texts()) {
    if (p.name != name) continue;
    PlatformSpec spec = read_full(parse_json_text(p.json, "preset " + p.name));
    spec.name = p.name;
    return read.emplace(name, std::move(spec)).first->second;
  }
  throw InputError(source, location, unknown_name_message("platform preset", name, all_preset_names()));
}

namespace {

/// SHARP is an InfiniBand switch feature (Quantum/Quantum-2): a preset whose network is Ethernet
/// (or another fabric) cannot have it. `base` is the preset (or the platform a file builds on);
/// a platform described in full names no fabric, so its `sharp` stands.
void check_sharp_fabric(const JsonNode& node, const std::string& base) {
  const auto net = node.find("network");
  if (!net || !net->is_object()) return;
  const auto sharp = net->find("sharp");
  if (!sharp || !sharp->is_bool() || !sharp->as_bool()) return;
  for (const auto& p : detail::preset_texts()) {
    if (p.name != base) continue;
    const std::string description = p.description;
    if (description.find("InfiniBand") != std::string::npos) return;
    throw sharp->error("SHARP (in-network reduction) runs on InfiniBand switches only, and preset " + base +
                       " has no InfiniBand (" + description +
                       "); use an InfiniBand preset such as cluster-ib-hdr or dgx-a100, or leave 'sharp' out");
  }
}

}  // namespace

PlatformSpec read_platform_spec(const JsonNode& node) {
  node.require_object();
  // `device` only marks CPU platforms (is_cpu_platform); any other value is the mistake, not the key.
  if (auto d = node.find("device")) {
    if (d->raw() == "cpu")
      throw d->error("a CPU platform cannot be used here: this reads GPU platforms (a CPU platform goes in a scenario's "
                     "\"platform\", simulator/README.md: CPU training)");
    throw d->error("unknown device " + d->raw().dump() + ": \"cpu\" makes a CPU platform (with 'cpu' and 'sockets', or a cpu-* "
                   "preset); a GPU platform has no 'device' key (it names a preset, a file or a 'gpu')");
  }
  node.allow_only(platform_keys());
  const auto preset = node.find("preset");
  const auto file = node.find("file");
  if (preset && file) throw file->error("give either 'preset' or 'file', not both");
  if (preset) {
    const PlatformSpec base = preset_by_name(preset->as_string(), preset->source(), preset->pointer());
    check_sharp_fabric(node, base.name);
    Json base_json = to_json(base);
    return read_with_base(node, base_json, base.name);
  }
  if (file) {
    const std::filesystem::path path = resolve_relative(file->as_string(), node.source());
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw file->error("cannot open platform file '" + path.string() + "'");
    if (has_xml_extension(path)) return xml_platform(path, node);
    const JsonNode file_node = read_json_file(path);
    const PlatformSpec base = read_platform_spec(file_node);
    if (base.simgrid_xml) {
      // A JSON file wrapping an XML: what this node adds applies as beside the XML itself (the
      // network model, GPU, grouping), and the rest is refused there, never silently dropped.
      PlatformSpec spec = base;
      apply_xml_overrides(spec, node);
      return spec;
    }
    std::string name = base.name == "custom" ? path.filename().string() : base.name;
    check_sharp_fabric(node, base.name);
    return read_with_base(node, to_json(base), name);
  }
  return read_full(node);
}

PlatformSpec load_platform(const std::string& preset_or_file, const std::string& argument) {
  for (const auto& p : detail::preset_texts())
    if (p.name == preset_or_file) return preset_by_name(p.name);
  if (cpu_preset_or_null(preset_or_file))
    throw InputError("command line", argument,
                     "'" + preset_or_file + "' is a CPU preset: this command simulates GPU platforms (CPU presets go in a "
                     "scenario's platform.preset; `trainsim platform info " + preset_or_file + "` describes it)");
  const std::filesystem::path path(preset_or_file);
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    if (has_xml_extension(path)) return xml_platform(path, std::nullopt);
    PlatformSpec spec = read_platform_spec(read_json_file(path));
    if (spec.name == "custom") spec.name = path.filename().string();
    return spec;
  }
  const bool looks_like_file = preset_or_file.find('/') != std::string::npos ||
                               path.extension() == ".json" || has_xml_extension(path);
  if (looks_like_file) throw InputError(preset_or_file, "", "cannot open platform file");
  throw InputError("command line", argument, unknown_name_message("platform preset", preset_or_file, all_preset_names()));
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : detail::preset_texts()) names.push_back(p.name);
  return names;
}

std::vector<std::string> all_preset_names() {
  std::vector<std::string> names = preset_names();
  for (const auto& p : cpu_presets()) names.push_back(p.name);
  return names;
}

std::vector<PresetInfo> preset_catalog() {
  std::vector<PresetInfo> out;
  for (const auto& p : detail::preset_texts()) {
    const PlatformSpec spec = preset_by_name(p.name);
    out.push_back(PresetInfo{p.name, p.description, spec.source, spec.price_per_gpu_hour});
  }
  return out;
}

int nvlink_links_between(int a, int b, bool doubled_links) {
  // DGX-1 hybrid cube-mesh as `nvidia-smi topo -m` shows it on a DGX-1V (NV1/NV2 = 1 or 2 links):
  // two fully connected quads {0,1,2,3} and {4,5,6,7} plus the links i <-> i+4. On P100 every
  // connected pair has a single link (4 links per GPU); on V100 six links per GPU double some pairs.
  static const int v100[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
                                 {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                                 {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
  if (a < 0 || b < 0 || a >= 8 || b >= 8 || a == b) return 0;
  const int links = v100[a][b];
  return doubled_links ? links : std::min(links, 1);
}

namespace {
/// `order` without the GPUs a node of g GPUs does not have (the first g GPUs of a cube-mesh).
std::vector<int> first_gpus(std::vector<int> order, int g) {
  order.erase(std::remove_if(order.begin(), order.end(), [g](int i) { return i >= g; }), order.end());
  return order;
}
}  // namespace

std::vector<int> ring_order_within_node(const PlatformSpec& spec) {
  if (spec.intra_node.kind == IntraNodeKind::nvlink) return first_gpus({0, 1, 5, 4, 7, 6, 2, 3}, spec.gpus_per_node);
  std::vector<int> order(static_cast<std::size_t>(std::max(spec.gpus_per_node, 1)));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  return order;
}

double NcclNetSpec::simple_step_bytes() const {
  constexpr double kDefaultBuffsize = 4.0 * 1024 * 1024;  // init.cc DEFAULT_BUFFSIZE
  constexpr double kNcclSteps = 8;                        // device.h NCCL_STEPS
  return std::floor((buffsize_bytes > 0 ? buffsize_bytes : kDefaultBuffsize) / kNcclSteps);
}

int network_ports(const PlatformSpec& spec) {
  return std::clamp(spec.network.nics_per_node, 1, std::max(1, spec.gpus_per_node));
}

std::vector<std::vector<int>> ring_channels_within_node(const PlatformSpec& spec) {
  if (spec.intra_node.kind == IntraNodeKind::nvlink && spec.gpus_per_node > 2) {
    const std::vector<int> a = first_gpus({0, 1, 5, 4, 7, 6, 2, 3}, spec.gpus_per_node);
    const std::vector<int> c = first_gpus({0, 2, 1, 3, 7, 5, 6, 4}, spec.gpus_per_node);
    std::vector<int> ra(a.rbegin(), a.rend()), rc(c.rbegin(), c.rend());
    return {a, ra, c, rc};
  }
  return {ring_order_within_node(spec)};
}

NetworkSummary summarize_network(const PlatformSpec& spec) {
  NetworkSummary s;
  const NetworkSpec& net = spec.network;
  s.node_injection_Bps = net.nics_per_node * net.bandwidth_Bps;
  const double half = std::floor(spec.nodes / 2.0);
  const double full = half * s.node_injection_Bps;
  if (spec.nodes > 1) {
    switch (net.topology) {
      case TopologyKind::single_switch: s.bisection_Bps = full; break;
      case TopologyKind::fat_tree: {
        const double o = net.fat_tree.down.size() >= 2 ? net.fat_tree.oversubscription : 1.0;
        s.bisection_Bps = full / o;
        break;
      }
      case TopologyKind::torus: {
        // Cut across the largest dimension k: 2·N/k links cross it (one when k = 2, no wrap-around).
        const unsigned k = *std::max_element(net.torus_dimensions.begin(), net.torus_dimensions.end());
        const double links = (k > 2 ? 2.0 : 1.0) * spec.nodes / k;
        s.bisection_Bps = std::min(full, links * s.node_injection_Bps);
        break;
      }
      case TopologyKind::dragonfly: {
        const DragonflyShape& d = net.dragonfly;
        auto cut = [](unsigned count) { return std::floor(count / 2.0) * std::ceil(count / 2.0); };
        double links = 0;
        if (d.groups > 1) links = cut(d.groups) * d.group_links;
        else if (d.chassis > 1) links = cut(d.chassis) * d.routers * d.chassis_links;
        else if (d.routers > 1) links = cut(d.routers) * d.router_links;
        else links = half;
        s.bisection_Bps = std::min(full, links * s.node_injection_Bps);
        break;
      }
    }
  }
  const IntraNodeSpec& in = spec.intra_node;
  const int g = spec.gpus_per_node;
  switch (in.kind) {
    case IntraNodeKind::nvswitch: s.intra_node_bisection_Bps = std::floor(g / 2.0) * in.bandwidth_Bps * in.efficiency; break;
    case IntraNodeKind::nvlink: {
      const bool doubled = spec.gpu.name.rfind("P100", 0) != 0;
      int links = 0;
      for (int a = 0; a < 4; ++a)
        for (int b = 4; b < 8; ++b) links += nvlink_links_between(a, b, doubled);
      s.intra_node_bisection_Bps = links * in.bandwidth_Bps * in.efficiency;
      break;
    }
    case IntraNodeKind::pcie: {
      const double pcie = in.pcie_bandwidth_Bps * in.efficiency;
      s.intra_node_bisection_Bps = in.pcie_switches >= 2 ? std::floor(in.pcie_switches / 2.0) * pcie
                                                         : std::floor(g / 2.0) * pcie;
      break;
    }
  }
  return s;
}

namespace {
/// Unit conversions leave binary noise (3.4e-6 s -> 3.3999999999999995 us); 12 significant digits
/// keep the JSON readable and make reading it back a fixed point.
double clean(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return std::stod(s.str());
}
}  // namespace

Json to_json(const PlatformSpec& spec) {
  Json j;
  j["name"] = spec.name;
  if (!spec.source.empty()) j["source"] = spec.source;
  if (spec.simgrid_xml) j["file"] = *spec.simgrid_xml;
  j["gpu"] = gpu_json(spec.gpu);
  if (spec.cpu.name != cpu_host().name) j["cpu"] = spec.cpu.name;
  j["nodes"] = spec.nodes;
  j["gpus_per_node"] = spec.gpus_per_node;
  Json in;
  in["kind"] = to_string(spec.intra_node.kind);
  in["bandwidth_GBps"] = clean(spec.intra_node.bandwidth_Bps / kGBps);
  in["latency_us"] = clean(spec.intra_node.latency_s * 1e6);
  in["efficiency"] = spec.intra_node.efficiency;
  if (spec.intra_node.kind != IntraNodeKind::pcie) in["pcie_bandwidth_GBps"] = clean(spec.intra_node.pcie_bandwidth_Bps / kGBps);
  in["pcie_switches"] = spec.intra_node.pcie_switches;
  j["intra_node"] = in;
  if (spec.gpu_board.gpus != 1 || spec.gpu_board.shared_speed != 1.0)
    j["gpu_board"] = Json{{"gpus", spec.gpu_board.gpus}, {"shared_speed", spec.gpu_board.shared_speed}};
  Json net;
  const NetworkSpec& n = spec.network;
  net["topology"] = to_string(n.topology);
  net["bandwidth_Gbps"] = clean(n.bandwidth_Bps * 8.0 / 1e9);
  net["latency_us"] = clean(n.latency_s * 1e6);
  net["nics_per_node"] = n.nics_per_node;
  net["nic_attach"] = kNicAttach.name(n.nics_on_gpus);
  if (n.sharp) net["sharp"] = true;
  // The ring efficiency is written with the transport's other costs (a platform read over this one
  // with another transport keeps them all), and on its own where it is not the transport's.
  const bool own_ring_efficiency = n.nccl.ring_efficiency != default_ring_efficiency(n.nccl.transport);
  if (n.nccl.given() || !n.nccl.all_protocols() || !n.nccl.all_algorithms() || n.nccl.amd_cpu ||
      !n.nccl.tuner.empty() || n.nccl.buffsize_bytes > 0 || own_ring_efficiency) {
    Json nccl = Json::object();
    if (n.nccl.transport != NcclTransport::unspecified) nccl["transport"] = to_string(n.nccl.transport);
    if (n.nccl.given()) {
      nccl["hop_latency_us"] = clean(n.nccl.hop_latency_s * 1e6);
      if (n.nccl.reported_latency_s) nccl["reported_latency_us"] = clean(*n.nccl.reported_latency_s * 1e6);
      nccl["proxy_step_us"] = clean(n.nccl.proxy_step_s * 1e6);
    }
    if (n.nccl.given() || own_ring_efficiency) nccl["ring_efficiency"] = clean(n.nccl.ring_efficiency);
    if (!n.nccl.calibrated_from.empty()) nccl["calibrated_from"] = n.nccl.calibrated_from;
    if (!n.nccl.all_protocols()) nccl["protocols"] = n.nccl.protocol_names();
    if (!n.nccl.all_algorithms()) nccl["algorithms"] = n.nccl.algorithm_names();
    if (n.nccl.amd_cpu) nccl["cpu_vendor"] = "amd";
    if (n.nccl.buffsize_bytes > 0) nccl["buffsize_bytes"] = clean(n.nccl.buffsize_bytes);
    if (!n.nccl.tuner.empty()) {
      Json rows = Json::array();
      for (const NcclTunerRow& row : n.nccl.tuner) rows.push_back(row.text);
      nccl["tuner"] = rows;
    }
    net["nccl"] = nccl;
  }
  if (n.model == NetworkModel::factors) {
    net["model"] = Json{{"latency_factor", n.factors.latency_factor},
                        {"bandwidth_factor", n.factors.bandwidth_factor},
                        {"tcp_gamma_bytes", n.factors.tcp_gamma_bytes},
                        {"crosstraffic", n.factors.crosstraffic}};
  } else {
    net["model"] = to_string(n.model);
  }
  if (n.topology == TopologyKind::fat_tree)
    net["fat_tree"] = Json{{"levels", n.fat_tree.down.size()}, {"down", n.fat_tree.down},
                           {"oversubscription", n.fat_tree.oversubscription}};
  if (n.topology == TopologyKind::torus) net["torus"] = Json{{"dimensions", n.torus_dimensions}};
  if (n.topology == TopologyKind::dragonfly) {
    const DragonflyShape& d = n.dragonfly;
    net["dragonfly"] = Json{{"groups", d.groups},   {"group_links", d.group_links}, {"chassis", d.chassis},
                            {"chassis_links", d.chassis_links}, {"routers", d.routers},
                            {"router_links", d.router_links}, {"nodes_per_router", d.nodes_per_router}};
  }
  j["network"] = net;
  if (spec.price_per_gpu_hour) j["price_per_gpu_hour"] = *spec.price_per_gpu_hour;
  return j;
}

}  // namespace trainsim::platforms
