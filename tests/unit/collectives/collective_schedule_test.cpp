// The collectives' schedules checked by closed forms, without SimGrid: step counts, bytes per
// step, what every rank sends and receives, and that every message a schedule sends is one its
// receiver waits for in the same step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/plan/collective_schedule.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace plan = trainsim::plan;

namespace {

constexpr double S = 96.0 * 1024 * 1024;  // divisible by every n below up to rounding, not a power of two

/// Totals of a schedule, walked step by step.
struct Traffic {
  std::vector<double> sent_bytes, received_bytes;  ///< per participant
  std::vector<std::vector<double>> step_bytes;     ///< per step, the distinct sizes sent
  long long messages = 0;
};

/// Walks every (participant, step) of `schedule`, checking that every message goes to another
/// participant and that the messages addressed to p in step s number receives(p, s).
Traffic walk(const plan::StepSchedule& schedule) {
  const int n = schedule.participants();
  Traffic t;
  t.sent_bytes.assign(std::size_t(n), 0);
  t.received_bytes.assign(std::size_t(n), 0);
  std::vector<plan::Send> out;
  for (int s = 0; s < schedule.steps(); ++s) {
    std::vector<int> arriving(std::size_t(n), 0);
    std::set<double> sizes;
    for (int p = 0; p < n; ++p) {
      out.clear();
      schedule.sends(p, s, out);
      for (const plan::Send& m : out) {
        EXPECT_TRUE(m.to >= 0 && m.to < n && m.to != p) << "step " << s << ": " << p << " -> " << m.to;
        if (m.to < 0 || m.to >= n) continue;
        EXPECT_GT(m.bytes, 0) << "step " << s;
        ++arriving[std::size_t(m.to)];
        t.sent_bytes[std::size_t(p)] += m.bytes;
        t.received_bytes[std::size_t(m.to)] += m.bytes;
        sizes.insert(m.bytes);
        ++t.messages;
      }
    }
    for (int p = 0; p < n; ++p)
      EXPECT_EQ(arriving[std::size_t(p)], schedule.receives(p, s)) << "participant " << p << ", step " << s;
    t.step_bytes.emplace_back(sizes.begin(), sizes.end());
  }
  return t;
}

int floor_log2(int n) {
  int l = 0;
  while ((2 << l) <= n) ++l;
  return l;
}

/// One GPU per node, rings in the order given.
plan::RingLayout flat_layout() { return {1, {0}, {{0}}}; }

std::vector<int> iota(int n, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[std::size_t(i)] = first + i;
  return v;
}

plan::RingSchedule schedule_of(const plan::Ring& ring) {
  return plan::RingSchedule(int(ring.ranks.size()), ring.steps, ring.chunk_bytes);
}

}  // namespace

TEST(RingAllReduce, Takes2NMinus1StepsOfSOverNAndEveryRankMoves2NMinus1OverNS) {
  for (int n : {2, 3, 5, 8, 13, 64, 1000}) {
    const auto rings = plan::ring_all_reduce(iota(n), S, flat_layout(), {});
    ASSERT_EQ(rings.size(), 1u);
    EXPECT_EQ(rings[0].ranks, iota(n));
    EXPECT_EQ(rings[0].steps, 2 * (n - 1));
    EXPECT_DOUBLE_EQ(rings[0].chunk_bytes, S / n);
    const Traffic t = walk(schedule_of(rings[0]));
    EXPECT_EQ(t.messages, 2LL * (n - 1) * n);
    for (int p = 0; p < n; ++p) {
      EXPECT_NEAR(t.sent_bytes[std::size_t(p)], 2.0 * (n - 1) / n * S, 1e-6 * S) << "n=" << n;
      EXPECT_DOUBLE_EQ(t.received_bytes[std::size_t(p)], t.sent_bytes[std::size_t(p)]);
    }
  }
}

TEST(RingReduceScatter, TakesNMinus1StepsOfSOverN) {
  for (int n : {2, 7, 16}) {
    const auto rings = plan::ring_reduce_scatter(iota(n), S, flat_layout(), {});
    ASSERT_EQ(rings.size(), 1u);
    EXPECT_EQ(rings[0].steps, n - 1);
    EXPECT_DOUBLE_EQ(rings[0].chunk_bytes, S / n);
  }
}

TEST(RingAllReduce, SplitsTheBufferOverTheFourNvlinkChannelsOfADgx1) {
  const plan::RingLayout layout = plan::ring_layout(trainsim::platforms::load_platform("dgx1-v100"));
  ASSERT_EQ(layout.gpus_per_node, 8);
  ASSERT_EQ(layout.channels.size(), 4u);
  const std::vector<int> ranks = iota(16);  // two nodes
  const auto rings = plan::ring_all_reduce(ranks, S, layout, {});
  ASSERT_EQ(rings.size(), 4u);
  std::set<std::pair<int, int>> hops_inside_a_node;
  for (const plan::Ring& ring : rings) {
    EXPECT_EQ(ring.steps, 2 * 15);
    EXPECT_DOUBLE_EQ(ring.chunk_bytes, S / 16 / 4);
    std::vector<int> sorted = ring.ranks;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ranks);  // every rank once
    // Node 0's ranks first, then node 1's.
    for (std::size_t i = 0; i < ring.ranks.size(); ++i) EXPECT_EQ(ring.ranks[i] / 8, int(i / 8));
    for (std::size_t i = 0; i + 1 < ring.ranks.size(); ++i) {
      if (ring.ranks[i] / 8 != ring.ranks[i + 1] / 8) continue;
      EXPECT_TRUE(hops_inside_a_node.insert({ring.ranks[i], ring.ranks[i + 1]}).second)
          << "two channels share the hop " << ring.ranks[i] << " -> " << ring.ranks[i + 1];
    }
  }
  // Together the channels move what one ring would.
  const auto one = plan::ring_all_reduce(ranks, S, layout, plan::CollectiveOptions{.multi_ring = false});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_DOUBLE_EQ(one[0].chunk_bytes, S / 16);
  EXPECT_EQ(one[0].ranks, (std::vector<int>{0, 1, 5, 4, 7, 6, 2, 3, 8, 9, 13, 12, 15, 14, 10, 11}));
  // Across nodes channel k is rotated to leave through NIC k (GPUs 2k, 2k+1): 0 1 | 5 4 7 6 2 3.
  EXPECT_EQ(rings[0].ranks, (std::vector<int>{5, 4, 7, 6, 2, 3, 0, 1, 13, 12, 15, 14, 10, 11, 8, 9}));
  for (int k = 0; k < 4; ++k) EXPECT_EQ(rings[std::size_t(k)].ranks[7] / 2, k);
}

TEST(RingOrder, GroupsByNodeInOrderOfFirstAppearanceThenFollowsTheNodeRing) {
  const std::vector<int> dgx1 = {0, 1, 5, 4, 7, 6, 2, 3};
  // Node 0 appears first (rank 3); inside a node the NVLink ring 0 1 5 4 7 6 2 3 decides.
  EXPECT_EQ(plan::ring_order({3, 9, 0, 8, 1, 2}, 8, dgx1), (std::vector<int>{0, 1, 2, 3, 8, 9}));
  EXPECT_EQ(plan::ring_order({6, 5, 4, 7}, 8, dgx1), (std::vector<int>{5, 4, 7, 6}));
  std::vector<int> ranks = iota(8, 8);
  const std::vector<int> front = iota(8);
  ranks.insert(ranks.end(), front.begin(), front.end());
  EXPECT_EQ(plan::ring_order(ranks, 8, dgx1),
            (std::vector<int>{8, 9, 13, 12, 15, 14, 10, 11, 0, 1, 5, 4, 7, 6, 2, 3}));
  // Local ranks the node ring does not list keep their own number as position.
  EXPECT_EQ(plan::ring_order({5, 4, 1, 0}, 8, {1, 0}), (std::vector<int>{1, 0, 4, 5}));
}

TEST(RingOrder, KeepsTheGivenOrderWithoutTopologyAwareness) {
  const plan::RingLayout layout = plan::ring_layout(trainsim::platforms::load_platform("dgx1-v100"));
  const std::vector<int> ranks = {7, 0, 3, 12, 9};
  EXPECT_EQ(plan::ring_order(ranks, layout, plan::CollectiveOptions{.topology_aware_ring = false}), ranks);
  const auto rings = plan::ring_all_reduce(ranks, S, layout, plan::CollectiveOptions{.topology_aware_ring = false});
  ASSERT_EQ(rings.size(), 1u);
  EXPECT_EQ(rings[0].ranks, ranks);
}

TEST(BroadcastOrder, PutsTheRootFirstAndKeepsTheRingOrderAfterIt) {
  const plan::RingLayout layout = plan::ring_layout(trainsim::platforms::load_platform("dgx1-v100"));
  EXPECT_EQ(plan::broadcast_order({4, 0, 1, 2, 3, 5, 6, 7}, layout, {}), (std::vector<int>{4, 7, 6, 2, 3, 0, 1, 5}));
  EXPECT_EQ(plan::broadcast_order({0, 1, 2}, layout, {}), (std::vector<int>{0, 1, 2}));
}

TEST(HalvingDoubling, PowersOfTwoTake2Log2NStepsHalvingThenDoublingTheBytes) {
  for (plan::HdOrder order : {plan::HdOrder::near, plan::HdOrder::far})
    for (int n : {2, 4, 8, 64, 1024}) {
      const plan::HalvingDoublingSchedule hd(n, S, order);
      const int levels = floor_log2(n);
      ASSERT_EQ(hd.steps(), 2 * levels) << "n=" << n;
      const Traffic t = walk(hd);
      for (int k = 0; k < levels; ++k) {
        ASSERT_EQ(t.step_bytes[std::size_t(k)].size(), 1u);
        EXPECT_DOUBLE_EQ(t.step_bytes[std::size_t(k)][0], S / std::pow(2.0, k + 1)) << "halving step " << k;
        EXPECT_DOUBLE_EQ(t.step_bytes[std::size_t(levels + k)][0], S / n * std::pow(2.0, k)) << "doubling step " << k;
      }
      EXPECT_EQ(t.messages, 2LL * levels * n);  // every rank exchanges in every step
      for (int p = 0; p < n; ++p) {
        EXPECT_DOUBLE_EQ(t.sent_bytes[std::size_t(p)], 2.0 * (n - 1) / n * S) << "n=" << n;  // the ring's bytes
        EXPECT_DOUBLE_EQ(t.received_bytes[std::size_t(p)], t.sent_bytes[std::size_t(p)]);
      }
    }
}

TEST(HalvingDoubling, NearStartsAtDistanceOneFarAtHalfTheRanks) {
  // 16 ranks: near (MPICH's rab_rdb) halves at distance 1, 2, 4, 8 and doubles at 8, 4, 2, 1; far
  // (rab1) the reverse of both.
  const int n = 16;
  const std::vector<int> near = {1, 2, 4, 8, 8, 4, 2, 1}, far = {8, 4, 2, 1, 1, 2, 4, 8};
  for (const auto& [order, distances] : {std::pair{plan::HdOrder::near, near}, std::pair{plan::HdOrder::far, far}}) {
    const plan::HalvingDoublingSchedule hd(n, S, order);
    ASSERT_EQ(hd.steps(), int(distances.size()));
    std::vector<plan::Send> out;
    for (int s = 0; s < hd.steps(); ++s)
      for (int p = 0; p < n; ++p) {
        out.clear();
        hd.sends(p, s, out);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].to, p ^ distances[std::size_t(s)]) << plan::to_string(order) << " step " << s << " p " << p;
      }
  }
}

TEST(HalvingDoubling, NearKeepsTheLargestHalvesInsideANode) {
  // 2 nodes x 8 GPUs, node-major ranks: near sends only the last halving step's S/16 and the first
  // doubling step's S/16 across nodes, per rank; far sends S/2 and S/2.
  for (plan::HdOrder order : {plan::HdOrder::near, plan::HdOrder::far}) {
    const plan::HalvingDoublingSchedule hd(16, S, order);
    double across = 0;
    std::vector<plan::Send> out;
    for (int s = 0; s < hd.steps(); ++s) {
      out.clear();
      hd.sends(0, s, out);
      for (const auto& m : out)
        if (m.to / 8 != 0) across += m.bytes;
    }
    EXPECT_DOUBLE_EQ(across, order == plan::HdOrder::near ? 2 * S / 16 : 2 * S / 2) << plan::to_string(order);
  }
}

TEST(HalvingDoubling, OtherSizesFoldTheExtraRanksInAndOut) {
  for (plan::HdOrder order : {plan::HdOrder::near, plan::HdOrder::far})
    for (int n : {3, 5, 6, 7, 12, 100, 1000}) {
      const plan::HalvingDoublingSchedule hd(n, S, order);
      const int levels = floor_log2(n), p2 = 1 << levels, extra = n - p2;
      ASSERT_EQ(hd.steps(), 2 * levels + 2) << "n=" << n;
      const Traffic t = walk(hd);
      // Fold in: each extra rank hands its whole buffer to one core rank; fold out: it gets it back.
      EXPECT_EQ(t.step_bytes.front(), std::vector<double>{S});
      EXPECT_EQ(t.step_bytes.back(), std::vector<double>{S});
      EXPECT_EQ(t.messages, 2LL * extra + 2LL * levels * p2);
      for (int p = 0; p < n; ++p) {
        // far: ranks p2… fold into 0…; near: even ranks 0, 2, … below 2·extra fold into the next one.
        const bool folded = order == plan::HdOrder::far ? p >= p2 : p < 2 * extra && p % 2 == 0;
        const bool takes_one = order == plan::HdOrder::far ? p < extra : p < 2 * extra && p % 2 == 1;
        const double expected = folded      ? S                                // an extra rank: in and out
                                : takes_one ? S + 2.0 * (p2 - 1) / p2 * S  // a core rank that takes one in
                                            : 2.0 * (p2 - 1) / p2 * S;
        EXPECT_DOUBLE_EQ(t.sent_bytes[std::size_t(p)], expected) << "n=" << n << " p=" << p;
        EXPECT_DOUBLE_EQ(t.received_bytes[std::size_t(p)], expected) << "n=" << n << " p=" << p;
      }
    }
}

TEST(DoubleTree, ReducesThenBroadcastsInTwoTimesTreeDepthPlusChunksSteps) {
  for (int n : {2, 3, 4, 7, 8, 9, 16, 100, 1024}) {
    for (int m : {1, 4}) {
      const plan::DoubleTreeSchedule tree(n, m, 1000.0);
      const int depth = floor_log2(n);  // of a heap over n positions
      EXPECT_EQ(tree.steps(), 2 * (depth + m - 1)) << "n=" << n << " m=" << m;
      const Traffic t = walk(tree);
      // Per tree, every edge carries m chunks up and m chunks down.
      EXPECT_EQ(t.messages, 2LL * 2 * (n - 1) * m) << "n=" << n;
      for (int p = 0; p < n; ++p)
        EXPECT_DOUBLE_EQ(t.sent_bytes[std::size_t(p)], t.received_bytes[std::size_t(p)]) << "n=" << n << " p=" << p;
    }
  }
}

TEST(DoubleTree, EachTreeCarriesHalfTheBufferInPipelineChunks) {
  plan::CollectiveOptions o;
  o.pipeline_chunk_bytes = 1024;
  o.max_pipeline_chunks = 64;
  const plan::DoubleTreeSchedule small = plan::double_tree_all_reduce(8, 4096, o);  // 2048 per tree: 2 chunks
  EXPECT_EQ(small.steps(), 2 * (3 + 2 - 1));
  EXPECT_EQ(walk(small).step_bytes[0], std::vector<double>{1024});
  const plan::DoubleTreeSchedule large = plan::double_tree_all_reduce(8, S, o);  // capped at 64 chunks
  EXPECT_EQ(large.steps(), 2 * (3 + 64 - 1));
  EXPECT_EQ(walk(large).step_bytes[0], std::vector<double>{S / 2 / 64});
}

TEST(Chain, BroadcastsMChunksDownTheLineInNMinus2PlusMSteps) {
  for (int n : {2, 3, 10}) {
    for (int m : {1, 5}) {
      const plan::ChainSchedule chain(n, m, 100.0);
      EXPECT_EQ(chain.steps(), n - 2 + m);
      const Traffic t = walk(chain);
      EXPECT_EQ(t.messages, 1LL * (n - 1) * m);
      EXPECT_DOUBLE_EQ(t.sent_bytes[0], 100.0 * m);
      EXPECT_DOUBLE_EQ(t.received_bytes[0], 0);
      EXPECT_DOUBLE_EQ(t.sent_bytes[std::size_t(n - 1)], 0);
      for (int p = 1; p < n; ++p) EXPECT_DOUBLE_EQ(t.received_bytes[std::size_t(p)], 100.0 * m);
    }
  }
  plan::CollectiveOptions o;
  o.pipeline_chunk_bytes = 1000;
  const plan::ChainSchedule chain = plan::chain_broadcast(4, 2500, o);  // 3 chunks of 2500/3
  EXPECT_EQ(chain.steps(), 4 - 2 + 3);
  EXPECT_EQ(walk(chain).step_bytes[0], std::vector<double>{2500.0 / 3});
}

TEST(PipelineChunks, AreTheCeilingOfBytesOverChunkSizeWithinOneAndTheCap) {
  plan::CollectiveOptions o;
  o.pipeline_chunk_bytes = 512;
  o.max_pipeline_chunks = 8;
  EXPECT_EQ(plan::pipeline_chunks(0, o), 1);
  EXPECT_EQ(plan::pipeline_chunks(1, o), 1);
  EXPECT_EQ(plan::pipeline_chunks(512, o), 1);
  EXPECT_EQ(plan::pipeline_chunks(513, o), 2);
  EXPECT_EQ(plan::pipeline_chunks(512.0 * 100, o), 8);
  o.max_pipeline_chunks = 0;  // treated as 1
  EXPECT_EQ(plan::pipeline_chunks(512.0 * 100, o), 1);
}

TEST(Hierarchical, ReduceScattersInsideNodesAndAllReducesTheShardsAcross) {
  // 4 nodes of 8 GPUs: rings of 8 inside (7 steps of S/8), 8 rings of 4 across (6 steps of S/32).
  const plan::RingLayout layout{8, iota(8), {iota(8)}};
  const auto phases = plan::hierarchical_all_reduce(iota(32), S, layout, {});
  ASSERT_EQ(phases.intra.size(), 4u);
  for (std::size_t node = 0; node < 4; ++node) {
    EXPECT_EQ(phases.intra[node].ranks, iota(8, int(node) * 8));
    EXPECT_EQ(phases.intra[node].steps, 7);
    EXPECT_DOUBLE_EQ(phases.intra[node].chunk_bytes, S / 8);
  }
  ASSERT_EQ(phases.inter.size(), 8u);
  for (std::size_t local = 0; local < 8; ++local) {
    const int l = int(local);
    EXPECT_EQ(phases.inter[local].ranks, (std::vector<int>{l, 8 + l, 16 + l, 24 + l}));
    EXPECT_EQ(phases.inter[local].steps, 2 * 3);
    EXPECT_DOUBLE_EQ(phases.inter[local].chunk_bytes, S / 8 / 4);
  }
  // Per rank: (g−1)/g·S sent inside before and after, 2(N−1)/N·S/g across.
  const double per_rank = 2 * phases.intra[0].steps * phases.intra[0].chunk_bytes +
                          phases.inter[0].steps * phases.inter[0].chunk_bytes;
  EXPECT_DOUBLE_EQ(per_rank, 2.0 * 7 / 8 * S + 2.0 * 3 / 4 * S / 8);
}

TEST(Hierarchical, FollowsTheNodeRingAndHasNoIntraPhaseWithOneGpuPerNode) {
  const plan::RingLayout dgx1 = plan::ring_layout(trainsim::platforms::load_platform("dgx1-v100"));
  const auto phases = plan::hierarchical_all_reduce(iota(16), S, dgx1, {});
  EXPECT_EQ(phases.intra[0].ranks, (std::vector<int>{0, 1, 5, 4, 7, 6, 2, 3}));
  EXPECT_EQ(phases.inter[2].ranks, (std::vector<int>{5, 13}));
  const auto flat = plan::hierarchical_all_reduce(iota(4), S, flat_layout(), {});
  ASSERT_EQ(flat.intra.size(), 4u);
  for (const plan::Ring& ring : flat.intra) EXPECT_EQ(ring.steps, 0);  // nothing to do inside a node
  ASSERT_EQ(flat.inter.size(), 1u);
  EXPECT_EQ(flat.inter[0].steps, 2 * 3);
  EXPECT_DOUBLE_EQ(flat.inter[0].chunk_bytes, S / 4);
}

TEST(HierarchicalDeathTest, NeedsTheSameNumberOfRanksOnEveryNode) {
  const plan::RingLayout layout{4, iota(4), {iota(4)}};
  EXPECT_DEATH(plan::hierarchical_all_reduce({0, 1, 2, 3, 4, 5}, S, layout, {}), "same number of ranks");
}

TEST(ChannelOrders, AcrossNodesEveryChannelLeavesThroughItsOwnNic) {
  // DGX H100: 8 GPUs on NVSwitch, GPU a on NIC a. One channel per NIC, each a rotation of 0..7
  // ending at the GPU of its NIC: channel k leaves every node through NIC k.
  const plan::RingLayout h100 = plan::ring_layout(trainsim::platforms::load_platform("dgx-h100"));
  ASSERT_EQ(h100.nics_per_node, 8);
  const auto orders = plan::channel_orders(h100, 0, true);
  ASSERT_EQ(orders.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(orders[std::size_t(k)].back(), k);
    EXPECT_EQ(orders[std::size_t(k)].front(), (k + 1) % 8);
  }
  // Inside one node nothing leaves it: the node's own channels, unrotated.
  EXPECT_EQ(plan::channel_orders(h100, 0, false), h100.channels);
  // p4d: 4 NICs, GPUs 2k and 2k+1 on NIC k; channel k ends at 2k+1 and the next node starts at 2k+2.
  const plan::RingLayout p4d = plan::ring_layout(trainsim::platforms::load_platform("aws-p4d.24xlarge"));
  const auto four = plan::channel_orders(p4d, 0, true);
  ASSERT_EQ(four.size(), 4u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(four[std::size_t(k)].back(), 2 * k + 1);
  // More channels than NICs: NICs in turn. One NIC: no rotation.
  const auto twelve = plan::channel_orders(p4d, 12, true);
  ASSERT_EQ(twelve.size(), 12u);
  EXPECT_EQ(twelve[9].back(), 3);
  const plan::RingLayout p3dn = plan::ring_layout(trainsim::platforms::load_platform("aws-p3dn.24xlarge"));
  EXPECT_EQ(plan::channel_orders(p3dn, 0, true), p3dn.channels);
}

TEST(ChannelOrders, ARingPhaseSplitsTheBufferOverTheChannelsAndVisitsEveryRankOnce) {
  const plan::RingLayout h100 = plan::ring_layout(trainsim::platforms::load_platform("dgx-h100"));
  const std::vector<int> ranks = iota(24);  // three nodes
  const auto rings = plan::ring_all_reduce(ranks, S, h100, {});
  ASSERT_EQ(rings.size(), 8u);
  std::set<int> exits;
  for (const plan::Ring& ring : rings) {
    EXPECT_DOUBLE_EQ(ring.chunk_bytes, S / 24 / 8);
    std::vector<int> sorted = ring.ranks;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ranks);
    for (std::size_t i = 0; i < ring.ranks.size(); ++i)
      if (ring.ranks[i] / 8 != ring.ranks[(i + 1) % ring.ranks.size()] / 8) exits.insert(ring.ranks[i] % 8);
  }
  EXPECT_EQ(exits.size(), 8u);  // every NIC carries one channel out of every node
  plan::CollectiveOptions two;
  two.channels = 2;
  EXPECT_EQ(plan::ring_all_reduce(ranks, S, h100, two).size(), 2u);
}

TEST(NcclTreeParent, FollowsNcclsBtreeAndItsMirrorOrShift) {
  // NVIDIA/nccl src/graph/trees.cc, the illustrated 14-rank btree: 0 → 8 → {4, 12}, 12 → {10, 13}.
  EXPECT_EQ(plan::nccl_tree_parent(14, 0, 0), -1);
  EXPECT_EQ(plan::nccl_tree_parent(14, 8, 0), 0);
  EXPECT_EQ(plan::nccl_tree_parent(14, 4, 0), 8);
  EXPECT_EQ(plan::nccl_tree_parent(14, 12, 0), 8);
  EXPECT_EQ(plan::nccl_tree_parent(14, 13, 0), 12);
  EXPECT_EQ(plan::nccl_tree_parent(14, 10, 0), 12);
  EXPECT_EQ(plan::nccl_tree_parent(14, 1, 0), 2);
  EXPECT_EQ(plan::nccl_tree_parent(14, 3, 0), 2);
  // 12 ranks: the mirror, rooted at 11 with child 3; 13 ranks: shifted by one, rooted at 1.
  EXPECT_EQ(plan::nccl_tree_parent(12, 11, 1), -1);
  EXPECT_EQ(plan::nccl_tree_parent(12, 3, 1), 11);
  EXPECT_EQ(plan::nccl_tree_parent(12, 7, 1), 3);
  EXPECT_EQ(plan::nccl_tree_parent(13, 1, 1), -1);
  EXPECT_EQ(plan::nccl_tree_parent(13, 9, 1), 1);
  // In the double tree a leaf of one tree is an inner rank of the other (even counts).
  for (int n : {8, 16, 64}) {
    for (int r = 0; r < n; ++r) {
      bool inner0 = false, inner1 = false;
      for (int q = 0; q < n; ++q) {
        inner0 = inner0 || plan::nccl_tree_parent(n, q, 0) == r;
        inner1 = inner1 || plan::nccl_tree_parent(n, q, 1) == r;
      }
      EXPECT_FALSE(inner0 && inner1) << "n " << n << ", rank " << r;
    }
  }
}

TEST(NcclTrees, ChainInsideNodesHeadOnTheChannelsNicAndTheDoubleTreeOfNodes) {
  // 4 nodes x 8 GPUs behind 8 NICs (GPU a on NIC a), one ring order inside a node.
  const plan::RingLayout layout{8, iota(8), {iota(8)}, 8};
  const std::vector<int> ranks = iota(32);
  ASSERT_TRUE(plan::nccl_tree_applies(ranks, layout));
  EXPECT_FALSE(plan::nccl_tree_applies(iota(8), layout));      // one node
  EXPECT_FALSE(plan::nccl_tree_applies(iota(12), layout));     // 8 + 4 ranks
  const plan::NcclTrees trees = plan::nccl_tree_all_reduce(ranks, S, layout, {});
  EXPECT_EQ(trees.channels, 16);  // 8 graph channels (one per NIC), each on both trees
  ASSERT_EQ(trees.schedule.trees(), 16);
  for (int c = 0; c < 16; ++c) {
    for (int node = 0; node < 4; ++node) {
      // Exactly one GPU of the node leaves it (its head), the one on NIC c mod 8; the rest form a chain.
      int heads = 0;
      for (int local = 0; local < 8; ++local) {
        const int p = node * 8 + local;
        const int parent = trees.schedule.parent(c, p);
        const bool leaves = parent < 0 || trees.ranks[std::size_t(parent)] / 8 != node;
        if (!leaves) continue;
        ++heads;
        EXPECT_EQ(trees.ranks[std::size_t(p)] % 8, c % 8) << "channel " << c << ", node " << node;
        const int up = plan::nccl_tree_parent(4, node, c / 8);
        EXPECT_EQ(parent < 0 ? -1 : trees.ranks[std::size_t(parent)] / 8, up);
      }
      EXPECT_EQ(heads, 1);
    }
  }
  const Traffic t = walk(trees.schedule);
  // Every non-root sends each of its channels' S/16 up once and every non-root receives it down once.
  double total = 0;
  for (double b : t.sent_bytes) total += b;
  EXPECT_NEAR(total, 2.0 * 16 * 31 * S / 16, 1e-6 * S);
  EXPECT_EQ(trees.schedule.chunks() * trees.schedule.chunk_bytes() * 16, S);
}

TEST(NvlsTree, NvlsInsideEveryNodeAndOneDoubleTreeOfNodesPerNicHead) {
  // 3 nodes x 8 GPUs behind 4 NICs (GPUs 2k, 2k+1 on NIC k): heads 0, 2, 4, 6 (NCCL logs
  // "NVLS Head 1: 2 10" on such nodes).
  const plan::RingLayout layout{8, iota(8), {iota(8)}, 4};
  EXPECT_EQ(plan::nvls_tree_heads(layout), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(plan::nvls_tree_heads(plan::RingLayout{8, iota(8), {iota(8)}, 8}), iota(8));
  // More NICs than GPUs: every GPU heads (its first NIC).
  EXPECT_EQ(plan::nvls_tree_heads(plan::RingLayout{4, iota(4), {iota(4)}, 8}), iota(4));
  const plan::NvlsTreePhases p = plan::nvls_tree_all_reduce(iota(24), S, layout, {}, 1 / 0.85);
  // Inside: one NVLS step per node, each GPU sending S(g+1)/g times the intra factor.
  ASSERT_EQ(p.intra.size(), 3u);
  for (const plan::Ring& r : p.intra) {
    EXPECT_EQ(r.ranks.size(), 8u);
    EXPECT_EQ(r.steps, 1);
    EXPECT_NEAR(r.chunk_bytes, S * 9 / 8 / 0.85, 1e-6 * S);
  }
  // Between: participant k·3 + i is head k of node i; each tree is a forest of 4 trees, head k's
  // NCCL's tree t over the nodes.
  EXPECT_EQ(p.inter.channels, 4);
  ASSERT_EQ(p.inter.schedule.trees(), 2);
  ASSERT_EQ(p.inter.ranks.size(), 12u);
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 3; ++i) {
        const int q = k * 3 + i;
        EXPECT_EQ(p.inter.ranks[std::size_t(q)], i * 8 + 2 * k);
        const int up = plan::nccl_tree_parent(3, i, t);
        EXPECT_EQ(p.inter.schedule.parent(t, q), up < 0 ? -1 : k * 3 + up);
      }
  // Every head moves S/8 per tree up and down each of its tree's 2 edges: 2 trees × 4 heads × 2
  // edges × 2 directions × S/8.
  const Traffic tr = walk(p.inter.schedule);
  double total = 0;
  for (double b : tr.sent_bytes) total += b;
  EXPECT_NEAR(total, 2 * 4 * 2 * 2 * S / 8, 1e-6 * S);
  EXPECT_NEAR(p.inter.schedule.chunks() * p.inter.schedule.chunk_bytes(), S / 8, 1e-6 * S);
}

TEST(SharpAllReduce, HeadsMeetInsideTheNodesAndTheirNicsCarryAnHthEachWay) {
  // 3 nodes x 8 GPUs, 8 NICs. CollNet: two steps of S·7/8 around each node (2S·7/8 per port each
  // way), and per head a one-step ring over the nodes of S/8 (its NIC's share each way).
  const plan::RingLayout layout{8, iota(8), {iota(8)}, 8};
  const plan::SharpPhases c = plan::sharp_all_reduce(iota(24), S, layout, {}, false, 8);
  ASSERT_EQ(c.intra.size(), 3u);
  for (const plan::Ring& r : c.intra) {
    EXPECT_EQ(r.steps, 2);
    EXPECT_NEAR(r.chunk_bytes, S * 7 / 8, 1e-6 * S);
  }
  ASSERT_EQ(c.inter.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(c.inter[std::size_t(k)].ranks, (std::vector<int>{k, 8 + k, 16 + k}));
    EXPECT_EQ(c.inter[std::size_t(k)].steps, 1);
    EXPECT_NEAR(c.inter[std::size_t(k)].chunk_bytes, S / 8, 1e-6 * S);
  }
  // NVLS across nodes: the switch's S(g+1)/g per port, times the efficiency factor; heads capped.
  const plan::SharpPhases v = plan::sharp_all_reduce(iota(24), S, layout, {}, true, 4, 2.0);
  EXPECT_EQ(v.intra[0].steps, 1);
  EXPECT_NEAR(v.intra[0].chunk_bytes, 2 * S * 9 / 8, 1e-6 * S);
  ASSERT_EQ(v.inter.size(), 4u);
  EXPECT_NEAR(v.inter[0].chunk_bytes, S / 4, 1e-6 * S);
}

TEST(NcclTrees, ChunksHalveUntilEveryChannelHasDepthTimesEightOfThem) {
  // enqueue.cc: 512 KiB down to 128 KiB while a channel gets fewer than depth·8 chunks. 2 nodes x
  // 8 GPUs: depth 7 + 1 = 8, 16 channels; 64 MiB → 4 MiB per channel → 128 KiB chunks (32 < 64).
  const plan::RingLayout layout{8, iota(8), {iota(8)}, 8};
  const plan::NcclTrees trees = plan::nccl_tree_all_reduce(iota(16), 64 * 1024.0 * 1024, layout, {});
  EXPECT_EQ(trees.schedule.chunk_bytes(), 128 * 1024.0);
  EXPECT_EQ(trees.schedule.chunks(), 32);
}

TEST(NcclTrees, WithTheTunersProtocolTheChunkIsThatProtocolsStep) {
  // enqueue.cc calcCollChunking as NCCL runs it since 2.20: Simple keeps its 512 KiB step; LL its
  // 64 KiB step; LL128 its 600 KiB step, halved while a channel has fewer than nstepsLL128·64/ppn
  // chunks (down to 128 KiB), then nstepsLL128·16/ppn (down to 32 KiB); 2 nodes of 8: 2.8.
  const plan::RingLayout layout{8, iota(8), {iota(8)}, 8};
  plan::CollectiveOptions simple;
  simple.nccl_protocol = plan::Protocol::simple;
  const plan::NcclTrees trees = plan::nccl_tree_all_reduce(iota(16), 64 * 1024.0 * 1024, layout, simple);
  EXPECT_EQ(trees.schedule.chunk_bytes(), 512 * 1024.0);
  EXPECT_EQ(trees.schedule.chunks(), 8);
  plan::CollectiveOptions ll = simple, ll128 = simple;
  ll.nccl_protocol = plan::Protocol::ll;
  ll128.nccl_protocol = plan::Protocol::ll128;
  EXPECT_EQ(plan::nccl_tree_chunk_bytes(1 << 20, 2, 8, ll), 65536.0);
  // 16 MiB a channel holds 27 steps of 614,400 B (≥ 22.4): kept. 4 MiB: 6 (< 22.4) → 307,200 (13)
  // → 153,600 (27).
  EXPECT_EQ(plan::nccl_tree_chunk_bytes(16 << 20, 2, 8, ll128), 614400.0);
  EXPECT_EQ(plan::nccl_tree_chunk_bytes(4 << 20, 2, 8, ll128), 153600.0);
  // 256 KiB: → 76,800 (3 < 22.4, below 128 KiB) → 38,400 (6 ≥ 5.6).
  EXPECT_EQ(plan::nccl_tree_chunk_bytes(256 << 10, 2, 8, ll128), 38400.0);
  // Without a protocol, the depth rule (the test above).
  EXPECT_EQ(plan::nccl_tree_chunk_bytes(4 << 20, 2, 8, {}), 128 * 1024.0);
}

TEST(TreeSchedule, CompletionOnUniformDurationsIsStepsTimesStep) {
  // A chain 0 ← 1 ← 2 ← 3 with 5 chunks: every step on the critical path costs o + d.
  const plan::TreeSchedule chain(4, {{-1, 0, 1, 2}}, 5, 1.0);
  EXPECT_EQ(chain.steps(), 2 * (3 + 5 - 1));
  walk(chain);
  const std::vector<double> d(4, 2.0);
  const double t = chain.completion_s({d, d, d, d}, 0.5);
  EXPECT_DOUBLE_EQ(t, chain.steps() * 2.5);
  // Loaded durations count only in full steps: with 5 chunks and 3 levels, (w − 1)/(H − 1) of them.
  const std::vector<double> loaded(4, 4.0);
  EXPECT_GT(chain.completion_s({d, loaded, d, loaded}, 0.5), t);
  EXPECT_LT(chain.completion_s({d, loaded, d, loaded}, 0.5), chain.steps() * 4.5);
}
