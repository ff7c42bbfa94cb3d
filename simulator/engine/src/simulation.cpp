#include "trainsim/engine/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include "trainsim/core/error.hpp"
#include "trainsim/core/natural_order.hpp"
#include "trainsim/engine/platform_census.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace trainsim::engine {

namespace {
// SimGrid keeps one engine per process; a second one would silently share the first one's clock.
bool engine_created = false;

// The process's one SimGrid engine (TRAINSIM_CHECK on a second).
std::unique_ptr<sg4::Engine> create_engine() {
  TRAINSIM_CHECK(!engine_created, "only one Simulation per process (SimGrid's engine is process-global)");
  engine_created = true;
  static char name[] = "trainsim";
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer SimGrid's actors run on threads: its default contexts switch stacks by
  // hand, which ASan cannot follow (it warns on stderr that false reports may follow, google/
  // sanitizers issue 189). The schedule, and so every result, is the same with either factory.
  static char factory[] = "--cfg=contexts/factory:thread";
  static char quiet[] = "--log=xbt_cfg.thres:warning";
  static int argc = 3;
  static char* argv[] = {name, factory, quiet, nullptr};
#else
  static int argc = 1;
  static char* argv[] = {name, nullptr};
#endif
  return std::make_unique<sg4::Engine>(&argc, argv);
}
}  // namespace

Simulation::Simulation(const platforms::CpuPlatformSpec& cpu, int shared_pool_cores) : engine_(create_engine()) {
  built_ = platforms::build_cpu_node(*engine_, cpu, shared_pool_cores);
  index_links();
}

// Each link's user data points to its slot: accounting a flow and reporting touch every link of
// its route, and a million-entry map keyed by link cost a cache miss or more per look-up (7 % of
// a 65,536-GPU iteration). The slots' order is the map's and never shows: link_report sorts by a
// total order, take_recent_bytes keeps the links' first-use order.
void Simulation::index_links() {
  link_slots_.resize(built_.links.size());
  std::size_t i = 0;
  for (const auto& [link, info] : built_.links) {
    link_slots_[i].info = &info;
    const_cast<sg4::Link*>(link)->set_data(&link_slots_[i]);  // NOLINT: SimGrid's user data is mutable
    ++i;
  }
}

Simulation::LinkSlot& Simulation::slot(const sg4::Link* link) const {
  auto* s = link->get_data<LinkSlot>();
  TRAINSIM_CHECK(s != nullptr, "link " + link->get_name() + " was not recorded by the platform builder");
  return *s;
}

sg4::Host* Simulation::shared_pool_host() const {
  TRAINSIM_CHECK(built_.dram != nullptr, "shared_pool_host() of a Simulation that is not a CPU node");
  return built_.cpus.size() > 1 ? built_.cpus[1] : nullptr;
}

sg4::Host* Simulation::cpu_host() const {
  TRAINSIM_CHECK(built_.dram != nullptr, "cpu_host() of a Simulation that is not a CPU node");
  return built_.cpus.front();
}

sg4::Host* Simulation::memory_host() const {
  TRAINSIM_CHECK(built_.dram != nullptr, "memory_host() of a Simulation that is not a CPU node");
  return built_.dram;
}

Simulation::Simulation(const platforms::PlatformSpec& spec, const SimulationOptions& options)
    : spec_(spec), engine_(create_engine()) {
  platforms::configure_network_model(spec_);
  if (options.full_network_solve) sg4::Engine::set_config("network/optim:Full");
  platforms::BuildOptions build;
  build.server_nodes = options.server_nodes;
  built_ = platforms::build_platform(*engine_, spec_, build);
  index_links();
}

Simulation::~Simulation() = default;

PlatformCensus census(const platforms::PlatformSpec& spec) {
  Simulation sim(spec);
  return PlatformCensus{sim.gpu_count(), sim.gpus_per_node(), sim.engine().get_host_count(), sim.engine().get_link_count()};
}

sg4::Host* Simulation::gpu(int rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < gpu_count(), "rank " + std::to_string(rank) + " out of range");
  return built_.gpus[static_cast<std::size_t>(rank)];
}

std::vector<sg4::Host*> Simulation::server_hosts() const {
  return built_.servers.empty() ? built_.cpus : built_.servers;
}

void Simulation::run() { engine_->run(); }

double Simulation::now() const { return sg4::Engine::get_clock(); }

namespace {
/// The latency and bandwidth factors SimGrid applies under a network model.
platforms::NetworkFactors model_factors(const platforms::NetworkSpec& net) {
  platforms::NetworkFactors f;
  switch (net.model) {
    case platforms::NetworkModel::ideal: break;
    case platforms::NetworkModel::tcp:  // LV08's defaults in SimGrid 3.32
      f.latency_factor = 13.01;
      f.bandwidth_factor = 0.97;
      break;
    case platforms::NetworkModel::factors: f = net.factors; break;
  }
  return f;
}
}  // namespace

double Simulation::latency_factor() const noexcept { return model_factors(spec_.network).latency_factor; }

double Simulation::bandwidth_factor() const noexcept { return model_factors(spec_.network).bandwidth_factor; }

const RouteInfo& Simulation::segment(const NetPoint* src, const NetPoint* dst) {
  auto [it, inserted] = segments_.try_emplace({src, dst});
  if (inserted) {
    if (link_of_impl_.empty()) {
      link_of_impl_.reserve(built_.links.size());  // a million links at 65,536 GPUs: no rehashing
      for (const auto& entry : built_.links) {
        auto* link = const_cast<sg4::Link*>(entry.first);  // NOLINT: SimGrid's routes hold mutable links
        link_of_impl_.emplace(link->get_impl(), link);
      }
    }
    std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
    simgrid::kernel::routing::NetZoneImpl::get_global_route(src, dst, links, &it->second.latency_s);
    for (const auto* l : links) {
      const auto found = link_of_impl_.find(l);
      TRAINSIM_CHECK(found != link_of_impl_.end(), "a route crosses a link the platform builder did not record");
      it->second.links.push_back(found->second);
    }
  }
  return it->second;
}

// SimGrid 3.32 resolves a route between hosts of two node zones under one topology zone
// (NetZoneImpl::get_global_route_with_netzones) as: the topology zone's local route between the
// two node zones, whose gateways it names; then the source's route to its gateway; then the
// destination gateway's route to the destination. The links come out in the order source part,
// topology part, destination part; the latency is summed in the order the parts are resolved
// (topology, source, destination). Each part is resolved here once and the route put together
// from them: a fat tree's local route scans the switch's children for the destination (linear in
// nodes, so quadratic over a run's routes: 15 % of a 65,536-GPU iteration), and a node pair's
// topology part is shared by every pair of their GPUs. The same links and the same latency, to the
// bit, as Host::route_to (checked by the simulation tests on every topology); anything else (XML
// platforms, hosts of one zone, zones without a recorded gateway) asks SimGrid directly.
bool Simulation::compose_route(sg4::Host* src, sg4::Host* dst, RouteInfo& out) {
  const NetPoint* from = src->get_netpoint();
  const NetPoint* to = dst->get_netpoint();
  const auto* from_zone = from->get_englobing_zone();
  const auto* to_zone = to->get_englobing_zone();
  if (from_zone == to_zone || from_zone->get_parent() == nullptr || from_zone->get_parent() != to_zone->get_parent())
    return false;
  const auto gw_from = built_.gateways.find(from_zone->get_netpoint());
  const auto gw_to = built_.gateways.find(to_zone->get_netpoint());
  if (gw_from == built_.gateways.end() || gw_to == built_.gateways.end() || gw_from->second == from ||
      gw_to->second == to)
    return false;
  const RouteInfo& between = segment(gw_from->second, gw_to->second);
  const RouteInfo& leave = segment(from, gw_from->second);
  const RouteInfo& enter = segment(gw_to->second, to);
  out.links.reserve(leave.links.size() + between.links.size() + enter.links.size());
  out.links.insert(out.links.end(), leave.links.begin(), leave.links.end());
  out.links.insert(out.links.end(), between.links.begin(), between.links.end());
  out.links.insert(out.links.end(), enter.links.begin(), enter.links.end());
  out.latency_s = between.latency_s;
  for (const sg4::Link* l : leave.links) out.latency_s += l->get_latency();
  for (const sg4::Link* l : enter.links) out.latency_s += l->get_latency();
  return true;
}

const RouteInfo& Simulation::route(sg4::Host* src, sg4::Host* dst) {
  auto [it, inserted] = routes_.try_emplace({src, dst});
  if (inserted) {
    RouteInfo& r = it->second;
    if (!compose_route(src, dst, r)) src->route_to(dst, r.links, &r.latency_s);
    r.bandwidth_Bps = std::numeric_limits<double>::infinity();
    for (const sg4::Link* l : r.links) r.bandwidth_Bps = std::min(r.bandwidth_Bps, l->get_bandwidth());
  }
  return it->second;
}

sg4::CommPtr Simulation::start_flow(sg4::Host* src, sg4::Host* dst, double bytes) {
  const auto size = static_cast<std::uint64_t>(std::llround(account_flow(src, dst, bytes)));
  return sg4::Comm::sendto_async(src, dst, size);
}

const platforms::LinkInfo& Simulation::link_info(const sg4::Link* link) const {
  return *slot(link).info;
}

double Simulation::capacity_Bps(const sg4::Link* link) const {
  return link->get_bandwidth() * bandwidth_factor();
}

double Simulation::account_flow(sg4::Host* src, sg4::Host* dst, double bytes) {
  TRAINSIM_CHECK(bytes >= 0 && std::isfinite(bytes), "flow size must be finite and ≥ 0");
  const double size = static_cast<double>(std::llround(bytes));
  for (const sg4::Link* l : route(src, dst).links) {
    LinkSlot& s = slot(l);
    s.accounted = true;
    Traffic& t = s.traffic;
    if (t.recent == 0 && size > 0) recent_links_.push_back(l);
    t.total += size;
    t.recent += size;
  }
  total_bytes_ += size;
  return size;
}

void Simulation::account_flows(const std::vector<std::pair<const sg4::Link*, double>>& flows_per_link, double flows,
                               double bytes_per_flow) {
  TRAINSIM_CHECK(bytes_per_flow >= 0 && std::isfinite(bytes_per_flow), "flow size must be finite and ≥ 0");
  const double size = static_cast<double>(std::llround(bytes_per_flow));
  for (const auto& [l, count] : flows_per_link) {
    LinkSlot& s = slot(l);
    s.accounted = true;
    Traffic& t = s.traffic;
    if (t.recent == 0 && size > 0 && count > 0) recent_links_.push_back(l);
    t.total += count * size;
    t.recent += count * size;
  }
  total_bytes_ += flows * size;
}

std::vector<LinkBytes> Simulation::take_recent_bytes() {
  std::vector<LinkBytes> out;
  out.reserve(recent_links_.size());
  for (const sg4::Link* l : recent_links_) {
    Traffic& t = slot(l).traffic;
    out.push_back({l, t.recent});
    t.recent = 0;
  }
  recent_links_.clear();
  return out;
}

LinkReport Simulation::link_report(std::size_t top_k) const {
  LinkReport report;
  report.total_network_bytes = total_bytes_;
  const double t = now();
  for (const auto& [link, info] : built_.links) {
    const LinkSlot& s = slot(link);
    if (!s.accounted) continue;
    LinkUsage u;
    u.link = link;
    u.info = &info;
    u.bytes = s.traffic.total;
    // A FATPIPE link gives every flow its full bandwidth: it is never the shared bottleneck.
    if (link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE)
      u.busy_s = s.traffic.total / capacity_Bps(link);
    u.busy_fraction = t > 0 ? u.busy_s / t : 0.0;
    report.busiest.push_back(u);
  }
  // Names are unique, so the order is total and the top k come out as a full sort would put them;
  // sorting only them matters on large platforms (symmetric links tie on busy and bytes, and the
  // names then decide: 600,000 links at 32,768 GPUs).
  const auto busier = [](const LinkUsage& a, const LinkUsage& b) {
    if (a.busy_s != b.busy_s) return a.busy_s > b.busy_s;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return natural_less(a.info->name, b.info->name);
  };
  if (report.busiest.size() > top_k) {
    std::partial_sort(report.busiest.begin(), report.busiest.begin() + static_cast<std::ptrdiff_t>(top_k),
                      report.busiest.end(), busier);
    report.busiest.resize(top_k);
  } else {
    std::sort(report.busiest.begin(), report.busiest.end(), busier);
  }
  return report;
}

}  // namespace trainsim::engine
