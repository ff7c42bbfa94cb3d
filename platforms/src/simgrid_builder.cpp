#include "trainsim/platforms/simgrid_builder.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include <simgrid/s4u/Link.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/natural_order.hpp"
#include "trainsim/platforms/link_names.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace trainsim::platforms {

int pstate_of(Precision p) {
  switch (p) {
    case Precision::fp32: return 0;
    case Precision::tf32: return 1;
    case Precision::fp16: return 2;
    case Precision::bf16: return 3;
  }
  return 0;
}

void configure_network_model(const PlatformSpec& spec) {
  const NetworkSpec& net = spec.network;
  if (net.model == NetworkModel::tcp) {
    xbt_log_control_set("root.thresh:warning");  // see configure_max_min_network
    sg4::Engine::set_config("network/model:LV08");
    return;
  }
  configure_max_min_network(net.model == NetworkModel::factors ? net.factors : NetworkFactors{});
}

void configure_max_min_network(const NetworkFactors& f) {
  // CM02 is the plain max-min model. In 3.32 it still bounds a flow's rate by TCP-gamma/(2·latency)
  // (a TCP window) and weights sharing by latency (weight-S); both are switched off for `ideal` so
  // that one flow takes exactly latency + bytes/bandwidth, and cross-traffic (ACKs loading the
  // reverse path) is off. SimGrid prints every configuration change at INFO level; keep the CLI's
  // output clean.
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config(std::string("network/crosstraffic:") + (f.crosstraffic ? "1" : "0"));
  sg4::Engine::set_config("network/latency-factor:" + std::to_string(f.latency_factor));
  sg4::Engine::set_config("network/bandwidth-factor:" + std::to_string(f.bandwidth_factor));
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/TCP-gamma:" + std::to_string(f.tcp_gamma_bytes));
}

namespace {

/// A full-duplex connection as two plain links. SimGrid 3.32 resolves every split-duplex link of
/// a route by name from the root zone (a scan over all zones), which made building 512 nodes take
/// seconds; two plain links per connection with explicit routes in both directions avoid it.
struct Duplex {
  sg4::Link* up;    ///< first endpoint -> second
  sg4::Link* down;  ///< second -> first
};
enum class Dir { UP, DOWN };
struct Hop {
  const Duplex* link;
  Dir dir;
  Hop(const Duplex* l, Dir d) : link(l), dir(d) {}
};
using Route = std::vector<Hop>;

/// Adds src->dst along `route` and dst->src along its reverse.
void add_both_ways(sg4::NetZone* zone, NetPoint* src, NetPoint* dst, const Route& route) {
  std::vector<sg4::LinkInRoute> forward, backward;
  for (const Hop& h : route) forward.emplace_back(h.dir == Dir::UP ? h.link->up : h.link->down);
  for (auto it = route.rbegin(); it != route.rend(); ++it)
    backward.emplace_back(it->dir == Dir::UP ? it->link->down : it->link->up);
  zone->add_route(src, dst, nullptr, nullptr, forward, false);
  zone->add_route(dst, src, nullptr, nullptr, backward, false);
}

std::vector<double> speeds_of(const GpuSpec& g) {
  return {g.peak_flops(Precision::fp32), g.peak_flops(Precision::tf32), g.peak_flops(Precision::fp16),
          g.peak_flops(Precision::bf16)};
}

/// Builds the inside of node zones. A "PCIe endpoint" is attached to PCIe switch `s` (≥ 0) or to
/// the host bridge (−1); paths between endpoints climb to the common switch or the host bridge.
class NodeBuilder {
public:
  NodeBuilder(const PlatformSpec& spec, BuiltPlatform& out) : spec_(spec), out_(out) {}

  std::pair<NetPoint*, NetPoint*> worker(sg4::NetZone* parent, int k) {
    const std::string prefix = "node" + std::to_string(k);
    const std::string node = "node " + std::to_string(k) + " ";  // human names: "node 3 GPU 1 → NVSwitch"
    node_ = k;
    server_node_ = -1;
    sg4::NetZone* zone = sg4::create_full_zone(prefix);
    if (parent) zone->set_parent(parent);
    const IntraNodeSpec& in = spec_.intra_node;
    const int g = spec_.gpus_per_node;
    const int nics = spec_.network.nics_per_node;
    const int switches = in.pcie_switches;
    const double pcie_Bps = in.pcie_bandwidth_Bps * in.efficiency;
    const double fabric_Bps = in.bandwidth_Bps * in.efficiency;
    const bool pcie_fabric = in.kind == IntraNodeKind::pcie;

    NetPoint* gw = zone->create_router(prefix + "/gw");
    std::vector<sg4::Host*> gpus;
    for (int i = 0; i < g; ++i) {
      sg4::Host* h = zone->create_host(prefix + "/gpu" + std::to_string(i), speeds_of(spec_.gpu));
      h->seal();
      gpus.push_back(h);
      out_.gpus.push_back(h);
    }
    sg4::Host* cpu = zone->create_host(prefix + "/cpu", speeds_of(spec_.cpu));
    cpu->seal();
    out_.cpus.push_back(cpu);

    // PCIe tree. The GPU-to-GPU latency of a pcie fabric is split over the two GPU links.
    const double gpu_pcie_latency = pcie_fabric ? in.latency_s / 2 : 0.0;
    auto switch_of_gpu = [&](int i) { return switches > 0 ? i * switches / g : -1; };
    auto pcie_parent = [&](int s) { return s >= 0 ? "PCIe switch " + std::to_string(s) : std::string("host bridge"); };
    std::vector<const Duplex*> gpu_pcie, switch_up, nic_links;
    for (int i = 0; i < g; ++i) {
      const std::string gpu = "GPU " + std::to_string(i), up = pcie_parent(switch_of_gpu(i));
      gpu_pcie.push_back(connect(zone, prefix + "/pcie-gpu" + std::to_string(i), pcie_Bps, gpu_pcie_latency,
                                 LinkClass::pcie, node + gpu + " → " + up, node + up + " → " + gpu));
    }
    for (int s = 0; s < switches; ++s)
      switch_up.push_back(connect(zone, prefix + "/pcie-switch" + std::to_string(s), pcie_Bps, 0, LinkClass::pcie,
                                  node + pcie_parent(s) + " → host bridge", node + "host bridge → " + pcie_parent(s)));
    // One port per NIC, or with more NICs than GPUs (AWS p5: 32 EFA NICs for 8 GPUs) one per GPU
    // carrying that GPU's NICs together: SimGrid routes a pair of hosts one way, and NCCL spreads
    // a GPU's channels over its NICs.
    const int nic_ports = network_ports(spec_);
    std::vector<int> nic_switch;
    for (int j = 0; j < nic_ports; ++j) {
      const int first = j * nics / nic_ports, last = (j + 1) * nics / nic_ports - 1;
      const std::string nic = first == last ? node + "NIC " + std::to_string(first)
                                            : node + "NICs " + std::to_string(first) + "-" + std::to_string(last);
      nic_links.push_back(connect(zone, prefix + "/nic" + std::to_string(j),
                                  spec_.network.bandwidth_Bps * (last - first + 1), 0, LinkClass::nic,
                                  nic + " → network", "network → " + nic));
      // On the PCIe switch of the first GPU the port serves (GPU a uses port a·ports/g).
      nic_switch.push_back(spec_.network.nics_on_gpus ? switch_of_gpu((j * g + nic_ports - 1) / nic_ports) : -1);
    }
    const Duplex* cpu_link = connect(zone, prefix + "/cpu-memory", spec_.cpu.memory_bandwidth_Bps, 0, LinkClass::memory,
                                     node + "CPU → host bridge", node + "host bridge → CPU");

    // Up from an endpoint to the host bridge / down from it.
    auto climb = [&](const Duplex* own, int s, Route& r) {
      r.emplace_back(own, Dir::UP);
      if (s >= 0) r.emplace_back(switch_up[static_cast<std::size_t>(s)], Dir::UP);
    };
    auto descend = [&](const Duplex* own, int s, Route& r) {
      if (s >= 0) r.emplace_back(switch_up[static_cast<std::size_t>(s)], Dir::DOWN);
      r.emplace_back(own, Dir::DOWN);
    };
    auto pcie_path = [&](const Duplex* a, int sa, const Duplex* b, int sb) {
      Route r;
      if (sa >= 0 && sa == sb) {
        r.emplace_back(a, Dir::UP);
        r.emplace_back(b, Dir::DOWN);
      } else {
        climb(a, sa, r);
        descend(b, sb, r);
      }
      return r;
    };

    // Fabric links.
    std::vector<const Duplex*> ports;  // NVSwitch: GPU i's port; a route crosses two ports
    std::vector<std::vector<const Duplex*>> pair_links(static_cast<std::size_t>(g),
                                                       std::vector<const Duplex*>(static_cast<std::size_t>(g), nullptr));
    if (in.kind == IntraNodeKind::nvswitch) {
      for (int i = 0; i < g; ++i) {
        const std::string gpu = "GPU " + std::to_string(i);
        ports.push_back(connect(zone, prefix + "/nvswitch-port" + std::to_string(i), fabric_Bps, in.latency_s / 2,
                                LinkClass::nvswitch, node + gpu + " → NVSwitch", node + "NVSwitch → " + gpu));
      }
    } else if (in.kind == IntraNodeKind::nvlink) {
      const bool doubled = spec_.gpu.name.rfind("P100", 0) != 0;  // NVLink 1 (P100) has 4 single links per GPU
      for (int a = 0; a < g; ++a)
        for (int b = a + 1; b < g; ++b)
          if (const int links = nvlink_links_between(a, b, doubled); links > 0) {
            const std::string ga = "GPU " + std::to_string(a), gb = "GPU " + std::to_string(b);
            pair_links[std::size_t(a)][std::size_t(b)] =
                connect(zone, prefix + "/nvlink" + std::to_string(a) + "-" + std::to_string(b), links * fabric_Bps,
                        in.latency_s, LinkClass::nvlink, node + ga + " → " + gb, node + gb + " → " + ga);
          }
    }

    for (int a = 0; a < g; ++a) {
      for (int b = a + 1; b < g; ++b) {
        Route r;
        if (in.kind == IntraNodeKind::nvswitch) {
          r = {Hop(ports[std::size_t(a)], Dir::UP), Hop(ports[std::size_t(b)], Dir::DOWN)};
        } else if (const Duplex* l = pair_links[std::size_t(a)][std::size_t(b)]) {
          r = {Hop(l, Dir::UP)};
        } else {
          r = pcie_path(gpu_pcie[std::size_t(a)], switch_of_gpu(a), gpu_pcie[std::size_t(b)], switch_of_gpu(b));
        }
        add_both_ways(zone, gpus[std::size_t(a)]->get_netpoint(), gpus[std::size_t(b)]->get_netpoint(), r);
      }
      // GPU <-> CPU and GPU <-> its NIC's gateway.
      Route to_cpu;
      climb(gpu_pcie[std::size_t(a)], switch_of_gpu(a), to_cpu);
      to_cpu.emplace_back(cpu_link, Dir::DOWN);
      add_both_ways(zone, gpus[std::size_t(a)]->get_netpoint(), cpu->get_netpoint(), to_cpu);
      const int j = a * nic_ports / g;
      Route to_gw = pcie_path(gpu_pcie[std::size_t(a)], switch_of_gpu(a), nic_links[std::size_t(j)], nic_switch[std::size_t(j)]);
      to_gw.back() = Hop(nic_links[std::size_t(j)], Dir::UP);  // the NIC leads out to the gateway
      add_both_ways(zone, gpus[std::size_t(a)]->get_netpoint(), gw, to_gw);
    }
    Route cpu_gw{Hop(cpu_link, Dir::UP)};
    if (nic_switch[0] >= 0) cpu_gw.emplace_back(switch_up[std::size_t(nic_switch[0])], Dir::DOWN);
    cpu_gw.emplace_back(nic_links[0], Dir::UP);
    add_both_ways(zone, cpu->get_netpoint(), gw, cpu_gw);
    zone->seal();
    return {zone->get_netpoint(), gw};
  }

  /// A dedicated server node: one CPU behind the node's NICs, bonded into one port.
  std::pair<NetPoint*, NetPoint*> server(sg4::NetZone* parent, int j) {
    const std::string prefix = "server" + std::to_string(j);
    node_ = -1;
    server_node_ = j;
    sg4::NetZone* zone = sg4::create_full_zone(prefix);
    if (parent) zone->set_parent(parent);
    NetPoint* gw = zone->create_router(prefix + "/gw");
    sg4::Host* cpu = zone->create_host(prefix + "/cpu", speeds_of(spec_.cpu));
    cpu->seal();
    out_.servers.push_back(cpu);
    const double port_Bps =
        std::min(spec_.cpu.memory_bandwidth_Bps, spec_.network.nics_per_node * spec_.network.bandwidth_Bps);
    const std::string nics = "server node " + std::to_string(j) + " NICs";
    const Duplex* port =
        connect(zone, prefix + "/nics", port_Bps, 0, LinkClass::nic, nics + " → network", "network → " + nics);
    add_both_ways(zone, cpu->get_netpoint(), gw, {Hop(port, Dir::UP)});
    zone->seal();
    return {zone->get_netpoint(), gw};
  }

private:
 /// Creates a connection's two links in `zone` (SimGrid names name_UP, name_DOWN) and records what
 /// they are: `up_name` for first endpoint → second, `down_name` for the way back. Links live in a
 /// deque so that Hop pointers stay valid.
 const Duplex* connect(sg4::NetZone* zone, const std::string& name, double bandwidth_Bps, double latency_s,
                       LinkClass link_class, std::string up_name, std::string down_name) {
   sg4::Link* up = zone->create_link(name + "_UP", bandwidth_Bps)->set_latency(latency_s)->seal();
   sg4::Link* down = zone->create_link(name + "_DOWN", bandwidth_Bps)->set_latency(latency_s)->seal();
   std::string connection = up_name;
   connection.replace(connection.find(" → "), std::string_view(" → ").size(), " ↔ ");
   out_.links.emplace(up, LinkInfo{std::move(up_name), connection, link_class, node_, server_node_});
   out_.links.emplace(down, LinkInfo{std::move(down_name), std::move(connection), link_class, node_, server_node_});
   links_.push_back({up, down});
   return &links_.back();
 }

  const PlatformSpec& spec_;
  BuiltPlatform& out_;
  std::deque<Duplex> links_;
  int node_ = -1, server_node_ = -1;  // whose links connect() is creating
};

/// SimGrid's own link for a host's route to itself (FATPIPE, in every platform).
bool is_loopback(const sg4::Link* l) {
  return l->get_name() == "__loopback__";
}
LinkInfo loopback_info() {
  return LinkInfo{"loopback", "loopback", LinkClass::unknown, -1, -1};
}

BuiltPlatform load_xml(sg4::Engine& engine, const PlatformSpec& spec) {
  try {
    engine.load_platform(*spec.simgrid_xml);
  } catch (const std::exception& e) {
    throw InputError(*spec.simgrid_xml, "", std::string("SimGrid rejected the platform: ") + e.what());
  }
  BuiltPlatform out;
  out.gpus = engine.get_all_hosts();
  if (out.gpus.empty()) throw InputError(*spec.simgrid_xml, "", "the platform defines no host");
  std::sort(out.gpus.begin(), out.gpus.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return natural_less(a->get_name(), b->get_name()); });
  out.gpus_per_node = spec.gpus_per_node;
  if (out.gpus.size() % static_cast<std::size_t>(spec.gpus_per_node) != 0)
    throw InputError(*spec.simgrid_xml, "", "has " + std::to_string(out.gpus.size()) +
                                                " hosts, not a multiple of gpus_per_node " +
                                                std::to_string(spec.gpus_per_node));
  // An XML platform's links keep their ids; their class comes from the ids' naming convention.
  for (const sg4::Link* l : engine.get_all_links()) {
    if (is_loopback(l)) {
      out.links.emplace(l, loopback_info());
      continue;
    }
    std::string_view connection = l->get_name();
    for (std::string_view suffix : {"_UP", "_DOWN"})  // SimGrid's names for the directions of a split-duplex link
      if (connection.ends_with(suffix)) connection.remove_suffix(suffix.size());
    out.links.emplace(l, LinkInfo{l->get_name(), std::string(connection), link_class_from_id(l->get_name()), -1, -1});
  }
  return out;
}

}  // namespace

BuiltPlatform build_platform(sg4::Engine& engine, const PlatformSpec& spec, const BuildOptions& options) {
  if (spec.simgrid_xml) return load_xml(engine, spec);
  BuiltPlatform out;
  out.gpus_per_node = spec.gpus_per_node;
  NodeBuilder nodes(spec, out);
  const int leaves = spec.nodes + options.server_nodes;
  auto leaf = [&](sg4::NetZone* parent, unsigned long id) {
    const int k = static_cast<int>(id);
    const auto zone_and_gateway = k < spec.nodes ? nodes.worker(parent, k) : nodes.server(parent, k - spec.nodes);
    if (k == 0 && leaves > 1) {
      // Every node has as many links as the first (servers fewer): room for all of them and the
      // topology's, so that the map of a million links is not rehashed as it grows.
      out.links.reserve(out.links.size() * std::size_t(leaves) + 8 * std::size_t(leaves));
      out.gateways.reserve(std::size_t(leaves));
    }
    if (parent) out.gateways.emplace(zone_and_gateway.first, zone_and_gateway.second);
    return zone_and_gateway;
  };
  if (leaves == 1) {
    leaf(nullptr, 0);
    // A flow from a host to itself (a GPU-aggregating server on its own worker GPU) crosses it.
    for (const sg4::Link* l : engine.get_all_links())
      if (is_loopback(l)) out.links.emplace(l, loopback_info());
    return out;
  }

  // Shapes for the worker count come from the spec; with server nodes, re-derive (or check) them.
  PlatformSpec shaped = spec;
  if (options.server_nodes > 0)
    shaped = with_nodes(spec, leaves, spec.name + " with " + std::to_string(options.server_nodes) + " server nodes", options.server_nodes);
  const NetworkSpec& net = shaped.network;
  const double link_Bps = net.nics_per_node * net.bandwidth_Bps;
  const double link_latency = net.latency_s / 2;
  const auto policy = sg4::Link::SharingPolicy::SPLITDUPLEX;
  const sg4::ClusterCallbacks callbacks(
      [&leaf](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) { return leaf(zone, id); });
  // SimGrid 3.32 checks every new link's and host's name for uniqueness by walking all zones from
  // the root (StandardLinkImpl and HostImpl constructors: Link/Host::by_name_or_null →
  // NetZoneImpl::get_{link,host}_by_name_or_null), and every zone's seal lists the hosts of the
  // whole tree (NetZoneImpl::seal → get_all_hosts → Engine::get_filtered_hosts, sorted). Built
  // under the root, node k's zone walks the k zones before it: quadratic in nodes (66 % of a
  // 16,384-GPU iteration). So the topology is built in a detached subtree: the root is an empty
  // zone of ours, the topology's parent a zone outside the root's tree that carries the root's
  // models, attached to the root once everything is built. The cluster zones still create their
  // leaves in order (the netpoint ids they index by are unchanged) and routes never leave the
  // topology zone, so hosts, links, routes and names are the same as built directly under the
  // root; names are unique by construction (node k's start with "node<k>/").
  sg4::NetZone* root = nullptr;
  sg4::NetZone* staging = nullptr;
  if (engine.get_netzone_root() == nullptr) {
    root = sg4::create_full_zone("trainsim");  // the first zone becomes SimGrid's root
    staging = sg4::create_full_zone("topology");  // root exists: this one starts detached
    auto* impl = staging->get_impl();
    const auto* models = root->get_impl();
    impl->set_network_model(models->get_network_model());
    impl->set_cpu_pm_model(models->get_cpu_pm_model());
    impl->set_cpu_vm_model(models->get_cpu_vm_model());
    impl->set_disk_model(models->get_disk_model());
    impl->set_host_model(models->get_host_model());
  }
  sg4::NetZone* cluster = nullptr;
  switch (net.topology) {
    case TopologyKind::single_switch:
      cluster = sg4::create_fatTree_zone("network", staging, sg4::FatTreeParams(1, {unsigned(leaves)}, {1}, {1}),
                                         callbacks, link_Bps, link_latency, policy);
      break;
    case TopologyKind::fat_tree: {
      const auto& down = net.fat_tree.down;
      const std::vector<unsigned> number(down.size(), 1);
      cluster = sg4::create_fatTree_zone(
          "network", staging, sg4::FatTreeParams(unsigned(down.size()), down, fat_tree_parents(net.fat_tree), number),
          callbacks, link_Bps, link_latency, policy);
      break;
    }
    case TopologyKind::torus: {
      std::vector<unsigned long> dims(net.torus_dimensions.begin(), net.torus_dimensions.end());
      cluster = sg4::create_torus_zone("network", staging, dims, callbacks, link_Bps, link_latency, policy);
      break;
    }
    case TopologyKind::dragonfly: {
      const DragonflyShape& d = net.dragonfly;
      cluster = sg4::create_dragonfly_zone(
          "network", staging,
          sg4::DragonflyParams({d.groups, d.group_links}, {d.chassis, d.chassis_links}, {d.routers, d.router_links},
                               d.nodes_per_router),
          callbacks, link_Bps, link_latency, policy);
      break;
    }
  }
  cluster->seal();
  if (staging) staging->set_parent(root);
  // The cluster zones call back leaf by leaf in id order, so out.gpus is already node-major.
  // Every link the nodes did not create is the topology's: name it from SimGrid's name for it.
  std::vector<const sg4::Link*> topology;
  std::vector<std::string> names;
  for (const sg4::Link* l : engine.get_all_links())
    if (is_loopback(l))
      out.links.emplace(l, loopback_info());
    else if (!out.links.contains(l)) {
      topology.push_back(l);
      names.push_back(l->get_name());
    }
  std::vector<LinkInfo> infos = name_topology_links(names, shaped, spec.nodes);
  for (std::size_t i = 0; i < topology.size(); ++i) out.links.emplace(topology[i], std::move(infos[i]));
  return out;
}

BuiltPlatform build_cpu_node(sg4::Engine& engine, const CpuPlatformSpec& spec, int shared_pool_cores) {
  (void)engine;  // the zone becomes the engine's root, as build_platform's do
  configure_max_min_network();
  BuiltPlatform out;
  auto* zone = sg4::create_full_zone("cpu-node");
  sg4::Host* cpu = zone->create_host("cpu", kCpuCoreSpeed);
  cpu->set_core_count(spec.physical_cores());
  sg4::Host* dram = zone->create_host("dram", kCpuCoreSpeed);
  sg4::Link* link = zone->create_link("memory", spec.memory_bandwidth_Bps())->set_latency(0);
  zone->add_route(dram->get_netpoint(), cpu->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  sg4::Host* pool = nullptr;
  if (shared_pool_cores > 0) {
    pool = zone->create_host("intra-op pool", kCpuCoreSpeed);
    pool->set_core_count(shared_pool_cores);
  }
  zone->seal();
  out.cpus.push_back(cpu);
  if (pool) out.cpus.push_back(pool);
  out.dram = dram;
  out.links.emplace(link, LinkInfo{"node 0 memory ↔ cores", "node 0 memory ↔ cores", LinkClass::memory, 0, -1});
  return out;
}

}  // namespace trainsim::platforms
