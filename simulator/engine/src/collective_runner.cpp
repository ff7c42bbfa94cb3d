#include "collective_runner.hpp"

#include <algorithm>
#include <any>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "coarse_flows.hpp"
#include "trainsim/core/error.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

using plan::Ring;
using plan::RingSchedule;
using plan::Send;
using plan::StepSchedule;

std::vector<sg4::Host*> hosts_of(const Simulation& sim, const std::vector<int>& ranks) {
  std::vector<sg4::Host*> hosts;
  hosts.reserve(ranks.size());
  for (int r : ranks) hosts.push_back(sim.gpu(r));
  return hosts;
}

namespace {

/// Runs one StepSchedule with one actor per participant. Arrivals are counted per (participant,
/// step); a participant blocks on its own semaphore only when its step's messages are not all
/// there (actors are cooperative, so check-then-block cannot race). The schedule must outlive
/// the actors.
class StepRunner {
 public:
  StepRunner(Simulation& sim, std::vector<sg4::Host*> hosts, const StepSchedule& schedule, double overhead_s,
             double channel_Bps)
      : sim_(sim), hosts_(std::move(hosts)), schedule_(schedule), overhead_s_(overhead_s), channel_Bps_(channel_Bps) {
    TRAINSIM_CHECK(static_cast<int>(hosts_.size()) == schedule_.participants(), "schedule size mismatch");
    const std::size_t n = hosts_.size();
    arrived_.assign(n, std::vector<std::uint16_t>(std::size_t(schedule_.steps()), 0));
    waiting_.assign(n, -1);
    for (std::size_t p = 0; p < n; ++p) semaphores_.push_back(sg4::Semaphore::create(0));
  }

  void start(std::vector<sg4::ActorPtr>& actors) {
    for (std::size_t p = 0; p < hosts_.size(); ++p)
      actors.push_back(sg4::Actor::create("step" + std::to_string(p), hosts_[p], [this, p] { participant(int(p)); }));
  }
  long long flows() const { return flows_; }

 private:
  void participant(int p) {
    std::vector<Send> sends;
    std::vector<sg4::CommPtr> comms;
    const auto pi = std::size_t(p);
    for (int s = 0; s < schedule_.steps(); ++s) {
      sends.clear();
      schedule_.sends(p, s, sends);
      if (!sends.empty()) {
        if (overhead_s_ > 0) sg4::this_actor::sleep_for(overhead_s_);
        comms.clear();
        const double begin = sg4::Engine::get_clock();
        double largest = 0;
        for (const Send& m : sends) {
          comms.push_back(sim_.start_flow(hosts_[pi], hosts_[std::size_t(m.to)], m.bytes));
          largest = std::max(largest, m.bytes);
        }
        flows_ += static_cast<long long>(sends.size());
        for (auto& c : comms) c->wait();
        // The channel moves no faster than its ceiling, however fast the links would.
        if (channel_Bps_ > 0) {
          const double until = begin + largest / channel_Bps_;
          if (until > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(until);
        }
        for (const Send& m : sends) deliver(m.to, s);
      }
      if (arrived_[pi][std::size_t(s)] < schedule_.receives(p, s)) {
        waiting_[pi] = s;
        semaphores_[pi]->acquire();
      }
    }
  }
  void deliver(int q, int s) {
    const auto qi = std::size_t(q);
    ++arrived_[qi][std::size_t(s)];
    if (waiting_[qi] == s && arrived_[qi][std::size_t(s)] >= schedule_.receives(q, s)) {
      waiting_[qi] = -1;
      semaphores_[qi]->release();
    }
  }

  Simulation& sim_;
  std::vector<sg4::Host*> hosts_;
  const StepSchedule& schedule_;
  double overhead_s_;
  double channel_Bps_;
  std::vector<std::vector<std::uint16_t>> arrived_;
  std::vector<int> waiting_;
  std::vector<sg4::SemaphorePtr> semaphores_;
  long long flows_ = 0;
};

/// Starts a flow per (from, to, bytes) and returns when all are done. SimGrid 3.32 ends a comm
/// with a scan of its actor's pending activities, so one actor waiting on F flows costs O(F²)
/// (90 % of an 8,192-GPU coarse ring); above kFlowsPerActor flows they are started from helper
/// actors of at most that many each (below it, from the caller, as before: same results).
constexpr std::size_t kFlowsPerActor = 2048;
struct FlowSpec {
  sg4::Host* from;
  sg4::Host* to;
  double bytes;
};
void run_flows(Simulation& sim, const std::vector<FlowSpec>& flows) {
  auto batch = [&sim, &flows](std::size_t begin, std::size_t end) {
    std::vector<sg4::CommPtr> comms;
    comms.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) comms.push_back(sim.start_flow(flows[i].from, flows[i].to, flows[i].bytes));
    for (auto& c : comms) c->wait();
  };
  if (flows.size() <= kFlowsPerActor) {
    batch(0, flows.size());
    return;
  }
  std::vector<sg4::ActorPtr> actors;
  for (std::size_t b = 0; b < flows.size(); b += kFlowsPerActor)
    actors.push_back(sg4::Actor::create("flows" + std::to_string(b), sg4::this_actor::get_host(),
                                        [batch, b, &flows] { batch(b, std::min(flows.size(), b + kFlowsPerActor)); }));
  for (auto& a : actors) a->join();
}

/// Whether ring phases are played by play_flows instead of SimGrid flows: on the ideal model,
/// whose sharing play_flows reproduces. SimGrid 3.32 keeps every host-to-host comm in one list
/// (sendto_init detaches it into maestro's activities_) that each comm's end scans whole
/// (CommImpl::finish, std::list::remove), so F concurrent flows cost O(F²): 82 % of a 25 MB ring
/// on 2,048 GPUs (16,384 flows per step). The engine runs one all-reduce at a time, so a ring
/// phase has the network to itself, which play_flows assumes. Not on a SimGrid XML platform: it
/// may carry what play_flows does not reproduce (bandwidth or latency profiles, WIFI or FATPIPE
/// links, <config> settings of the network model).
bool plays_flows(const Simulation& sim) {
  return sim.spec().network.model == platforms::NetworkModel::ideal && !sim.spec().simgrid_xml;
}

/// The route latencies a ring's K steps pay in all as NCCL's model charges them (tuning.cc,
/// NCCL_ALGO_RING: latency = baseLat + (nsteps − nInter) · intraHw + nInter · interHw, nInter =
/// 2(nNodes − 1)): the ring's network hops' mean latency on nInter steps, its intra-node hops'
/// on the rest, the model's latency factor applied. Ranks are node-major (collective_schedule.hpp
/// RingLayout). Unset when the ring crosses fewer than 2 node boundaries (one node: every step
/// at its slowest hop, as before).
std::optional<double> nccl_ring_latency_s(Simulation& sim, const Ring& ring) {
  const int g = std::max(1, sim.spec().gpus_per_node);
  const double lf = sim.latency_factor();
  const std::size_t n = ring.ranks.size();
  double intra = 0, inter = 0;
  int intra_hops = 0, inter_hops = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int from = ring.ranks[i], to = ring.ranks[(i + 1) % n];
    const double latency = sim.route(sim.gpu(from), sim.gpu(to)).latency_s * lf;
    if (from / g != to / g) {
      inter += latency;
      ++inter_hops;
    } else {
      intra += latency;
      ++intra_hops;
    }
  }
  if (inter_hops < 2) return std::nullopt;
  const int inter_steps = std::min(ring.steps, 2 * (inter_hops - 1));
  return (ring.steps - inter_steps) * (intra_hops > 0 ? intra / intra_hops : 0.0) + inter_steps * inter / inter_hops;
}

/// The slowest of the lockstep rings' NCCL latencies (nccl_ring_latency_s); unset unless every
/// ring crosses nodes.
std::optional<double> nccl_rings_latency_s(Simulation& sim, const std::vector<Ring>& rings) {
  double latency = 0;
  for (const Ring& ring : rings) {
    const std::optional<double> l = nccl_ring_latency_s(sim, ring);
    if (!l) return std::nullopt;
    latency = std::max(latency, *l);
  }
  return latency;
}

/// Coarse: one flow per hop with the phase's K·chunk bytes per ring, each ring in its own actor;
/// then the remaining K−1 latencies of the ring's critical hop and K step overheads are slept.
void run_coarse(Simulation& sim, const std::vector<Ring>& rings, const CoarseFlows& shared,
                const CollectiveOptions& options, CollectiveStats& stats) {
  if (plays_flows(sim)) {
    // The same flows played by play_flows: each ring ends when its last hop's flow ends, plus the
    // rest it sleeps; the collective when its last ring does.
    std::vector<const RouteInfo*> routes;
    std::vector<double> bytes;
    for (const Ring& ring : rings) {
      const std::size_t n = ring.ranks.size();
      for (std::size_t i = 0; i < n; ++i) {
        sg4::Host* from = sim.gpu(ring.ranks[i]);
        sg4::Host* to = sim.gpu(ring.ranks[(i + 1) % n]);
        routes.push_back(&sim.route(from, to));
        bytes.push_back(sim.account_flow(from, to, ring.steps * ring.chunk_bytes));
      }
      stats.flows += static_cast<long long>(n);
    }
    const std::vector<double> finish = play_flows(routes, bytes, sim.latency_factor());
    double end = 0;
    std::size_t f = 0;
    for (std::size_t r = 0; r < rings.size(); ++r) {
      const CriticalHop crit = critical_hop(sim, rings[r], shared, r);
      double ring_end = 0;
      for (std::size_t i = 0; i < rings[r].ranks.size(); ++i, ++f) ring_end = std::max(ring_end, finish[f]);
      // The last hop's flow carried the critical hop's latency once; the rest of the steps' latency.
      const std::optional<double> nccl =
          options.nccl_protocol ? nccl_ring_latency_s(sim, rings[r]) : std::optional<double>{};
      const double latency = nccl ? *nccl - crit.latency_s : (rings[r].steps - 1) * crit.latency_s;
      end = std::max(end, ring_end + latency + rings[r].steps * options.step_overhead_s);
    }
    if (end > 0) sg4::this_actor::sleep_for(end);
    return;
  }
  std::vector<CriticalHop> critical;  // all read before the first actor starts (cached_coarse_flows)
  std::vector<std::optional<double>> nccl;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    critical.push_back(critical_hop(sim, rings[r], shared, r));
    nccl.push_back(options.nccl_protocol ? nccl_ring_latency_s(sim, rings[r]) : std::nullopt);
  }
  std::vector<sg4::ActorPtr> actors;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    const Ring* ring = &rings[r];
    const CriticalHop crit = critical[r];
    const double latency = nccl[r] ? std::max(0.0, *nccl[r] - crit.latency_s) : (ring->steps - 1) * crit.latency_s;
    auto body = [&sim, ring, &options, latency] {
      const std::vector<sg4::Host*> hosts = hosts_of(sim, ring->ranks);
      const std::size_t n = hosts.size();
      std::vector<FlowSpec> flows;
      flows.reserve(n);
      for (std::size_t i = 0; i < n; ++i)
        flows.push_back({hosts[i], hosts[(i + 1) % n], ring->steps * ring->chunk_bytes});
      run_flows(sim, flows);
      const double rest = latency + ring->steps * options.step_overhead_s;
      if (rest > 0) sg4::this_actor::sleep_for(rest);
    };
    actors.push_back(sg4::Actor::create("coarse-ring" + std::to_string(r), sim.gpu(ring->ranks[0]), body));
    stats.flows += static_cast<long long>(ring->ranks.size());
  }
  for (auto& a : actors) a->join();
}

/// Lockstep: one step of every ring together, in the calling actor; the other K−1 steps take the
/// same time and move the same flows again, whose bytes are accounted without simulating them.
void run_lockstep(Simulation& sim, const std::vector<Ring>& rings, const CollectiveOptions& options,
                  CollectiveStats& stats) {
  if (plays_flows(sim)) {
    // One step's flows played by play_flows (same bytes accounted, in the same order, as below).
    std::vector<const RouteInfo*> routes;
    std::vector<double> bytes;
    std::vector<std::pair<sg4::Host*, sg4::Host*>> hops;
    for (const Ring& ring : rings)
      for (std::size_t i = 0; i < ring.ranks.size(); ++i) {
        sg4::Host* from = sim.gpu(ring.ranks[i]);
        sg4::Host* to = sim.gpu(ring.ranks[(i + 1) % ring.ranks.size()]);
        hops.emplace_back(from, to);
        routes.push_back(&sim.route(from, to));
        bytes.push_back(sim.account_flow(from, to, ring.chunk_bytes));
      }
    const int rest = rings[0].steps - 1;
    std::size_t h = 0;
    for (const Ring& ring : rings)
      for (std::size_t i = 0; i < ring.ranks.size(); ++i, ++h)
        if (rest > 0) sim.account_flow(hops[h].first, hops[h].second, rest * ring.chunk_bytes);
    stats.flows += static_cast<long long>(routes.size());
    const std::vector<double> finish = play_flows(routes, bytes, sim.latency_factor());
    if (options.nccl_protocol) {
      // Each step's transfer is its slowest hop's without the latency, which the ring then pays
      // as NCCL's model does (nccl_ring_latency_s).
      if (const std::optional<double> latency = nccl_rings_latency_s(sim, rings)) {
        double transfer = 0;
        for (std::size_t i = 0; i < finish.size(); ++i)
          transfer = std::max(transfer, finish[i] - routes[i]->latency_s * sim.latency_factor());
        const double total = rings[0].steps * (options.step_overhead_s + transfer) + *latency;
        if (total > 0) sg4::this_actor::sleep_for(total);
        return;
      }
    }
    const double step = options.step_overhead_s + *std::max_element(finish.begin(), finish.end());
    if (step > 0) sg4::this_actor::sleep_for(rings[0].steps * step);
    return;
  }
  const double start = sg4::Engine::get_clock();
  if (options.step_overhead_s > 0) sg4::this_actor::sleep_for(options.step_overhead_s);
  std::vector<std::vector<sg4::Host*>> hosts;
  for (const Ring& ring : rings) hosts.push_back(hosts_of(sim, ring.ranks));
  std::vector<FlowSpec> flows;
  for (std::size_t r = 0; r < rings.size(); ++r)
    for (std::size_t i = 0; i < hosts[r].size(); ++i)
      flows.push_back({hosts[r][i], hosts[r][(i + 1) % hosts[r].size()], rings[r].chunk_bytes});
  run_flows(sim, flows);
  stats.flows += static_cast<long long>(flows.size());
  const double step = sg4::Engine::get_clock() - start;
  const int rest = rings[0].steps - 1;
  for (std::size_t r = 0; r < rings.size(); ++r)
    for (std::size_t i = 0; i < hosts[r].size() && rest > 0; ++i)
      sim.account_flow(hosts[r][i], hosts[r][(i + 1) % hosts[r].size()], rest * rings[r].chunk_bytes);
  if (options.nccl_protocol) {
    // The simulated step waited for its slowest hop's latency; the ring pays NCCL's instead: the
    // steps' transfer without the largest route latency, then nccl_ring_latency_s.
    if (const std::optional<double> latency = nccl_rings_latency_s(sim, rings)) {
      double largest = 0;
      for (std::size_t r = 0; r < rings.size(); ++r)
        for (std::size_t i = 0; i < hosts[r].size(); ++i)
          largest = std::max(
              largest, sim.route(hosts[r][i], hosts[r][(i + 1) % hosts[r].size()]).latency_s * sim.latency_factor());
      const double end = start + rings[0].steps * std::max(0.0, step - largest) + *latency;
      if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(end);
      return;
    }
  }
  if (rings[0].steps > 1) sg4::this_actor::sleep_for((rings[0].steps - 1) * step);
}

/// Step: every ring as a RingSchedule, all rings' actors at once.
void run_steps(Simulation& sim, const std::vector<Ring>& rings, const CollectiveOptions& options,
               CollectiveStats& stats) {
  std::vector<RingSchedule> schedules;
  for (const Ring& ring : rings) schedules.emplace_back(int(ring.ranks.size()), ring.steps, ring.chunk_bytes);
  std::vector<std::unique_ptr<StepRunner>> runners;
  std::vector<sg4::ActorPtr> actors;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    runners.push_back(
        std::make_unique<StepRunner>(sim, hosts_of(sim, rings[r].ranks), schedules[r], options.step_overhead_s, 0.0));
    runners.back()->start(actors);
  }
  for (auto& a : actors) a->join();
  for (const auto& runner : runners) stats.flows += runner->flows();
}

/// coarse_flows of `rings`, kept for the next call: the rates depend only on the rings' routes,
/// not on their bytes, and a training iteration runs the same rings for every bucket (five
/// solves of 524,288 flows at 65,536 GPUs). One Simulation exists per process, so the cache
/// never outlives its routes. The reference is valid until the next call: run_rings and its
/// representations read it before any simcall (actor creation, sleep, wait), so another actor's
/// collective cannot replace it underneath them.
const CoarseFlows& cached_coarse_flows(Simulation& sim, const std::vector<Ring>& rings) {
  static const Simulation* owner = nullptr;
  static std::vector<std::vector<int>> ranks;
  static CoarseFlows flows;
  bool same = owner == &sim && ranks.size() == rings.size();
  for (std::size_t r = 0; same && r < rings.size(); ++r) same = ranks[r] == rings[r].ranks;
  if (!same) {
    flows = coarse_flows(sim, rings);
    owner = &sim;
    ranks.clear();
    for (const Ring& ring : rings) ranks.push_back(ring.ranks);
  }
  return flows;
}

}  // namespace

CollectiveStats run_rings(Simulation& sim, const std::vector<Ring>& rings, const CollectiveOptions& options) {
  CollectiveStats stats;
  std::vector<Ring> active;
  for (const Ring& r : rings)
    if (r.ranks.size() >= 2 && r.steps > 0) active.push_back(r);
  if (active.empty()) return stats;
  stats.channels = int(active.size());
  Representation rep = options.representation;
  static const CoarseFlows none;
  const CoarseFlows& shared = rep != Representation::step ? cached_coarse_flows(sim, active) : none;
  const bool uniform =
      std::all_of(active.begin(), active.end(), [&](const Ring& r) { return r.steps == active[0].steps; });
  if (rep == Representation::automatic)
    rep = coarse_is_exact(sim, active, shared) ? Representation::coarse
          : uniform                            ? Representation::lockstep
                                               : Representation::step;
  if (rep == Representation::lockstep && !uniform) rep = Representation::step;  // steps would not line up
  stats.used = rep;
  switch (rep) {
    case Representation::coarse: run_coarse(sim, active, shared, options, stats); break;
    case Representation::lockstep: run_lockstep(sim, active, options, stats); break;
    case Representation::automatic:  // resolved above
    case Representation::step: run_steps(sim, active, options, stats); break;
  }
  return stats;
}

CollectiveStats run_schedule(Simulation& sim, const std::vector<int>& ranks, const StepSchedule& schedule,
                             const CollectiveOptions& options, double channel_Bps) {
  CollectiveStats stats;
  stats.used = Representation::step;
  StepRunner runner(sim, hosts_of(sim, ranks), schedule, options.step_overhead_s, channel_Bps);
  std::vector<sg4::ActorPtr> actors;
  runner.start(actors);
  for (auto& a : actors) a->join();
  stats.flows += runner.flows();
  return stats;
}

namespace {

/// Lockstep trees: every edge's message simulated twice, once with only its level's edges
/// loaded (level by level) and once with all of its phase's edges loaded; the schedule's
/// step-level semantics are then evaluated on those durations (TreeSchedule::completion_s) and
/// the rest slept. Edges are tree t's edge between participant p and its parent, index t·n + p.
class TreeLockstep {
 public:
  TreeLockstep(Simulation& sim, std::vector<sg4::Host*> hosts, const plan::TreeSchedule& schedule,
               CollectiveStats& stats, double channel_Bps)
      : sim_(sim),
        hosts_(std::move(hosts)),
        schedule_(schedule),
        stats_(stats),
        channel_Bps_(channel_Bps),
        n_(std::size_t(schedule.participants())),
        trees_(std::size_t(schedule.trees())) {
    for (auto* v : {&d_.up_alone, &d_.up_loaded, &d_.down_alone, &d_.down_loaded}) v->assign(n_ * trees_, 0.0);
    for (std::size_t t = 0; t < trees_; ++t)
      for (std::size_t p = 0; p < n_; ++p) levels_ = std::max(levels_, schedule.height(int(t), int(p)));
  }

  void run(const CollectiveOptions& options) {
    const double begin = sg4::Engine::get_clock();
    if (sim_.spec().network.model == platforms::NetworkModel::ideal) {
      // The ideal model shares a step's equal chunks max-min fairly, so the durations are computed
      // (share_max_min: route latency + chunk / fair rate) instead of simulated: SimGrid 3.32's
      // solver is superlinear in concurrent flows (a 1 GiB tree on 1024 GPUs: 24,576 per step).
      // The fair rates depend on the edges' routes only, not on the chunk: they are solved once per
      // tree layout (hosts and parents) and kept for the run's following all-reduces (an
      // iteration's buckets run the same trees), as are the links each direction's flows cross.
      play(solved_trees());
    } else {
      measure();
    }
    // The channel moves no faster than its ceiling (as StepRunner holds a step's sends).
    if (channel_Bps_ > 0)
      for (auto* v : {&d_.up_alone, &d_.up_loaded, &d_.down_alone, &d_.down_loaded})
        for (double& d : *v)
          if (d > 0) d = std::max(d, schedule_.chunk_bytes() / channel_Bps_);
    const double end = begin + schedule_.completion_s(d_, options.step_overhead_s);
    if (end > sg4::Engine::get_clock()) sg4::this_actor::sleep_for(end - sg4::Engine::get_clock());
  }

 private:
  /// What TreeSchedule::EdgeDurations holds, simulated into d_: each direction with all its edges
  /// loaded, then level by level alone. Every simulated flow's bytes are accounted; the loaded up
  /// phase also accounts the m − 1 chunks each edge carries beyond the one it simulates. The solved
  /// form (solve_layout) selects the same phases' edges in the same order.
  void measure() {
    auto all = [](std::size_t, std::size_t, std::size_t) { return true; };
    simulate(true, all, d_.up_loaded, true);
    simulate(false, all, d_.down_loaded, false);
    for (int level = 0; level < levels_; ++level) {
      simulate(
          true, [&](std::size_t t, std::size_t p, std::size_t) { return schedule_.height(int(t), int(p)) == level; },
          d_.up_alone, false);
      simulate(
          false, [&](std::size_t t, std::size_t, std::size_t q) { return schedule_.depth(int(t), int(q)) == level; },
          d_.down_alone, false);
    }
  }

  /// One simulated step over the edges `in` selects; their durations go to `out`. Each tree's
  /// flows are started and waited by an actor of their own: SimGrid 3.32's bookkeeping of an
  /// actor's pending activities is linear in their number, so one actor for all is quadratic.
  template <class In>
  void simulate(bool up, const In& in, std::vector<double>& out, bool account) {
    const double start = sg4::Engine::get_clock();
    std::vector<sg4::ActorPtr> actors;
    for (std::size_t t = 0; t < trees_; ++t)
      actors.push_back(sg4::Actor::create(
          "tree-step" + std::to_string(t), sg4::this_actor::get_host(),
          [this, t, up, &in, &out, account, start] { simulate_tree(t, up, in, out, account, start); }));
    for (auto& a : actors) a->join();
  }
  template <class In>
  void simulate_tree(std::size_t t, bool up, const In& in, std::vector<double>& out, bool account, double start) {
    std::vector<sg4::CommPtr> comms;
    std::vector<std::size_t> edge;
    for (std::size_t p = 0; p < n_; ++p) {
      const int parent = schedule_.parent(int(t), int(p));
      if (parent < 0 || !in(t, p, std::size_t(parent))) continue;
      sg4::Host* from = up ? hosts_[p] : hosts_[std::size_t(parent)];
      sg4::Host* to = up ? hosts_[std::size_t(parent)] : hosts_[p];
      comms.push_back(sim_.start_flow(from, to, schedule_.chunk_bytes()));
      edge.push_back(t * n_ + p);
      // Every edge carries all m chunks in each phase; the loaded step simulates one.
      if (account && schedule_.chunks() > 1)
        sim_.account_flow(from, to, (schedule_.chunks() - 1) * schedule_.chunk_bytes());
    }
    for (auto& c : comms) c->wait();
    for (std::size_t e = 0; e < comms.size(); ++e) out[edge[e]] = comms[e]->get_finish_time() - start;
    stats_.flows += static_cast<long long>(comms.size());
  }

  /// The fair rates of a tree layout's edges (index t·n + p; 0 for roots) on the ideal model,
  /// with every edge of a direction loaded ("loaded") and with only the edges of its level
  /// ("alone": up by the child's height, down by the parent's depth), and the links each
  /// direction's flows cross. They depend on the routes only, not on the chunk size.
  struct SolvedTrees {
    std::vector<sg4::Host*> hosts;
    std::vector<int> parents;              ///< tree-major, the layout the rates belong to
    std::vector<const RouteInfo*> routes;  ///< [2·e + down]
    plan::TreeSchedule::EdgeDurations rates;
    std::vector<std::pair<const sg4::Link*, double>> up_links, down_links;  ///< flows per link, all edges
    std::size_t edges = 0;
  };

  /// This layout's solved rates, from the simulation's memo or solved now and kept there.
  const SolvedTrees& solved_trees() {
    using Memo = std::vector<std::shared_ptr<SolvedTrees>>;
    std::any& memo_any = sim_.collective_memo();
    if (!memo_any.has_value()) memo_any = Memo{};
    Memo& memo = std::any_cast<Memo&>(memo_any);
    std::vector<int> parents(n_ * trees_);
    for (std::size_t t = 0; t < trees_; ++t)
      for (std::size_t p = 0; p < n_; ++p) parents[t * n_ + p] = schedule_.parent(int(t), int(p));
    for (const auto& entry : memo)
      if (entry->hosts == hosts_ && entry->parents == parents) return *entry;
    auto solved = std::make_shared<SolvedTrees>();
    solved->hosts = hosts_;
    solved->parents = std::move(parents);
    solve_layout(*solved);
    memo.push_back(std::move(solved));
    return *memo.back();
  }

  /// Every edge's route up (child → parent) and down as max-min problems built once, one per
  /// distinct route (edges of trees that share a chain or a pair of heads share their route's
  /// problem); each phase solves the subset it moves as one flow per distinct route, weighted by
  /// the edges that use it (max_min_rates' copies: the same sums in the same order as one flow per
  /// edge, so the same rates to the bit). The edges of each
  /// level are listed in one pass instead of a scan of every edge per level.
  void solve_layout(SolvedTrees& out) {
    const std::size_t edges = n_ * trees_;
    out.routes.assign(2 * edges, nullptr);
    std::vector<const RouteInfo*> used;
    std::unordered_map<const RouteInfo*, std::size_t> route_slot;
    std::vector<std::size_t> slot(out.routes.size(), 0);
    // How many edges take each distinct route up and down, and the routes in the order each
    // direction first takes them: the links' flow counts follow per route, not per edge (same
    // links in the same first-use order, the same integer counts).
    std::vector<double> up_uses, down_uses;
    std::vector<std::size_t> up_order, down_order;
    auto use = [](std::size_t r, std::vector<double>& uses, std::vector<std::size_t>& order) {
      if (uses[r] == 0) order.push_back(r);
      uses[r] += 1;
    };
    // Edges (index t·n + p) per phase: all of a direction, and per level (up by the child's
    // height, down by the parent's depth), each list tree-major.
    std::vector<std::size_t> loaded;
    std::vector<std::vector<std::size_t>> up_level(static_cast<std::size_t>(levels_)), down_level(up_level.size());
    // The trees of a channel share their chains, so a child often meets the same parent in several
    // trees: each participant keeps the parents it has met with their routes' slots, and a pair's
    // routes are looked up once instead of once per tree (two million look-ups in maps of 360,000
    // routes at 65,536 GPUs, 16 trees). The slots are what the look-ups would give.
    struct Met {
      int parent;
      std::size_t up, down;
    };
    std::vector<Met> met(n_ * trees_);
    std::vector<std::size_t> met_count(n_, 0);
    for (std::size_t e = 0; e < out.parents.size(); ++e)
      if (const int parent = out.parents[e]; parent >= 0) {
        const std::size_t p = e % n_;
        const Met* first = met.data() + p * trees_;
        const Met* known =
            std::find_if(first, first + met_count[p], [parent](const Met& m) { return m.parent == parent; });
        if (known != first + met_count[p]) {
          slot[2 * e] = known->up;
          slot[2 * e + 1] = known->down;
          out.routes[2 * e] = used[known->up];
          out.routes[2 * e + 1] = used[known->down];
        } else {
          sg4::Host* child = hosts_[p];
          out.routes[2 * e] = &sim_.route(child, hosts_[std::size_t(parent)]);
          out.routes[2 * e + 1] = &sim_.route(hosts_[std::size_t(parent)], child);
          for (std::size_t k : {2 * e, 2 * e + 1}) {
            auto [it, added] = route_slot.try_emplace(out.routes[k], used.size());
            if (added) {
              used.push_back(out.routes[k]);
              up_uses.push_back(0);
              down_uses.push_back(0);
            }
            slot[k] = it->second;
          }
          met[p * trees_ + met_count[p]++] = Met{parent, slot[2 * e], slot[2 * e + 1]};
        }
        use(slot[2 * e], up_uses, up_order);
        use(slot[2 * e + 1], down_uses, down_order);
        ++out.edges;
        loaded.push_back(e);
        const int t = int(e / n_);
        if (const int h = schedule_.height(t, int(e % n_)); h >= 0 && h < levels_)
          up_level[std::size_t(h)].push_back(e);
        if (const int d = schedule_.depth(t, parent); d >= 0 && d < levels_) down_level[std::size_t(d)].push_back(e);
      }
    // Indexed by the simulation's link index: a map keyed by link took a cache miss per use.
    std::vector<std::size_t> index(sim_.link_count());
    auto count_links = [&](const std::vector<double>& uses, const std::vector<std::size_t>& order,
                           std::vector<std::pair<const sg4::Link*, double>>& links) {
      constexpr std::size_t kUnseen = static_cast<std::size_t>(-1);
      std::fill(index.begin(), index.end(), kUnseen);
      for (std::size_t r : order)
        for (const sg4::Link* l : used[r]->links) {
          std::size_t& i = index[sim_.link_index(l)];
          if (i == kUnseen) {
            i = links.size();
            links.emplace_back(l, 0.0);
          }
          links[i].second += uses[r];
        }
    };
    count_links(up_uses, up_order, out.up_links);
    count_links(down_uses, down_order, out.down_links);
    const RouteProblems problems = route_problems(used, &sim_);
    for (auto* v : {&out.rates.up_alone, &out.rates.up_loaded, &out.rates.down_alone, &out.rates.down_loaded})
      v->assign(edges, 0.0);
    // Each phase's edges as one flow per distinct route standing for its edges (max_min_rates'
    // copies; at 16,384 GPUs 262,128 edges take 90,080 routes up and down). The same rates, to the bit,
    // as one flow per edge: every flow here has penalty 1 and weight 1 on each link, so the
    // usages are integer sums, and in a round of progressive filling every flow a link fixes
    // takes the round's level and every bound-fixed flow its bound in bound order: each link's
    // remaining capacity loses the same values in the same order whichever edge they come from.
    std::vector<const MaxMinFlow*> pointers;
    std::vector<std::size_t> copies, group(used.size(), 0), phase_of(used.size(), 0);
    std::size_t phase_id = 0;
    auto solve = [&](bool up, const std::vector<std::size_t>& in, std::vector<double>& rates) {
      pointers.clear();
      copies.clear();
      ++phase_id;
      for (std::size_t e : in) {
        const std::size_t s = slot[2 * e + (up ? 0 : 1)];
        if (phase_of[s] != phase_id) {
          phase_of[s] = phase_id;
          group[s] = pointers.size();
          pointers.push_back(&problems.flows[s]);
          copies.push_back(0);
        }
        ++copies[group[s]];
      }
      // Only the links these flows use count, as when solving them on their own.
      const std::vector<double> r = max_min_rates(problems.capacity, pointers, nullptr, nullptr, &copies);
      for (std::size_t e : in) rates[e] = r[group[slot[2 * e + (up ? 0 : 1)]]];
    };
    solve(true, loaded, out.rates.up_loaded);
    solve(false, loaded, out.rates.down_loaded);
    for (std::size_t level = 0; level < std::size_t(levels_); ++level) {
      solve(true, up_level[level], out.rates.up_alone);
      solve(false, down_level[level], out.rates.down_alone);
    }
  }

  /// Every edge's duration in each phase from its kept rate: route latency (× the model's latency
  /// factor) + chunk / fair rate; the loaded phases account all m chunks of every edge.
  void play(const SolvedTrees& solved) {
    const double lf = sim_.latency_factor(), chunk = schedule_.chunk_bytes();
    auto phase = [&](bool up, const std::vector<double>& rates, std::vector<double>& out, bool account) {
      for (std::size_t e = 0; e < rates.size(); ++e)
        if (rates[e] > 0) out[e] = solved.routes[2 * e + (up ? 0 : 1)]->latency_s * lf + chunk / rates[e];
      if (account)
        sim_.account_flows(up ? solved.up_links : solved.down_links, double(solved.edges), schedule_.chunks() * chunk);
      stats_.flows += static_cast<long long>(solved.edges);
    };
    phase(true, solved.rates.up_loaded, d_.up_loaded, true);
    phase(false, solved.rates.down_loaded, d_.down_loaded, true);
    phase(true, solved.rates.up_alone, d_.up_alone, false);
    phase(false, solved.rates.down_alone, d_.down_alone, false);
  }

  Simulation& sim_;
  std::vector<sg4::Host*> hosts_;
  const plan::TreeSchedule& schedule_;
  CollectiveStats& stats_;
  double channel_Bps_;
  std::size_t n_, trees_;
  int levels_ = 0;
  plan::TreeSchedule::EdgeDurations d_;
};

}  // namespace

CollectiveStats run_trees(Simulation& sim, const plan::NcclTrees& trees, const CollectiveOptions& options) {
  const plan::TreeSchedule& schedule = trees.schedule;
  Representation rep = options.representation;
  if (rep == Representation::automatic)
    rep = double(schedule.participants()) * schedule.steps() * schedule.trees() <= kTreeStepBudget
              ? Representation::step
              : Representation::lockstep;
  if (rep == Representation::coarse) rep = Representation::lockstep;
  CollectiveStats stats;
  if (rep == Representation::step) {
    stats = run_schedule(sim, trees.ranks, schedule, options, trees.channel_Bps);
  } else {
    stats.used = Representation::lockstep;
    TreeLockstep(sim, hosts_of(sim, trees.ranks), schedule, stats, trees.channel_Bps).run(options);
  }
  stats.channels = trees.channels;
  return stats;
}

CollectiveStats run_halving_doubling(Simulation& sim, const std::vector<int>& ranks,
                                     const plan::HalvingDoublingSchedule& schedule, const CollectiveOptions& options) {
  Representation rep = options.representation;
  if (rep == Representation::automatic)
  {
    // Folding extra ranks in lets ranks of the core start early and share links with the fold,
    // which lockstep's barriers would hide: powers of two only.
    const int n = schedule.participants();
    rep = n >= kHalvingDoublingLockstepRanks && (n & (n - 1)) == 0 ? Representation::lockstep : Representation::step;
  }
  if (rep == Representation::coarse) rep = Representation::lockstep;
  if (rep == Representation::step) return run_schedule(sim, ranks, schedule, options);
  CollectiveStats stats;
  stats.used = Representation::lockstep;
  const std::vector<sg4::Host*> hosts = hosts_of(sim, ranks);
  std::vector<Send> sends;
  std::vector<sg4::CommPtr> comms;
  for (int s = 0; s < schedule.steps(); ++s) {
    if (options.step_overhead_s > 0) sg4::this_actor::sleep_for(options.step_overhead_s);
    comms.clear();
    for (int p = 0; p < schedule.participants(); ++p) {
      sends.clear();
      schedule.sends(p, s, sends);
      for (const Send& m : sends) comms.push_back(sim.start_flow(hosts[std::size_t(p)], hosts[std::size_t(m.to)], m.bytes));
    }
    for (auto& c : comms) c->wait();
    stats.flows += static_cast<long long>(comms.size());
  }
  return stats;
}

}  // namespace trainsim::engine
