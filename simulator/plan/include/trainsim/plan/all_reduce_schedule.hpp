#pragma once
// Which schedule an all-reduce runs: the one decision over Algorithm that both the engine (which
// runs it as flows, engine/src/collectives.cpp) and the plan (which counts its bytes per link
// class, TrainingPlan::all_reduce_bytes_per_byte) read, so they cannot drift apart. Pure data,
// no SimGrid.
//
//   ring                      RingPhase: ring_all_reduce's channels
//   nvls, one node            RingPhase: the NVSwitch's reduce and multicast (nvls_all_reduce)
//   nvls, across nodes        SharpPhases with NVLS inside the nodes (SHARP between them)
//   collnet_direct / _chain   SharpPhases, scatter/chain inside the nodes, ≤ collnet_heads heads
//   nvls_tree                 NvlsTreePhases
//   hierarchical              HierarchicalPhases: intra, inter, intra again
//   halving_doubling          RankedHalvingDoubling over the ranks as given
//   tree, whole nodes         NcclTrees (chains in nodes, double binary tree of nodes)
//   tree, otherwise           RankedDoubleTree over the ranks in ring order (two trees)
#include <variant>
#include <vector>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/collective_schedule.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::plan {

/// The rings of one phase, run together.
struct RingPhase {
  std::vector<Ring> rings;
};

/// A halving-doubling schedule whose participant p runs on GPU rank ranks[p].
struct RankedHalvingDoubling {
  std::vector<int> ranks;
  HalvingDoublingSchedule schedule;
};

/// The textbook double binary tree (two trees) whose participant p runs on GPU rank ranks[p].
struct RankedDoubleTree {
  std::vector<int> ranks;
  DoubleTreeSchedule schedule;
};

/// An all-reduce's schedule: one of the shapes above (see the header comment).
using AllReduceSchedule = std::variant<RingPhase, HierarchicalPhases, SharpPhases, NvlsTreePhases,
                                       RankedHalvingDoubling, NcclTrees, RankedDoubleTree>;

/// The schedule `algorithm` runs to all-reduce `bytes` over `ranks` (node-major GPU ranks, ≥ 2 of
/// them) on `spec`'s nodes with `options`. Throws where the algorithm's schedule cannot cover the
/// ranks (hierarchical, nvls_tree and CollNet need whole nodes; checked by the schedules).
AllReduceSchedule all_reduce_schedule(Algorithm algorithm, const std::vector<int>& ranks, double bytes,
                                      const platforms::PlatformSpec& spec, const CollectiveOptions& options);

}  // namespace trainsim::plan
