#pragma once
// Private to the engine: the coarse representation's max-min solver. It predicts, without
// simulating, the rates SimGrid's ideal network model gives one flow per ring hop when the rings
// of a phase run together, and from them whether the coarse representation is exact
// (trainsim/engine/collectives.hpp) and which hop is critical.
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <simgrid/s4u/Link.hpp>

#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/collective_schedule.hpp"

namespace trainsim::engine {

/// One flow (or a group of identical flows) of a max-min problem as SimGrid's CM02-family network
/// models pose it (lmm::System in 3.32): at a common fill level λ the flow's rate is λ/penalty,
/// capped by `bound`; on each link it uses it consumes weight × rate (a group of m identical flows
/// crossing a link consumes m × rate there).
struct MaxMinFlow {
  std::vector<std::pair<std::size_t, double>> uses;  ///< (link index, consumption weight > 0)
  double penalty = 1;                                ///< > 0
  double bound = std::numeric_limits<double>::infinity();
  /// Link index whose fair share fixed the rate; npos when the bound did.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

/// Max-min fair rates by progressive filling: the link with the smallest fair level
/// remaining / Σ(weight/penalty) of its unfixed flows fixes every unfixed flow on it (ties
/// together), as does a flow's own bound. `capacity` per link index (> 0). Returns the rate per
/// flow and, in `bottleneck` (optional), the link that fixed it (MaxMinFlow::npos for a bound).
/// `tight_round` (optional) receives, per link, the round of progressive filling in which the link
/// was tight (its fair level the round's level, to a relative 1e-12) and fixed its free flows, or
/// npos: links of one round are at one level, so a group of identical flows fixed in round k gives
/// every member its max-min rate exactly when each member crosses some link tight in round k.
/// `copies` (optional, parallel to `flows`, each ≥ 1): flow f stands for that many identical flows,
/// with the same result, to the bit, as listing its copies one after another (where the flow
/// crosses a link twice, with equal weights); its rate is each copy's.
std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const MaxMinFlow*>& flows,
                                  std::vector<std::size_t>* bottleneck = nullptr,
                                  std::vector<std::size_t>* tight_round = nullptr,
                                  const std::vector<std::size_t>* copies = nullptr);

/// The max-min problems of flows on `routes`, built once and solved for any subset of them:
/// links by dense index (`capacity`), FATPIPE links as each flow's bound, penalty 1.
struct RouteProblems {
  std::vector<double> capacity;          ///< per dense link index
  std::vector<const simgrid::s4u::Link*> links;  ///< the link behind each dense index
  std::vector<MaxMinFlow> flows;         ///< parallel to the routes
};
/// `sim` (optional): the simulation the routes are of, whose link indices make the building faster.
RouteProblems route_problems(const std::vector<const RouteInfo*>& routes, const Simulation* sim = nullptr);

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
    const simgrid::s4u::Link* bottleneck = nullptr;
  };
  std::vector<Flow> flows;              ///< ring-major, hop-minor
  std::vector<std::size_t> ring_begin;  ///< ring r's flows are [ring_begin[r], ring_begin[r + 1])
};

/// Fills every flow's rate_Bps and bottleneck from its route: all flows active at once, shared as
/// above (the solver coarse_flows uses; the trees' lockstep uses it for their steps too).
void share_max_min(std::vector<CoarseFlows::Flow>& flows);

/// When each of `flows` finishes, in seconds from their common start, on an otherwise idle network
/// under the ideal model, played the way SimGrid 3.32's CM02 model plays them (network_cm02.cpp,
/// maxmin.cpp) without simulating them: a flow first waits its route latency × `latency_factor`
/// with no bandwidth, then shares every link of its route max-min fairly with the other flows past
/// their latency, weighted by SimGrid's sharing penalty (the route's unscaled latency when
/// weight-S is 0, as in the ideal model; 1 for a route without latency); FATPIPE links cap a flow
/// without sharing. Rates are re-solved (max_min_rates) whenever a flow starts sharing or ends.
/// `bytes[f]` ≥ 0 are the flows' sizes; a flow of 0 bytes ends when its latency is paid.
std::vector<double> play_flows(const std::vector<const RouteInfo*>& routes, const std::vector<double>& bytes,
                               double latency_factor);

/// Solves the coarse flows of `rings` (each with ≥ 2 ranks) on sim's routes.
CoarseFlows coarse_flows(Simulation& sim, const std::vector<plan::Ring>& rings);

/// The critical hop of a ring: the one with the largest step time α_h + c/r_h at its coarse
/// (shared) rate, α scaled by the model's latency factor.
struct CriticalHop {
  double latency_s = 0;  ///< its route latency, scaled
  double step_s = 0;     ///< α_h + c/r_h
};

/// The critical hop of rings[ring_index], whose coarse flows `flows` holds.
CriticalHop critical_hop(Simulation& sim, const plan::Ring& ring, const CoarseFlows& flows, std::size_t ring_index);

/// Whether the coarse representation gives the step-level time for `rings` run together, whose
/// coarse flows `flows` holds. Always false for network models other than ideal.
bool coarse_is_exact(Simulation& sim, const std::vector<plan::Ring>& rings, const CoarseFlows& flows);

}  // namespace trainsim::engine
