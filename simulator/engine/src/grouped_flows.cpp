#include "grouped_flows.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

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

GroupedFlows::GroupedFlows(Simulation& sim, const std::vector<std::pair<sg4::Host*, sg4::Host*>>& routes)
    : sim_(sim), wake_(sg4::Semaphore::create(0)) {
  // The parameters of SimGrid's CM02-family models (ideal, factors and tcp = LV08 all are), read
  // back from its configuration so the groups share bandwidth exactly as its flows would.
  weight_S_ = simgrid::config::get_value<double>("network/weight-S");
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  crosstraffic_ = simgrid::config::get_value<bool>("network/crosstraffic");
  if (!routes.empty()) declare(routes);
  sg4::Actor::create("grouped-flows", sim.gpu(0), [this] { manager(); })->daemonize();
}

// The links a flow from src to dst crosses and its consumption weight on each, as SimGrid 3.32's
// CM02 model expands its variable (network_cm02.cpp, comm_action_expand_constraints): 1 on every
// link of the route and, with cross traffic, 0.05 on every link of the reverse route; a link met
// twice is one element whose weights add up (lmm::System::expand reuses the element and adds the
// weight, System.cpp), so a SHARED link that the route and its reverse both cross (a
// bidirectional link of a SimGrid XML platform) weighs 1.05. FATPIPE links are bounds, not uses.
std::vector<std::pair<const sg4::Link*, double>> GroupedFlows::link_weights(sg4::Host* src, sg4::Host* dst) {
  std::vector<std::pair<const sg4::Link*, double>> weights;
  auto add = [&weights](const sg4::Link* l, double weight) {
    if (l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE) return;
    const auto it = std::find_if(weights.begin(), weights.end(), [l](const auto& w) { return w.first == l; });
    if (it == weights.end())
      weights.emplace_back(l, weight);
    else
      it->second += weight;
  };
  for (const sg4::Link* l : sim_.route(src, dst).links) add(l, 1.0);
  if (crosstraffic_)
    for (const sg4::Link* l : sim_.route(dst, src).links) add(l, crosstraffic_weight);
  return weights;
}

// Links that exactly the same declared routes cross, with the same weight and capacity, carry the
// same flows at every instant: one constraint stands for all of them (the first one met).
void GroupedFlows::declare(const std::vector<std::pair<sg4::Host*, sg4::Host*>>& routes) {
  std::unordered_map<const sg4::Link*, std::vector<std::pair<std::size_t, double>>> crossed_by;
  std::vector<const sg4::Link*> order;  // links in the order first met (deterministic)
  std::set<std::pair<const sg4::Host*, const sg4::Host*>> seen;
  std::vector<std::pair<sg4::Host*, sg4::Host*>> pairs;
  for (std::size_t r = 0; r < routes.size(); ++r) {
    const auto& [src, dst] = routes[r];
    if (src == dst || !seen.emplace(src, dst).second) continue;
    pairs.emplace_back(src, dst);
    for (const auto& [l, weight] : link_weights(src, dst)) {
      auto [it, added] = crossed_by.try_emplace(l);
      if (added) order.push_back(l);
      it->second.emplace_back(r, weight);
    }
  }
  std::map<std::pair<double, std::vector<std::pair<std::size_t, double>>>, const sg4::Link*> first;
  for (const sg4::Link* l : order) {
    auto [it, added] = first.try_emplace({sim_.capacity_Bps(l), crossed_by.at(l)}, l);
    representative_.emplace(l, it->second);
  }
  declared_ = true;
  for (const auto& [src, dst] : pairs) route_id(src, dst);
  routes_open_ = false;  // from now on a transfer on an undeclared pair is a broken invariant
}

std::size_t GroupedFlows::link_index(const sg4::Link* link) {
  if (declared_) {
    const auto rep = representative_.find(link);
    TRAINSIM_CHECK(rep != representative_.end(), "a grouped flow crosses a link no declared route crosses");
    link = rep->second;
  }
  auto [it, added] = link_index_.try_emplace(link, capacity_.size());
  if (added) capacity_.push_back(sim_.capacity_Bps(link));
  return it->second;
}

// A pair's route as the solver sees it (network_cm02.cpp, 3.32: a flow's sharing penalty is its
// route latency plus weight-S/bandwidth per link once its latency is paid, 1 when it has none; its
// bound is the route's smallest bandwidth × factor and TCP-gamma / (2 · latency), a bound of 0
// meaning none; a FATPIPE link gives every flow its bandwidth without sharing: a bound).
std::uint32_t GroupedFlows::route_id(sg4::Host* src, sg4::Host* dst) {
  const auto found = route_ids_.find({src, dst});
  if (found != route_ids_.end()) return found->second;
  TRAINSIM_CHECK(routes_open_, "a grouped flow on an undeclared route");
  const RouteInfo& info = sim_.route(src, dst);
  const double bf = sim_.bandwidth_factor();
  Route r;
  r.latency_s = info.latency_s;
  r.penalty = info.latency_s;
  for (const sg4::Link* l : info.links) {
    if (weight_S_ > 0) r.penalty += weight_S_ / l->get_bandwidth();
    r.bound = std::min(r.bound, l->get_bandwidth() * bf);
  }
  if (info.latency_s * sim_.latency_factor() <= 0) r.penalty = 1;
  if (info.latency_s > 0) {
    r.bound = std::min(r.bound, tcp_gamma_ / (2 * info.latency_s));
    if (r.bound <= 0) r.bound = inf;
  }
  for (const sg4::Link* l : info.links)
    if (l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE) r.bound = std::min(r.bound, sim_.capacity_Bps(l));
  // Declared duplicates of a link the route already uses are the same constraint (and carry the
  // same weight: they are crossed by the same routes with the same weights).
  for (const auto& [l, weight] : link_weights(src, dst)) {
    const std::size_t index = link_index(l);
    if (std::none_of(r.uses.begin(), r.uses.end(), [index](const auto& u) { return u.first == index; })) r.uses.emplace_back(index, weight);
  }
  r.src = src;
  r.dst = dst;
  const auto id = static_cast<std::uint32_t>(routes_.size());
  routes_.push_back(std::move(r));
  route_ids_.emplace(std::make_pair(src, dst), id);
  return id;
}

std::size_t GroupedFlows::transfer(const std::vector<Batch>& batches) {
  const double now = sg4::Engine::get_clock();
  advance_to(now);
  const std::size_t id = pending_.size();
  pending_.push_back(0);
  done_.push_back(sg4::Semaphore::create(0));
  // Members of any batch with the same size, latency, penalty and bound share a group: they start
  // together and, while the links they cross fix them at one level, move alike (a sharded
  // variable's push from every worker to every server is one group on alike nodes; solve_once
  // splits it where members' links differ).
  struct Key {
    double size, latency_s, penalty, bound;
    std::size_t group;
  };
  std::vector<Key> keys;
  for (const Batch& batch : batches) {
    TRAINSIM_CHECK(batch.srcs.size() == batch.dsts.size() && !batch.srcs.empty(), "a batch needs parallel, non-empty ends");
    TRAINSIM_CHECK(batch.bytes >= 0 && std::isfinite(batch.bytes), "flow size must be finite and ≥ 0");
    const double size = static_cast<double>(std::llround(batch.bytes));  // whole bytes, as Simulation::account_flow counts
    for (std::size_t m = 0; m < batch.srcs.size(); ++m) {
      const std::uint32_t rid = route_id(batch.srcs[m], batch.dsts[m]);
      Route& route = routes_[rid];
      route.bytes += size;
      auto key = std::find_if(keys.begin(), keys.end(), [&](const Key& k) {
        return k.size == size && k.latency_s == route.latency_s && k.penalty == route.penalty && k.bound == route.bound;
      });
      if (key == keys.end()) {
        keys.push_back({size, route.latency_s, route.penalty, route.bound, groups_.size()});
        Group g;
        g.flow.penalty = route.penalty;
        g.flow.bound = route.bound;
        g.transfer = id;
        groups_.push_back(std::move(g));
        key = keys.end() - 1;
      }
      groups_[key->group].members.push_back(rid);
    }
  }
  const double lf = sim_.latency_factor();
  for (const Key& k : keys) {
    Group& g = groups_[k.group];
    set_uses(g);
    g.remaining = k.size;
    g.active_at_s = now + k.latency_s * lf;
    g.active = g.active_at_s <= now;
    if (g.active) full_solve_ = dirty_ = true;  // groups still paying their latency change no rate yet
    ++pending_[id];
  }
  const std::size_t groups = pending_[id];
  if (groups == 0) return 0;
  wake_->release();  // the manager's next event may now be sooner
  done_[id]->acquire();
  return groups;
}

// Whole byte counts add up exactly (integers below 2^53), so one account per route gives every
// link and the network total what one account per flow gave.
void GroupedFlows::account_bytes() {
  for (Route& r : routes_) {
    if (r.bytes > 0) sim_.account_flow(r.src, r.dst, r.bytes);
    r.bytes = 0;
  }
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
      full_solve_ = true;
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
    if (std::isfinite(g.rate_Bps)) {
      ended_level_ = std::min(ended_level_, g.rate_Bps * g.flow.penalty);
      for (const auto& [l, w] : g.flow.uses)
        if (l < load_.size()) load_[l] -= w * g.rate_Bps;
    }
    if (--pending_[g.transfer] == 0) finished.push_back(g.transfer);
  }
  groups_.resize(kept);
  if (changed) dirty_ = true;
  for (std::size_t t : finished) done_[t]->release();
}

// A group's uses: every link any member crosses, weighted by the members' consumption on it,
// in the order members first cross them (deterministic).
void GroupedFlows::set_uses(Group& g) {
  position_.resize(capacity_.size(), MaxMinFlow::npos);
  std::vector<std::size_t> crossing;  // members crossing each use's link
  g.flow.uses.clear();
  for (const std::uint32_t member : g.members)
    for (const auto& [l, w] : routes_[member].uses) {
      if (position_[l] == MaxMinFlow::npos) {
        position_[l] = g.flow.uses.size();
        g.flow.uses.emplace_back(l, 0.0);
        crossing.push_back(0);
      }
      g.flow.uses[position_[l]].second += w;
      ++crossing[position_[l]];
    }
  g.common.clear();
  g.covering.clear();
  for (std::size_t u = 0; u < g.flow.uses.size(); ++u) {
    if (crossing[u] == g.members.size()) g.common.push_back(g.flow.uses[u].first);
    position_[g.flow.uses[u].first] = MaxMinFlow::npos;
  }
}

// After groups only ended, the groups whose level is below the lowest ended one's (less a
// relative 1e-9, so that ties are solved again) keep their rates: progressive filling reaches that
// level through the same saturations without the ended groups, because no link an ended group
// crossed filled below its level. The others are solved on what the frozen ones leave.
void GroupedFlows::solve() {
  const double frozen_below = full_solve_ ? -inf : ended_level_ * (1 - 1e-9);
  bool partial = false;
  for (Group& g : groups_) {
    g.frozen = g.active && std::isfinite(g.rate_Bps) && g.rate_Bps * g.flow.penalty < frozen_below;
    partial = partial || g.frozen;
  }
  load_.resize(capacity_.size(), 0.0);
  auto add_load = [this](const Group& g, double sign) {
    if (g.active && std::isfinite(g.rate_Bps))
      for (const auto& [l, w] : g.flow.uses) load_[l] += sign * w * g.rate_Bps;
  };
  residual_ = capacity_;
  if (partial) {
    // What the frozen groups use: the load less the others' (their old rates).
    for (const Group& g : groups_)
      if (!g.frozen) add_load(g, -1);
    for (std::size_t l = 0; l < residual_.size(); ++l) residual_[l] -= load_[l];
    // Rounding may leave a link the others use (nearly) full: then solve everything again.
    bool full = false;
    for (const Group& g : groups_)
      if (g.active && !g.frozen)
        for (const auto& use : g.flow.uses) full = full || residual_[use.first] <= capacity_[use.first] * 1e-9;
    if (full) {
      for (Group& g : groups_) g.frozen = false;
      residual_ = capacity_;
      partial = false;
    }
  }
  while (solve_once()) {
  }
  // The load at the new rates: from scratch after a full solve (so that rounding never
  // accumulates past one), the frozen load plus the others' otherwise.
  if (!partial) std::fill(load_.begin(), load_.end(), 0.0);
  for (const Group& g : groups_)
    if (!g.frozen) add_load(g, 1);
  full_solve_ = false;
  ended_level_ = inf;
  dirty_ = false;
}

// Solves the active, unfrozen groups' rates on residual_; splits every group fixed by a link that
// not all its members cross and returns whether it did (the rates must then be solved again).
bool GroupedFlows::solve_once() {
  std::vector<const MaxMinFlow*> flows;
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < groups_.size(); ++i)
    if (groups_[i].active && !groups_[i].frozen) {
      flows.push_back(&groups_[i].flow);
      active.push_back(i);
    }
  std::vector<std::size_t> bottleneck;
  const std::vector<double> rates = max_min_rates(residual_, flows, &bottleneck, &tight_round_);
  bool split = false;
  for (std::size_t a = 0; a < active.size(); ++a) {
    groups_[active[a]].rate_Bps = rates[a];
    const std::size_t l = bottleneck[a];
    if (l == MaxMinFlow::npos) continue;
    Group& g = groups_[active[a]];
    if (std::find(g.common.begin(), g.common.end(), l) != g.common.end()) continue;
    // A member is fixed at the group's level when it crosses a link that was tight in the round
    // that fixed the group (links of one round are at one level); the others would rise further
    // and become a group of their own.
    const std::size_t round = tight_round_[l];
    // Tight links that covered every member before still do when they are tight again (a
    // superset of a covering set covers): one pass over the group's links instead of its members.
    bool covered = !g.covering.empty();
    for (std::size_t u = 0; covered && u < g.covering.size(); ++u)
      covered = !g.covering[u] || tight_round_[g.flow.uses[u].first] == round;
    if (covered) continue;
    std::vector<std::uint32_t> fixed, rest;
    for (const std::uint32_t m : g.members) {
      const auto& uses = routes_[m].uses;
      const bool tight = std::any_of(uses.begin(), uses.end(), [&](const auto& use) { return tight_round_[use.first] == round; });
      (tight ? fixed : rest).push_back(m);
    }
    if (rest.empty()) {
      g.covering.resize(g.flow.uses.size());
      for (std::size_t u = 0; u < g.flow.uses.size(); ++u) g.covering[u] = tight_round_[g.flow.uses[u].first] == round;
      continue;
    }
    Group part;
    part.flow.penalty = g.flow.penalty;
    part.flow.bound = g.flow.bound;
    part.remaining = g.remaining;
    part.active_at_s = g.active_at_s;
    part.active = g.active;
    part.transfer = g.transfer;
    part.members = std::move(rest);
    g.members = std::move(fixed);
    set_uses(g);
    set_uses(part);
    ++pending_[part.transfer];
    groups_.push_back(std::move(part));
    split = true;
  }
  return split;
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
