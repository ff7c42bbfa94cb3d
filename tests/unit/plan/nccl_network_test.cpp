// NCCL across nodes, without SimGrid: the nccl-tests reader (rows, ranks, hosts, its refusals with
// line numbers) and the transport's costs in closed form (nccl_network_cost: hops, loops, proxy
// steps as enqueue.cc counts them), which the decision adds to what the tuner predicts and the
// engine charges.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/nccl_decision.hpp"
#include "trainsim/plan/nccl_tests.hpp"
#include "trainsim/plan/nccl_tuner.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

const char* kTwoRanks =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   11 on     nodeA device  0 [0x04] NVIDIA H100 80GB HBM3\n"
    "nodeA:11:11 [0] NCCL INFO Bootstrap : Using eth0\n"
    "#  Rank  1 Group  0 Pid   12 on     nodeB device  0 [0x04] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#       size    count   type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "           0        0  float     sum      -1     5.70    0.00    0.00      0     5.54    0.00    0.00      0\n"
    "           8        2  float     sum      -1    20.50    0.00    0.00      0    19.00    0.00    0.00      0\n"
    "          16        4  float     sum      -1    21.00    0.00    0.00      0    19.50    0.00    0.00      0\n"
    "# Avg bus bandwidth    : 0.00\n";

TEST(NcclTests, ReadsRowsRanksAndHosts) {
  const NcclTestsRun run = parse_nccl_tests(kTwoRanks, "run.txt");
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.hosts, 2);
  EXPECT_EQ(run.rank_line, 4);
  ASSERT_EQ(run.rows.size(), 2u);  // the 0-byte row is left out
  EXPECT_EQ(run.rows[0].size_bytes, 8);
  // The faster of the two timings: in place here (19.0 µs against 20.5 out of place).
  EXPECT_DOUBLE_EQ(run.rows[0].time_s, 19.0e-6);
  EXPECT_DOUBLE_EQ(run.rows[0].out_of_place_s, 20.5e-6);
  EXPECT_DOUBLE_EQ(run.rows[0].in_place_s, 19.0e-6);
  EXPECT_EQ(run.rows[1].line, 11);
}

TEST(NcclTests, ReadsTheOlderLayoutWithoutRoot) {
  const std::string text =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 8\n#   Rank  0 Pid 1 on a device 0 [0x1] Tesla V100\n"
      "#   Rank  1 Pid 1 on a device 1 [0x2] Tesla V100\n"
      "           8             2   float     sum    30.1    0.00    0.00  0e+00    29.0    0.00    0.00  0e+00\n";
  const NcclTestsRun run = parse_nccl_tests(text, "old.txt");
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.hosts, 1);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(run.rows[0].time_s, 29.0e-6);
}

TEST(NcclTests, AnInPlaceTimeSlowerThanOutOfPlaceOrMissingLeavesTheOutOfPlaceTime) {
  const std::string head =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8\n#  Rank  0 Group  0 Pid 1 on a device 0 [0x1] NVIDIA H100\n";
  const NcclTestsRun slower =
      parse_nccl_tests(head + "  8  2  float  sum  -1  30.1  0.00  0.00  0  41.0  0.00  0.00  0\n", "slow.txt");
  EXPECT_DOUBLE_EQ(slower.rows.at(0).time_s, 30.1e-6);
  EXPECT_DOUBLE_EQ(slower.rows.at(0).in_place_s, 41.0e-6);
  const NcclTestsRun none = parse_nccl_tests(head + "  8  2  float  sum  -1  30.1  0.00  0.00  0\n", "none.txt");
  EXPECT_DOUBLE_EQ(none.rows.at(0).time_s, 30.1e-6);
  EXPECT_EQ(none.rows.at(0).in_place_s, 0);
}

std::string error_of(const std::string& text) {
  try {
    parse_nccl_tests(text, "x.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclTests, RefusesWhatIsNotAnAllReducePerfOutput) {
  EXPECT_NE(error_of("size,time\n8,20\n").find("x.txt: line 1: not an nccl-tests all_reduce_perf output"),
            std::string::npos);
  std::string bad = kTwoRanks;
  const std::string row = "16        4  float";
  bad.replace(bad.find(row), row.size(), "16     four  float");
  EXPECT_NE(error_of(bad).find("x.txt: line 11: expected a row of all_reduce_perf"), std::string::npos)
      << error_of(bad);
  EXPECT_NE(error_of("# nThread 1 nGpus 1\n           8   2 float sum -1 20.5 0 0 0 19 0 0 0\n").find("no '#  Rank"),
            std::string::npos);
}

NcclTopology two_h100_nodes(double hop_us, double proxy_us) {
  NcclTopology t;
  t.ranks = 16;
  t.nodes = 2;
  t.compute_capability = 90;
  t.channels = 8;
  t.bw_intra_GBps = t.bw_inter_GBps = 20;
  t.nvlink_GBps = 160;
  t.nic_GBps = 25;
  t.nics = 8;
  t.net_hop_us = hop_us;
  t.proxy_step_us = proxy_us;
  return t;
}

TEST(NcclNetworkCost, RingStepsAsEnqueueCountsThem) {
  // 16 MiB on 16 channels of 16 ranks: one loop of 2 MiB Simple chunks; per connection 2(n−1) = 30
  // steps of 2 slices; 16 channels × 2 nodes × 2 connections spread over 16 proxies.
  const NcclNetworkCost c = nccl_network_cost(two_h100_nodes(10, 1), Algorithm::ring, Protocol::simple, 16, 16 << 20);
  EXPECT_EQ(c.hops, 2);
  EXPECT_EQ(c.loops, 1);
  EXPECT_DOUBLE_EQ(c.proxy_steps, 30.0 * 2 * 16 * 2 * 2 / 16);
  // The engine pays each hop once, while the tuner, as tuning.cc, pays latencyInter once more under
  // Simple for the receiver's GPUDirect flush, which is a read by the receiver's own NIC (a
  // loopback QP) and crosses no network: so also before Hopper, where NCCL issues it.
  EXPECT_NEAR(c.seconds, (2 * 10 + 240 * 1) * 1e-6, 1e-15);
  const auto tuner = [](const NcclTopology& t, Protocol p) {
    return nccl_network_cost(t, Algorithm::ring, p, 16, 16 << 20, 0, NetworkCostView::tuner).seconds;
  };
  EXPECT_NEAR(tuner(two_h100_nodes(10, 1), Protocol::simple), (2 * 2 * 10 + 240 * 1) * 1e-6, 1e-15);
  NcclTopology ampere = two_h100_nodes(10, 1);
  ampere.compute_capability = 80;
  EXPECT_NEAR(nccl_network_cost(ampere, Algorithm::ring, Protocol::simple, 16, 16 << 20).seconds,
              (2 * 10 + 240 * 1) * 1e-6, 1e-15);
  EXPECT_NEAR(tuner(ampere, Protocol::simple), (2 * 2 * 10 + 240 * 1) * 1e-6, 1e-15);
  // NCCL_BUFFSIZE 8 MiB: Simple's steps carry 1 MiB, so a tree of 64 MiB takes half the proxy's steps.
  NcclTopology big_buffer = two_h100_nodes(10, 1);
  big_buffer.simple_step_bytes = 1024 * 1024;
  EXPECT_DOUBLE_EQ(
      nccl_network_cost(big_buffer, Algorithm::tree, Protocol::simple, 16, 64 << 20).proxy_steps,
      nccl_network_cost(two_h100_nodes(10, 1), Algorithm::tree, Protocol::simple, 16, 64 << 20).proxy_steps / 2);
  const NcclNetworkCost ll = nccl_network_cost(two_h100_nodes(10, 0), Algorithm::ring, Protocol::ll, 16, 16 << 20);
  EXPECT_NEAR(ll.seconds, 2 * 10 * 1e-6, 1e-15);
  // LL128's step carries 576,000 data bytes (init.cc: 120 × 640 × 8 B a step, 120 of 128 data):
  // 1 GiB on 16 channels of 16 ranks is 8 loops, 2(n−1) = 30 steps each per connection.
  const NcclNetworkCost ll128 = nccl_network_cost(two_h100_nodes(0, 1), Algorithm::ring, Protocol::ll128, 16, 1 << 30);
  EXPECT_EQ(ll128.loops, 8);
  EXPECT_DOUBLE_EQ(ll128.proxy_steps, 30.0 * 8 * 16 * 2 * 2 / 16);
  // 1 GiB: 2 MiB × 16 ranks × 16 channels = 512 MiB a loop, two loops.
  EXPECT_EQ(nccl_network_cost(two_h100_nodes(0, 1), Algorithm::ring, Protocol::simple, 16, 1 << 30).loops, 2);
}

TEST(NcclNetworkCost, TreeLoopsOverStepsAndNothingInOneNode) {
  const NcclNetworkCost c = nccl_network_cost(two_h100_nodes(10, 1), Algorithm::tree, Protocol::simple, 16, 16 << 20);
  EXPECT_EQ(c.hops, 2);
  EXPECT_EQ(c.loops, 2);  // 512 KiB steps on 16 channels
  EXPECT_DOUBLE_EQ(c.proxy_steps, 2.0 * 16 * 2 * 4 / 16);
  NcclTopology one = two_h100_nodes(10, 1);
  one.nodes = 1;
  one.ranks = 8;
  EXPECT_EQ(nccl_network_cost(one, Algorithm::ring, Protocol::simple, 16, 1 << 20).seconds, 0);
  EXPECT_EQ(nccl_network_cost(two_h100_nodes(10, 1), Algorithm::nvls, Protocol::simple, 16, 1 << 20).seconds, 0);
}

TEST(NcclNetworkCost, TheDecisionChargesWhatTheTunerPredicts) {
  const NcclTopology plain = two_h100_nodes(0, 0), slow = two_h100_nodes(40, 2);
  for (double bytes : {65536.0, 16.0 * (1 << 20), 1024.0 * (1 << 20)}) {
    const NcclDecision d = nccl_decide(slow, bytes, {});
    EXPECT_GT(d.choice.network_software_s, 0) << bytes;
    // The engine's launch carries the transport's cost on top of NCCL's base latency, and the
    // model's per-hop NET latency beyond the link's (tree LL 5 µs, Simple 14, on 2 · log2(2) hops;
    // the ring's 2(nodes − 1)), which the flows do not carry.
    EXPECT_NEAR(d.costs.launch_s,
                nccl_launch_s(d.choice.algorithm, d.choice.protocol) + d.choice.network_software_s +
                    d.choice.net_model_latency_s + d.choice.pipeline_fill_s,
                1e-12);
    if (d.choice.algorithm == Algorithm::tree || d.choice.algorithm == Algorithm::ring) {
      EXPECT_GT(d.choice.net_model_latency_s, 0) << bytes;
    }
    EXPECT_EQ(nccl_decide(plain, bytes, {}).choice.network_software_s, 0);
    EXPECT_GE(d.choice.predicted_s, nccl_decide(plain, bytes, {}).choice.predicted_s);
  }
}

// A net plugin's reported latency (aws-ofi-nccl: 75 µs on p5, where its own model of a hop is 20)
// moves the tuner's picks and predictions only; the engine charges the hop's latency.
TEST(NcclNetworkCost, TheReportedLatencyWeighsThePicksNotTheEngine) {
  NcclTopology reported = two_h100_nodes(20, 0);
  reported.reported_hop_us = 75;
  // The tuner's view: 2 ring hops at 75 µs, twice under Simple; the engine's: 2 at 20, once.
  EXPECT_NEAR(
      nccl_network_cost(reported, Algorithm::ring, Protocol::simple, 16, 16 << 20, 0, NetworkCostView::tuner).seconds,
      2 * 2 * 75e-6, 1e-15);
  EXPECT_NEAR(nccl_network_cost(reported, Algorithm::ring, Protocol::simple, 16, 16 << 20).seconds, 2 * 20e-6, 1e-15);
  // The same before Hopper (AWS p4d), where NCCL does issue the flush: a read by the receiver's own NIC.
  NcclTopology p4d = reported;
  p4d.compute_capability = 80;
  EXPECT_NEAR(nccl_network_cost(p4d, Algorithm::tree, Protocol::simple, 16, 16 << 20).seconds, 2 * 20e-6, 1e-15);
  EXPECT_NEAR(
      nccl_network_cost(p4d, Algorithm::tree, Protocol::simple, 16, 16 << 20, 0, NetworkCostView::tuner).seconds,
      2 * 2 * 75e-6, 1e-15);
  const NcclTopology as_hop = two_h100_nodes(75, 0);
  bool moved = false;
  for (double bytes = 65536; bytes <= 1024.0 * (1 << 20); bytes *= 2) {
    const NcclDecision d = nccl_decide(reported, bytes, {}), same = nccl_decide(as_hop, bytes, {});
    // The same picks as a 75 µs hop would make, at the same predicted time...
    EXPECT_EQ(d.choice.algorithm, same.choice.algorithm) << bytes;
    EXPECT_EQ(d.choice.protocol, same.choice.protocol) << bytes;
    EXPECT_NEAR(d.choice.predicted_s, same.choice.predicted_s, 1e-12) << bytes;
    // ...but the engine is charged the 20 µs hop, once, on each of the 2 hops
    // of the ring, the tree and NVLS_TREE across 2 nodes (no proxy cost here).
    const bool hops = d.choice.algorithm == Algorithm::ring || d.choice.algorithm == Algorithm::tree ||
                      d.choice.algorithm == Algorithm::nvls_tree;
    EXPECT_NEAR(d.choice.network_software_s, hops ? 2 * 20e-6 : 0, 1e-15) << bytes;
    EXPECT_NEAR(same.choice.network_software_s, hops ? 2 * 75e-6 : 0, 1e-15) << bytes;
    if (hops) moved = true;
  }
  EXPECT_TRUE(moved) << "no size ran an algorithm with network hops";
  // With no reported latency the tuner and the engine see the same costs but for Simple's flush,
  // which the tuner weighs as a second hop.
  NcclTopology ampere = two_h100_nodes(20, 1);
  ampere.compute_capability = 80;
  for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
    const double engine = nccl_network_cost(ampere, Algorithm::tree, p, 16, 16 << 20).seconds;
    const double weighed =
        nccl_network_cost(ampere, Algorithm::tree, p, 16, 16 << 20, 0, NetworkCostView::tuner).seconds;
    EXPECT_NEAR(weighed - engine, p == Protocol::simple ? 2 * 20e-6 : 0, 1e-15);
  }
}

// ncclTopoGetAlgoTime multiplies the ring's whole latency under Simple by the plateau factor (1.4
// from Ampere on), latencyInter included: a reported 75 µs weighs 2 hops × 2 (the flush) × 1.4 on
// the Simple ring of 1 MiB, 2 hops alone on the LL ring; the engine is charged nothing (no hop).
TEST(NcclNetworkCost, TheRingsPlateauWeighsTheReportedHops) {
  NcclTopology reported = two_h100_nodes(0, 0);
  reported.reported_hop_us = 75;
  const auto ring = [](const NcclTopology& t, Protocol p) {
    for (const NcclChoice& c : nccl_candidates(t, 1 << 20))
      if (c.algorithm == Algorithm::ring && c.protocol == p) return c;
    ADD_FAILURE() << "no ring candidate";
    return NcclChoice{};
  };
  const NcclTopology plain = two_h100_nodes(0, 0);
  EXPECT_NEAR(ring(reported, Protocol::simple).latency_s - ring(plain, Protocol::simple).latency_s, 1.4 * 4 * 75e-6,
              1e-12);
  EXPECT_NEAR(ring(reported, Protocol::ll).latency_s - ring(plain, Protocol::ll).latency_s, 2 * 75e-6, 1e-12);
  EXPECT_EQ(ring(reported, Protocol::simple).network_software_s, 0);
}

platforms::NcclTunerRow tuner_row(const char* algorithm, const char* protocol, std::uint64_t lo, std::uint64_t hi,
                                  int channels = -1, int nodes = -1) {
  platforms::NcclTunerRow r;
  r.collective = "allreduce";
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = algorithm;
  r.protocol = protocol;
  r.channels = channels;
  r.nodes = nodes;
  r.text = std::string(algorithm) + "," + protocol;
  return r;
}

// A tuner plugin's table (NCCL's example plugin): the first row matching the size and the
// communicator whose algorithm and protocol NCCL runs there picks; a row naming what NCCL does not
// run (NVLS across nodes without SHARP) is passed over; no row: NCCL's own pick. A row's channels
// are the ring's; `--channels` wins over them.
TEST(NcclTunerTable, TheFirstMatchingRowNcclRunsPicks) {
  NcclTopology t = two_h100_nodes(0, 0);
  const NcclDecision own = nccl_decide(t, 4 << 20, {});
  t.tuner = {tuner_row("ring", "simple", 1 << 20, 8 << 20, -1, 4),  // 4 nodes: not this communicator
             tuner_row("nvls", "simple", 0, 1ull << 40),            // NVLS across nodes: NCCL ignores it
             tuner_row("ring", "ll128", 1 << 20, 8 << 20, 3), tuner_row("tree", "ll", 0, 1ull << 40)};
  const NcclDecision d = nccl_decide(t, 4 << 20, {});
  EXPECT_EQ(d.choice.algorithm, Algorithm::ring);
  EXPECT_EQ(d.choice.protocol, Protocol::ll128);
  EXPECT_EQ(d.channels, 3);
  EXPECT_EQ(d.tuner_row, "ring,ll128");
  EXPECT_FALSE(own.choice.algorithm == Algorithm::ring && own.choice.protocol == Protocol::ll128)
      << "the row must change NCCL's own pick for the test to mean anything";
  // Above 8 MiB the last row: the tree with LL; its nChannels would be split over both trees.
  const NcclDecision big = nccl_decide(t, 64 << 20, {});
  EXPECT_EQ(big.choice.algorithm, Algorithm::tree);
  EXPECT_EQ(big.choice.protocol, Protocol::ll);
  // `--channels` wins over the row's; a pinned protocol leaves only rows with it.
  NcclRequest four;
  four.channels = 4;
  EXPECT_EQ(nccl_decide(t, 4 << 20, four).channels, 4);
  NcclRequest simple;
  simple.protocol = Protocol::simple;
  const NcclDecision pinned = nccl_decide(t, 4 << 20, simple);
  EXPECT_TRUE(pinned.tuner_row.empty());
  EXPECT_EQ(pinned.choice.protocol, Protocol::simple);
  // A row's channels are capped at the communicator's (twice the graph's 8) and hold as many SMs,
  // with no per-size drop; across nodes the tree runs half of them on each of its two trees.
  NcclRequest sms;
  sms.gpu_sm_count = 132;
  t.tuner = {tuner_row("ring", "ll128", 0, 8 << 20, 64), tuner_row("tree", "simple", 8 << 20, 1ull << 40, 5)};
  const NcclDecision capped = nccl_decide(t, 65536, sms);
  EXPECT_EQ(capped.channels, 16);
  EXPECT_EQ(capped.kernel_sms, 16);
  const NcclDecision trees = nccl_decide(t, 64 << 20, sms);
  EXPECT_EQ(trees.choice.algorithm, Algorithm::tree);
  EXPECT_EQ(trees.channels, 3);
  EXPECT_EQ(trees.kernel_sms, 5);
  // An all-gather or reduce-scatter (ZeRO's ring) is not an all-reduce: no row picks it.
  NcclRequest gather = sms;
  gather.tune_algorithm = false;
  gather.all_reduce = false;
  const NcclDecision zero = nccl_decide(t, 65536, gather);
  EXPECT_TRUE(zero.tuner_row.empty());
  EXPECT_NE(zero.kernel_sms, 16);
  t.tuner = {tuner_row("ring", "ll128", 1 << 20, 8 << 20)};
  EXPECT_TRUE(nccl_decide(t, 64 << 20, {}).tuner_row.empty());
  EXPECT_EQ(nccl_decide(t, 64 << 20, {}).choice.algorithm,
            nccl_decide(two_h100_nodes(0, 0), 64 << 20, {}).choice.algorithm);
}

TEST(NcclProtocols, ThePlatformsProtocolsAreTheOnlyOnesTheTunerWeighs) {
  // NCCL_PROTO=Simple,LL128 (Google's TCPXO profile): no LL candidate, so the small sizes go to
  // LL128; with Simple alone NVLS_TREE stays and every pick is Simple.
  NcclTopology t = two_h100_nodes(0, 0);
  EXPECT_EQ(nccl_decide(t, 65536, {}).choice.protocol, Protocol::ll);
  t.protocols = {false, true, true};
  for (const NcclChoice& c : nccl_candidates(t, 65536)) EXPECT_NE(c.protocol, Protocol::ll);
  EXPECT_EQ(nccl_decide(t, 65536, {}).choice.protocol, Protocol::ll128);
  t.protocols = {false, false, true};
  for (double bytes : {8.0, 65536.0, 1024.0 * (1 << 20)})
    EXPECT_EQ(nccl_decide(t, bytes, {}).choice.protocol, Protocol::simple) << bytes;
  // Pinning a protocol the platform leaves out is refused, naming the platform's list.
  NcclRequest ll;
  ll.protocol = Protocol::ll;
  try {
    nccl_decide(t, 65536, ll);
    ADD_FAILURE() << "LL was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("network.nccl.protocols"), std::string::npos) << e.what();
  }
}

TEST(NcclAlgorithms, ThePlatformsAlgorithmsAreTheOnlyOnesTheTunerWeighs) {
  // NCCL_ALGO=Ring (or Tree): the tuner weighs that algorithm alone, and pinning another is refused
  // naming the platform's list.
  NcclTopology t = two_h100_nodes(0, 0);
  const double gib = 1024.0 * (1 << 20);
  EXPECT_EQ(nccl_decide(t, gib, {}).choice.algorithm, Algorithm::ring);
  t.algorithms = {false, true, false, false, false, false};
  for (double bytes : {8.0, 65536.0, gib}) {
    for (const NcclChoice& c : nccl_candidates(t, bytes)) EXPECT_EQ(c.algorithm, Algorithm::tree) << bytes;
    EXPECT_EQ(nccl_decide(t, bytes, {}).choice.algorithm, Algorithm::tree) << bytes;
  }
  NcclRequest ring;
  ring.tune_algorithm = false;
  ring.algorithm = Algorithm::ring;
  try {
    nccl_decide(t, gib, ring);
    ADD_FAILURE() << "the ring was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("network.nccl.algorithms"), std::string::npos) << e.what();
  }
  // A list of nothing NCCL runs here (NVLS alone across nodes without SHARP) is refused for `auto`
  // too, naming the list.
  t.algorithms = {false, false, true, false, false, false};
  try {
    nccl_decide(t, gib, {});
    ADD_FAILURE() << "NVLS alone across nodes was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL_ALGO: NVLS)"), std::string::npos) << e.what();
  }
}

}  // namespace
