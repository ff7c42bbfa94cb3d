#pragma once
// Private to the engine: runs the collectives' schedules (trainsim/plan/collective_schedule.hpp)
// as SimGrid flows, in the representation the options ask for (collectives.hpp). Every call
// blocks the calling actor until the collective is complete on all its ranks.
#include <vector>

#include "trainsim/engine/collectives.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/plan/collective_schedule.hpp"

namespace trainsim::engine {

/// The GPU hosts of `ranks`, in order.
std::vector<simgrid::s4u::Host*> hosts_of(const Simulation& sim, const std::vector<int>& ranks);

/// Runs the rings of one phase together. Rings with fewer than 2 ranks or no steps are skipped
/// (none left: nothing runs, and `used` is step). options.representation automatic picks as
/// collectives.hpp says; lockstep falls back to step when the rings' step counts differ.
CollectiveStats run_rings(Simulation& sim, const std::vector<plan::Ring>& rings, const CollectiveOptions& options);

/// Runs `schedule` with one actor per participant, participant p on Simulation::gpu(ranks[p]),
/// paying options.step_overhead_s before every step with sends. A step's sends take at least
/// their largest message / channel_Bps when channel_Bps > 0 (a channel's ceiling,
/// plan::NcclTrees::channel_Bps). `used` is step.
CollectiveStats run_schedule(Simulation& sim, const std::vector<int>& ranks, const plan::StepSchedule& schedule,
                             const CollectiveOptions& options, double channel_Bps = 0);

/// Runs NCCL's trees (plan::nccl_tree_all_reduce). lockstep: one reduce step of every tree edge
/// together (every non-root sends a chunk to its parent), then one broadcast step (every parent
/// to its children), each repeated as many times as its phase has steps, its time slept; step: the
/// TreeSchedule with one actor per participant. automatic picks step while participants × steps
/// × trees stays within kTreeStepBudget, else lockstep; coarse runs as lockstep. Either way an
/// edge's chunk takes at least chunk / trees.channel_Bps where that is set.
CollectiveStats run_trees(Simulation& sim, const plan::NcclTrees& trees, const CollectiveOptions& options);
/// Participant-steps (participants × steps × trees) up to which automatic runs trees step-level.
inline constexpr double kTreeStepBudget = 1 << 17;

/// Runs a halving-doubling schedule. lockstep: every step's exchanges together in the calling
/// actor, the next step when all are done (no actor per rank); step: one actor per participant.
/// automatic picks lockstep for powers of two from kHalvingDoublingLockstepRanks participants on
/// (within 1 % of step there; with folded extra ranks it runs up to ~12 % fast, so step).
CollectiveStats run_halving_doubling(Simulation& sim, const std::vector<int>& ranks,
                                     const plan::HalvingDoublingSchedule& schedule, const CollectiveOptions& options);
inline constexpr int kHalvingDoublingLockstepRanks = 256;

}  // namespace trainsim::engine
