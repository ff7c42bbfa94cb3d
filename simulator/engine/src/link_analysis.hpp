#pragma once
// Private to the engine: from the bytes each communication operation put on each link to the
// result's busiest links (busy time, limit share) and the connections the bound analysis weighs
// (trainsim/plan/analysis.hpp).
//
//   time ──▶  backward of the slowest GPU ends ─┐          last operation ends ─┐
//   ops:   [op 3    ][op 4        ][op 5       ]│                              │
//                              exposed window: ├──────────────────────────────┤
//   A link's limit time = Σ over operations of (its busy time in the operation / the operation's
//   duration, at most 1) × (the part of the operation inside the window): its bytes are taken as
//   spread evenly over each operation, which SimGrid's flows are when their rates do not change.
#include <cstddef>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/analysis.hpp"
#include "trainsim/plan/training_plan.hpp"

namespace trainsim::engine {

/// What one communication operation put on the links (Simulation::take_recent_bytes after it).
struct OpTraffic {
  double start_s = 0;
  double end_s = 0;
  std::vector<LinkBytes> bytes;
};

/// The exposed window of an iteration and the operations that may overlap it.
struct ExposedTraffic {
  double begin_s = 0;          ///< the last GPU's end of backward
  double end_s = 0;            ///< the last communication operation's end
  std::vector<OpTraffic> ops;  ///< operations that ended after every GPU finished backward, and reads
  /// Before the backward's end: where a GPU's forward waited for a parameter-server read of the
  /// step's variables (disjoint, sorted). Exposed as the window above is.
  std::vector<std::pair<double, double>> waits;
};

/// What the links did over an iteration of `iteration_s` seconds.
struct LinkFindings {
  double network_bytes = 0;                        ///< bytes of every flow (Simulation::link_report)
  std::vector<plan::LinkLoad> busiest;             ///< the top_k links by busy time
  std::vector<plan::ConnectionLimit> connections;  ///< every connection busy inside the exposed window
};

/// Busiest links and limiting connections of the run `sim` just finished. `servers` are the hosts
/// of plan.servers (parallel); links inside a server's node that carry the flows of two or more
/// workers to or from it are its incast links.
LinkFindings analyse_links(Simulation& sim, const plan::TrainingPlan& plan,
                           const std::vector<simgrid::s4u::Host*>& servers, const ExposedTraffic& exposed,
                           double iteration_s, std::size_t top_k);

}  // namespace trainsim::engine
