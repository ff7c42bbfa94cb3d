#pragma once
// The process's SimGrid simulation: network model, platform, rank ↔ host mapping, byte accounting.
#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/platforms/simgrid_builder.hpp"

namespace trainsim::engine {

/// Options of a Simulation.
struct SimulationOptions {
  /// Extra nodes holding only a CPU (dedicated parameter servers); see server_hosts().
  int server_nodes = 0;
  /// Solve SimGrid's max-min system in full at every change (network/optim:Full) instead of its
  /// default lazy, selective update. 3.32's lazy update can leave a link over its capacity (simulator/README.md
  /// "Parameter-server representations"); the full solve is slower and is a checking aid.
  bool full_network_solve = false;
};

/// One link's share of the traffic.
struct LinkUsage {
  const simgrid::s4u::Link* link = nullptr;
  const platforms::LinkInfo* info = nullptr;  ///< its name, class and owner (the built platform's)
  /// Bytes of all flows that crossed it (both directions of a split-duplex link are separate links).
  double bytes = 0;
  /// bytes / capacity_Bps: how long the link needed at full rate (0 for a FATPIPE link: never full).
  double busy_s = 0;
  double busy_fraction = 0;  ///< busy_s / simulated time, in [0, 1] when the time is the whole run
};

/// Network traffic of a run so far.
struct LinkReport {
  double total_network_bytes = 0;  ///< bytes of every flow (each counted once, whatever its path length)
  std::vector<LinkUsage> busiest;  ///< the top_k links by busy time, then bytes, then name (natural order)
};

/// Bytes one link carried in a stretch of the run (see Simulation::take_recent_bytes).
struct LinkBytes {
  const simgrid::s4u::Link* link = nullptr;
  double bytes = 0;
};

/// A route between two hosts as SimGrid resolved it.
struct RouteInfo {
  std::vector<simgrid::s4u::Link*> links;
  double latency_s = 0;      ///< sum of the links' latencies (before the network model's latency factor)
  double bandwidth_Bps = 0;  ///< the smallest link bandwidth (a lone flow's rate)
};

/// Owns the process's SimGrid engine: configures the network model and builds the platform. Only
/// one may ever exist in a process (SimGrid's engine is process-global; a second one keeps the
/// first one's clock): tests and sweeps create it in a forked child. Throws InputError when the
/// platform cannot be built (SimGrid XML rejected).
class Simulation {
public:
  Simulation(const platforms::PlatformSpec& spec, const SimulationOptions& options = {});
  /// A CPU-only node (platforms::build_cpu_node): cpu_host() with the node's physical cores and
  /// memory_host() behind the node's memory link, and shared_pool_host() with shared_pool_cores
  /// cores when > 0; spec() is a default PlatformSpec, gpu_count() 0.
  explicit Simulation(const platforms::CpuPlatformSpec& cpu, int shared_pool_cores = 0);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const platforms::PlatformSpec& spec() const noexcept { return spec_; }
  simgrid::s4u::Engine& engine() noexcept { return *engine_; }

  /// GPU host of a rank; rank order is node-major (node·gpus_per_node + local).
  simgrid::s4u::Host* gpu(int rank) const;
  int gpu_count() const noexcept { return static_cast<int>(built_.gpus.size()); }
  int gpus_per_node() const noexcept { return built_.gpus_per_node; }
  int node_of(int rank) const { return rank / built_.gpus_per_node; }
  int local_rank(int rank) const { return rank % built_.gpus_per_node; }
  /// Host CPU of each worker node (colocated parameter servers); empty for SimGrid XML platforms.
  const std::vector<simgrid::s4u::Host*>& node_cpus() const noexcept { return built_.cpus; }
  /// A CPU-only node's cores and memory (the CPU constructor; TRAINSIM_CHECK otherwise).
  simgrid::s4u::Host* cpu_host() const;
  simgrid::s4u::Host* memory_host() const;
  /// The shared intra-op pool's host; nullptr when the CPU node was built without one.
  simgrid::s4u::Host* shared_pool_host() const;
  /// Dedicated server CPUs when server_nodes > 0, else the worker nodes' CPUs.
  std::vector<simgrid::s4u::Host*> server_hosts() const;

  /// Runs the engine until every actor has finished.
  void run();
  /// Simulated time, seconds.
  double now() const;

  /// Starts a flow of `bytes` from src to dst (Comm::sendto_async) and records it for link_report.
  /// Call from inside an actor. bytes ≥ 0.
  simgrid::s4u::CommPtr start_flow(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double bytes);
  /// Counts a flow's bytes on its route for link_report without simulating it (representations
  /// that repeat a simulated step). Returns the bytes, rounded as start_flow rounds them.
  double account_flow(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, double bytes);
  /// Counts `flows` flows of `bytes_per_flow` each (rounded as account_flow rounds one) whose
  /// routes cross each link of `flows_per_link` that many times: account_flow over many flows at
  /// once, for executors that know their routes' links already.
  void account_flows(const std::vector<std::pair<const simgrid::s4u::Link*, double>>& flows_per_link, double flows,
                     double bytes_per_flow);
  /// Engine-private memo of what collectives solved on this platform (collective_runner.cpp),
  /// dropped with the simulation.
  std::any& collective_memo() noexcept { return collective_memo_; }
  /// The route from src to dst (cached).
  const RouteInfo& route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  /// Latency multiplier of the configured network model (1 for ideal, 13.01 for tcp).
  double latency_factor() const noexcept;
  /// Bandwidth multiplier of the configured network model (1 for ideal, 0.97 for tcp): SimGrid's
  /// flows progress at rate × factor, so a link moves at most bandwidth × factor bytes per second.
  double bandwidth_factor() const noexcept;
  /// What a link is. Every link of the platform has an entry (TRAINSIM_CHECK otherwise).
  const platforms::LinkInfo& link_info(const simgrid::s4u::Link* link) const;
  /// How many links the platform has, and a link's index among them (in [0, link_count()), in no
  /// particular order; TRAINSIM_CHECK for a link the platform does not have): for tables by link.
  std::size_t link_count() const noexcept { return link_slots_.size(); }
  std::size_t link_index(const simgrid::s4u::Link* link) const {
    return static_cast<std::size_t>(&slot(link) - link_slots_.data());
  }
  /// Bytes per second a link can move: bandwidth × bandwidth_factor().
  double capacity_Bps(const simgrid::s4u::Link* link) const;

  /// Total bytes and the top_k busiest links (SIZE_MAX: every link that carried bytes).
  LinkReport link_report(std::size_t top_k) const;
  /// The bytes each link carried since the previous call (or the start), in the order the links
  /// were first used; resets the count. A caller that calls it after each operation learns which
  /// links each operation loaded.
  std::vector<LinkBytes> take_recent_bytes();

private:
  platforms::PlatformSpec spec_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  platforms::BuiltPlatform built_;
  /// Hashes a pair of pointers (hosts, netpoints) for the route caches.
  struct PointerPairHash {
    std::size_t operator()(const std::pair<const void*, const void*>& p) const noexcept {
      const auto a = reinterpret_cast<std::uintptr_t>(p.first), b = reinterpret_cast<std::uintptr_t>(p.second);
      return std::hash<std::uintptr_t>{}(a * 0x9E3779B97F4A7C15ULL ^ b);
    }
  };
  /// Whether route() could put src → dst together from cached segments, into `out`.
  bool compose_route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst, RouteInfo& out);
  /// SimGrid's route between two netpoints (cached): its links and latency summed in order.
  const RouteInfo& segment(const simgrid::kernel::routing::NetPoint* src,
                           const simgrid::kernel::routing::NetPoint* dst);
  /// Never iterated (its order would be the hash's): looked up by pair, its nodes stay put.
  std::unordered_map<std::pair<const void*, const void*>, RouteInfo, PointerPairHash> routes_, segments_;
  /// The s4u link of each link implementation SimGrid's kernel routes return (built on first use).
  std::unordered_map<const void*, simgrid::s4u::Link*> link_of_impl_;
  struct Traffic {
    double total = 0;
    double recent = 0;  ///< since the last take_recent_bytes
  };
  /// Per link of the built platform, reached through the link's user data (Link::set_data, set
  /// once the platform is built) instead of a hash look-up: what it is and what it carried.
  struct LinkSlot {
    const platforms::LinkInfo* info = nullptr;
    Traffic traffic;
    bool accounted = false;  ///< a flow crossed it (link_report lists it)
  };
  std::vector<LinkSlot> link_slots_;
  /// Gives every link of built_ its slot.
  void index_links();
  /// A link's slot (TRAINSIM_CHECK that the builder recorded the link).
  LinkSlot& slot(const simgrid::s4u::Link* link) const;
  std::vector<const simgrid::s4u::Link*> recent_links_;  ///< links with recent > 0, in first-use order
  double total_bytes_ = 0;
  std::any collective_memo_;
};

}  // namespace trainsim::engine
