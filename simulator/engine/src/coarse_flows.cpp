#include "coarse_flows.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

using plan::Ring;

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

void share_max_min(std::vector<CoarseFlows::Flow>& flows) {
  struct {
    std::vector<CoarseFlows::Flow>& flows;
  } out{flows};
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
