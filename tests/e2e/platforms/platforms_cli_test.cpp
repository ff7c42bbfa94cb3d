#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim_test/cli.hpp"
#include "trainsim_test/files.hpp"
#include "trainsim_test/names.hpp"

using trainsim_test::run_trainsim;

namespace {
std::string data(const std::string& rel) { return trainsim_test::test_data_dir() + "/" + rel; }
trainsim::Json parse(const std::string& text) { return trainsim::Json::parse(text); }
}  // namespace

TEST(PlatformCli, ListShowsEveryPresetWithPrices) {
  const auto r = run_trainsim({"platform", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* p : {"dgx-a100", "dgx1-v100", "aws-p3.16xlarge", "piz-daint", "cluster-10gbe"})
    EXPECT_NE(r.out.find(p), std::string::npos) << p;
  EXPECT_NE(r.out.find("3.060"), std::string::npos);  // p3.16xlarge $/GPU-h
}

TEST(PlatformCli, InfoJsonCountsHostsLinksAndBisection) {
  const auto r = run_trainsim({"platform", "info", "dgx-a100", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = parse(r.out);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["hosts"], 9);  // 8 GPUs + the host CPU
  EXPECT_GT(j["links"].get<int>(), 16);
  EXPECT_DOUBLE_EQ(j["intra_node_bisection_Bps"].get<double>(), 4 * 240e9);
  const auto again = run_trainsim({"platform", "info", "dgx-a100", "--json", "-"});
  EXPECT_EQ(r.out, again.out);  // deterministic
}

TEST(PlatformCli, InfoReadsPlatformFilesAndSimgridXml) {
  const auto j = run_trainsim({"platform", "info", data("good/platforms/torus_cluster.json")});
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("torus"), std::string::npos);
  const auto x = run_trainsim({"platform", "info", data("good/platforms/two_hosts.xml"), "--json", "-"});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_EQ(parse(x.out)["hosts"], 2);
}

TEST(PlatformCli, UnknownPresetSuggestsTheNearestAndExits2) {
  const auto r = run_trainsim({"platform", "info", "dgx-a10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'dgx-a100'"), std::string::npos) << r.err;
}

// Bad platform files through the CLI: exit 2, the message names the file and the JSON pointer.
class BadPlatformCli : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};
TEST_P(BadPlatformCli, Exits2NamingFileAndPointer) {
  const auto& [file, pointer] = GetParam();
  const auto r = run_trainsim({"collective", "--platform", data(std::string("bad/platforms/") + file), "--bytes", "1M"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("platforms/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(pointer), std::string::npos) << r.err;
}
INSTANTIATE_TEST_SUITE_P(
    Kinds, BadPlatformCli,
    ::testing::Values(std::make_pair(std::string("unknown_gpu.json"), std::string(": /gpu:")),
                      std::make_pair(std::string("zero_bandwidth.json"), std::string(": /network/bandwidth_Gbps:")),
                      std::make_pair(std::string("torus_misfit.json"), std::string(": /network/torus/dimensions:")),
                      std::make_pair(std::string("unconnected_hosts.json"), std::string(": /network/nics_per_node:")),
                      std::make_pair(std::string("gpu_board_no_gpus.json"),
                                     std::string(": /gpu_board/gpus: must be ≥ 1")),
                      std::make_pair(std::string("gpu_board_speed_above_one.json"),
                                     std::string(": /gpu_board/shared_speed: must be in [1e-06, 1]")),
                      std::make_pair(std::string("nccl_algorithm_twice.json"),
                                     std::string(": /network/nccl/algorithms/2: names Ring twice")),
                      std::make_pair(std::string("nics_not_a_multiple.json"),
                                     std::string(": /network/nics_per_node: more NICs than GPUs per node must be "
                                                 "a multiple of the 8 GPUs")),
                      std::make_pair(std::string("malformed.xml"), std::string("malformed.xml: line 7:")),
                      std::make_pair(std::string("unconnected.xml"), std::string("unconnected.xml: line 7:")),
                      std::make_pair(std::string("zero_bandwidth_link.xml"),
                                     std::string("zero_bandwidth_link.xml: line 8: malformed SimGrid XML: <link "
                                                 "id=\"l\"> has bandwidth \"0GBps\": it must be > 0")),
                      std::make_pair(std::string("zero_speed_host.xml"),
                                     std::string("zero_speed_host.xml: line 7: malformed SimGrid XML: <host "
                                                 "id=\"host0\"> has speed \"0f\": it must be > 0"))),
    [](const auto& p) { return trainsim_test::test_name(p.param.first); });

TEST(CollectiveCli, BadBytesAndTooManyGpusExit2) {
  EXPECT_EQ(run_trainsim({"collective", "--platform", "dgx-a100", "--bytes", "8:1:x2"}).exit_code, 2);
  EXPECT_EQ(run_trainsim({"collective", "--platform", "dgx-a100", "--bytes", "12Q"}).exit_code, 2);
  const auto r = run_trainsim({"collective", "--platform", "dgx-a100", "--bytes", "1M", "--gpus", "9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("command line: --gpus: the platform has 8 GPUs, asked for 9"), std::string::npos) << r.err;
  const auto partial = run_trainsim({"collective", "--platform", "dgx-a100", "--nodes", "2", "--algorithm",
                                     "hierarchical", "--bytes", "1M", "--gpus", "12"});
  EXPECT_EQ(partial.exit_code, 2);
  EXPECT_NE(partial.err.find("command line: --gpus: hierarchical all-reduce needs whole nodes"), std::string::npos)
      << partial.err;
}

TEST(CollectiveCli, DgxA100RingAllReduceOf1GiBIsWithin15PercentOfNccl) {
  const auto r = run_trainsim({"collective", "--platform", "dgx-a100", "--op", "allreduce", "--algorithm", "ring",
                               "--bytes", "1073741824", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = parse(r.out);
  const double busbw = j["busbw_GBps"].get<double>();
  EXPECT_NEAR(busbw, 227.83, 0.15 * 227.83);
  EXPECT_NEAR(j["algbw_GBps"].get<double>() * 2 * 7 / 8, busbw, 1e-9);
  EXPECT_NEAR(j["time_s"].get<double>(), 1073741824 / (j["algbw_GBps"].get<double>() * 1e9), 1e-12);
}

TEST(CollectiveCli, NcclAllReduceSweepFrom64KiBTo4GiBHasMeanErrorAtMost20Percent) {
  // The textbook ring without protocols; NCCL's tuner (the default) is checked below.
  const auto r = run_trainsim(
      {"collective", "--platform", "dgx-a100", "--algorithm", "ring", "--bytes", "64K:4G:x2", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = parse(r.out)["results"];
  const auto csv = trainsim::CsvTable::read(data("validation/nccl_allreduce.csv"));
  const auto ds = csv.column("dataset"), size = csv.column("size_bytes"), time = csv.column("time_us");
  double sum = 0;
  int count = 0;
  std::printf("%14s %12s %12s %8s\n", "size(B)", "measured_us", "simulated_us", "error");
  for (std::size_t row = 0; row < csv.row_count(); ++row) {
    if (csv.cell(row, ds) != "nccl_tests_a100_8gpu") continue;
    const double bytes = csv.number(row, size);
    if (bytes < 65536) continue;
    const double measured = csv.number(row, time) * 1e-6;
    double simulated = -1;
    for (const auto& res : results)
      if (res["size_bytes"].get<double>() == bytes) simulated = res["time_s"].get<double>();
    ASSERT_GT(simulated, 0) << "no simulated point at " << bytes;
    const double err = std::fabs(simulated - measured) / measured;
    std::printf("%14.0f %12.2f %12.2f %7.1f%%\n", bytes, measured * 1e6, simulated * 1e6, 100 * err);
    sum += err;
    ++count;
  }
  ASSERT_EQ(count, 17);
  std::printf("mean absolute percentage error: %.1f%%\n", 100 * sum / count);
  EXPECT_LE(sum / count, 0.20);
}

TEST(CollectiveCli, AutoPrintsTheAlgorithmProtocolAndChannelsNcclsTunerPickedPerSize) {
  // One H200 node: the LL ring for small sizes, NVLS (in-switch reduction) for large ones.
  const auto r = run_trainsim({"collective", "--platform", "dgx-h200", "--bytes", "64K:1G:x16", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = parse(r.out)["results"];
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0]["algorithm"], "ring");
  EXPECT_EQ(results[0]["protocol"], "LL");
  EXPECT_EQ(results[0]["channels"], 2);  // NCCL drops channels for small sizes (enqueue.cc)
  EXPECT_EQ(results[3]["algorithm"], "nvls");
  EXPECT_EQ(results[3]["protocol"], "Simple");
  // SMs NCCL's kernel holds: one CTA per channel (2 at 64 KiB), NVLS's 16 CTAs on Hopper, of 132.
  EXPECT_EQ(results[0]["kernel_sms"], 2);
  EXPECT_EQ(results[1]["kernel_sms"], 32);  // 1 MiB: 16 graph channels, duplicated (connect.cc)
  EXPECT_EQ(results[3]["kernel_sms"], 16);
  EXPECT_EQ(results[3]["gpu_sms"], 132);
  // NVLS (256 MiB): every port carries S(n+1)/n at 85% of 450 × 0.824 GB/s, after a 25 µs launch, so the
  // bus bandwidth exceeds the port's 371 GB/s; the pipeline's fill adds two loops of 8 heads × 64 KiB
  // chunks on each of the 16 channels (16 MiB).
  const double S = 268435456.0, fill = 2 * 16 * 8 * 65536.0;
  const double t = 25e-6 + (S + fill) * 9 / 8 / (0.85 * 450e9 * 0.824);
  EXPECT_NEAR(results[3]["time_s"].get<double>(), t, 2e-6 + 1e-3 * t);
  EXPECT_GT(results[3]["busbw_GBps"].get<double>(), 450 * 0.824);
  const auto text = run_trainsim({"collective", "--platform", "dgx-h200", "--bytes", "64K:1G:x16"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("algorithm        protocol channels"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("nvls             Simple"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("SMs (of 132)"), std::string::npos) << text.out;
  // Across 16 nodes `auto` picks NCCL's tree (chains in nodes, double binary tree of nodes) and
  // reports both trees' channels: the graph's 8, one per NIC (search.cc), duplicated.
  const auto many = run_trainsim({"collective", "--platform", "dgx-a100", "--nodes", "16", "--bytes", "1M", "--json", "-"});
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_EQ(parse(many.out)["results"][0]["algorithm"], "tree");
  EXPECT_EQ(parse(many.out)["results"][0]["channels"], 16);
  // --channels still decides the rings under auto: one ring leaves each node through one NIC.
  // NVLS_TREE and CollNet run on their heads, so `auto` with --channels weighs only rings and trees.
  const auto one = run_trainsim({"collective", "--platform", "dgx-h100", "--nodes", "2", "--bytes", "1G", "--channels",
                                 "1", "--json", "-"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(parse(one.out)["results"][0]["algorithm"], "ring");
  EXPECT_EQ(parse(one.out)["channels"], 1);
  EXPECT_EQ(parse(one.out)["results"][0]["kernel_sms"], 1);
  EXPECT_LT(parse(one.out)["busbw_GBps"].get<double>(), 50.0);
  // A tree across nodes with --channels 2: both trees use the 2 graph channels, so 4 CTAs.
  const auto tree2 = run_trainsim({"collective", "--platform", "dgx-a100", "--nodes", "16", "--algorithm", "tree",
                                   "--protocol", "Simple", "--channels", "2", "--bytes", "1G", "--json", "-"});
  ASSERT_EQ(tree2.exit_code, 0) << tree2.err;
  EXPECT_EQ(parse(tree2.out)["channels"], 4);
  EXPECT_EQ(parse(tree2.out)["results"][0]["kernel_sms"], 4);
  // A fixed algorithm with a protocol, and the protocol-less textbook ring, side by side.
  const auto ll = run_trainsim({"collective", "--platform", "dgx-a100", "--algorithm", "ring", "--protocol", "LL",
                                "--bytes", "64M", "--json", "-"});
  const auto simple = run_trainsim({"collective", "--platform", "dgx-a100", "--algorithm", "ring", "--protocol",
                                    "Simple", "--bytes", "64M", "--json", "-"});
  ASSERT_EQ(ll.exit_code, 0) << ll.err;
  ASSERT_EQ(simple.exit_code, 0) << simple.err;
  EXPECT_EQ(parse(ll.out)["protocol"], "LL");
  const auto textbook = run_trainsim({"collective", "--platform", "dgx-a100", "--algorithm", "ring", "--bytes", "64M", "--json", "-"});
  ASSERT_EQ(textbook.exit_code, 0) << textbook.err;
  EXPECT_FALSE(parse(textbook.out)["results"][0].contains("kernel_sms")) << "the textbook ring models no kernel";
  // LL moves data at NCCL's llMaxBw (87.7 GB/s busbw on one A100 node), Simple at the fabric's 240.
  EXPECT_NEAR(parse(ll.out)["busbw_GBps"].get<double>(), 87.7, 0.05 * 87.7);
  EXPECT_GT(parse(simple.out)["busbw_GBps"].get<double>(), 2 * parse(ll.out)["busbw_GBps"].get<double>());
}

// NCCL's tuner (`auto`) against the single-node curves of nccl_allreduce.csv from 64 KiB up,
// busbw error per size. Printed for simulator/README.md; the H200 curve (NVLS from 2 MiB, with its chunk
// pipeline's fill) holds its targets: mean ≤ 12%, no size worse than 25%.
// The A100 curve does not: it was measured with one thread driving all 8 GPUs (nccl-tests -g 8),
// which floors at 40 µs, and its 4–256 MiB sizes are slower than NCCL's own cost model. The same
// machine's one-process-per-GPU run (nccl_allreduce_per_process.csv) is printed beside it and
// held at its current level, a mean ≤ 25% (simulator/README.md, Accuracy against nccl-tests).
TEST(CollectiveCli, AutoAgainstTheSingleNodeA100AndH200Curves) {
  struct Curve {
    std::string file, dataset, preset;
  };
  for (const Curve& curve : {Curve{"validation/nccl_allreduce.csv", "nccl_tests_a100_8gpu", "dgx-a100"},
                             Curve{"validation/nccl_allreduce_per_process.csv", "nccl_tests_a100_8gpu_per_process", "dgx-a100"},
                             Curve{"validation/nccl_allreduce.csv", "nccl_tests_h200_8gpu", "dgx-h200"}}) {
    const auto csv = trainsim::CsvTable::read(data(curve.file));
    const auto ds = csv.column("dataset"), size = csv.column("size_bytes"), busbw = csv.column("busbw_GBps");
    const auto r = run_trainsim({"collective", "--platform", curve.preset, "--bytes", "64K:16G:x2", "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto results = parse(r.out)["results"];
    double sum = 0, worst = 0;
    int count = 0;
    for (std::size_t row = 0; row < csv.row_count(); ++row) {
      if (csv.cell(row, ds) != curve.dataset || csv.number(row, size) < 65536) continue;
      for (const auto& res : results) {
        if (res["size_bytes"].get<double>() != csv.number(row, size)) continue;
        const double measured = csv.number(row, busbw), simulated = res["busbw_GBps"].get<double>();
        const double err = std::fabs(simulated - measured) / measured;
        std::printf("%s %12.0f measured %7.2f simulated %7.2f %-5s %-7s %5.1f%%\n", curve.dataset.c_str(),
                    csv.number(row, size), measured, simulated, res["algorithm"].get<std::string>().c_str(),
                    res["protocol"].get<std::string>().c_str(), 100 * err);
        sum += err, worst = std::max(worst, err), ++count;
      }
    }
    ASSERT_GE(count, 17);
    std::printf("%s mean %.1f%% worst %.1f%%\n", curve.dataset.c_str(), 100 * sum / count, 100 * worst);
    if (curve.preset == "dgx-h200") {
      EXPECT_LE(sum / count, 0.12);
      EXPECT_LE(worst, 0.25);
    }
    if (curve.dataset == "nccl_tests_a100_8gpu_per_process") {
      EXPECT_LE(sum / count, 0.25);
    }
  }
}

// One H100 node, 2 to 8 GPUs, 2–4 GiB all-reduces (NVIDIA/nccl issue 1455, 2024-09-19: with
// NCCL_ALGO=RING busbw 365–370 GB/s at every count; with NCCL_ALGO=NVLS 365–370 on 2–4 GPUs, then
// 420, 440, 460, 480 on 5–8): the ring holds its busbw, and `auto` runs the ring on 2 and 3 GPUs and
// NVLS from 4, whose port carries S(n+1)/n, so busbw grows with n as measured. Not used to build
// the model; within 5% at every count.
TEST(CollectiveCli, NvlsBusBandwidthGrowsWithTheGpuCountAsMeasuredOnH100) {
  const std::vector<std::pair<int, double>> measured{{2, 367.5}, {3, 367.5}, {4, 367.5}, {5, 420}, {6, 440}, {7, 460}, {8, 480}};
  for (const auto& [gpus, busbw] : measured) {
    const auto r = run_trainsim({"collective", "--platform", "dgx-h100", "--gpus", std::to_string(gpus), "--bytes", "4G",
                                 "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = parse(r.out)["results"][0];
    const double simulated = j["busbw_GBps"].get<double>();
    const std::string algorithm = j["algorithm"].get<std::string>();
    std::printf("%d GPUs: measured %.1f simulated %.1f GB/s (%s)\n", gpus, busbw, simulated, algorithm.c_str());
    EXPECT_NEAR(simulated, busbw, 0.05 * busbw) << gpus << " GPUs";
    EXPECT_EQ(algorithm, gpus >= 4 ? "nvls" : "ring") << gpus << " GPUs";
    const auto ring = run_trainsim({"collective", "--platform", "dgx-h100", "--gpus", std::to_string(gpus), "--bytes", "4G",
                                    "--algorithm", "ring", "--protocol", "auto", "--json", "-"});
    ASSERT_EQ(ring.exit_code, 0) << ring.err;
    EXPECT_NEAR(parse(ring.out)["results"][0]["busbw_GBps"].get<double>(), 367.5, 0.05 * 367.5) << gpus << " GPUs, ring";
  }
}

// NCCL's NVLS_TREE across DGX H100 nodes: NVLS inside each node, a double binary tree of nodes
// per NIC head. On 2 nodes its per-channel ceiling (perChMaxNVLSTreeBws 57.7 GB/s × 8 heads)
// binds, above the ring's 371; on 4 nodes the ceiling drops to 45.5 and the ring's 400 wins large
// sizes, and medium ones, where NVLS_TREE's pipeline fill across 4 nodes (6 stages) costs most.
TEST(CollectiveCli, NvlsTreeAcrossH100NodesRunsAtNcclsPerChannelCeiling) {
  const auto two = run_trainsim({"collective", "--platform", "dgx-h100", "--nodes", "2", "--algorithm", "nvls_tree",
                                 "--bytes", "8G", "--json", "-"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto r = parse(two.out)["results"][0];
  EXPECT_EQ(r["algorithm"], "nvls_tree");
  EXPECT_EQ(r["protocol"], "Simple");
  EXPECT_EQ(r["channels"], 16);
  EXPECT_NEAR(r["busbw_GBps"].get<double>(), 8 * 57.7, 0.02 * 8 * 57.7);
  const auto autos = run_trainsim({"collective", "--platform", "dgx-h100", "--nodes", "2", "--bytes", "1M:1G:x32", "--json", "-"});
  ASSERT_EQ(autos.exit_code, 0) << autos.err;
  const auto picks = parse(autos.out)["results"];
  EXPECT_NE(picks.front()["algorithm"], "nvls_tree");  // small sizes: its 67 µs latency loses
  EXPECT_EQ(picks.back()["algorithm"], "nvls_tree");
  const auto four = run_trainsim({"collective", "--platform", "dgx-h100", "--nodes", "4", "--bytes", "64M:8G:x128", "--json", "-"});
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_EQ(parse(four.out)["results"][0]["algorithm"], "ring");
  EXPECT_EQ(parse(four.out)["results"][1]["algorithm"], "ring");
}

// A ring NCCL's tuner chose pays its route latencies as tuning.cc charges them across nodes (28
// steps at NVLink's latency and 2 at the network's on 2 DGX H100 nodes), not 30 times the network
// hop's: the engine's ring LL at 64 KiB is within 10 % of NCCL's model, and
// 10 µs more on the network hop costs it 2 hops' worth (less the 0.7 µs of tuning.cc's NET
// latency the 2 µs hop no longer covers: 18.6 µs). The textbook ring (no protocol) keeps every
// lockstep step at its slowest hop: over 10 times as much.
TEST(CollectiveCli, NcclRingAcrossNodesPaysNcclsPerHopLatencies) {
  const std::string dir = trainsim_test::make_temp_dir("nccl_ring_latency");
  const auto ring = [&](int latency_us, bool protocol) {
    const std::string platform = dir + "/h" + std::to_string(latency_us) + ".json";
    std::ofstream(platform) << R"({"preset": "dgx-h100", "nodes": 2, "network": {"latency_us": )" << latency_us << "}}";
    std::vector<std::string> args{"collective", "--platform", platform, "--algorithm", "ring", "--bytes",
                                  "64K",        "--json",     "-"};
    if (protocol) args.insert(args.end(), {"--protocol", "LL"});
    const auto r = run_trainsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? parse(r.out)["results"][0] : trainsim::Json::object();
  };
  const auto nccl = ring(2, true);
  ASSERT_TRUE(nccl.contains("nccl_model_time_s"));
  const double model = nccl["nccl_model_time_s"].get<double>();
  EXPECT_NEAR(nccl["time_s"].get<double>(), model, 0.10 * model);
  const double slower = ring(12, true)["time_s"].get<double>() - nccl["time_s"].get<double>();
  EXPECT_NEAR(slower, 2 * 10e-6 - 2 * 0.7e-6, 0.5e-6);
  const double textbook = ring(12, false)["time_s"].get<double>() - ring(2, false)["time_s"].get<double>();
  EXPECT_GT(textbook, 10 * slower);
}

// SHARP switches ("network": {"sharp": true}) bring NCCL's CollNet and NVLS across nodes: on 4 DGX
// A100 the tuner picks CollNet Direct for large sizes, which then runs NVLink-bound (every port
// carries 2S·7/8) above the ring's NIC-bound busbw; on 4 DGX H100 it picks NVLS through the switches.
TEST(CollectiveCli, SharpSwitchesRunCollNetAndNvlsAcrossNodes) {
  const std::string a100 = trainsim_test::test_data_dir() + "/good/platforms/dgx_a100_sharp_4_nodes.json";
  const auto direct = run_trainsim({"collective", "--platform", a100, "--bytes", "1G", "--json", "-"});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const auto r = parse(direct.out)["results"][0];
  EXPECT_EQ(r["algorithm"], "collnet_direct");
  EXPECT_EQ(r["channels"], 8);  // one head per NIC
  // NVLink-bound: algbw 240 GB/s × 8 / 14 = 137 (NCCL's model says 192, ignoring NVLink for Direct).
  EXPECT_NEAR(r["algbw_GBps"].get<double>(), 240 * 8.0 / 14, 0.03 * 240 * 8 / 14);
  const auto ring = run_trainsim({"collective", "--platform", "dgx-a100", "--nodes", "4", "--algorithm", "ring",
                                  "--protocol", "auto", "--bytes", "1G", "--json", "-"});
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_GT(r["busbw_GBps"].get<double>(), 1.2 * parse(ring.out)["busbw_GBps"].get<double>());
  const auto chain = run_trainsim({"collective", "--platform", a100, "--algorithm", "collnet_chain", "--bytes", "1G", "--json", "-"});
  ASSERT_EQ(chain.exit_code, 0) << chain.err;
  EXPECT_EQ(parse(chain.out)["results"][0]["algorithm"], "collnet_chain");
  const std::string h100 = trainsim_test::test_data_dir() + "/good/platforms/dgx_h100_sharp_4_nodes.json";
  const auto nvls = run_trainsim({"collective", "--platform", h100, "--bytes", "1G", "--json", "-"});
  ASSERT_EQ(nvls.exit_code, 0) << nvls.err;
  EXPECT_EQ(parse(nvls.out)["results"][0]["algorithm"], "nvls");
  EXPECT_NEAR(parse(nvls.out)["busbw_GBps"].get<double>(), 384, 0.03 * 384);  // 8 heads × 48 GB/s (NCCL's search)
  const auto info = run_trainsim({"platform", "info", h100});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("SHARP      the switches reduce in the network"), std::string::npos) << info.out;
}

// Published multi-node nccl-tests results on systems with 4 and 8 NICs per node
// (tests/data/validation/nccl_allreduce_multinode.csv names each source): mean error ≤ 20%.
TEST(CollectiveCli, MultiNodePublishedResultsWithFourAndEightNicsAreWithin20Percent) {
  const auto csv = trainsim::CsvTable::read(data("validation/nccl_allreduce_multinode.csv"));
  const auto platform = csv.column("platform"), nodes = csv.column("nodes"), algo = csv.column("nccl_algo"),
             size = csv.column("size_bytes"), busbw = csv.column("busbw_GBps"), name = csv.column("dataset");
  double sum = 0;
  for (std::size_t row = 0; row < csv.row_count(); ++row) {
    std::string p = csv.cell(row, platform);
    if (p.find(".json") != std::string::npos) p = trainsim_test::test_data_dir() + "/" + p;  // (data(p) would be std::data)
    const auto r = run_trainsim({"collective", "--platform", p, "--nodes", csv.cell(row, nodes), "--algorithm",
                                 csv.cell(row, algo), "--protocol", "auto", "--bytes", csv.cell(row, size), "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << p << ": " << r.err;
    const double simulated = parse(r.out)["busbw_GBps"].get<double>(), measured = csv.number(row, busbw);
    const double err = std::fabs(simulated - measured) / measured;
    std::printf("%-22s %14s measured %7.1f GB/s simulated %7.1f GB/s error %5.1f%%\n", csv.cell(row, name).c_str(),
                csv.cell(row, size).c_str(), measured, simulated, 100 * err);
    sum += err;
  }
  ASSERT_GE(csv.row_count(), 2u);
  EXPECT_LE(sum / double(csv.row_count()), 0.20);
}

TEST(CollectiveCli, TextOutputHasNcclTestsColumnsAndIsDeterministic) {
  const std::vector<std::string> args{"collective", "--platform", "cluster-25gbe", "--algorithm", "hierarchical",
                                      "--bytes", "1M:4M"};
  const auto a = run_trainsim(args), b = run_trainsim(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("busbw(GB/s)"), std::string::npos);
  EXPECT_NE(a.out.find("4194304"), std::string::npos);
}
