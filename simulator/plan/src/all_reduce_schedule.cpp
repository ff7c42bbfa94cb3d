#include "trainsim/plan/all_reduce_schedule.hpp"

#include <algorithm>

#include "trainsim/plan/nccl_tuner.hpp"

namespace trainsim::plan {

namespace {

// The nodes `ranks` are on.
int nodes_spanned(const std::vector<int>& ranks, int gpus_per_node) {
  std::vector<int> nodes;
  nodes.reserve(ranks.size());
  for (int r : ranks) nodes.push_back(r / std::max(1, gpus_per_node));
  std::sort(nodes.begin(), nodes.end());
  return int(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

}  // namespace

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
      if (nccl_tree_applies(ranks, layout)) {
        if (options.nccl_protocol != Protocol::simple) return nccl_tree_all_reduce(ranks, bytes, layout, options);
        // The tuner's Simple tree: chunks of one step of the platform's buffer (NCCL_BUFFSIZE / 8),
        // each channel's hops at most at NCCL's per-channel ceiling, for the nodes the ranks are on
        // (one rank a node beside tensor parallelism spans as many nodes as it has ranks, not
        // n / GPUs per node). LL and LL128 keep the links' rates, as before.
        NcclTopology topo = nccl_topology(spec, n);
        topo.nodes = nodes_spanned(ranks, layout.gpus_per_node);
        CollectiveOptions stepped = options;
        stepped.pipeline_chunk_bytes = topo.simple_step_bytes;
        NcclTrees trees = nccl_tree_all_reduce(ranks, bytes, layout, stepped);
        trees.channel_Bps = nccl_tree_channel_ceiling_Bps(topo);
        return trees;
      }
      return RankedDoubleTree{ring_order(ranks, layout, options), double_tree_all_reduce(n, bytes, options)};
  }
  return RingPhase{ring_all_reduce(ranks, bytes, layout, options)};
}

}  // namespace trainsim::plan
