#pragma once
// Private to the engine: the coarse representation's max-min solver. It predicts, without
// simulating, the rates SimGrid's ideal network model gives one flow per ring hop when the rings
// of a phase run together, and from them whether the coarse representation is exact
// (trainsim/engine/collectives.hpp) and which hop is critical.
#include <cstddef>
#include <vector>

#include <simgrid/s4u/Link.hpp>

#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/collective_schedule.hpp"

namespace trainsim::engine {

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
