#include "coarse_flows.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <tuple>
#include <limits>
#include <unordered_map>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

using plan::Ring;

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const MaxMinFlow*>& flow_ptrs,
                                  std::vector<std::size_t>* bottleneck, std::vector<std::size_t>* tight_round,
                                  const std::vector<std::size_t>* copies) {
  auto flows = [&flow_ptrs](std::size_t f) -> const MaxMinFlow& { return *flow_ptrs[f]; };
  // A flow's copies act one after another wherever one flow acts once: each addition and
  // subtraction is repeated (not multiplied), so the sums are those of the copies listed in a row.
  auto copies_of = [copies](std::size_t f) { return copies ? (*copies)[f] : std::size_t(1); };
  const std::size_t n_flows = flow_ptrs.size();
  const std::size_t n_links = capacity.size();
  // Working arrays kept between calls (the parameter servers' coarse executor solves thousands of
  // times per iteration; fresh multi-megabyte vectors each time made the kernel map and unmap pages).
  // Indexed by link, but only the links the flows use are set up, when first met (a tree phase
  // of one level uses a few of the platform's links: setting up all of them for each of a
  // 65,536-GPU tree layout's 40 solves cost more than the solves).
  thread_local struct Scratch {
    std::vector<double> usage, remaining;
    std::vector<std::size_t> free_flows, user_begin, user_end, user_flows, by_bound, tight, used_links;
    std::vector<unsigned> version, met;
    unsigned call = 0;  // met[l] == call: link l is set up for this call
    std::vector<char> fixed;
    std::vector<std::tuple<double, std::size_t, unsigned>> heap;
  } scratch;
  if (scratch.met.size() < n_links) {
    for (auto* v : {&scratch.usage, &scratch.remaining}) v->resize(n_links);
    for (auto* v : {&scratch.free_flows, &scratch.user_begin, &scratch.user_end}) v->resize(n_links);
    scratch.version.resize(n_links);
    scratch.met.resize(n_links, 0);
  }
  if (++scratch.call == 0) {  // wrapped: forget every mark
    std::fill(scratch.met.begin(), scratch.met.end(), 0u);
    scratch.call = 1;
  }
  std::vector<double>& usage = scratch.usage;  // Σ weight / penalty of the link's unfixed flows
  std::vector<std::size_t>& free_flows = scratch.free_flows;
  std::vector<double>& remaining = scratch.remaining;
  std::vector<unsigned>& version = scratch.version;
  std::vector<std::size_t>& used_links = scratch.used_links;  // in the order first met
  std::vector<std::size_t>& user_end = scratch.user_end;      // users counted here first
  used_links.clear();
  for (std::size_t f = 0; f < n_flows; ++f)
    for (const auto& [l, w] : flows(f).uses) {
      if (scratch.met[l] != scratch.call) {
        scratch.met[l] = scratch.call;
        used_links.push_back(l);
        usage[l] = 0;
        free_flows[l] = 0;
        user_end[l] = 0;
        remaining[l] = capacity[l];
        version[l] = 0;
      }
      for (std::size_t k = copies_of(f); k > 0; --k) {
        usage[l] += w / flows(f).penalty;
        ++free_flows[l];
      }
      ++user_end[l];  // users are listed once per flow, not per copy
    }
  // Each link's flows in flow order, as one array: link l's are user_flows[user_begin[l]] …
  // user_flows[user_end[l] − 1] (no allocation per link).
  std::vector<std::size_t>& user_begin = scratch.user_begin;
  std::size_t users = 0;
  for (std::size_t l : used_links) {
    user_begin[l] = users;
    users += user_end[l];
    user_end[l] = user_begin[l];
  }
  std::vector<std::size_t>& user_flows = scratch.user_flows;
  user_flows.resize(users);
  for (std::size_t f = 0; f < n_flows; ++f)
    for (const auto& use : flows(f).uses) user_flows[user_end[use.first]++] = f;
  std::vector<double> rate(n_flows, 0.0);
  if (bottleneck) bottleneck->assign(n_flows, MaxMinFlow::npos);
  if (tight_round) tight_round->assign(n_links, MaxMinFlow::npos);
  std::size_t round = 0;
  std::vector<char>& fixed = scratch.fixed;
  fixed.assign(n_flows, 0);
  // Links by fair level, smallest first; an entry is stale once its link's version moved on.
  using Entry = std::tuple<double, std::size_t, unsigned>;
  std::vector<Entry>& heap = scratch.heap;  // a min-heap (std::greater) by level
  heap.clear();
  auto push_level = [&heap](double level, std::size_t l, unsigned v) {
    heap.emplace_back(level, l, v);
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  };
  auto pop_level = [&heap] {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    heap.pop_back();
  };
  // Entries are ordered by (level, link, version) and a link has at most one, so the heap's order
  // of pops does not depend on the order they are pushed in.
  for (std::size_t l : used_links)
    if (free_flows[l] > 0) push_level(remaining[l] / usage[l], l, 0);
  // Flows by the level at which their bound binds (bound × penalty), smallest first.
  std::vector<std::size_t>& by_bound = scratch.by_bound;
  by_bound.clear();
  for (std::size_t f = 0; f < n_flows; ++f)
    if (std::isfinite(flows(f).bound)) by_bound.push_back(f);
  std::stable_sort(by_bound.begin(), by_bound.end(), [&](std::size_t a, std::size_t b) {
    return flows(a).bound * flows(a).penalty < flows(b).bound * flows(b).penalty;
  });
  std::size_t next_bound = 0;
  std::vector<std::size_t>& tight = scratch.tight;
  auto fix = [&](std::size_t f, double r, std::size_t link) {
    fixed[f] = true;
    rate[f] = r;
    if (bottleneck) (*bottleneck)[f] = link;
    for (const auto& [l, w] : flows(f).uses) {
      for (std::size_t k = copies_of(f); k > 0; --k) {
        remaining[l] -= w * r;
        usage[l] -= w / flows(f).penalty;
        --free_flows[l];
      }
      ++version[l];
    }
  };
  // A link's level only rises as flows are fixed on it (remaining − w·r over usage − w/penalty, with
  // r at most its level), so an entry is a lower bound of its link's level: links are not
  // re-queued when touched, but their entry is brought up to date when it reaches the top (a lazy
  // priority queue; the same levels, computed from the same values, as re-queuing every touched
  // link at once, in far fewer heap operations).
  auto refresh_top = [&] {
    while (!heap.empty()) {
      const auto [level, l, v] = heap.front();
      if (free_flows[l] == 0) {
        pop_level();
        continue;
      }
      if (v == version[l]) break;
      pop_level();
      push_level(remaining[l] / usage[l], l, version[l]);
    }
  };
  for (;;) {
    refresh_top();
    while (next_bound < by_bound.size() && fixed[by_bound[next_bound]]) ++next_bound;
    const bool any_link = !heap.empty();
    const bool any_bound = next_bound < by_bound.size();
    if (!any_link && !any_bound) break;
    const std::size_t fb = any_bound ? by_bound[next_bound] : 0;
    const double share = std::min(any_link ? std::get<0>(heap.front()) : std::numeric_limits<double>::infinity(),
                                  any_bound ? flows(fb).bound * flows(fb).penalty : std::numeric_limits<double>::infinity());
    // Every link and bound at this level fixes its flows in this round (symmetric platforms then
    // need a handful of rounds, not one per link).
    const double level = share * (1 + 1e-12);
    tight.clear();
    while (!heap.empty()) {
      refresh_top();
      if (heap.empty() || std::get<0>(heap.front()) > level) break;
      tight.push_back(std::get<1>(heap.front()));
      pop_level();
    }
    std::sort(tight.begin(), tight.end());  // link order, as a scan over all links would fix them
    if (tight_round)
      for (std::size_t l : tight) (*tight_round)[l] = round;
    ++round;
    for (std::size_t l : tight)
      for (std::size_t u = user_begin[l]; u < user_end[l]; ++u)
        if (!fixed[user_flows[u]]) fix(user_flows[u], share / flows(user_flows[u]).penalty, l);
    for (; next_bound < by_bound.size(); ++next_bound) {
      const std::size_t f = by_bound[next_bound];
      if (fixed[f]) continue;
      if (flows(f).bound * flows(f).penalty > level) break;
      fix(f, std::min(flows(f).bound, share / flows(f).penalty), MaxMinFlow::npos);
    }
    // A tight link still holding free flows (none: they were all fixed) needs no new entry;
    // touched links keep their stale entries (refresh_top above).
  }
  // Flows on no shared link and without a bound are limited by nothing.
  for (std::size_t f = 0; f < n_flows; ++f)
    if (!fixed[f]) rate[f] = std::numeric_limits<double>::infinity();
  return rate;
}

CoarseFlows coarse_flows(Simulation& sim, const std::vector<Ring>& rings) {
  CoarseFlows out;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    out.ring_begin.push_back(out.flows.size());
    const std::vector<int>& ranks = rings[r].ranks;
    const std::size_t n = ranks.size();
    for (std::size_t i = 0; i < n; ++i)
      out.flows.push_back({&sim.route(sim.gpu(ranks[i]), sim.gpu(ranks[(i + 1) % n])), r, 0, nullptr});
  }
  out.ring_begin.push_back(out.flows.size());
  share_max_min(out.flows);
  return out;
}

RouteProblems route_problems(const std::vector<const RouteInfo*>& routes, const Simulation* sim) {
  RouteProblems out;
  out.flows.resize(routes.size());
  // A link's sharing policy is asked once, when first seen (a virtual call into SimGrid per use
  // was 4 % of a 65,536-GPU tree solve); FATPIPE links are indexed as kFatpipe. Links are indexed
  // in the order first seen, by a table over the simulation's links when there is one (a map
  // keyed by link took a cache miss per use), else by a map.
  constexpr std::size_t kFatpipe = MaxMinFlow::npos, kUnseen = kFatpipe - 1;
  std::unordered_map<const sg4::Link*, std::size_t> index;
  std::vector<std::size_t> table(sim ? sim->link_count() : 0, kUnseen);
  for (std::size_t f = 0; f < routes.size(); ++f) {
    out.flows[f].uses.reserve(routes[f]->links.size());
    for (const sg4::Link* l : routes[f]->links) {
      std::size_t& dense = sim ? table[sim->link_index(l)] : index.try_emplace(l, kUnseen).first->second;
      if (dense == kUnseen) {
        dense = kFatpipe;
        if (l->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE) {
          dense = out.capacity.size();
          out.capacity.push_back(l->get_bandwidth());
          out.links.push_back(l);
        }
      }
      if (dense == kFatpipe) {
        out.flows[f].bound = std::min(out.flows[f].bound, l->get_bandwidth());
        continue;
      }
      out.flows[f].uses.emplace_back(dense, 1.0);
    }
  }
  return out;
}

void share_max_min(std::vector<CoarseFlows::Flow>& flows) {
  // Links indexed densely; FATPIPE links cap each flow at their bandwidth without sharing.
  std::vector<const RouteInfo*> routes;
  routes.reserve(flows.size());
  for (const auto& f : flows) routes.push_back(f.route);
  const RouteProblems problem = route_problems(routes);
  std::vector<std::size_t> bottleneck;
  std::vector<const MaxMinFlow*> pointers;
  pointers.reserve(flows.size());
  for (const MaxMinFlow& f : problem.flows) pointers.push_back(&f);
  const std::vector<double> rates = max_min_rates(problem.capacity, pointers, &bottleneck);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    flows[f].rate_Bps = rates[f];
    flows[f].bottleneck = bottleneck[f] == MaxMinFlow::npos ? nullptr : problem.links[bottleneck[f]];
  }
}

std::vector<double> play_flows(const std::vector<const RouteInfo*>& routes, const std::vector<double>& bytes,
                               double latency_factor) {
  const std::size_t n = routes.size();
  RouteProblems built = route_problems(routes);
  const std::vector<double>& capacity = built.capacity;
  std::vector<MaxMinFlow>& problem = built.flows;
  // CM02: penalty = route latency (weight-S 0); a flow without latency starts sharing at once
  // with penalty 1. Its bound (the route's smallest bandwidth, or TCP-gamma, 0 = none) never
  // binds below a shared link's fair share, so only FATPIPE links cap it here.
  for (std::size_t f = 0; f < n; ++f) problem[f].penalty = routes[f]->latency_s > 0 ? routes[f]->latency_s : 1.0;
  std::vector<double> remaining(bytes), finish(n, 0.0), latency_end(n);
  for (std::size_t f = 0; f < n; ++f) latency_end[f] = routes[f]->latency_s * latency_factor;
  // Flows by the end of their latency, so that each event only looks at the flows it changes.
  std::vector<std::size_t> by_latency(n);
  for (std::size_t f = 0; f < n; ++f) by_latency[f] = f;
  std::stable_sort(by_latency.begin(), by_latency.end(),
                   [&](std::size_t a, std::size_t b) { return latency_end[a] < latency_end[b]; });
  std::size_t next_start = 0;
  std::vector<std::size_t> active;
  double now = 0;
  auto start_due = [&] {
    // Latencies that end now (to rounding) end together, as SimGrid's heap pops equal dates together.
    for (; next_start < n && latency_end[by_latency[next_start]] <= now * (1 + 1e-12); ++next_start) {
      const std::size_t f = by_latency[next_start];
      if (remaining[f] <= 0)
        finish[f] = latency_end[f];
      else
        active.push_back(f);
    }
  };
  start_due();
  std::vector<const MaxMinFlow*> pointers;
  while (!active.empty() || next_start < n) {
    if (active.empty()) {
      now = latency_end[by_latency[next_start]];
      start_due();
      continue;
    }
    pointers.clear();
    for (std::size_t f : active) pointers.push_back(&problem[f]);
    const std::vector<double> rate = max_min_rates(capacity, pointers);
    double dt = next_start < n ? latency_end[by_latency[next_start]] - now : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < active.size(); ++i)
      dt = std::min(dt, std::isfinite(rate[i]) ? remaining[active[i]] / rate[i] : 0.0);
    now += dt;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const std::size_t f = active[i];
      if (std::isfinite(rate[i])) remaining[f] -= rate[i] * dt;
      // Flows that would end within 1e-9 of the elapsed time end now: equal flows computed with
      // different rounding must not make events of their own. A flow limited by nothing ends at once.
      if (!std::isfinite(rate[i]) || remaining[f] <= rate[i] * now * 1e-9) {
        finish[f] = now;
      } else {
        active[kept++] = f;
      }
    }
    active.resize(kept);
    start_due();
  }
  return finish;
}

CriticalHop critical_hop(Simulation& sim, const Ring& ring, const CoarseFlows& flows, std::size_t ring_index) {
  const double lf = sim.latency_factor();
  CriticalHop crit;
  for (std::size_t i = flows.ring_begin[ring_index]; i < flows.ring_begin[ring_index + 1]; ++i) {
    const auto& f = flows.flows[i];
    const double step = f.route->latency_s * lf + ring.chunk_bytes / f.rate_Bps;
    if (step > crit.step_s) crit = {f.route->latency_s * lf, step};
  }
  return crit;
}

// Whether the coarse representation is exact for rings run together (collectives.hpp):
// with every hop's flow at its max-min rate: (1) in every ring the hop with the largest per-step
// time also finishes its K-step flow last, and (2) every flow that finishes last in its ring is
// bottlenecked on a link all of whose flows finish at that same time, so no early finisher ever
// hands it bandwidth and its rate holds for the whole phase. Then the step-level time
// K·(o + α* + c/r*) equals the coarse time (α* + K·c/r*) + (K−1)·α* + K·o. (Symmetric rings that
// share NICs or PCIe uplinks, as the four rings of DGX-1 nodes do, qualify; lone-rate checks did not.)
bool coarse_is_exact(Simulation& sim, const std::vector<Ring>& rings, const CoarseFlows& flows) {
  if (sim.spec().network.model != platforms::NetworkModel::ideal) return false;
  std::vector<double> finish(flows.flows.size());
  std::vector<double> ring_finish(rings.size(), 0);
  for (std::size_t f = 0; f < flows.flows.size(); ++f) {
    const auto& flow = flows.flows[f];
    const Ring& ring = rings[flow.ring];
    finish[f] = flow.route->latency_s + ring.steps * ring.chunk_bytes / flow.rate_Bps;
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
      const double step = flow.route->latency_s * sim.latency_factor() + rings[r].chunk_bytes / flow.rate_Bps;
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

}  // namespace trainsim::engine
