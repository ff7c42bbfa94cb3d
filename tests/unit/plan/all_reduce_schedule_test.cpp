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

// The tuner's Simple tree across nodes (enqueue.cc computeCollChunkInfo): a chunk is one step of
// the platform's buffer, NCCL_BUFFSIZE / 8; each channel's hop moves at most NCCL's per-channel
// tree ceiling (tuning.cc perChMaxTreeBws). Other protocols and the textbook tree keep neither.
TEST(AllReduceSchedule, TheSimpleTreeRunsStepsOfTheBufferAtTheChannelsCeiling) {
  platforms::PlatformSpec h100 = nodes_of("dgx-h100", 2);
  CollectiveOptions simple;
  simple.nccl_protocol = Protocol::simple;
  const double bytes = 256.0 * 1024 * 1024;
  auto trees = [&](const platforms::PlatformSpec& spec, const CollectiveOptions& options) {
    return std::get<NcclTrees>(all_reduce_schedule(Algorithm::tree, first_ranks(16), bytes, spec, options));
  };
  EXPECT_EQ(trees(h100, simple).schedule.chunk_bytes(), 512 * 1024.0);
  EXPECT_DOUBLE_EQ(trees(h100, simple).channel_Bps, 41.4e9);  // Hopper, 2 nodes
  h100.network.nccl.buffsize_bytes = 8.0 * 1024 * 1024;
  EXPECT_EQ(trees(h100, simple).schedule.chunk_bytes(), 1024 * 1024.0);
  CollectiveOptions ll128 = simple;
  ll128.nccl_protocol = Protocol::ll128;
  EXPECT_EQ(trees(h100, ll128).channel_Bps, 0);
  EXPECT_EQ(trees(h100, CollectiveOptions{}).channel_Bps, 0);
  // Ampere on 4 nodes: 17.8 GB/s.
  const platforms::PlatformSpec a100 = nodes_of("dgx-a100", 4);
  EXPECT_DOUBLE_EQ(
      std::get<NcclTrees>(all_reduce_schedule(Algorithm::tree, first_ranks(32), bytes, a100, simple)).channel_Bps,
      17.8e9);
}

TEST(AllReduceSchedule, TheSimpleTreesCeilingCountsTheNodesTheRanksAreOn) {
  // One rank on each of 4 DGX H100 nodes (a data-parallel group beside 8-way tensor parallelism):
  // the ceiling of 4 nodes (36 GB/s), not of the one node 4 ranks would fill.
  CollectiveOptions simple;
  simple.nccl_protocol = Protocol::simple;
  const auto trees = std::get<NcclTrees>(
      all_reduce_schedule(Algorithm::tree, {0, 8, 16, 24}, 64.0 * 1024 * 1024, nodes_of("dgx-h100", 4), simple));
  EXPECT_DOUBLE_EQ(trees.channel_Bps, 36.0e9);
}
