#include "trainsim/engine/collectives.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <map>
#include <memory>
#include <unordered_map>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "trainsim/core/error.hpp"
#include "trainsim/platforms/simgrid_builder.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

// ---------------------------------------------------------------------------------------------
// Step-level programs. Participant p at step s sends `sends(p, s)` and then waits for
// `receives(p, s)` messages of that step. A rank starts step s+1 only when its step-s sends are
// done and its step-s messages have arrived: the data dependency of every algorithm below.

struct Send {
  int to;
  double bytes;
};

class Schedule {
public:
  virtual ~Schedule() = default;
  virtual int participants() const = 0;
  virtual int steps() const = 0;
  virtual void sends(int p, int step, std::vector<Send>& out) const = 0;
  virtual int receives(int p, int step) const = 0;
};

/// K steps of `chunk` bytes from p to p+1 around a ring.
class RingSchedule final : public Schedule {
public:
  RingSchedule(int n, int steps, double chunk) : n_(n), steps_(steps), chunk_(chunk) {}
  int participants() const override { return n_; }
  int steps() const override { return steps_; }
  void sends(int p, int, std::vector<Send>& out) const override { out.push_back({(p + 1) % n_, chunk_}); }
  int receives(int, int) const override { return 1; }

private:
  int n_, steps_;
  double chunk_;
};

/// Pipelined chain from participant 0: m chunks; p sends chunk j to p+1 at step p+j.
class ChainSchedule final : public Schedule {
public:
  ChainSchedule(int n, int chunks, double chunk) : n_(n), m_(chunks), chunk_(chunk) {}
  int participants() const override { return n_; }
  int steps() const override { return n_ - 2 + m_; }
  void sends(int p, int s, std::vector<Send>& out) const override {
    if (p < n_ - 1 && s - p >= 0 && s - p < m_) out.push_back({p + 1, chunk_});
  }
  int receives(int p, int s) const override { return p >= 1 && s - (p - 1) >= 0 && s - (p - 1) < m_ ? 1 : 0; }

private:
  int n_, m_;
  double chunk_;
};

/// Recursive halving (reduce-scatter) then recursive doubling (all-gather) on the largest power of
/// two p2 ≤ n; the r = n − p2 extra ranks first hand their whole buffer to rank i < r and get the
/// result back at the end (Rabenseifner / Thakur et al. 2005).
class HalvingDoublingSchedule final : public Schedule {
public:
  HalvingDoublingSchedule(int n, double bytes) : n_(n), bytes_(bytes) {
    p2_ = 1;
    while (p2_ * 2 <= n_) p2_ *= 2;
    levels_ = 0;
    while ((1 << levels_) < p2_) ++levels_;
    fold_ = n_ > p2_ ? 1 : 0;
  }
  int participants() const override { return n_; }
  int steps() const override { return 2 * fold_ + 2 * levels_; }
  void sends(int p, int s, std::vector<Send>& out) const override {
    if (int to = partner(p, s); to >= 0) out.push_back({to, bytes_at(s)});
  }
  int receives(int p, int s) const override {
    // Exchanges are symmetric except the fold steps.
    if (fold_ && s == 0) return p < n_ - p2_ ? 1 : 0;
    if (fold_ && s == steps() - 1) return p >= p2_ ? 1 : 0;
    return p < p2_ ? 1 : 0;
  }

private:
  int partner(int p, int s) const {
    if (fold_ && s == 0) return p >= p2_ ? p - p2_ : -1;
    if (fold_ && s == steps() - 1) return p < n_ - p2_ ? p + p2_ : -1;
    if (p >= p2_) return -1;
    const int k = s - fold_;
    if (k < levels_) return p ^ (p2_ >> (k + 1));  // halving: distance p2/2, p2/4, ...
    return p ^ (1 << (k - levels_));                 // doubling: distance 1, 2, ...
  }
  double bytes_at(int s) const {
    if (fold_ && (s == 0 || s == steps() - 1)) return bytes_;
    const int k = s - fold_;
    if (k < levels_) return bytes_ / double(1 << (k + 1));
    return bytes_ / p2_ * double(1 << (k - levels_));
  }
  int n_, p2_ = 1, levels_ = 0, fold_ = 0;
  double bytes_;
};

/// NCCL-style double binary tree: two binary trees (heap layout over positions, and its mirror
/// p -> n−1−p, so the leaves of one are the inner nodes of the other), each reducing then
/// broadcasting half of the buffer in m pipelined chunks. A node of height h sends chunk j up at
/// step h+j; after R = H+m−1 reduce steps, a node of depth d sends chunk j down at step R+d+j.
class DoubleTreeSchedule final : public Schedule {
public:
  DoubleTreeSchedule(int n, int chunks, double chunk) : n_(n), m_(chunks), chunk_(chunk) {
    height_.assign(std::size_t(n), 0);
    depth_.assign(std::size_t(n), 0);
    for (int p = n - 1; p >= 1; --p) {
      const int parent = (p - 1) / 2;
      height_[std::size_t(parent)] = std::max(height_[std::size_t(parent)], height_[std::size_t(p)] + 1);
    }
    for (int p = 1; p < n; ++p) depth_[std::size_t(p)] = depth_[std::size_t((p - 1) / 2)] + 1;
    root_height_ = height_[0];
    reduce_steps_ = root_height_ + m_ - 1;
  }
  int participants() const override { return n_; }
  int steps() const override { return reduce_steps_ + root_height_ + m_ - 1; }
  void sends(int p, int s, std::vector<Send>& out) const override {
    for (int tree = 0; tree < 2; ++tree) {
      const int q = pos(tree, p);
      if (s < reduce_steps_) {
        const int j = s - height_[std::size_t(q)];
        if (q > 0 && j >= 0 && j < m_) out.push_back({pos(tree, (q - 1) / 2), chunk_});
      } else {
        const int j = s - reduce_steps_ - depth_[std::size_t(q)];
        if (j >= 0 && j < m_)
          for (int c = 2 * q + 1; c <= 2 * q + 2 && c < n_; ++c) out.push_back({pos(tree, c), chunk_});
      }
    }
  }
  int receives(int p, int s) const override {
    int count = 0;
    for (int tree = 0; tree < 2; ++tree) {
      const int q = pos(tree, p);
      if (s < reduce_steps_) {
        for (int c = 2 * q + 1; c <= 2 * q + 2 && c < n_; ++c) {
          const int j = s - height_[std::size_t(c)];
          if (j >= 0 && j < m_) ++count;
        }
      } else if (q > 0) {
        const int j = s - reduce_steps_ - depth_[std::size_t((q - 1) / 2)];
        if (j >= 0 && j < m_) ++count;
      }
    }
    return count;
  }

private:
  int pos(int tree, int p) const { return tree == 0 ? p : n_ - 1 - p; }  // an involution
  int n_, m_;
  double chunk_;
  std::vector<int> height_, depth_;
  int root_height_ = 0, reduce_steps_ = 0;
};

/// Runs one Schedule with one actor per participant. Arrivals are counted per (participant, step);
/// a participant blocks on its own semaphore only when its step's messages are not all there
/// (actors are cooperative, so check-then-block cannot race).
class StepRunner {
public:
  StepRunner(Simulation& sim, std::vector<sg4::Host*> hosts, std::unique_ptr<Schedule> schedule, double overhead_s)
      : sim_(sim), hosts_(std::move(hosts)), schedule_(std::move(schedule)), overhead_s_(overhead_s) {
    TRAINSIM_CHECK(static_cast<int>(hosts_.size()) == schedule_->participants(), "schedule size mismatch");
    const std::size_t n = hosts_.size();
    arrived_.assign(n, std::vector<std::uint16_t>(std::size_t(schedule_->steps()), 0));
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
    for (int s = 0; s < schedule_->steps(); ++s) {
      sends.clear();
      schedule_->sends(p, s, sends);
      if (!sends.empty()) {
        if (overhead_s_ > 0) sg4::this_actor::sleep_for(overhead_s_);
        comms.clear();
        for (const Send& m : sends) comms.push_back(sim_.start_flow(hosts_[pi], hosts_[std::size_t(m.to)], m.bytes));
        flows_ += static_cast<long long>(sends.size());
        for (auto& c : comms) c->wait();
        for (const Send& m : sends) deliver(m.to, s);
      }
      if (arrived_[pi][std::size_t(s)] < schedule_->receives(p, s)) {
        waiting_[pi] = s;
        semaphores_[pi]->acquire();
      }
    }
  }
  void deliver(int q, int s) {
    const auto qi = std::size_t(q);
    ++arrived_[qi][std::size_t(s)];
    if (waiting_[qi] == s && arrived_[qi][std::size_t(s)] >= schedule_->receives(q, s)) {
      waiting_[qi] = -1;
      semaphores_[qi]->release();
    }
  }

  Simulation& sim_;
  std::vector<sg4::Host*> hosts_;
  std::unique_ptr<Schedule> schedule_;
  double overhead_s_;
  std::vector<std::vector<std::uint16_t>> arrived_;
  std::vector<int> waiting_;
  std::vector<sg4::SemaphorePtr> semaphores_;
  long long flows_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Rings: several may run at once (hierarchical phases); each is K steps of `chunk` bytes.

struct RingJob {
  std::vector<sg4::Host*> hosts;
  int steps = 0;
  double chunk = 0;
};

/// Rates of the coarse flows of rings run together: one flow per hop, all active at once, shared
/// max-min fairly as SimGrid's ideal network model does (progressive filling: the link with the
/// smallest fair share fixes the rate of every flow still free on it). FATPIPE links cap each flow
/// at their bandwidth without sharing. `bottleneck` is the shared link that fixed a flow's rate
/// (null when a FATPIPE link or the flow's own route did).
struct CoarseFlows {
  struct Flow {
    const RouteInfo* route = nullptr;
    std::size_t ring = 0;
    double rate_Bps = 0;
    const sg4::Link* bottleneck = nullptr;
  };
  std::vector<Flow> flows;           ///< ring-major, hop-minor
  std::vector<std::size_t> ring_begin;  ///< ring r's flows are [ring_begin[r], ring_begin[r + 1])
};

CoarseFlows coarse_flows(Simulation& sim, const std::vector<RingJob>& rings) {
  CoarseFlows out;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    out.ring_begin.push_back(out.flows.size());
    const std::size_t n = rings[r].hosts.size();
    for (std::size_t i = 0; i < n; ++i)
      out.flows.push_back({&sim.route(rings[r].hosts[i], rings[r].hosts[(i + 1) % n]), r, 0, nullptr});
  }
  out.ring_begin.push_back(out.flows.size());
  // Links indexed densely; per link its flows, remaining capacity and count of flows not yet fixed.
  std::unordered_map<const sg4::Link*, std::size_t> index;
  std::vector<const sg4::Link*> links;
  std::vector<std::vector<std::size_t>> users;
  std::vector<std::vector<std::size_t>> flow_links(out.flows.size());
  std::vector<double> cap(out.flows.size(), std::numeric_limits<double>::infinity());
  for (std::size_t f = 0; f < out.flows.size(); ++f)
    for (const sg4::Link* l : out.flows[f].route->links) {
      if (l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE) {
        cap[f] = std::min(cap[f], l->get_bandwidth());
        continue;
      }
      auto [it, added] = index.try_emplace(l, links.size());
      if (added) {
        links.push_back(l);
        users.emplace_back();
      }
      users[it->second].push_back(f);
      flow_links[f].push_back(it->second);
    }
  std::vector<double> remaining(links.size());
  std::vector<std::size_t> free_flows(links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    remaining[l] = links[l]->get_bandwidth();
    free_flows[l] = users[l].size();
  }
  std::vector<bool> fixed(out.flows.size(), false);
  std::size_t left = out.flows.size();
  auto fix = [&](std::size_t f, double rate, const sg4::Link* bottleneck) {
    fixed[f] = true;
    --left;
    out.flows[f].rate_Bps = rate;
    out.flows[f].bottleneck = bottleneck;
    for (std::size_t l : flow_links[f]) {
      remaining[l] -= rate;
      --free_flows[l];
    }
  };
  // Each round fixes every flow of every link whose fair share is the smallest (ties together:
  // symmetric platforms then need a handful of rounds, not one per link).
  while (left > 0) {
    double share = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < links.size(); ++l)
      if (free_flows[l] > 0) share = std::min(share, remaining[l] / free_flows[l]);
    for (std::size_t f = 0; f < out.flows.size(); ++f)
      if (!fixed[f]) share = std::min(share, cap[f]);
    const double level = share * (1 + 1e-12);
    std::vector<std::size_t> tight;
    for (std::size_t l = 0; l < links.size(); ++l)
      if (free_flows[l] > 0 && remaining[l] / free_flows[l] <= level) tight.push_back(l);
    for (std::size_t l : tight)
      for (std::size_t f : users[l])
        if (!fixed[f]) fix(f, share, links[l]);
    for (std::size_t f = 0; f < out.flows.size(); ++f)
      if (!fixed[f] && cap[f] <= level) fix(f, share, nullptr);
  }
  return out;
}

/// The critical hop of a ring: the one with the largest step time o + α_h + c/r_h at its coarse
/// (shared) rate, α scaled by the model's latency factor.
struct CriticalHop {
  double latency_s = 0;  ///< its route latency, scaled
  double step_s = 0;     ///< α_h + c/r_h
};

CriticalHop critical_hop(Simulation& sim, const RingJob& ring, const CoarseFlows& flows, std::size_t ring_index) {
  const double lf = sim.latency_factor();
  CriticalHop crit;
  for (std::size_t i = flows.ring_begin[ring_index]; i < flows.ring_begin[ring_index + 1]; ++i) {
    const auto& f = flows.flows[i];
    const double step = f.route->latency_s * lf + ring.chunk / f.rate_Bps;
    if (step > crit.step_s) crit = {f.route->latency_s * lf, step};
  }
  return crit;
}

/// Whether the coarse representation is exact for rings run together (see collectives.hpp).
/// With every hop's flow at its max-min rate: (1) in every ring the hop with the largest per-step
/// time also finishes its K-step flow last, and (2) every flow that finishes last in its ring is
/// bottlenecked on a link all of whose flows finish at that same time, so no early finisher ever
/// hands it bandwidth and its rate holds for the whole phase. Then the step-level time
/// K·(o + α* + c/r*) equals the coarse time (α* + K·c/r*) + (K−1)·α* + K·o. (Symmetric rings that
/// share NICs or PCIe uplinks, as the four rings of DGX-1 nodes do, qualify; lone-rate checks did not.)
bool coarse_is_exact(Simulation& sim, const std::vector<RingJob>& rings, const CoarseFlows& flows) {
  if (sim.spec().network.model != platforms::NetworkModel::ideal) return false;
  std::vector<double> finish(flows.flows.size());
  std::vector<double> ring_finish(rings.size(), 0);
  for (std::size_t f = 0; f < flows.flows.size(); ++f) {
    const auto& flow = flows.flows[f];
    const RingJob& ring = rings[flow.ring];
    finish[f] = flow.route->latency_s + ring.steps * ring.chunk / flow.rate_Bps;
    ring_finish[flow.ring] = std::max(ring_finish[flow.ring], finish[f]);
  }
  std::unordered_map<const sg4::Link*, std::pair<double, double>> finish_range;  // min, max finish of a link's flows
  for (std::size_t f = 0; f < flows.flows.size(); ++f)
    for (const sg4::Link* l : flows.flows[f].route->links) {
      auto [it, inserted] = finish_range.try_emplace(l, finish[f], finish[f]);
      if (!inserted) it->second = {std::min(it->second.first, finish[f]), std::max(it->second.second, finish[f])};
    }
  for (std::size_t r = 0; r < rings.size(); ++r) {
    const CriticalHop crit = critical_hop(sim, rings[r], flows, r);
    double critical_flow = 0;
    for (std::size_t f = flows.ring_begin[r]; f < flows.ring_begin[r + 1]; ++f) {
      const auto& flow = flows.flows[f];
      const double step = flow.route->latency_s * sim.latency_factor() + rings[r].chunk / flow.rate_Bps;
      if (step >= crit.step_s * (1 - 1e-12)) critical_flow = std::max(critical_flow, finish[f]);
      if (finish[f] >= ring_finish[r] * (1 - 1e-9) && flow.bottleneck) {
        const auto& [lo, hi] = finish_range.at(flow.bottleneck);
        if (lo < hi * (1 - 1e-9)) return false;
      }
    }
    if (critical_flow < ring_finish[r] * (1 - 1e-9)) return false;
  }
  return true;
}

void run_rings(Simulation& sim, const std::vector<RingJob>& rings, const CollectiveOptions& options,
               CollectiveStats& stats) {
  std::vector<RingJob> active;
  for (const RingJob& r : rings)
    if (r.hosts.size() >= 2 && r.steps > 0) active.push_back(r);
  if (active.empty()) return;
  Representation rep = options.representation;
  const CoarseFlows shared = rep != Representation::step ? coarse_flows(sim, active) : CoarseFlows{};
  const bool uniform = std::all_of(active.begin(), active.end(), [&](const RingJob& r) { return r.steps == active[0].steps; });
  if (rep == Representation::automatic)
    rep = coarse_is_exact(sim, active, shared) ? Representation::coarse : uniform ? Representation::lockstep : Representation::step;
  if (rep == Representation::lockstep && !uniform) rep = Representation::step;  // steps would not line up
  stats.used = rep;
  std::vector<sg4::ActorPtr> actors;
  if (rep == Representation::coarse) {
    // One flow per hop with the phase's K·chunk bytes; then the remaining K−1 latencies of the
    // critical hop and K step overheads.
    for (std::size_t r = 0; r < active.size(); ++r) {
      const RingJob* job = &active[r];
      const CriticalHop crit = critical_hop(sim, *job, shared, r);
      actors.push_back(sg4::Actor::create("coarse-ring" + std::to_string(r), job->hosts[0], [&sim, job, &options, crit] {
        const std::size_t n = job->hosts.size();
        std::vector<sg4::CommPtr> comms;
        for (std::size_t i = 0; i < n; ++i)
          comms.push_back(sim.start_flow(job->hosts[i], job->hosts[(i + 1) % n], job->steps * job->chunk));
        for (auto& c : comms) c->wait();
        const double rest = (job->steps - 1) * crit.latency_s + job->steps * options.step_overhead_s;
        if (rest > 0) sg4::this_actor::sleep_for(rest);
      }));
      stats.flows += static_cast<long long>(job->hosts.size());
    }
    for (auto& a : actors) a->join();
    return;
  }
  if (rep == Representation::lockstep) {
    // One step of every ring together, in this actor; the other K−1 steps take the same time.
    const double start = sg4::Engine::get_clock();
    if (options.step_overhead_s > 0) sg4::this_actor::sleep_for(options.step_overhead_s);
    std::vector<sg4::CommPtr> comms;
    for (const RingJob& job : active)
      for (std::size_t i = 0; i < job.hosts.size(); ++i)
        comms.push_back(sim.start_flow(job.hosts[i], job.hosts[(i + 1) % job.hosts.size()], job.chunk));
    for (auto& c : comms) c->wait();
    stats.flows += static_cast<long long>(comms.size());
    const double step = sg4::Engine::get_clock() - start;
    // The remaining steps move the same flows again: account their bytes without simulating them.
    const int rest = active[0].steps - 1;
    for (const RingJob& job : active)
      for (std::size_t i = 0; i < job.hosts.size() && rest > 0; ++i)
        sim.account_flow(job.hosts[i], job.hosts[(i + 1) % job.hosts.size()], rest * job.chunk);
    if (active[0].steps > 1) sg4::this_actor::sleep_for((active[0].steps - 1) * step);
    return;
  }
  std::vector<std::unique_ptr<StepRunner>> runners;
  for (const RingJob& job : active) {
    runners.push_back(std::make_unique<StepRunner>(
        sim, job.hosts, std::make_unique<RingSchedule>(int(job.hosts.size()), job.steps, job.chunk),
        options.step_overhead_s));
    runners.back()->start(actors);
  }
  for (auto& a : actors) a->join();
  for (const auto& r : runners) stats.flows += r->flows();
}

void run_schedule(Simulation& sim, const std::vector<sg4::Host*>& hosts, std::unique_ptr<Schedule> schedule,
                  const CollectiveOptions& options, CollectiveStats& stats) {
  stats.used = Representation::step;
  StepRunner runner(sim, hosts, std::move(schedule), options.step_overhead_s);
  std::vector<sg4::ActorPtr> actors;
  runner.start(actors);
  for (auto& a : actors) a->join();
  stats.flows += runner.flows();
}

/// Ranks in ring order: by node (first appearance), then the position in `local_order`.
std::vector<int> ordered_ranks(const Simulation& sim, const std::vector<int>& ranks, const std::vector<int>& local_order) {
  std::vector<int> position(local_order.size());
  for (std::size_t i = 0; i < local_order.size(); ++i) position[std::size_t(local_order[i])] = int(i);
  std::map<int, int> node_rank;
  for (int r : ranks) node_rank.try_emplace(sim.node_of(r), int(node_rank.size()));
  std::vector<int> out = ranks;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const int na = node_rank[sim.node_of(a)], nb = node_rank[sim.node_of(b)];
    if (na != nb) return na < nb;
    const auto la = std::size_t(sim.local_rank(a)), lb = std::size_t(sim.local_rank(b));
    const int pa = la < position.size() ? position[la] : int(la), pb = lb < position.size() ? position[lb] : int(lb);
    return pa < pb;
  });
  return out;
}

std::vector<int> ordered_ranks(const Simulation& sim, const std::vector<int>& ranks, const CollectiveOptions& options) {
  if (!options.topology_aware_ring) return ranks;
  return ordered_ranks(sim, ranks, platforms::ring_order_within_node(sim.spec()));
}

std::vector<sg4::Host*> hosts_of(const Simulation& sim, const std::vector<int>& ranks) {
  std::vector<sg4::Host*> hosts;
  hosts.reserve(ranks.size());
  for (int r : ranks) hosts.push_back(sim.gpu(r));
  return hosts;
}

/// The rings of a ring collective: one per channel, each K steps of bytes/(n·channels).
std::vector<RingJob> ring_jobs(const Simulation& sim, const std::vector<int>& ranks, int steps, double bytes,
                               const CollectiveOptions& options) {
  const double n = double(ranks.size());
  if (!options.topology_aware_ring || !options.multi_ring)
    return {RingJob{hosts_of(sim, ordered_ranks(sim, ranks, options)), steps, bytes / n}};
  const auto channels = platforms::ring_channels_within_node(sim.spec());
  std::vector<RingJob> jobs;
  for (const auto& order : channels)
    jobs.push_back(RingJob{hosts_of(sim, ordered_ranks(sim, ranks, order)), steps, bytes / n / double(channels.size())});
  return jobs;
}

int pipeline_chunks(double bytes, const CollectiveOptions& options) {
  const double m = std::ceil(bytes / options.pipeline_chunk_bytes);
  return static_cast<int>(std::clamp(m, 1.0, double(std::max(1, options.max_pipeline_chunks))));
}

void hierarchical(Simulation& sim, const std::vector<int>& ordered, double bytes, const CollectiveOptions& options,
                  CollectiveStats& stats) {
  // Group by node, keeping ring order inside each node.
  std::vector<std::vector<int>> nodes;
  std::map<int, std::size_t> index;
  for (int r : ordered) {
    auto [it, fresh] = index.try_emplace(sim.node_of(r), nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(r);
  }
  const std::size_t g = nodes.front().size();
  for (const auto& n : nodes)
    TRAINSIM_CHECK(n.size() == g, "hierarchical all-reduce needs the same number of ranks on every node");
  const int N = int(nodes.size());
  const double shard = bytes / double(g);
  std::vector<RingJob> intra;
  for (const auto& n : nodes) intra.push_back({hosts_of(sim, n), int(g) - 1, shard});
  std::vector<RingJob> inter;
  for (std::size_t i = 0; i < g; ++i) {
    RingJob job{{}, 2 * (N - 1), shard / N};
    for (const auto& n : nodes) job.hosts.push_back(sim.gpu(n[i]));
    inter.push_back(std::move(job));
  }
  CollectiveStats phase;
  Representation used = Representation::coarse;
  auto track = [&] {
    if (phase.used == Representation::step) used = Representation::step;
    stats.flows += phase.flows;
    phase = CollectiveStats{};
  };
  run_rings(sim, intra, options, phase);  // reduce-scatter inside the nodes
  track();
  run_rings(sim, inter, options, phase);  // g parallel all-reduces across nodes on S/g each
  track();
  run_rings(sim, intra, options, phase);  // all-gather inside the nodes
  track();
  stats.used = used;
}

}  // namespace

CollectiveStats all_reduce(Simulation& sim, const std::vector<int>& ranks, double bytes, Algorithm algorithm,
                           const CollectiveOptions& options) {
  TRAINSIM_CHECK(bytes >= 0, "all_reduce bytes must be ≥ 0");
  CollectiveStats stats;
  const int n = static_cast<int>(ranks.size());
  if (n < 2) return stats;
  const std::vector<int> ordered = ordered_ranks(sim, ranks, options);
  switch (algorithm) {
    case Algorithm::ring:
      run_rings(sim, ring_jobs(sim, ranks, 2 * (n - 1), bytes, options), options, stats);
      break;
    case Algorithm::hierarchical: hierarchical(sim, ordered, bytes, options, stats); break;
    case Algorithm::halving_doubling:
      run_schedule(sim, hosts_of(sim, ranks), std::make_unique<HalvingDoublingSchedule>(n, bytes), options, stats);
      break;
    case Algorithm::tree: {
      const double half = bytes / 2;
      const int m = pipeline_chunks(half, options);
      run_schedule(sim, hosts_of(sim, ordered), std::make_unique<DoubleTreeSchedule>(n, m, half / m), options, stats);
      break;
    }
  }
  return stats;
}

CollectiveStats reduce_scatter(Simulation& sim, const std::vector<int>& ranks, double bytes,
                               const CollectiveOptions& options) {
  CollectiveStats stats;
  const int n = static_cast<int>(ranks.size());
  if (n < 2) return stats;
  run_rings(sim, ring_jobs(sim, ranks, n - 1, bytes, options), options, stats);
  return stats;
}

CollectiveStats all_gather(Simulation& sim, const std::vector<int>& ranks, double bytes,
                           const CollectiveOptions& options) {
  return reduce_scatter(sim, ranks, bytes, options);  // the same flows: n−1 steps of bytes/n around the ring
}

CollectiveStats broadcast(Simulation& sim, const std::vector<int>& ranks, double bytes,
                          const CollectiveOptions& options) {
  CollectiveStats stats;
  const int n = static_cast<int>(ranks.size());
  if (n < 2) return stats;
  // Keep the root first; order the others topology-aware.
  std::vector<int> ordered = ordered_ranks(sim, ranks, options);
  std::rotate(ordered.begin(), std::find(ordered.begin(), ordered.end(), ranks[0]), ordered.end());
  const int m = pipeline_chunks(bytes, options);
  run_schedule(sim, hosts_of(sim, ordered), std::make_unique<ChainSchedule>(n, m, bytes / m), options, stats);
  return stats;
}

CollectiveStats push_to_servers(Simulation& sim, const std::vector<int>& workers,
                                const std::vector<sg4::Host*>& servers, double bytes,
                                const ParameterServerOptions& options) {
  TRAINSIM_CHECK(!servers.empty(), "push_to_servers needs at least one server");
  CollectiveStats stats;
  const double shard = bytes / double(servers.size());
  std::vector<sg4::CommPtr> comms;
  for (int w : workers)
    for (sg4::Host* s : servers) comms.push_back(sim.start_flow(sim.gpu(w), s, shard));
  stats.flows = static_cast<long long>(comms.size());
  for (auto& c : comms) c->wait();
  // Every server adds up the shards it received, all servers in parallel.
  std::vector<sg4::ExecPtr> execs;
  const double flops = double(workers.size()) * shard * options.aggregate_flops_per_byte;
  if (flops > 0)
    for (sg4::Host* s : servers) execs.push_back(s->exec_async(flops));
  for (auto& e : execs) e->wait();
  return stats;
}

CollectiveStats pull_from_servers(Simulation& sim, const std::vector<int>& workers,
                                  const std::vector<sg4::Host*>& servers, double bytes) {
  TRAINSIM_CHECK(!servers.empty(), "pull_from_servers needs at least one server");
  CollectiveStats stats;
  const double shard = bytes / double(servers.size());
  std::vector<sg4::CommPtr> comms;
  for (sg4::Host* s : servers)
    for (int w : workers) comms.push_back(sim.start_flow(s, sim.gpu(w), shard));
  stats.flows = static_cast<long long>(comms.size());
  for (auto& c : comms) c->wait();
  return stats;
}

std::vector<CollectiveTiming> time_collectives(const platforms::PlatformSpec& spec, const CollectiveRequest& request,
                                               const std::vector<double>& sizes_bytes) {
  Simulation sim(spec);
  const int total = sim.gpu_count();
  const int n = request.gpus == 0 ? total : request.gpus;
  if (n > total)
    throw InputError("command line", "--gpus",
                     "the platform has " + std::to_string(total) + " GPUs, asked for " + std::to_string(n));
  if (request.op == CollectiveOp::allreduce && request.algorithm == Algorithm::hierarchical &&
      n % sim.gpus_per_node() != 0)
    throw InputError("command line", "--gpus",
                     "hierarchical all-reduce needs whole nodes: " + std::to_string(n) + " is not a multiple of " +
                         std::to_string(sim.gpus_per_node()) + " GPUs per node");
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[std::size_t(i)] = i;
  std::vector<CollectiveTiming> timings;
  sg4::Actor::create("collective", sim.gpu(0), [&] {
    for (double bytes : sizes_bytes) {
      const double start = sim.now();
      CollectiveStats stats;
      switch (request.op) {
        case CollectiveOp::allreduce: stats = all_reduce(sim, ranks, bytes, request.algorithm, request.options); break;
        case CollectiveOp::reduce_scatter: stats = reduce_scatter(sim, ranks, bytes, request.options); break;
        case CollectiveOp::all_gather: stats = all_gather(sim, ranks, bytes, request.options); break;
        case CollectiveOp::broadcast: stats = broadcast(sim, ranks, bytes, request.options); break;
      }
      timings.push_back({bytes, sim.now() - start, stats.used});
    }
  });
  sim.run();
  return timings;
}

}  // namespace trainsim::engine
