#include "grouped_flows.hpp"

#include <algorithm>
#include <cmath>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>

#include "trainsim/core/error.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
// SimGrid's own cross-traffic weight (network_cm02.cpp, 3.32): an acknowledgement stream of 5 %
// of the flow's rate on every link of the reverse route.
constexpr double crosstraffic_weight = 0.05;
}  // namespace

GroupedFlows::GroupedFlows(Simulation& sim) : sim_(sim), wake_(sg4::Semaphore::create(0)) {
  // The parameters of SimGrid's CM02-family models (ideal, factors and tcp = LV08 all are), read
  // back from its configuration so the groups share bandwidth exactly as its flows would.
  weight_S_ = simgrid::config::get_value<double>("network/weight-S");
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  crosstraffic_ = simgrid::config::get_value<bool>("network/crosstraffic");
  sg4::Actor::create("grouped-flows", sim.gpu(0), [this] { manager(); })->daemonize();
}

std::size_t GroupedFlows::link_index(const sg4::Link* link) {
  auto [it, added] = link_index_.try_emplace(link, capacity_.size());
  if (added) capacity_.push_back(sim_.capacity_Bps(link));
  return it->second;
}

std::size_t GroupedFlows::transfer(const std::vector<Batch>& batches) {
  const double now = sg4::Engine::get_clock();
  advance_to(now);
  const std::size_t id = pending_.size();
  pending_.push_back(0);
  done_.push_back(sg4::Semaphore::create(0));
  const double lf = sim_.latency_factor();
  const double bf = sim_.bandwidth_factor();
  for (const Batch& batch : batches) {
    TRAINSIM_CHECK(batch.srcs.size() == batch.dsts.size() && !batch.srcs.empty(), "a batch needs parallel, non-empty ends");
    // Members with the same latency, penalty and bound share a group (network_cm02.cpp, 3.32: a
    // flow's sharing penalty is its route latency plus weight-S/bandwidth per link once its
    // latency is paid, 1 when it has none; its bound is the route's smallest bandwidth × factor
    // and TCP-gamma / (2 · latency), a bound of 0 meaning none).
    struct Key {
      double latency_s, penalty, bound;
      std::size_t group;
    };
    std::vector<Key> keys;
    double size = 0;
    for (std::size_t m = 0; m < batch.srcs.size(); ++m) {
      size = sim_.account_flow(batch.srcs[m], batch.dsts[m], batch.bytes);
      const RouteInfo& route = sim_.route(batch.srcs[m], batch.dsts[m]);
      double penalty = route.latency_s;
      double bound = inf;
      for (const sg4::Link* l : route.links) {
        if (weight_S_ > 0) penalty += weight_S_ / l->get_bandwidth();
        bound = std::min(bound, l->get_bandwidth() * bf);
      }
      if (route.latency_s * lf <= 0) penalty = 1;
      if (route.latency_s > 0) {
        const double window = tcp_gamma_ / (2 * route.latency_s);
        bound = std::min(bound, window);
        if (bound <= 0) bound = inf;
      }
      auto key = std::find_if(keys.begin(), keys.end(), [&](const Key& k) {
        return k.latency_s == route.latency_s && k.penalty == penalty && k.bound == bound;
      });
      if (key == keys.end()) {
        keys.push_back({route.latency_s, penalty, bound, groups_.size()});
        Group g;
        g.flow.penalty = penalty;
        g.flow.bound = bound;
        g.transfer = id;
        groups_.push_back(std::move(g));
        key = keys.end() - 1;
      }
      Group& g = groups_[key->group];
      auto& member = g.members.emplace_back();
      for (const sg4::Link* l : route.links) {
        // A FATPIPE link gives every flow its bandwidth without sharing: a bound, not a use.
        if (l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE) {
          g.flow.bound = std::min(g.flow.bound, sim_.capacity_Bps(l));
          continue;
        }
        member.emplace_back(link_index(l), 1.0);
      }
      if (crosstraffic_)
        for (const sg4::Link* l : sim_.route(batch.dsts[m], batch.srcs[m]).links)
          if (l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE) member.emplace_back(link_index(l), crosstraffic_weight);
    }
    for (const Key& k : keys) {
      Group& g = groups_[k.group];
      set_uses(g);
      g.remaining = size;
      g.active_at_s = now + k.latency_s * lf;
      g.active = g.active_at_s <= now;
      ++pending_[id];
    }
  }
  const std::size_t groups = pending_[id];
  if (groups == 0) return 0;
  dirty_ = true;
  wake_->release();
  done_[id]->acquire();
  return groups;
}

void GroupedFlows::advance_to(double now_s) {
  const double dt = now_s - updated_s_;
  updated_s_ = now_s;
  bool changed = false;
  for (Group& g : groups_) {
    if (g.active) {
      g.remaining = std::isinf(g.rate_Bps) ? 0.0 : g.remaining - g.rate_Bps * dt;
    } else if (g.active_at_s <= now_s) {
      g.active = true;
      changed = true;
    }
  }
  // A group has arrived once what is left would take under a picosecond at its rate (the clock's
  // rounding of the wake-up date), or nothing at all is left.
  // Finished transfers are released only once the groups are consistent again: a release is a
  // simcall, at which SimGrid may run the released actor at once, and that actor's next transfer
  // calls advance_to itself.
  std::vector<std::size_t> finished;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    Group& g = groups_[i];
    const bool arrived = g.active && (g.remaining <= 0 || g.remaining <= g.rate_Bps * 1e-12);
    if (!arrived) {
      if (kept != i) groups_[kept] = std::move(g);
      ++kept;
      continue;
    }
    changed = true;
    if (--pending_[g.transfer] == 0) finished.push_back(g.transfer);
  }
  groups_.resize(kept);
  if (changed) dirty_ = true;
  for (std::size_t t : finished) done_[t]->release();
}

// A group's uses: every link any member crosses, weighted by the members' consumption on it,
// in the order members first cross them (deterministic).
void GroupedFlows::set_uses(Group& g) {
  std::unordered_map<std::size_t, std::size_t> at;
  g.flow.uses.clear();
  for (const auto& member : g.members)
    for (const auto& [l, w] : member) {
      auto [it, added] = at.try_emplace(l, g.flow.uses.size());
      if (added) g.flow.uses.emplace_back(l, 0.0);
      g.flow.uses[it->second].second += w;
    }
}

void GroupedFlows::solve() {
  for (;;) {
    std::vector<const MaxMinFlow*> flows;
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < groups_.size(); ++i)
      if (groups_[i].active) {
        flows.push_back(&groups_[i].flow);
        active.push_back(i);
      }
    std::vector<std::size_t> bottleneck;
    const std::vector<double> rates = max_min_rates(capacity_, flows, &bottleneck);
    // Split every group fixed by a link that not all its members cross, then solve again.
    bool split = false;
    for (std::size_t a = 0; a < active.size(); ++a) {
      groups_[active[a]].rate_Bps = rates[a];
      const std::size_t l = bottleneck[a];
      if (l == MaxMinFlow::npos) continue;
      Group& g = groups_[active[a]];
      auto crosses = [l](const std::vector<std::pair<std::size_t, double>>& m) {
        return std::any_of(m.begin(), m.end(), [l](const auto& use) { return use.first == l; });
      };
      const auto on = static_cast<std::size_t>(std::count_if(g.members.begin(), g.members.end(), crosses));
      if (on == g.members.size()) continue;
      Group part;
      part.flow.penalty = g.flow.penalty;
      part.flow.bound = g.flow.bound;
      part.remaining = g.remaining;
      part.active_at_s = g.active_at_s;
      part.active = g.active;
      part.transfer = g.transfer;
      std::vector<std::vector<std::pair<std::size_t, double>>> rest;
      for (auto& m : g.members) (crosses(m) ? part.members : rest).push_back(std::move(m));
      g.members = std::move(rest);
      set_uses(g);
      set_uses(part);
      ++pending_[part.transfer];
      groups_.push_back(std::move(part));
      split = true;
    }
    if (!split) break;
  }
  dirty_ = false;
}

double GroupedFlows::next_event_s() const {
  double next = inf;
  for (const Group& g : groups_)
    next = std::min(next, g.active ? (std::isinf(g.rate_Bps) ? updated_s_ : updated_s_ + g.remaining / g.rate_Bps)
                                   : g.active_at_s);
  return next;
}

// The manager wakes at the next start or arrival, or when a transfer adds groups; it advances
// every group at its current rate, retires arrived ones and re-solves the rates.
void GroupedFlows::manager() {
  for (;;) {
    if (dirty_) solve();
    const double next = next_event_s();
    const double now = sg4::Engine::get_clock();
    if (std::isinf(next))
      wake_->acquire();
    else if (next > now)
      wake_->acquire_timeout(next - now);
    advance_to(sg4::Engine::get_clock());
  }
}

}  // namespace trainsim::engine
