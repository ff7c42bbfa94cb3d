#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>

#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/platforms/gpu_catalog.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim_test/files.hpp"

namespace tp = trainsim::platforms;
using trainsim::InputError;
using trainsim::Precision;

namespace {

tp::PlatformSpec from_text(const std::string& text) {
  return tp::read_platform_spec(trainsim::parse_json_text(text, "test.json"));
}

std::string bad_file(const std::string& name) { return trainsim_test::test_data_dir() + "/bad/platforms/" + name; }

// Boards tile the node when their size is given; an inherited preset board on a node
// made smaller keeps its documented meaning (the job's GPUs on each board share it).
TEST(GpuBoard, AGivenBoardSizeMustTileTheNodeAnInheritedOneNeedNot) {
  const tp::PlatformSpec three = from_text(R"({"preset": "aws-p2.8xlarge", "gpus_per_node": 3})");
  EXPECT_EQ(three.gpu_board.gpus, 2);
  try {
    (void)from_text(R"({"preset": "aws-p2.8xlarge", "gpu_board": {"gpus": 3}})");
    ADD_FAILURE() << "a board of 3 on 8 GPUs was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/gpu_board/gpus");
    EXPECT_NE(e.detail().find("one of 1, 2, 4, 8"), std::string::npos) << e.what();
  }
  const tp::PlatformSpec ones = from_text(R"({"preset": "aws-p2.8xlarge", "gpu_board": {"gpus": 1}})");
  EXPECT_EQ(ones.gpu_board.gpus, 1);
  EXPECT_EQ(ones.gpu_board.shared_speed, 1.0);
  try {
    (void)from_text(R"({"preset": "dgx-a100", "gpu_board": {"shared_speed": 0.5}})");
    ADD_FAILURE() << "shared_speed on one-GPU boards was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/gpu_board/shared_speed");
  }
}

TEST(IntraNodeKind, NvlinkBesideAnNvswitchPresetKeepsItsLatencyAndEfficiencyAndAsksForTheBandwidth) {
  const tp::PlatformSpec spec = from_text(R"({"preset": "dgx-a100", "intra_node": {"kind": "nvlink", "bandwidth_GBps": 25}})");
  EXPECT_EQ(spec.intra_node.kind, tp::IntraNodeKind::nvlink);
  EXPECT_DOUBLE_EQ(spec.intra_node.bandwidth_Bps, 25e9);
  EXPECT_NEAR(spec.intra_node.latency_s, 3.4e-6, 1e-12);
  EXPECT_DOUBLE_EQ(spec.intra_node.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(spec.intra_node.pcie_bandwidth_Bps, 31.5e9);
  try {
    (void)from_text(R"({"preset": "dgx-a100", "intra_node": {"kind": "nvlink"}})");
    ADD_FAILURE() << "no bandwidth asked for";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/intra_node");
    EXPECT_NE(e.detail().find("GB/s per NVLink link"), std::string::npos) << e.what();
  }
}

TEST(PhysicalRanges, RatesAndLatenciesOutsideThemAreErrorsAtTheirPointer) {
  struct Case {
    const char* text;
    const char* pointer;
  };
  for (const Case& c : {Case{R"({"preset": "dgx-a100", "network": {"bandwidth_Gbps": 1e-300}})", "/network/bandwidth_Gbps"},
                        Case{R"({"preset": "dgx-a100", "network": {"bandwidth_Gbps": 2e6}})", "/network/bandwidth_Gbps"},
                        Case{R"({"preset": "dgx-a100", "network": {"latency_us": 1e300}})", "/network/latency_us"},
                        Case{R"({"preset": "dgx-a100", "intra_node": {"bandwidth_GBps": 1e-9}})", "/intra_node/bandwidth_GBps"},
                        Case{R"({"preset": "dgx-a100", "intra_node": {"latency_us": 2e7}})", "/intra_node/latency_us"},
                        Case{R"({"preset": "dgx-a100", "network": {"model": {"tcp_gamma_bytes": 1e-300}}})", "/network/model/tcp_gamma_bytes"},
                        Case{R"({"preset": "dgx-a100", "network": {"model": {"latency_factor": 1e-7}}})", "/network/model/latency_factor"}}) {
    try {
      (void)from_text(c.text);
      ADD_FAILURE() << c.text << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), c.pointer) << e.what();
    }
  }
  // The edges of the ranges are read.
  EXPECT_NO_THROW((void)from_text(R"({"preset": "dgx-a100", "network": {"bandwidth_Gbps": 1e-6, "latency_us": 1e7}})"));
  EXPECT_NO_THROW((void)from_text(R"({"preset": "dgx-a100", "network": {"bandwidth_Gbps": 1e6, "latency_us": 0}})"));
}

}  // namespace

TEST(GpuCatalog, HasTheIssueListWithPositivePeaksAndSources) {
  for (const char* name : {"K80", "P100-PCIe-16GB", "P100-SXM2-16GB", "V100-PCIe-16GB", "V100-PCIe-32GB",
                           "V100-SXM2-16GB", "V100-SXM2-32GB", "T4", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM",
                           "H100-PCIe", "H200", "B200", "CPU-host"}) {
    const tp::GpuSpec& g = tp::gpu_by_name(name);
    for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
      EXPECT_GT(g.peak_flops(p), 0) << name;
    EXPECT_GT(g.memory_bytes, 0) << name;
    EXPECT_GT(g.memory_bandwidth_Bps, 0) << name;
    EXPECT_FALSE(g.source.empty()) << name;
  }
  EXPECT_DOUBLE_EQ(tp::gpu_by_name("A100-SXM4-80GB").peak_flops(Precision::bf16), 312e12);
  EXPECT_DOUBLE_EQ(tp::gpu_by_name("V100-SXM2-16GB").peak_flops(Precision::fp32), 15.7e12);
}

TEST(GpuCatalog, SmCountsAreTheWhitepapers) {
  const std::vector<std::pair<std::string, int>> expected{
      {"K80", 13},           {"P100-PCIe-16GB", 56}, {"P100-SXM2-16GB", 56}, {"V100-PCIe-16GB", 80},
      {"V100-SXM2-32GB", 80}, {"T4", 40},            {"A100-SXM4-40GB", 108}, {"A100-SXM4-80GB", 108},
      {"H100-SXM", 132},     {"H100-PCIe", 114},     {"H200", 132},           {"B200", 148}};
  for (const auto& [name, sms] : expected) EXPECT_EQ(tp::gpu_by_name(name).sm_count, sms) << name;
  for (const auto& g : tp::gpu_catalog()) EXPECT_EQ(g.sm_count > 0, !g.is_cpu) << g.name;
}

// Per-GPU dense figures from the vendors' system datasheets (a system's 2:4-sparse tensor rate /
// GPUs / 2): HGX B200 and B300 (8 GPUs: 600 TFLOP/s fp32, 18 PFLOP/s tf32, 36 fp16/bf16), GB200
// NVL72 (72 GPUs: 5,760 TFLOP/s fp32, 180 PFLOP/s tf32, 360 fp16/bf16, 13.4 TB at 576 TB/s), and
// AMD's MI300X datasheet (dense matrix rates).
TEST(GpuCatalog, NewPartsHoldTheirDatasheetsPerGpuFigures) {
  struct Figures {
    const char* name;
    double fp32_T, tf32_T, bf16_T, memory_GB, bandwidth_GBps;
  };
  for (const Figures& f : {Figures{"B200", 600.0 / 8, 18000.0 / 16, 36000.0 / 16, 1440.0 / 8, 8000},
                           Figures{"B300", 600.0 / 8, 18000.0 / 16, 36000.0 / 16, 288, 8000},
                           Figures{"GB200", 5760.0 / 72, 180000.0 / 144, 360000.0 / 144, 13400.0 / 72, 576000.0 / 72},
                           Figures{"MI300X", 163.4, 653.7, 1307.4, 192, 5300}}) {
    const tp::GpuSpec& g = tp::gpu_by_name(f.name);
    EXPECT_NEAR(g.peak_flops(Precision::fp32), f.fp32_T * 1e12, 1e9) << f.name;
    EXPECT_NEAR(g.peak_flops(Precision::tf32), f.tf32_T * 1e12, 1e9) << f.name;
    EXPECT_NEAR(g.peak_flops(Precision::bf16), f.bf16_T * 1e12, 1e9) << f.name;
    EXPECT_NEAR(g.peak_flops(Precision::fp16), f.bf16_T * 1e12, 1e9) << f.name;
    EXPECT_NEAR(g.memory_bytes, f.memory_GB * 1e9, 0.5e9) << f.name;  // GB200: 13.4 TB / 72 rounds to 186 GB
    EXPECT_NEAR(g.memory_bandwidth_Bps, f.bandwidth_GBps * 1e9, 1e6) << f.name;
  }
  // H200: the H100 SXM's GH100 (SMs, clocks, peaks) with 141 GB of HBM3e at 4.8 TB/s for 3.35.
  const tp::GpuSpec& h100 = tp::gpu_by_name("H100-SXM");
  const tp::GpuSpec& h200 = tp::gpu_by_name("H200");
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
    EXPECT_EQ(h200.peak_flops(p), h100.peak_flops(p));
  EXPECT_EQ(h200.sm_count, h100.sm_count);
  EXPECT_DOUBLE_EQ(h200.memory_bandwidth_Bps / h100.memory_bandwidth_Bps, 4800.0 / 3350);
}

TEST(GpuCatalog, UnknownNameSuggestsTheNearest) {
  try {
    tp::gpu_by_name("A100-SXM4-80G", "x.json", "/platform/gpu");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/platform/gpu");
    EXPECT_NE(std::string(e.what()).find("did you mean 'A100-SXM4-80GB'"), std::string::npos) << e.what();
  }
}

TEST(Presets, EveryPresetOfTheIssueLoadsAndNamesItsSource) {
  for (const char* name : {"dgx1-p100", "dgx1-v100", "dgx2", "dgx-a100", "dgx-h100", "dgx-h200", "aws-p2.xlarge",
                           "aws-p2.8xlarge", "aws-p3.16xlarge", "aws-p3dn.24xlarge", "aws-p4d.24xlarge", "gce-k80x8",
                           "piz-daint", "cluster-10gbe", "cluster-25gbe", "cluster-40gbe", "cluster-100gbe",
                           "cluster-ib-edr", "cluster-ib-hdr"}) {
    const tp::PlatformSpec spec = tp::load_platform(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.source.empty()) << name;
    EXPECT_GE(spec.total_gpus(), 1) << name;
  }
  EXPECT_EQ(tp::preset_names().size(), tp::preset_catalog().size());
  EXPECT_DOUBLE_EQ(*tp::load_platform("aws-p3.16xlarge").price_per_gpu_hour, 3.06);
  EXPECT_EQ(tp::load_platform("piz-daint").network.topology, tp::TopologyKind::dragonfly);
}

TEST(Presets, OverridesApplyAndANewNodeCountReshapesTheTopology) {
  const tp::PlatformSpec spec = from_text(R"({"preset": "piz-daint", "nodes": 96, "network": {"model": "tcp"}})");
  EXPECT_EQ(spec.nodes, 96);
  EXPECT_EQ(spec.network.model, tp::NetworkModel::tcp);
  const tp::DragonflyShape& d = spec.network.dragonfly;
  EXPECT_EQ(std::uint64_t(d.groups) * d.chassis * d.routers * d.nodes_per_router, 96u);
  EXPECT_EQ(spec.gpu.name, "P100-PCIe-16GB");  // untouched fields keep the preset's values

  const tp::PlatformSpec ft = from_text(R"({"preset": "cluster-ib-edr", "nodes": 12})");
  std::uint64_t leaves = 1;
  for (unsigned d2 : ft.network.fat_tree.down) leaves *= d2;
  EXPECT_EQ(leaves, 12u);
}

// Dedicated parameter-server nodes join the topology: with_nodes re-derives the shape as a new
// node count in a scenario would, and keeps everything else as it is.
TEST(Spec, WithNodesRederivesTheShapeAndKeepsTheRest) {
  const tp::PlatformSpec ft = from_text(R"({"preset": "cluster-ib-edr", "nodes": 8})");
  const tp::PlatformSpec more = tp::with_nodes(ft, 12, "test");
  std::uint64_t leaves = 1;
  for (unsigned d : more.network.fat_tree.down) leaves *= d;
  EXPECT_EQ(leaves, 12u);
  EXPECT_EQ(more.network.fat_tree.down.size(), ft.network.fat_tree.down.size());
  EXPECT_EQ(more.gpu.name, ft.gpu.name);
  EXPECT_EQ(more.network.bandwidth_Bps, ft.network.bandwidth_Bps);
  // The same as a scenario asking for 12 nodes.
  EXPECT_EQ(more.network.fat_tree.down, from_text(R"({"preset": "cluster-ib-edr", "nodes": 12})").network.fat_tree.down);

  const tp::PlatformSpec torus = tp::with_nodes(from_text(R"({"preset": "piz-daint", "nodes": 8, "network": {"topology": "torus", "bandwidth_Gbps": 100, "latency_us": 1}})"), 12, "test");
  std::uint64_t nodes = 1;
  for (unsigned d : torus.network.torus_dimensions) nodes *= d;
  EXPECT_EQ(nodes, 12u);
}

TEST(Spec, WithNodesReportsAnOversubscriptionThatNoLongerDivides) {
  // 8 leaves → down [4, 2]; 9 leaves → [3, 3], and 2 does not divide 3.
  const tp::PlatformSpec ft = from_text(
      R"({"gpu": "V100-SXM2-16GB", "nodes": 8, "gpus_per_node": 1, "intra_node": {"kind": "pcie", "bandwidth_GBps": 12, "latency_us": 1},
          "network": {"topology": "fat_tree", "bandwidth_Gbps": 100, "latency_us": 1, "fat_tree": {"levels": 2, "oversubscription": 2}}})");
  ASSERT_EQ(ft.network.fat_tree.down, (std::vector<unsigned>{4, 2}));
  try {
    tp::with_nodes(ft, 9, "cluster with 1 server node");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "cluster with 1 server node");
    EXPECT_EQ(e.location(), "/network/fat_tree");
    EXPECT_NE(e.detail().find("oversubscription 2"), std::string::npos) << e.detail();
  }
}

TEST(Presets, PartOfADgx1KeepsItsNvlinksAndGpusPerPcieSwitch) {
  const tp::PlatformSpec two = from_text(R"({"preset": "dgx1-v100", "gpus_per_node": 2})");
  EXPECT_EQ(two.intra_node.pcie_switches, 1);
  EXPECT_EQ(tp::ring_order_within_node(two), (std::vector<int>{0, 1}));
  const tp::PlatformSpec four = from_text(R"({"preset": "dgx1-v100", "gpus_per_node": 4})");
  EXPECT_EQ(four.intra_node.pcie_switches, 2);
  for (const auto& ring : tp::ring_channels_within_node(four)) {
    ASSERT_EQ(ring.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_GT(tp::nvlink_links_between(ring[i], ring[(i + 1) % 4], true), 0);
  }
}

TEST(Presets, ChangingTheIntraNodeKindRederivesTheFabric) {
  // NVLink → PCIe: the preset's PCIe link becomes the fabric, with NCCL's PCIe latency and efficiency.
  const tp::PlatformSpec pcie = from_text(R"({"preset": "dgx1-v100", "intra_node": {"kind": "pcie"}})");
  EXPECT_EQ(pcie.intra_node.kind, tp::IntraNodeKind::pcie);
  EXPECT_DOUBLE_EQ(pcie.intra_node.bandwidth_Bps, 15.75e9);
  EXPECT_DOUBLE_EQ(pcie.intra_node.latency_s, 5.7e-6);
  EXPECT_NEAR(pcie.intra_node.efficiency, 12.0 / 15.75, 1e-12);
  // What the user gives wins.
  const tp::PlatformSpec given = from_text(R"({"preset": "dgx1-v100", "intra_node": {"kind": "pcie", "latency_us": 8}})");
  EXPECT_DOUBLE_EQ(given.intra_node.latency_s, 8e-6);
  // PCIe → NVSwitch: the new fabric's bandwidth must be given; the PCIe link stays.
  EXPECT_THROW(from_text(R"({"preset": "cluster-25gbe", "intra_node": {"kind": "nvswitch"}})"), InputError);
  const tp::PlatformSpec nvswitch =
      from_text(R"({"preset": "cluster-25gbe", "intra_node": {"kind": "nvswitch", "bandwidth_GBps": 300, "latency_us": 3}})");
  EXPECT_DOUBLE_EQ(nvswitch.intra_node.bandwidth_Bps, 300e9);
  EXPECT_DOUBLE_EQ(nvswitch.intra_node.pcie_bandwidth_Bps, 15.75e9);
}

TEST(Presets, FactorsModelIsRead) {
  const tp::PlatformSpec spec = from_text(
      R"({"preset": "cluster-10gbe", "network": {"model": {"latency_factor": 2, "bandwidth_factor": 0.9}}})");
  EXPECT_EQ(spec.network.model, tp::NetworkModel::factors);
  EXPECT_DOUBLE_EQ(spec.network.factors.latency_factor, 2);
  EXPECT_DOUBLE_EQ(spec.network.factors.bandwidth_factor, 0.9);
}

// K80 presets carry two dies per board; the shared speed has no default (1) and is the user's.
TEST(Presets, K80BoardsHoldTwoDiesAndTheSharedSpeedIsTheUsers) {
  const tp::PlatformSpec p2 = tp::load_platform("aws-p2.8xlarge");
  EXPECT_EQ(p2.gpu_board.gpus, 2);
  EXPECT_DOUBLE_EQ(p2.gpu_board.shared_speed, 1.0);
  EXPECT_EQ(tp::load_platform("dgx1-p100").gpu_board.gpus, 1);
  const tp::PlatformSpec set = from_text(R"({"preset": "gce-k80x8", "gpu_board": {"shared_speed": 0.9}})");
  EXPECT_EQ(set.gpu_board.gpus, 2);  // merged over the preset's board
  EXPECT_EQ(tp::board_speeds(set, 8), std::vector<double>(8, 0.9));
  EXPECT_EQ(tp::board_speeds(set, 3), (std::vector<double>{0.9, 0.9, 1.0}));
  EXPECT_EQ(tp::board_speeds(set, 1), std::vector<double>{1.0});
  const tp::PlatformSpec back = from_text(tp::to_json(set).dump());
  EXPECT_EQ(back.gpu_board.gpus, 2);
  EXPECT_DOUBLE_EQ(back.gpu_board.shared_speed, 0.9);
}

TEST(Spec, JsonRoundTripIsStable) {
  const tp::PlatformSpec a = tp::load_platform("dgx1-v100");
  const tp::PlatformSpec b = from_text(tp::to_json(a).dump());
  EXPECT_EQ(tp::to_json(a).dump(), tp::to_json(b).dump());
  // SHARP switches: off unless asked, written only when on.
  EXPECT_FALSE(a.network.sharp);
  EXPECT_FALSE(tp::to_json(a)["network"].contains("sharp"));
  const tp::PlatformSpec s = from_text(R"({"preset": "dgx-h100", "nodes": 4, "network": {"sharp": true}})");
  EXPECT_TRUE(s.network.sharp);
  EXPECT_TRUE(from_text(tp::to_json(s).dump()).network.sharp);
}

TEST(Spec, NvlinkCubeMeshHasSixLinksPerV100AndFourPerP100) {
  for (int a = 0; a < 8; ++a) {
    int v100 = 0, p100 = 0;
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(tp::nvlink_links_between(a, b, true), tp::nvlink_links_between(b, a, true));
      v100 += tp::nvlink_links_between(a, b, true);
      p100 += tp::nvlink_links_between(a, b, false);
    }
    EXPECT_EQ(v100, 6) << a;
    EXPECT_EQ(p100, 4) << a;
  }
  const auto ring = tp::ring_order_within_node(tp::load_platform("dgx1-v100"));
  for (std::size_t i = 0; i < ring.size(); ++i)
    EXPECT_GT(tp::nvlink_links_between(ring[i], ring[(i + 1) % ring.size()], true), 0) << "ring hop " << i;
}

TEST(Spec, CubeMeshRingChannelsUseOnlyNvlinkAndShareNoDirectedLink) {
  const auto channels = tp::ring_channels_within_node(tp::load_platform("dgx1-v100"));
  ASSERT_EQ(channels.size(), 4u);
  std::set<std::pair<int, int>> used;
  for (const auto& ring : channels) {
    ASSERT_EQ(ring.size(), 8u);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      EXPECT_GT(tp::nvlink_links_between(a, b, true), 0) << a << "->" << b;
      EXPECT_TRUE(used.insert({a, b}).second) << "directed link " << a << "->" << b << " used twice";
    }
  }
  EXPECT_EQ(tp::ring_channels_within_node(tp::load_platform("dgx-a100")).size(), 1u);
}

TEST(Spec, BisectionBandwidthFollowsTheTopology) {
  const tp::PlatformSpec sw = from_text(R"({"preset": "cluster-100gbe", "nodes": 8})");
  EXPECT_DOUBLE_EQ(tp::summarize_network(sw).bisection_Bps, 4 * 12.5e9);
  const tp::PlatformSpec over = from_text(
      R"({"preset": "cluster-ib-edr", "nodes": 16, "network": {"fat_tree": {"down": [4, 4], "oversubscription": 2}}})");
  EXPECT_DOUBLE_EQ(tp::summarize_network(over).bisection_Bps, 8 * 12.5e9 / 2);
  const tp::PlatformSpec a100 = tp::load_platform("dgx-a100");
  EXPECT_DOUBLE_EQ(tp::summarize_network(a100).intra_node_bisection_Bps, 4 * 300e9 * 0.8);
}

// One fixture per kind of bad input: the error names the file and the JSON pointer.
struct BadCase {
  const char* file;
  const char* pointer;  // expected location (for the XML: "line N")
  const char* detail;   // a fragment of the message
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadPlatform : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPlatform, IsRejectedWithFileAndPointer) {
  const BadCase& c = GetParam();
  try {
    tp::read_platform_spec(trainsim::read_json_file(bad_file(c.file)));
    FAIL() << "accepted " << c.file;
  } catch (const InputError& e) {
    EXPECT_NE(e.source().find("platforms/"), std::string::npos) << e.what();
    EXPECT_EQ(e.location(), c.pointer) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.detail), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadPlatform,
    ::testing::Values(BadCase{"unknown_preset.json", "/preset", "did you mean 'dgx-a100'"},
                      BadCase{"unknown_gpu.json", "/gpu", "did you mean 'V100-SXM2-16GB'"},
                      BadCase{"zero_bandwidth.json", "/network/bandwidth_Gbps", "must be > 0"},
                      BadCase{"negative_latency.json", "/network/latency_us", "must be ≥ 0"},
                      BadCase{"bandwidth_overflow.json", "/intra_node/bandwidth_GBps", "1 kbit/s to 1 Pbit/s"},
                      BadCase{"torus_misfit.json", "/network/torus/dimensions", "but nodes is 4"},
                      BadCase{"fat_tree_misfit.json", "/network/fat_tree/down", "but nodes is 4"},
                      BadCase{"dragonfly_misfit.json", "/network/dragonfly", "but nodes is 4"},
                      // Their 64-bit products wrap around to exactly `nodes`; both were accepted.
                      BadCase{"fat_tree_wraps.json", "/network/fat_tree/down", "has more than 1000000 leaves, but nodes is 65536"},
                      BadCase{"torus_wraps.json", "/network/torus/dimensions", "has more than 1000000 nodes, but nodes is 65536"},
                      BadCase{"unconnected_hosts.json", "/network/nics_per_node", "must be ≥ 1"},
                      BadCase{"gpu_board_no_gpus.json", "/gpu_board/gpus", "must be ≥ 1"},
                      BadCase{"gpu_board_speed_above_one.json", "/gpu_board/shared_speed", "[1e-06, 1]"},
                      BadCase{"unknown_key.json", "/network/nic_atach", "did you mean 'nic_attach'"},
                      BadCase{"sharp_not_bool.json", "/network/sharp", "true or false"},
                      BadCase{"nvlink_too_many_gpus.json", "/intra_node/kind", "at most 8 GPUs"},
                      BadCase{"bad_model.json", "/network/model/bandwidth_factor", "(0, 1]"},
                      BadCase{"malformed_xml_ref.json", "line 7", "<host> opened on line 6"},
                      BadCase{"unconnected_xml_ref.json", "line 7", "hosts left unconnected"}),
    [](const ::testing::TestParamInfo<BadCase>& param) {
      std::string name = param.param.file;
      return name.substr(0, name.find('.'));
    });

namespace {
/// Writes `body` inside a <platform> to a fresh XML file and loads it as a platform.
tp::PlatformSpec load_xml(const std::string& name, const std::string& body) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainsim_xml_limit_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\">\n" << body << "</platform>\n";
  return tp::load_platform(path.string());
}
std::string cluster(const std::string& id, const std::string& radical) {
  return "<cluster id=\"" + id + "\" prefix=\"" + id + "-\" suffix=\"\" radical=\"" + radical +
         "\" speed=\"1Tf\" bw=\"10GBps\" lat=\"1us\"/>\n";
}
}  // namespace

// The plan sizes an XML platform before SimGrid reads it: its hosts counted from the file, as SimGrid
// builds them (a cluster's radical lists, <host> and <peer> elements), grouped gpus_per_node a node.
TEST(XmlHostCount, NodesAreCountedFromTheFile) {
  tp::PlatformSpec spec = load_xml("count.xml", "<zone id=\"z\" routing=\"Floyd\">\n" + cluster("a", "0-3,8,10-11") +
                                                    "<host id=\"h\" speed=\"1Tf\"/>\n</zone>\n");  // 7 + 1 hosts
  EXPECT_EQ(spec.nodes, 0);  // reading the platform builds nothing
  EXPECT_EQ(tp::simgrid_xml_nodes(spec), 8);
  spec.gpus_per_node = 4;
  EXPECT_EQ(tp::simgrid_xml_nodes(spec), 2);
  spec.gpus_per_node = 3;
  try {
    (void)tp::simgrid_xml_nodes(spec);
    FAIL() << "8 hosts in nodes of 3 were accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), *spec.simgrid_xml);
    EXPECT_EQ(e.detail(), "has 8 hosts, not a multiple of gpus_per_node 3");
  }
  const tp::PlatformSpec empty = load_xml("empty.xml", "<zone id=\"z\" routing=\"Full\">\n</zone>\n");
  try {
    (void)tp::simgrid_xml_nodes(empty);
    FAIL() << "a platform without hosts was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.detail(), "the platform defines no host");
  }
}

// A 200-byte <cluster> of radical 0-9999999 made SimGrid build ten million hosts (> 3 GB, > 20 s)
// before the 131,072 limit was checked: the radicals are summed before SimGrid reads the file.
TEST(XmlHostLimit, ClusterRadicalsAreSummedBeforeSimGridReadsTheFile) {
  try {
    (void)load_xml("huge.xml", "<zone id=\"z\" routing=\"Full\">\n" + cluster("c", "0-9999999") + "</zone>\n");
    FAIL() << "a cluster of 10,000,000 hosts was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "line 5") << e.what();
    EXPECT_NE(e.detail().find("10000000 hosts, more than the 131072"), std::string::npos) << e.what();
  }
  // Lists and sums over clusters and hosts: 100,000 + 31,072 = 131,072 is the limit, one host more is past it.
  EXPECT_NO_THROW((void)load_xml("edge.xml", "<zone id=\"z\" routing=\"Floyd\">\n" +
                                                 cluster("a", "0-9999,10000-99999") + cluster("b", "1-31071,0") +
                                                 "</zone>\n"));
  try {
    (void)load_xml("past.xml", "<zone id=\"z\" routing=\"Floyd\">\n" + cluster("a", "0-99999") +
                                   cluster("b", "0-31071") + "<host id=\"extra\" speed=\"1Tf\"/>\n</zone>\n");
    FAIL() << "131,073 hosts were accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "line 7") << e.what();
    EXPECT_NE(e.detail().find("131073 hosts"), std::string::npos) << e.what();
  }
  // A number past 64 bits saturates instead of wrapping around to a small count.
  try {
    (void)load_xml("wrap.xml", cluster("c", "0-18446744073709551616"));
    FAIL() << "a radical past 2^64 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.detail().find("more than 1000000000000 hosts"), std::string::npos) << e.what();
  }
}

// network.nccl.protocols alone sets no transport cost: the costs stay not given, and the platform
// written back carries the list without inventing zero costs.
TEST(NcclNet, ProtocolsAloneAreNotTransportCostsAndRoundTrip) {
  const auto spec = from_text(R"({"preset": "dgx-h100", "nodes": 2,
      "network": {"topology": "switch", "bandwidth_Gbps": 400, "latency_us": 2, "nics_per_node": 8,
                  "nic_attach": "gpu", "nccl": {"protocols": ["Simple", "LL128"]}}})");
  EXPECT_FALSE(spec.network.nccl.given());
  EXPECT_FALSE(spec.network.nccl.all_protocols());
  EXPECT_EQ(spec.network.nccl.protocols, (std::array<bool, 3>{false, true, true}));
  const auto nccl = tp::to_json(spec)["network"]["nccl"];
  EXPECT_EQ(nccl, trainsim::Json::parse(R"({"protocols": ["LL128", "Simple"]})"));
  const auto back = from_text(tp::to_json(spec).dump());
  EXPECT_EQ(back.network.nccl.protocols, spec.network.nccl.protocols);
}

// network.nccl.algorithms (NCCL_ALGO's names): like the protocols, no transport cost, kept when the
// platform is written back; an empty list or an unknown name is refused.
TEST(NcclNet, AlgorithmsAloneAreNotTransportCostsAndRoundTrip) {
  const auto spec = from_text(R"({"preset": "dgx-h100", "nodes": 2,
      "network": {"nccl": {"algorithms": ["Tree", "Ring"]}}})");
  EXPECT_FALSE(spec.network.nccl.given());
  EXPECT_FALSE(spec.network.nccl.all_algorithms());
  EXPECT_EQ(spec.network.nccl.algorithms, (std::array<bool, 6>{true, true, false, false, false, false}));
  EXPECT_EQ(tp::to_json(spec)["network"]["nccl"], trainsim::Json::parse(R"({"algorithms": ["Ring", "Tree"]})"));
  EXPECT_EQ(from_text(tp::to_json(spec).dump()).network.nccl.algorithms, spec.network.nccl.algorithms);
  EXPECT_TRUE(from_text(R"({"preset": "dgx-h100", "nodes": 2})").network.nccl.all_algorithms());
  for (const char* bad : {R"([])", R"(["Ring", "PAT"])", R"(["ring"])"}) {
    try {
      from_text(std::string(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"algorithms": )") + bad + "}}}");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainsim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/network/nccl/algorithms"), std::string::npos) << e.what();
    }
  }
}

// network.nccl.ring_efficiency: the transport's default (0.94 over ib and roce, NCCL's
// maintainers' 46-48 GB/s per 400 Gb/s NIC; 1 otherwise), a user's own in its place, written back
// with the transport's other costs and wherever it is not the default; a share outside [0.25, 1]
// is refused naming it.
TEST(NcclNet, RingEfficiencyDefaultsByTransportAndRoundTrips) {
  auto efficiency = [](const std::string& nccl) {
    return from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": )" + nccl + "}}")
        .network.nccl.ring_efficiency;
  };
  EXPECT_DOUBLE_EQ(efficiency(R"({"transport": "ib"})"), 0.94);
  EXPECT_DOUBLE_EQ(efficiency(R"({"transport": "roce"})"), 0.94);
  EXPECT_DOUBLE_EQ(efficiency(R"({"transport": "efa"})"), 1.0);
  EXPECT_DOUBLE_EQ(efficiency(R"({"transport": "tcpxo"})"), 1.0);
  EXPECT_DOUBLE_EQ(efficiency("{}"), 1.0);
  EXPECT_DOUBLE_EQ(from_text(R"({"preset": "dgx-h100", "nodes": 2})").network.nccl.ring_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(efficiency(R"({"transport": "ib", "ring_efficiency": 0.81})"), 0.81);
  EXPECT_DOUBLE_EQ(efficiency(R"({"ring_efficiency": 1})"), 1.0);
  // Written with the transport's costs (a platform read over it with another transport keeps them
  // all), and a user's own with or without a transport.
  const auto ib = from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "ib"}}})");
  EXPECT_DOUBLE_EQ(tp::to_json(ib)["network"]["nccl"]["ring_efficiency"].get<double>(), 0.94);
  EXPECT_DOUBLE_EQ(tp::to_json(ib)["network"]["nccl"]["hop_latency_us"].get<double>(), 4.0);
  EXPECT_FALSE(tp::to_json(from_text(R"({"preset": "dgx-h100", "nodes": 2})"))["network"].contains("nccl"));
  const auto own = from_text(
      R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "ib", "ring_efficiency": 0.81}}})");
  EXPECT_DOUBLE_EQ(tp::to_json(own)["network"]["nccl"]["ring_efficiency"].get<double>(), 0.81);
  EXPECT_DOUBLE_EQ(from_text(tp::to_json(own).dump()).network.nccl.ring_efficiency, 0.81);
  const auto plain = from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"ring_efficiency": 0.9}}})");
  EXPECT_DOUBLE_EQ(from_text(tp::to_json(plain).dump()).network.nccl.ring_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(efficiency(R"({"ring_efficiency": 0.25})"), 0.25);
  for (const char* bad : {"0", "0.2", "-0.5", "1.2", "\"high\""}) {
    try {
      efficiency(std::string(R"({"transport": "ib", "ring_efficiency": )") + bad + "}");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainsim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/network/nccl/ring_efficiency"), std::string::npos) << e.what();
    }
  }
}

// network.nccl.buffsize_bytes (NCCL_BUFFSIZE): no transport cost, kept when the platform is
// written back; a fraction of a byte, or a size NCCL's steps cannot hold, is refused naming it.
TEST(NcclNet, BuffsizeIsNoTransportCostAndRoundTrips) {
  const auto spec =
      from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"buffsize_bytes": 8388608}}})");
  EXPECT_DOUBLE_EQ(spec.network.nccl.buffsize_bytes, 8388608.0);
  EXPECT_FALSE(spec.network.nccl.given());
  EXPECT_EQ(tp::to_json(spec)["network"]["nccl"], trainsim::Json::parse(R"({"buffsize_bytes": 8388608})"));
  EXPECT_DOUBLE_EQ(from_text(tp::to_json(spec).dump()).network.nccl.buffsize_bytes, 8388608.0);
  EXPECT_EQ(from_text(R"({"preset": "dgx-h100", "nodes": 2})").network.nccl.buffsize_bytes, 0);
  for (const char* bad : {"1000", "4194304.5", "2147483648", "\"4M\""}) {
    try {
      from_text(std::string(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"buffsize_bytes": )") + bad +
                "}}}");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainsim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/network/nccl/buffsize_bytes"), std::string::npos) << e.what();
    }
  }
}

// network.nccl.cpu_vendor: NCCL's AMD figures (network post overhead, LL's ceiling across nodes);
// no transport cost either, and it survives the platform written back.
TEST(NcclNet, CpuVendorIsNoTransportCostAndRoundTrips) {
  const auto spec = from_text(R"({"preset": "dgx-a100", "nodes": 2, "network": {"nccl": {"cpu_vendor": "amd"}}})");
  EXPECT_TRUE(spec.network.nccl.amd_cpu);
  EXPECT_FALSE(spec.network.nccl.given());
  EXPECT_EQ(tp::to_json(spec)["network"]["nccl"], trainsim::Json::parse(R"({"cpu_vendor": "amd"})"));
  EXPECT_TRUE(from_text(tp::to_json(spec).dump()).network.nccl.amd_cpu);
  EXPECT_FALSE(from_text(R"({"preset": "dgx-a100", "nodes": 2, "network": {"nccl": {"cpu_vendor": "intel"}}})")
                   .network.nccl.amd_cpu);
}

// efa: a hop of 20 µs (aws-ofi-nccl's tuner model of p5) and 75 µs reported to NCCL (its
// platform-aws.cpp); either given wins, and both survive the platform written back.
TEST(NcclNet, EfaReportsAnotherLatencyThanItsHop) {
  const auto efa = from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "efa"}}})");
  EXPECT_DOUBLE_EQ(efa.network.nccl.hop_latency_s, 20e-6);
  ASSERT_TRUE(efa.network.nccl.reported_latency_s);
  EXPECT_DOUBLE_EQ(*efa.network.nccl.reported_latency_s, 75e-6);
  const auto back = from_text(tp::to_json(efa).dump());
  ASSERT_TRUE(back.network.nccl.reported_latency_s);
  EXPECT_DOUBLE_EQ(*back.network.nccl.reported_latency_s, 75e-6);
  EXPECT_DOUBLE_EQ(back.network.nccl.hop_latency_s, 20e-6);
  const auto p5en = from_text(
      R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "efa", "reported_latency_us": 35}}})");
  EXPECT_DOUBLE_EQ(*p5en.network.nccl.reported_latency_s, 35e-6);
  EXPECT_DOUBLE_EQ(p5en.network.nccl.hop_latency_s, 20e-6);
  const auto hop = from_text(
      R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"hop_latency_us": 30, "transport": "efa"}}})");
  EXPECT_DOUBLE_EQ(hop.network.nccl.hop_latency_s, 30e-6);
  EXPECT_DOUBLE_EQ(*hop.network.nccl.reported_latency_s, 75e-6);
  // Reported alone (no transport): a given cost, which the platform written back keeps.
  const auto alone =
      from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"reported_latency_us": 9}}})");
  EXPECT_TRUE(alone.network.nccl.given());
  EXPECT_DOUBLE_EQ(*from_text(tp::to_json(alone).dump()).network.nccl.reported_latency_s, 9e-6);
  // p4d: the plugin's reported 75 µs as its hop, and Simple alone (aws-ofi-nccl sets NCCL_PROTO
  // where EFA delivers no 128-byte-aligned data in order, as on p4d).
  const tp::PlatformSpec p4d = tp::load_platform("aws-p4d.24xlarge");
  EXPECT_DOUBLE_EQ(p4d.network.nccl.hop_latency_s, 75e-6);
  EXPECT_EQ(p4d.network.nccl.protocol_names(), std::vector<std::string>{"Simple"});
  try {
    (void)from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"reported_latency_us": -1}}})");
    FAIL() << "a negative reported latency was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/network/nccl/reported_latency_us") << e.what();
  }
}

// network.nccl.transport sets the hop latency's default (4 µs on InfiniBand verbs and RoCE, a host's
// TCP one-way time on the TCP transports), an explicit hop_latency_us wins, and both survive the
// platform written back; an unknown transport is refused at its pointer.
// network.nccl.tuner: the rows of NCCL's example tuner plugin's CSV table, 8 to 10 fields, kept as
// written; every field checked, a bad one refused at the row's pointer naming the field.
TEST(NcclNet, TunerRowsAreReadAsNcclsExamplePluginReadsThem) {
  const auto spec = from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"tuner": [
      "allreduce,0,65536,tree,ll,-1,2,-1",
      "allreduce, 65537, 4294967295, ring, simple, 4, -1, 16, 1",
      "allgather,0,1024,ring,ll128,-1,-1,-1,-1,0"]}}})");
  const auto& rows = spec.network.nccl.tuner;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].collective, "allreduce");
  EXPECT_EQ(rows[0].max_bytes, 65536u);
  EXPECT_EQ(rows[0].algorithm, "tree");
  EXPECT_EQ(rows[0].protocol, "ll");
  EXPECT_EQ(rows[0].channels, -1);
  EXPECT_EQ(rows[0].nodes, 2);
  EXPECT_EQ(rows[0].pipe_ops, -1);
  EXPECT_EQ(rows[1].min_bytes, 65537u);
  EXPECT_EQ(rows[1].max_bytes, 4294967295u);
  EXPECT_EQ(rows[1].channels, 4);
  EXPECT_EQ(rows[1].ranks, 16);
  EXPECT_EQ(rows[1].pipe_ops, 1);
  EXPECT_EQ(rows[2].reg_buff, 0);
  // channels 0, as NCCL reads it, leaves NCCL's own.
  EXPECT_EQ(
      from_text(
          R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"tuner": ["allreduce,0,1,tree,ll,0,2,-1"]}}})")
          .network.nccl.tuner[0]
          .channels,
      -1);
  const auto back = from_text(tp::to_json(spec).dump());
  ASSERT_EQ(back.network.nccl.tuner.size(), 3u);
  EXPECT_EQ(back.network.nccl.tuner[1].text, rows[1].text);
  EXPECT_FALSE(back.network.nccl.given());  // a table is no transport cost
  const std::pair<const char*, const char*> bad[] = {
      {"allreduce,0,1,tree,ll,-1,2", "8 to 10 comma-separated fields"},
      {"allreduce,0,1,tree,ll,-1,2,-1,-1,0,9", "got more"},
      {"alltoall,0,1,tree,ll,-1,2,-1", "field 1 (collective_type): expected one of allreduce"},
      {"allreduce,x,1,tree,ll,-1,2,-1", "field 2 (min_bytes)"},
      {"allreduce,9,1,tree,ll,-1,2,-1", "field 3 (max_bytes): expected at least min_bytes 9, got 1"},
      {"allreduce,0,1,Tree,ll,-1,2,-1", "field 4 (algorithm): expected one of tree, ring"},
      {"allreduce,0,1,tree,LL,-1,2,-1", "field 5 (protocol)"},
      {"allreduce,0,18446744073709551616,tree,ll,-1,2,-1", "from 0 to 18446744073709551615"},
      {"allreduce,0,1,tree,ll,-1,2,-1,", "field 9 (numPipeOps)"},
      {"# a comment", "got 1"},
      {"allreduce,0,1,tree,ll,-5,2,-1", "field 6 (channels): expected -1 (any) or an integer from 0 to 64, got '-5'"},
      {"allreduce,0,1,tree,ll,65,2,-1", "field 6 (channels)"},
      {"allreduce,0,1,tree,ll,-1,-2,-1", "field 7 (nNodes)"},
      {"allreduce,0,1,tree,ll,-1,2,1.5", "field 8 (nRanks)"},
      {"allreduce,0,1,tree,ll,-1,2,-1,-1,2", "field 10 (regBuff)"},
  };
  for (const auto& [row, message] : bad) {
    try {
      (void)from_text(std::string(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"tuner": [")") + row +
                      R"("]}}})");
      ADD_FAILURE() << row << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), "/network/nccl/tuner/0") << row;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << row << ": " << e.what();
    }
  }
}

TEST(NcclNet, TransportSetsTheHopLatencysDefault) {
  const auto tcpxo = from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "tcpxo"}}})");
  EXPECT_EQ(tcpxo.network.nccl.transport, tp::NcclTransport::tcpxo);
  EXPECT_DOUBLE_EQ(tcpxo.network.nccl.hop_latency_s, 36e-6);
  EXPECT_DOUBLE_EQ(tcpxo.network.nccl.proxy_step_s, 0);
  EXPECT_TRUE(tcpxo.network.nccl.given());
  const auto back = from_text(tp::to_json(tcpxo).dump());
  EXPECT_EQ(back.network.nccl.transport, tp::NcclTransport::tcpxo);
  EXPECT_DOUBLE_EQ(back.network.nccl.hop_latency_s, 36e-6);
  for (const char* name : {"ib", "roce"}) {
    const auto spec = from_text(
        std::string(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": ")") + name + "\"}}}");
    EXPECT_DOUBLE_EQ(spec.network.nccl.hop_latency_s, 4e-6) << name;
    EXPECT_EQ(tp::to_string(spec.network.nccl.transport), name);
  }
  const auto given = from_text(
      R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"hop_latency_us": 5, "transport": "socket"}}})");
  EXPECT_DOUBLE_EQ(given.network.nccl.hop_latency_s, 5e-6);
  // NCCL's own transports report no latency of their own: the tuner weighs the hop's.
  EXPECT_FALSE(given.network.nccl.reported_latency_s);
  EXPECT_FALSE(tcpxo.network.nccl.reported_latency_s);
  try {
    (void)from_text(R"({"preset": "dgx-h100", "nodes": 2, "network": {"nccl": {"transport": "tcp"}}})");
    FAIL() << "an unknown transport was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/network/nccl/transport") << e.what();
  }
}
