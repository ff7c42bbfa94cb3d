// The one all-reduce switch (plan::all_reduce_schedule): which schedule shape each algorithm runs,
// as the engine runs it and the plan counts its bytes per link class.
#include <gtest/gtest.h>

#include <numeric>
#include <variant>
#include <vector>

#include "trainsim/plan/all_reduce_schedule.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim/platforms/platform_spec.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

std::vector<int> first_ranks(int n) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

platforms::PlatformSpec nodes_of(const std::string& preset, int nodes) {
  platforms::PlatformSpec spec = platforms::with_nodes(platforms::load_platform(preset), nodes, "test");
  spec.network.sharp = true;
  return spec;
}

template <class Shape>
bool runs(Algorithm algorithm, int ranks, const platforms::PlatformSpec& spec) {
  return std::holds_alternative<Shape>(
      all_reduce_schedule(algorithm, first_ranks(ranks), 1e6, spec, CollectiveOptions{}));
}

}  // namespace

TEST(AllReduceSchedule, EveryAlgorithmRunsItsOwnShape) {
  const platforms::PlatformSpec h100 = nodes_of("dgx-h100", 2);
  EXPECT_TRUE(runs<RingPhase>(Algorithm::ring, 16, h100));
  EXPECT_TRUE(runs<HierarchicalPhases>(Algorithm::hierarchical, 16, h100));
  EXPECT_TRUE(runs<RankedHalvingDoubling>(Algorithm::halving_doubling, 16, h100));
  EXPECT_TRUE(runs<NvlsTreePhases>(Algorithm::nvls_tree, 16, h100));
  EXPECT_TRUE(runs<SharpPhases>(Algorithm::collnet_direct, 16, h100));
  EXPECT_TRUE(runs<SharpPhases>(Algorithm::collnet_chain, 16, h100));
  // NVLS: the NVSwitch's reduce and multicast inside one node; across nodes through SHARP.
  EXPECT_TRUE(runs<RingPhase>(Algorithm::nvls, 8, h100));
  EXPECT_TRUE(runs<SharpPhases>(Algorithm::nvls, 16, h100));
  // Tree: NCCL's chains and tree of nodes across whole nodes, else the textbook double tree.
  EXPECT_TRUE(runs<NcclTrees>(Algorithm::tree, 16, h100));
  EXPECT_TRUE(runs<RankedDoubleTree>(Algorithm::tree, 8, h100));
  EXPECT_TRUE(runs<RankedDoubleTree>(Algorithm::tree, 12, h100));
}

TEST(AllReduceSchedule, HalvingDoublingKeepsTheRanksAsGivenAndTheTextbookTreeRingOrder) {
  const platforms::PlatformSpec v100 = nodes_of("dgx1-v100", 2);
  const std::vector<int> ranks{3, 1, 2, 0};
  const auto hd =
      std::get<RankedHalvingDoubling>(all_reduce_schedule(Algorithm::halving_doubling, ranks, 1e6, v100, {}));
  EXPECT_EQ(hd.ranks, ranks);
  EXPECT_EQ(hd.schedule.participants(), 4);
  CollectiveOptions options;
  const auto tree = std::get<RankedDoubleTree>(all_reduce_schedule(Algorithm::tree, ranks, 1e6, v100, options));
  EXPECT_EQ(tree.ranks, ring_order(ranks, ring_layout(v100), options));
}

// The plan counts the bytes of the schedule the engine runs: across whole nodes, NCCL's trees,
// whose only inter-node edges join the nodes' heads. Two nodes: every channel's tree has one
// edge between them, carrying its share of the buffer up and back down, 2 S in all.
TEST(AllReduceSchedule, ThePlanCountsTheTreesTheEngineRuns) {
  const Json doc{{"name", "tree"},
                 {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 32}}},
                 {"platform", Json{{"preset", "dgx1-v100"}, {"nodes", 2}}},
                 {"strategy", Json{{"kind", "tree_allreduce"}}}};
  const Scenario s = read_scenario(doc, "tree.json");
  const TrainingPlan p = build_training_plan(s, load_scenario_workload(s));
  ASSERT_FALSE(p.ops.empty());
  for (const CommOp& op : p.ops) {
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_NEAR(bytes->inter_node, 2 * op.bytes, 1e-9 * op.bytes);
    EXPECT_NEAR(bytes->intra_node + bytes->inter_node, 2 * (p.gpus - 1) * op.bytes, 1e-6 * op.bytes);
  }
}
