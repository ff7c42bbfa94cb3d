#pragma once
// nccl-tests-like timing of one collective on a fresh simulation (`trainsim collective`). No SimGrid
// header here: the CLI asks the engine without seeing SimGrid.
#include <vector>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::engine {

using plan::Algorithm;
using plan::CollectiveOp;
using plan::CollectiveOptions;
using plan::Representation;

/// One timed collective of a size sweep.
struct CollectiveTiming {
  double bytes = 0;
  double time_s = 0;
  Representation used = Representation::step;
  int channels = 1;  ///< parallel rings or trees it ran on
};

/// What to time.
struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::allreduce;
  Algorithm algorithm = Algorithm::ring;
  int gpus = 0;  ///< first `gpus` ranks; 0 = all
  CollectiveOptions options;
};

/// Builds a Simulation of `spec` in this process and runs the collective once per size, one after
/// another on the idle network (so the times are independent). Uses up this process's one SimGrid
/// engine. Throws InputError("collective request", "gpus", …) when `gpus` exceeds the platform, or
/// is not a whole number of nodes for a hierarchical all-reduce; InputError from Simulation.
std::vector<CollectiveTiming> time_collectives(const platforms::PlatformSpec& spec, const CollectiveRequest& request,
                                               const std::vector<double>& sizes_bytes);

}  // namespace trainsim::engine
