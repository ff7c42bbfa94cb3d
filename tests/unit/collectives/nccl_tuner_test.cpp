// NCCL's tuner without SimGrid: the topology it reads off presets, its choices per size against
// the crossovers of NCCL's published cost model, and the costs the engine charges per protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "trainsim/plan/nccl_tuner.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace plan = trainsim::plan;
namespace tp = trainsim::platforms;

namespace {

constexpr double KiB = 1024.0, MiB = KiB * KiB, GiB = KiB * MiB;

tp::PlatformSpec preset(const std::string& name, int nodes = 1) {
  return tp::with_nodes(tp::load_platform(name), nodes, "test");
}

plan::NcclTopology topology(const std::string& name, int nodes = 1) {
  const tp::PlatformSpec spec = preset(name, nodes);
  return plan::nccl_topology(spec, spec.total_gpus());
}

/// The tuner's candidate (a, p) for `bytes` on `t`.
plan::NcclChoice candidate(const plan::NcclTopology& t, double bytes, plan::Algorithm a, plan::Protocol p) {
  for (const plan::NcclChoice& c : plan::nccl_candidates(t, bytes))
    if (c.algorithm == a && c.protocol == p) return c;
  ADD_FAILURE() << "no candidate " << plan::to_string(a) << "/" << plan::to_string(p);
  return plan::NcclChoice{};
}

}  // namespace

TEST(NcclTopology, ReadsGenerationChannelsAndNvlsFromThePlatform) {
  const plan::NcclTopology a100 = topology("dgx-a100");
  EXPECT_EQ(a100.compute_capability, 80);
  EXPECT_FALSE(a100.nvls);
  // 300 GB/s × 0.8 over NVLink 3's 20 GB/s per link (NCCL topo.h): 12 channels of 20 GB/s.
  EXPECT_EQ(a100.channels, 12);
  EXPECT_NEAR(a100.bw_intra_GBps, 20.0, 1e-9);
  const plan::NcclTopology h200 = topology("dgx-h200");
  EXPECT_EQ(h200.compute_capability, 90);
  EXPECT_TRUE(h200.nvls);
  EXPECT_EQ(h200.channels, 16);  // capped at NCCL's 16 per graph
  EXPECT_NEAR(h200.channels * h200.bw_intra_GBps, 450 * 0.824, 1e-9);
  // Across 4 DGX H100 nodes: NCCL's ring graph, one channel per NIC (search.cc), each at the
  // fastest of the search's speeds a 50 GB/s NDR NIC carries (sm90SpeedArrayInter: 48).
  const plan::NcclTopology h100x4 = topology("dgx-h100", 4);
  EXPECT_EQ(h100x4.nodes, 4);
  EXPECT_EQ(h100x4.channels, 8);
  EXPECT_NEAR(h100x4.bw_inter_GBps, 48.0, 1e-9);
  // The NVLink share per channel is still the node's own (16 channels of 20.6 GB/s at most).
  EXPECT_NEAR(h100x4.bw_intra_GBps, topology("dgx-h100").bw_intra_GBps, 1e-9);
  const plan::NcclTopology pcie = topology("cluster-25gbe");
  EXPECT_FALSE(pcie.nvlink);
  EXPECT_EQ(pcie.channels, 1);
}

TEST(NcclTuner, OneH200NodePicksLlForSmallSizesAndNvlsForLargeOnes) {
  const plan::NcclTopology t = topology("dgx-h200");
  const plan::NcclChoice small = plan::nccl_choose(t, 64 * KiB);
  EXPECT_EQ(small.algorithm, plan::Algorithm::ring);
  EXPECT_EQ(small.protocol, plan::Protocol::ll);
  // LL ring: 6.6 µs base + 14 steps × 0.6 µs (tuning.cc).
  EXPECT_NEAR(small.latency_s, (6.6 + 14 * 0.6) * 1e-6, 1e-12);
  // enqueue.cc: an LL ring keeps a channel per 512 threads × 8 bytes × 8 ranks = 32 KiB.
  EXPECT_EQ(small.channels, 2);
  EXPECT_EQ(plan::nccl_choose(t, 256 * KiB).channels, 8);
  const plan::NcclChoice large = plan::nccl_choose(t, 1 * GiB);
  EXPECT_EQ(large.channels, 16);
  EXPECT_EQ(large.algorithm, plan::Algorithm::nvls);
  EXPECT_EQ(large.protocol, plan::Protocol::simple);
  EXPECT_NEAR(large.latency_s, 25e-6, 1e-12);
  // The crossover lies where NCCL's own logs put it on Hopper, between 1 and 4 MiB.
  EXPECT_EQ(plan::nccl_choose(t, 1 * MiB).algorithm, plan::Algorithm::ring);
  EXPECT_EQ(plan::nccl_choose(t, 4 * MiB).algorithm, plan::Algorithm::nvls);
}

TEST(NcclTuner, OneA100NodeHasNoNvlsAndMovesFromLlToSimpleAsSizesGrow) {
  const plan::NcclTopology t = topology("dgx-a100");
  for (const plan::NcclChoice& c : plan::nccl_candidates(t, 1 * MiB)) EXPECT_NE(c.algorithm, plan::Algorithm::nvls);
  EXPECT_EQ(plan::nccl_choose(t, 8 * KiB).protocol, plan::Protocol::ll);
  const plan::NcclChoice big = plan::nccl_choose(t, 4 * GiB);
  EXPECT_EQ(big.algorithm, plan::Algorithm::ring);
  EXPECT_EQ(big.protocol, plan::Protocol::simple);
  EXPECT_NEAR(big.bus_bandwidth_Bps, 240e9, 1e3);  // 12 channels × 20 GB/s
  // Every prediction is latency + S / algbw, algbw = busbw · n / 2(n−1) for the ring.
  EXPECT_NEAR(big.predicted_s, big.latency_s + 4 * GiB / (240e9 * 8 / 14), 1e-9);
}

TEST(NcclTuner, ManyNodesPreferTheTreeForMediumSizesAndTheRingForLargeOnes) {
  // 64 DGX A100 nodes: the ring pays 2(n−1) = 1022 steps, the tree 2·log2(64) network hops.
  const plan::NcclTopology t = topology("dgx-a100", 64);
  EXPECT_EQ(plan::nccl_choose(t, 1 * MiB).algorithm, plan::Algorithm::tree);
  // On 8 nodes the ring's 126 steps cost less than its 9% bandwidth edge over the tree saves.
  EXPECT_EQ(plan::nccl_choose(topology("dgx-a100", 8), 4 * GiB).algorithm, plan::Algorithm::ring);
  // A fixed algorithm still gets its best protocol.
  EXPECT_EQ(plan::nccl_choose(t, 1 * MiB, plan::Algorithm::ring).algorithm, plan::Algorithm::ring);
  // NVLS across nodes needs CollNet (SHARP switches, below): without it, falls back to ring.
  EXPECT_EQ(plan::nccl_choose(topology("dgx-h100", 2), 1 * GiB, plan::Algorithm::nvls).algorithm,
            plan::Algorithm::ring);
}

TEST(NcclTuner, PcieNodesGetNoLl128) {
  for (const plan::NcclChoice& c : plan::nccl_candidates(topology("cluster-25gbe"), 1 * MiB))
    EXPECT_NE(c.protocol, plan::Protocol::ll128);
}

TEST(ProtocolCosts, WireBytesLaunchAndStepLatencyFollowTheProtocol) {
  const plan::NcclTopology t = topology("dgx-a100");
  auto pick = [&](plan::Protocol p) {
    for (const plan::NcclChoice& c : plan::nccl_candidates(t, 1 * MiB))
      if (c.algorithm == plan::Algorithm::ring && c.protocol == p) return c;
    ADD_FAILURE() << "no ring candidate for " << plan::to_string(p);
    return plan::NcclChoice{};
  };
  const plan::ProtocolCosts ll = plan::protocol_costs(t, pick(plan::Protocol::ll), 1 * MiB);
  // LL: busbw min(llMaxBw 87.7, 240 × 0.5) = 87.7 GB/s, so the flows carry 240 / 87.7 bytes per byte.
  EXPECT_NEAR(ll.wire_factor, 240.0 / 87.7, 1e-9);
  EXPECT_NEAR(ll.launch_s, 6.6e-6, 1e-15);
  EXPECT_NEAR(ll.step_overhead_s, 0, 1e-15);
  const plan::ProtocolCosts ll128 = plan::protocol_costs(t, pick(plan::Protocol::ll128), 1 * MiB);
  EXPECT_NEAR(ll128.wire_factor, 1 / 0.92, 1e-9);
  EXPECT_NEAR(ll128.step_overhead_s, 1.3e-6, 1e-12);
  const plan::ProtocolCosts simple = plan::protocol_costs(t, pick(plan::Protocol::simple), 1 * MiB);
  EXPECT_DOUBLE_EQ(simple.wire_factor, 1.0);
  EXPECT_NEAR(simple.launch_s, 8.4e-6, 1e-15);
  // A Simple step costs the preset's 3.4 µs again: the cut fabric latency plus Simple's overhead.
  EXPECT_NEAR(plan::fabric_latency_cut_s(t) + 0.6e-6, 3.4e-6, 1e-12);
  EXPECT_NEAR(simple.step_overhead_s, 2.8e-6, 1e-12);
  // NVLS: the efficiency, times the pipeline's fill (1 GiB: 16 channels × 2 loops of 8 × 128 KiB).
  const plan::NcclChoice nvls = plan::nccl_choose(topology("dgx-h200"), 1 * GiB);
  EXPECT_NEAR(plan::protocol_costs(topology("dgx-h200"), nvls, 1 * GiB).wire_factor, 1 / 0.85 * (1 + 32.0 / 1024), 1e-9);
  // A tree carries NCCL's medium-size correction: 2 MiB is log2(2 MiB / 64) = 15, LL128 0.6.
  const plan::NcclTopology two = topology("dgx-a100", 16);
  const plan::NcclChoice tree = candidate(two, 2 * MiB, plan::Algorithm::tree, plan::Protocol::ll128);
  EXPECT_NEAR(plan::protocol_costs(two, tree, 2 * MiB).wire_factor, 128.0 / 120.0 / 0.6, 1e-9);
}

// Across nodes the ring's bytes cross the NICs at ring_efficiency of their line rate: the protocol's
// wire overhead over it, LL's ceiling where that binds first; inside one node, and for the trees,
// nothing changes.
TEST(ProtocolCosts, RingsAcrossNodesMoveAtTheRingEfficiency) {
  plan::NcclTopology two = topology("dgx-h100", 2);
  ASSERT_DOUBLE_EQ(two.ring_efficiency, 1.0);
  auto wire = [](const plan::NcclTopology& t, plan::Algorithm a, plan::Protocol p, double bytes) {
    return plan::protocol_costs(t, candidate(t, bytes, a, p), bytes).wire_factor;
  };
  const double simple = wire(two, plan::Algorithm::ring, plan::Protocol::simple, 1 * GiB);
  const double ll128 = wire(two, plan::Algorithm::ring, plan::Protocol::ll128, 16 * MiB);
  const double ll = wire(two, plan::Algorithm::ring, plan::Protocol::ll, 1 * MiB);
  ASSERT_GT(ll, 2.0 / 0.94) << "LL's ceiling binds at 1 MiB";
  const double tree = wire(two, plan::Algorithm::tree, plan::Protocol::simple, 1 * GiB);
  two.ring_efficiency = 0.94;
  EXPECT_NEAR(wire(two, plan::Algorithm::ring, plan::Protocol::simple, 1 * GiB), simple / 0.94, 1e-12);
  EXPECT_NEAR(wire(two, plan::Algorithm::ring, plan::Protocol::ll128, 16 * MiB), 128.0 / 120.0 / 0.94, 1e-12);
  EXPECT_GT(128.0 / 120.0 / 0.94, ll128);
  EXPECT_DOUBLE_EQ(wire(two, plan::Algorithm::ring, plan::Protocol::ll, 1 * MiB), ll);
  EXPECT_DOUBLE_EQ(wire(two, plan::Algorithm::tree, plan::Protocol::simple, 1 * GiB), tree);
  plan::NcclTopology one = topology("dgx-h100");
  const double inside = wire(one, plan::Algorithm::ring, plan::Protocol::simple, 1 * GiB);
  one.ring_efficiency = 0.94;
  EXPECT_DOUBLE_EQ(wire(one, plan::Algorithm::ring, plan::Protocol::simple, 1 * GiB), inside);
}

TEST(NcclTuner, RingsAcrossNodesPayTheNetOverheadAndTheSimplePlateau) {
  // 2 DGX A100 nodes: 16 ranks, 30 steps of which 2 cross nodes; the communicator has 16 channels
  // (the ring graph's 8, one per NIC, duplicated).
  const plan::NcclTopology two = topology("dgx-a100", 2);
  // LL: every intra-node step costs at least the 1 µs net overhead: 6.6 + 28 × 1.0 + 2 × 2.7.
  EXPECT_NEAR(candidate(two, 16 * KiB, plan::Algorithm::ring, plan::Protocol::ll).latency_s, 40.0e-6, 1e-12);
  // Simple: 8.4 + 28 × max(3.4, 3 × 1.0) + 2 × 14 = 131.6 µs below 64 bytes per channel and rank
  // (8 KiB / (16 × 16) = 32) and ×1.4 from there (1 MiB).
  EXPECT_NEAR(candidate(two, 8 * KiB, plan::Algorithm::ring, plan::Protocol::simple).latency_s, 131.6e-6, 1e-12);
  EXPECT_NEAR(candidate(two, 1 * MiB, plan::Algorithm::ring, plan::Protocol::simple).latency_s, 1.4 * 131.6e-6, 1e-12);
  // One node: neither (14 steps of 3.4 µs after 8.4).
  EXPECT_NEAR(candidate(topology("dgx-a100"), 1 * MiB, plan::Algorithm::ring, plan::Protocol::simple).latency_s,
              (8.4 + 14 * 3.4) * 1e-6, 1e-12);
}

TEST(NcclTuner, AmdHostsPayTwiceTheNetOverheadAndLlsLowerCeilingAcrossNodes) {
  // tuning.cc getNetOverhead (2 µs on AMD) and llMaxBws' AMD row across 2 nodes (22.5 GB/s).
  tp::PlatformSpec spec = preset("dgx-a100", 2);
  spec.network.nccl.amd_cpu = true;
  const plan::NcclTopology amd = plan::nccl_topology(spec, spec.total_gpus());
  const plan::NcclTopology intel = topology("dgx-a100", 2);
  // LL: 6.6 + 28 × max(0.6, 2.0) + 2 × 2.7 µs.
  EXPECT_NEAR(candidate(amd, 16 * KiB, plan::Algorithm::ring, plan::Protocol::ll).latency_s, 68.0e-6, 1e-12);
  EXPECT_NEAR(candidate(amd, 1 * GiB, plan::Algorithm::ring, plan::Protocol::ll).bus_bandwidth_Bps, 22.5e9, 1e3);
  EXPECT_NEAR(candidate(intel, 1 * GiB, plan::Algorithm::ring, plan::Protocol::ll).bus_bandwidth_Bps, 39.0e9, 1e3);
  // One node reads the GPU's row whatever the CPU.
  tp::PlatformSpec one = preset("dgx-a100");
  one.network.nccl.amd_cpu = true;
  const plan::NcclTopology amd1 = plan::nccl_topology(one, one.total_gpus());
  EXPECT_NEAR(candidate(amd1, 1 * GiB, plan::Algorithm::ring, plan::Protocol::ll).bus_bandwidth_Bps, 87.7e9, 1e3);
}

TEST(ProtocolCosts, LlsCeilingBindsTheTreeAndTheRingsKeptChannelsAcrossTwoNodes) {
  const plan::NcclTopology two = topology("dgx-h100", 2);
  // The tree's LL busbw is min(0.92 × raw / 3.8, llMaxBw 39) × the correction; its flows carry
  // raw / that, so that they run at the model's rate (raw: 8 channels × the graph's bwIntra).
  const double raw = two.channels * std::min(two.bw_intra_GBps, 2 * two.bw_inter_GBps) * 1e9;
  const plan::NcclChoice tree = candidate(two, 128 * KiB, plan::Algorithm::tree, plan::Protocol::ll);
  EXPECT_NEAR(plan::protocol_costs(two, tree, 128 * KiB).wire_factor, raw / tree.bus_bandwidth_Bps, 1e-9);
  EXPECT_GT(raw / tree.bus_bandwidth_Bps, 2.0 / plan::tree_correction(plan::Protocol::ll, 128 * KiB));
  // LL128 keeps its wire bytes over the correction (the tree's chunks already keep it below the graph).
  const plan::NcclChoice ll128 = candidate(two, 2 * MiB, plan::Algorithm::tree, plan::Protocol::ll128);
  EXPECT_NEAR(plan::protocol_costs(two, ll128, 2 * MiB).wire_factor, 128.0 / 120.0 / 0.6, 1e-9);
  // A ring that enqueue.cc leaves on 4 of its 8 channels runs them at the model's whole busbw.
  const plan::NcclChoice ring = candidate(two, 256 * KiB, plan::Algorithm::ring, plan::Protocol::ll);
  ASSERT_EQ(ring.channels, 4);
  const double ring_raw = 4 * two.bw_intra_GBps * 1e9;
  EXPECT_NEAR(plan::protocol_costs(two, ring, 256 * KiB).wire_factor, std::max(2.0, ring_raw / ring.bus_bandwidth_Bps),
              1e-9);
}

TEST(TreeCorrection, NcclsTableByLog2OfTheSizeOver64Bytes) {
  // tuning.cc treeCorrectionFactor: index log2i(nBytes >> 6), 64 B (index 0) to 256 MiB (22).
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::simple, 64), 0.9);
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::ll, 64), 1.0);
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::ll, 1 * MiB), 0.5);        // 2^14: index 14
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::ll, 1 * MiB - 1), 0.4);    // index 13
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::ll128, 2 * MiB), 0.6);     // index 15
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::simple, 256 * KiB), 0.5);  // index 12
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::simple, 256 * MiB), 0.9);  // index 22
  // Outside the table: none (below 64 B, and from 512 MiB on).
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::simple, 32), 1.0);
  EXPECT_DOUBLE_EQ(plan::tree_correction(plan::Protocol::simple, 512 * MiB), 1.0);
  // The tuner's tree candidates carry it: the model's busbw at 256 KiB Simple is half the uncorrected.
  const plan::NcclTopology t = topology("dgx-a100", 16);
  const double small = candidate(t, 256 * KiB, plan::Algorithm::tree, plan::Protocol::simple).bus_bandwidth_Bps;
  const double big = candidate(t, 1 * GiB, plan::Algorithm::tree, plan::Protocol::simple).bus_bandwidth_Bps;
  ASSERT_GT(big, 0);
  EXPECT_NEAR(small, 0.5 * big, 1e-6 * big);
}

TEST(NvlsPipeline, ChunksShrinkWithTheChannelsBytesAndTheFillIsTwoLoops) {
  const plan::NcclTopology h200 = topology("dgx-h200");
  // 2 MiB: 16 channels of 128 KiB; 128 KiB < 2 × 8 heads × 32 KiB, so 16 KiB chunks: one loop
  // of 8 × 16 KiB holds the channel's data, and the fill is two more such loops.
  plan::NvlsPipeline p = plan::nvls_pipeline(h200, 2 * MiB);
  EXPECT_EQ(p.channels, 16);
  EXPECT_EQ(p.heads, 8);
  EXPECT_DOUBLE_EQ(p.chunk_bytes, 16 * KiB);
  EXPECT_DOUBLE_EQ(p.stage_bytes, 128 * KiB);
  EXPECT_DOUBLE_EQ(p.fill_bytes, 2 * 2 * MiB);
  // 8 MiB: 512 KiB per channel is not below 2 × 8 × 32 KiB: 32 KiB chunks, loops of 256 KiB.
  p = plan::nvls_pipeline(h200, 8 * MiB);
  EXPECT_DOUBLE_EQ(p.chunk_bytes, 32 * KiB);
  EXPECT_DOUBLE_EQ(p.fill_bytes, 2 * 16 * 256 * KiB);
  // 64 MiB: 4 MiB per channel, not below 8 × 8 × 64 KiB: 64 KiB chunks.
  EXPECT_DOUBLE_EQ(plan::nvls_pipeline(h200, 64 * MiB).chunk_bytes, 64 * KiB);
  EXPECT_DOUBLE_EQ(plan::nvls_pipeline(h200, 64 * MiB - 1).chunk_bytes, 32 * KiB);
  // 1 GiB: 64 MiB per channel, not below 64 × 8 × 128 KiB: NVLS_CHUNKSIZE itself.
  EXPECT_DOUBLE_EQ(plan::nvls_pipeline(h200, 1 * GiB).chunk_bytes, 128 * KiB);
  // Small sizes get fewer channels: one 16 KiB cell each at least.
  EXPECT_EQ(plan::nvls_pipeline(h200, 64 * KiB).channels, 4);
  // The fill's share falls with size: 2× at 2 MiB, 3% at 1 GiB.
  EXPECT_NEAR(plan::nvls_pipeline(h200, 1 * GiB).fill_bytes / GiB, 1.0 / 32, 1e-12);
}

TEST(NcclKernelSms, OneCtaPerChannelOfTheCommunicatorLessThoseDroppedForSmallSizes) {
  // DGX A100, 2 nodes: 8 graph channels (one per NIC), duplicated to 16 (connect.cc), all kept
  // for 256 MiB.
  const plan::NcclTopology a100 = topology("dgx-a100", 2);
  ASSERT_EQ(a100.channels, 8);
  const plan::NcclChoice big = plan::nccl_choose(a100, 256 * MiB);
  EXPECT_EQ(plan::nccl_ctas(a100, big, 256 * MiB), 16);
  EXPECT_EQ(plan::nccl_kernel_sms(a100, big, 256 * MiB, 108), 16);
  // Small sizes drop CTAs while each gets fewer than threads × threshold bytes (enqueue.cc).
  // (32 KiB: a tree LL keeps 16 CTAs down to 16 × 512 × 8 bytes = 64 KiB.)
  const plan::NcclChoice small = plan::nccl_choose(a100, 32 * KiB);
  const int ctas = plan::nccl_ctas(a100, small, 32 * KiB);
  EXPECT_GE(ctas, 1);
  EXPECT_LT(ctas, 16);
  // No bytes or one rank: no kernel.
  EXPECT_EQ(plan::nccl_ctas(a100, big, 0), 0);
  // Unknown SM count: nothing taken; more CTAs than SMs: compute keeps one SM.
  EXPECT_EQ(plan::nccl_kernel_sms(a100, big, 256 * MiB, 0), 0);
  EXPECT_EQ(plan::nccl_kernel_sms(a100, big, 256 * MiB, 13), 12);
}

TEST(NcclKernelSms, NvlsRunsSixteenCtasOnHopper) {
  const plan::NcclTopology h200 = topology("dgx-h200");
  const plan::NcclChoice nvls = plan::nccl_choose(h200, 256 * MiB);
  ASSERT_EQ(nvls.algorithm, plan::Algorithm::nvls);
  EXPECT_EQ(plan::nccl_ctas(h200, nvls, 256 * MiB), 16);  // nvls.cc NVLS_NCHANNELS_SM90
  // The channel-by-data split gives each channel one 16 KiB cell at least: 4 CTAs for 64 KiB.
  EXPECT_EQ(plan::nccl_ctas(h200, nvls, 64 * KiB), 4);
}

TEST(NcclTuner, NvlsTreeRunsAcrossNvSwitchNodesWithNicsOnTheGpusAtNcclsPerChannelCeiling) {
  // NCCL disables NVLS_TREE on one node, before Hopper, and where no GPU has a NIC of its own.
  auto has_nvls_tree = [](const plan::NcclTopology& t) {
    for (const plan::NcclChoice& c : plan::nccl_candidates(t, 1 * GiB))
      if (c.algorithm == plan::Algorithm::nvls_tree) return true;
    return false;
  };
  EXPECT_FALSE(has_nvls_tree(topology("dgx-h100")));
  EXPECT_FALSE(has_nvls_tree(topology("dgx-a100", 2)));
  tp::PlatformSpec host_nics = preset("dgx-h100", 2);
  host_nics.network.nics_on_gpus = false;
  EXPECT_FALSE(has_nvls_tree(plan::nccl_topology(host_nics, host_nics.total_gpus())));
  // 2 DGX H100: 8 heads (one per NIC); bwIntra 370.8 / 9, bwInter min(50, 2 bwIntra) = 50 GB/s;
  // per channel min(41.2 · 0.85 · 7/8 · 2, 2 · 50, 57.7) = 57.7 (perChMaxNVLSTreeBws, Hopper, 2 nodes).
  const plan::NcclTopology two = topology("dgx-h100", 2);
  EXPECT_EQ(two.nvls_heads, 8);
  const plan::NcclChoice c = candidate(two, 1 * GiB, plan::Algorithm::nvls_tree, plan::Protocol::simple);
  EXPECT_NEAR(c.bus_bandwidth_Bps, 8 * 57.7e9, 1e3);
  // NVLink NVLS 25 µs + 2·log2(2) network hops, and the pipeline's fill: 16 CTAs × 8 heads × 128 KiB
  // a loop through 4 stages (reduce, tree up, tree down, multicast), 3 loops at the algbw.
  const double algbw = 8 * 57.7e9 * 16 / 30;
  EXPECT_NEAR(c.pipeline_fill_s, 3 * 16 * MiB / algbw, 1e-12);
  EXPECT_NEAR(c.latency_s, (25 + 2 * 20.9) * 1e-6 + c.pipeline_fill_s, 1e-12);
  EXPECT_NEAR(c.predicted_s, c.latency_s + 1 * GiB / (8 * 57.7e9 * 16 / 30), 1e-9);
  EXPECT_EQ(c.channels, 16);  // nvls.cc: 16 NVLS channels on Hopper
  for (const plan::NcclChoice& other : plan::nccl_candidates(two, 1 * GiB)) {
    if (other.algorithm == plan::Algorithm::nvls_tree) {
      EXPECT_EQ(other.protocol, plan::Protocol::simple);
    }
  }
  EXPECT_EQ(plan::nccl_choose(two, 1 * GiB).algorithm, plan::Algorithm::nvls_tree);  // 461.6 GB/s over the ring's 371
  // More than 2 nodes: each NIC carries twice as much (every node is inner in one tree) and the
  // ceiling drops to 45.5: 8 × 45.5 = 364 GB/s, below the ring's 16 × 25 = 400, so large sizes ring;
  // medium ones too, where the fill of 6 stages (64 KiB chunks from 4 nodes) outweighs NCCL's model.
  const plan::NcclTopology four = topology("dgx-h100", 4);
  const plan::NcclChoice four_1g = candidate(four, 1 * GiB, plan::Algorithm::nvls_tree, plan::Protocol::simple);
  EXPECT_NEAR(four_1g.bus_bandwidth_Bps, 8 * 45.5e9, 1e3);
  EXPECT_NEAR(four_1g.pipeline_fill_s, 5 * 8 * MiB / (8 * 45.5e9 * 32 / 62), 1e-12);
  EXPECT_EQ(plan::nccl_choose(four, 8 * GiB).algorithm, plan::Algorithm::ring);
  EXPECT_EQ(plan::nccl_choose(four, 64 * MiB).algorithm, plan::Algorithm::ring);
  // 4 NICs on 8 GPUs: 4 heads.
  tp::PlatformSpec four_nics = preset("dgx-h100", 2);
  four_nics.network.nics_per_node = 4;
  EXPECT_EQ(plan::nccl_topology(four_nics, four_nics.total_gpus()).nvls_heads, 4);
  // Partial nodes: none (the engine's NVLS_TREE needs whole nodes).
  EXPECT_EQ(plan::nccl_topology(preset("dgx-h100", 2), 12).nvls_heads, 0);
}

TEST(ProtocolCosts, NvlsTreeScalesItsFlowsToThePerChannelCeiling) {
  // 2 DGX H100: the flows alone would reach 2·15/16 × 370.8 × 0.85 × 8/9 = 525.3 GB/s busbw inside
  // the nodes (750 on the NICs); the ceiling's 461.6 scales their bytes by 525.3 / 461.6.
  const plan::NcclTopology t = topology("dgx-h100", 2);
  const plan::NcclChoice c = candidate(t, 1 * GiB, plan::Algorithm::nvls_tree, plan::Protocol::simple);
  const plan::ProtocolCosts costs = plan::protocol_costs(t, c, 1 * GiB);
  EXPECT_NEAR(costs.launch_s, 25e-6 + c.pipeline_fill_s, 1e-12);  // the fill is charged with the launch
  EXPECT_GT(c.pipeline_fill_s, 0);
  EXPECT_NEAR(costs.wire_factor, 1.875 * 450 * 0.824 * 0.85 * 8 / 9 / (8 * 57.7), 1e-9);
  EXPECT_EQ(costs.step_overhead_s, 0);
  EXPECT_NEAR(plan::nvls_efficiency(t), 0.85, 1e-12);
}

TEST(NcclTuner, SharpSwitchesBringCollNetAndNvlsAcrossNodesWithNcclsModel) {
  auto sharp = [](const std::string& name, int nodes) {
    tp::PlatformSpec spec = preset(name, nodes);
    spec.network.sharp = true;
    return plan::nccl_topology(spec, spec.total_gpus());
  };
  auto algorithms = [](const plan::NcclTopology& t) {
    std::set<std::string> out;
    for (const plan::NcclChoice& c : plan::nccl_candidates(t, 1 * GiB)) out.insert(plan::to_string(c.algorithm));
    return out;
  };
  // Without SHARP, or on one node, NCCL disables CollNet and NVLS across nodes.
  EXPECT_FALSE(algorithms(topology("dgx-h100", 4)).contains("collnet_direct"));
  EXPECT_FALSE(algorithms(topology("dgx-h100", 4)).contains("nvls"));
  EXPECT_FALSE(sharp("dgx-h100", 1).collnet);
  const plan::NcclTopology h = sharp("dgx-h100", 4);
  EXPECT_EQ(h.collnet_heads, 8);
  EXPECT_EQ(algorithms(h), (std::set<std::string>{"ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain"}));
  // Direct: 8 heads × bwIntra 48 (the search's top speed; NCCL's own search finds 48 / 48 here),
  // GPU/NIC factor 1, × 0.85 on Hopper; algbw = busbw / 2. Latency 2·(3.7 + 7·0.4) + 31 µs.
  const plan::NcclChoice d = candidate(h, 1 * GiB, plan::Algorithm::collnet_direct, plan::Protocol::simple);
  EXPECT_NEAR(d.bus_bandwidth_Bps, 8 * 48 * 0.85e9, 1e3);
  EXPECT_NEAR(d.latency_s, 44e-6, 1e-12);
  EXPECT_NEAR(d.predicted_s, d.latency_s + 1 * GiB / (8 * 48 * 0.85e9 / 2), 1e-9);
  // Chain: 8 chains of min(2 × 48, 48, 370.8 / 8); latency 2·7·2.8 + 30 µs.
  const plan::NcclChoice c = candidate(h, 1 * GiB, plan::Algorithm::collnet_chain, plan::Protocol::simple);
  EXPECT_NEAR(c.bus_bandwidth_Bps, 450 * 0.824e9, 1e3);
  EXPECT_NEAR(c.latency_s, 69.2e-6, 1e-12);
  // NVLS across nodes: per head min(bwIntra · 0.85 · 7/8 · 2, bwInter) = 48 (the search's top
  // speed, below the 50 GB/s NIC), 25 + 18 µs; it wins large sizes on 4 nodes (384 GB/s against
  // NVLS_TREE's 364 and the ring's 400 with its 62 steps).
  const plan::NcclChoice v = candidate(h, 1 * GiB, plan::Algorithm::nvls, plan::Protocol::simple);
  EXPECT_NEAR(v.bus_bandwidth_Bps, 384e9, 1e3);
  EXPECT_NEAR(v.latency_s, 43e-6, 1e-12);
  EXPECT_EQ(plan::nccl_choose(h, 1 * GiB).algorithm, plan::Algorithm::nvls);
  // DGX A100 with SHARP: Direct's bwIntra is twice the 25 GB/s NIC, capped at 48 (NCCL's search:
  // 48 / 24), 8 × 48 = 384 GB/s busbw with no Hopper discount: the tuner's pick for large sizes.
  const plan::NcclTopology a = sharp("dgx-a100", 4);
  EXPECT_NEAR(candidate(a, 1 * GiB, plan::Algorithm::collnet_direct, plan::Protocol::simple).bus_bandwidth_Bps, 384e9, 1e3);
  EXPECT_NEAR(candidate(a, 1 * GiB, plan::Algorithm::collnet_chain, plan::Protocol::simple).bus_bandwidth_Bps, 8 * 30e9, 1e3);
  EXPECT_EQ(plan::nccl_choose(a, 1 * GiB).algorithm, plan::Algorithm::collnet_direct);
  // PCIe nodes: no Direct (it needs an NVSwitch), Chain stays. More than 8 GPUs per node: neither.
  const std::set<std::string> pcie = algorithms(sharp("cluster-25gbe", 4));
  EXPECT_FALSE(pcie.contains("collnet_direct"));
  EXPECT_TRUE(pcie.contains("collnet_chain"));
  EXPECT_FALSE(algorithms(sharp("dgx2", 2)).contains("collnet_chain"));
  // One GPU and one NIC per node: Chain has one channel (the NIC carries one at 48 GB/s).
  tp::PlatformSpec single = preset("dgx-h100", 4);
  single.gpus_per_node = 1;
  single.network.nics_per_node = 1;
  single.network.sharp = true;
  const plan::NcclTopology one = plan::nccl_topology(single, 4);
  const plan::NcclChoice chain1 = candidate(one, 1 * GiB, plan::Algorithm::collnet_chain, plan::Protocol::simple);
  EXPECT_EQ(chain1.channels, 1);
  EXPECT_NEAR(chain1.bus_bandwidth_Bps, 48e9, 1e3);
}

TEST(ProtocolCosts, CollNetLaunchesForTheModelsLatencyAndItsFlowsMeetItsBandwidth) {
  tp::PlatformSpec spec = preset("dgx-h100", 4);
  spec.network.sharp = true;
  const plan::NcclTopology t = plan::nccl_topology(spec, spec.total_gpus());
  const plan::NcclChoice d = candidate(t, 1 * GiB, plan::Algorithm::collnet_direct, plan::Protocol::simple);
  const plan::ProtocolCosts costs = plan::protocol_costs(t, d, 1 * GiB);
  EXPECT_NEAR(costs.launch_s, d.latency_s, 1e-15);
  // The flows alone: every port carries 2S·7/8 (algbw 370.8 · 8/14), every NIC S/8 (algbw 400);
  // the model's algbw is 163.2, so the bytes scale by 211.9 / 163.2.
  EXPECT_NEAR(costs.wire_factor, 450 * 0.824 * 8 / 14 / (8 * 48 * 0.85 / 2), 1e-9);
}
