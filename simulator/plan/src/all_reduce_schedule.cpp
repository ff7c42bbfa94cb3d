#include "trainsim/plan/all_reduce_schedule.hpp"

#include <algorithm>

#include "trainsim/plan/nccl_tuner.hpp"

namespace trainsim::plan {

AllReduceSchedule all_reduce_schedule(Algorithm algorithm, const std::vector<int>& ranks, double bytes,
                                      const platforms::PlatformSpec& spec, const CollectiveOptions& options) {
  const int n = static_cast<int>(ranks.size());
  const RingLayout layout = ring_layout(spec);
  switch (algorithm) {
    case Algorithm::ring: return RingPhase{ring_all_reduce(ranks, bytes, layout, options)};
    case Algorithm::nvls:
      if (!spans_nodes(ranks, layout.gpus_per_node)) return RingPhase{nvls_all_reduce(ranks, bytes, layout, options)};
      // Across nodes NVLS needs SHARP (CollNet): the heads' shares go through the switches.
      return sharp_all_reduce(ranks, bytes, layout, options, true, layout.gpus_per_node,
                              nvls_intra_factor(nccl_topology(spec, n)));
    case Algorithm::nvls_tree:
      return nvls_tree_all_reduce(ranks, bytes, layout, options, nvls_intra_factor(nccl_topology(spec, n)));
    case Algorithm::collnet_direct:
    case Algorithm::collnet_chain:
      return sharp_all_reduce(ranks, bytes, layout, options, false, std::max(1, nccl_topology(spec, n).collnet_heads));
    case Algorithm::hierarchical: return hierarchical_all_reduce(ranks, bytes, layout, options);
    case Algorithm::halving_doubling:
      return RankedHalvingDoubling{ranks, HalvingDoublingSchedule(n, bytes, options.hd_order)};
    case Algorithm::tree:
      // Across whole nodes as NCCL builds it: chains inside nodes, a double binary tree of nodes.
      if (nccl_tree_applies(ranks, layout)) return nccl_tree_all_reduce(ranks, bytes, layout, options);
      return RankedDoubleTree{ring_order(ranks, layout, options), double_tree_all_reduce(n, bytes, options)};
  }
  return RingPhase{ring_all_reduce(ranks, bytes, layout, options)};
}

}  // namespace trainsim::plan
