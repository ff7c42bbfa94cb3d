#pragma once
// Private to the engine: runs the collectives' schedules (trainsim/plan/collective_schedule.hpp)
// as SimGrid flows, in the representation the options ask for (collectives.hpp). Every call
// blocks the calling actor until the collective is complete on all its ranks.
#include <vector>

#include "trainsim/engine/collectives.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/collective_schedule.hpp"

namespace trainsim::engine {

/// Runs the rings of one phase together. Rings with fewer than 2 ranks or no steps are skipped
/// (none left: nothing runs, and `used` is step). options.representation automatic picks as
/// collectives.hpp says; lockstep falls back to step when the rings' step counts differ.
CollectiveStats run_rings(Simulation& sim, const std::vector<plan::Ring>& rings, const CollectiveOptions& options);

/// Runs `schedule` with one actor per participant, participant p on Simulation::gpu(ranks[p]),
/// paying options.step_overhead_s before every step with sends. `used` is step.
CollectiveStats run_schedule(Simulation& sim, const std::vector<int>& ranks, const plan::StepSchedule& schedule,
                             const CollectiveOptions& options);

}  // namespace trainsim::engine
