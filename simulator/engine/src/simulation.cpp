#include "trainsim/engine/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "trainsim/core/error.hpp"
#include "trainsim/engine/platform_census.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {
// SimGrid keeps one engine per process; a second one would silently share the first one's clock.
bool engine_created = false;
}  // namespace

Simulation::Simulation(const platforms::PlatformSpec& spec, const SimulationOptions& options) : spec_(spec) {
  TRAINSIM_CHECK(!engine_created, "only one Simulation per process (SimGrid's engine is process-global)");
  engine_created = true;
  static int argc = 1;
  static char name[] = "trainsim";
  static char* argv[] = {name, nullptr};
  engine_ = std::make_unique<sg4::Engine>(&argc, argv);
  platforms::configure_network_model(spec_);
  platforms::BuildOptions build;
  build.server_nodes = options.server_nodes;
  built_ = platforms::build_platform(*engine_, spec_, build);
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

double Simulation::latency_factor() const noexcept {
  switch (spec_.network.model) {
    case platforms::NetworkModel::ideal: return 1.0;
    case platforms::NetworkModel::tcp: return 13.01;  // LV08's default in SimGrid 3.32
    case platforms::NetworkModel::factors: return spec_.network.factors.latency_factor;
  }
  return 1.0;
}

const RouteInfo& Simulation::route(sg4::Host* src, sg4::Host* dst) {
  auto [it, inserted] = routes_.try_emplace({src, dst});
  if (inserted) {
    RouteInfo& r = it->second;
    src->route_to(dst, r.links, &r.latency_s);
    r.bandwidth_Bps = std::numeric_limits<double>::infinity();
    for (const sg4::Link* l : r.links) r.bandwidth_Bps = std::min(r.bandwidth_Bps, l->get_bandwidth());
  }
  return it->second;
}

sg4::CommPtr Simulation::start_flow(sg4::Host* src, sg4::Host* dst, double bytes) {
  const auto size = static_cast<std::uint64_t>(std::llround(account_flow(src, dst, bytes)));
  return sg4::Comm::sendto_async(src, dst, size);
}

double Simulation::account_flow(sg4::Host* src, sg4::Host* dst, double bytes) {
  TRAINSIM_CHECK(bytes >= 0 && std::isfinite(bytes), "flow size must be finite and ≥ 0");
  const double size = static_cast<double>(std::llround(bytes));
  for (const sg4::Link* l : route(src, dst).links) link_bytes_[l] += size;
  total_bytes_ += size;
  return size;
}

LinkReport Simulation::link_report(std::size_t top_k) const {
  LinkReport report;
  report.total_network_bytes = total_bytes_;
  const double t = now();
  for (const auto& [link, bytes] : link_bytes_) {
    LinkUsage u;
    u.name = link->get_name();
    u.bytes = bytes;
    u.busy_fraction = t > 0 ? bytes / (link->get_bandwidth() * t) : 0.0;
    report.busiest.push_back(std::move(u));
  }
  std::sort(report.busiest.begin(), report.busiest.end(), [](const LinkUsage& a, const LinkUsage& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  if (report.busiest.size() > top_k) report.busiest.resize(top_k);
  return report;
}

}  // namespace trainsim::engine
