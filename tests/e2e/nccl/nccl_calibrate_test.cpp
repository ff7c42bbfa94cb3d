// Published multi-node nccl-tests curves (tests/data/validation/nccl_allreduce_multinode_curves.csv,
// each row naming its source) against `trainsim collective --algorithm auto`, before and after
// `trainsim calibrate nccl-tests` fits the platform's NCCL transport to the same curve; and the
// same systems at 2, 4 and 8 nodes (nccl_allreduce_multinode_scaling.csv), calibrated on the
// 2-node curve and predicting the others. Busbw errors from 64 KiB up, per size band (64 KiB–1 MiB,
// 1–64 MiB, ≥ 64 MiB), printed and held to the figures simulator/README.md "NCCL across nodes at
// every size" reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim_test/cli.hpp"
#include "trainsim_test/files.hpp"

using trainsim_test::run_trainsim;

namespace {

// What `auto` reaches on each published curve (simulator/README.md "NCCL across nodes at every
// size"): mean busbw error from 64 KiB with the platform as written and after calibrating on the
// same curve, each size's time the faster of its two columns. Each is held within kSlack of its
// figure, either way (the simulations are deterministic: a change of the model shows); a curve
// added to the CSV needs its row here. The accuracy goals (simulator/README.md): 15 % as written
// and 30 % in every band on every curve here (A3 Mega with the tree its tuner plugin ran, a row of
// its platform's tuner table) and on every node count of the scaling sets; 5 % calibrated on its
// own input on Nebius (4.9 %), Azure (5.0 %) and gj-aion's 2 nodes (4.4 %), the 2-node curve the
// scaling test predicts 4 nodes from, alone of these; calibrated, every band of every curve is
// within kCalibratedBand (A3 Mega's 1–64 MiB, 28 %, the worst).
struct Expected {
  const char* dataset;
  double plain, calibrated;
};
constexpr Expected kExpected[] = {
    {"aws_p4de_2x8", 0.126, 0.077},    {"aws_p5_2x8", 0.143, 0.058},      {"azure_nd_a100_v4_2x8", 0.097, 0.050},
    {"crusoe_a100_2x8", 0.132, 0.112}, {"gcp_a3_mega_2x8", 0.145, 0.130}, {"gcp_a4_b200_2x8", 0.082, 0.069},
    {"lambda_b200_2x8", 0.112, 0.105}, {"nebius_h100_2x8", 0.055, 0.049},
};
constexpr double kSlack = 0.02;
constexpr double kCalibratedBand = 0.3;
constexpr double kGoalMean = 0.15, kGoalBand = 0.3, kGoalOwnInput = 0.05;

const Expected* expected(const std::string& dataset) {
  for (const Expected& e : kExpected)
    if (dataset == e.dataset) return &e;
  return nullptr;
}

std::string data(const std::string& rel) {
  return trainsim_test::test_data_dir() + "/" + rel;
}

struct Point {
  double size = 0, time_us = 0, busbw = 0;
  double in_place_us = 0;  ///< 0 where the file has no in-place column
  /// The size's time as `calibrate` reads it: the faster of the two columns.
  double best_us() const { return in_place_us > 0 ? std::min(time_us, in_place_us) : time_us; }
};
struct Curve {
  std::string platform;
  int ranks = 0, nodes = 0;
  std::vector<Point> points;
};

std::map<std::string, Curve> curves(const std::string& file = "validation/nccl_allreduce_multinode_curves.csv") {
  const auto csv = trainsim::CsvTable::read(data(file));
  const bool in_place = csv.find_column("in_place_time_us").has_value();
  std::map<std::string, Curve> out;
  for (std::size_t r = 0; r < csv.row_count(); ++r) {
    Curve& c = out[csv.cell(r, csv.column("dataset"))];
    c.platform = data(csv.cell(r, csv.column("platform")));
    c.ranks = static_cast<int>(csv.number(r, csv.column("ranks")));
    c.nodes = static_cast<int>(csv.number(r, csv.column("nodes")));
    c.points.push_back({csv.number(r, csv.column("size_bytes")), csv.number(r, csv.column("time_us")),
                        csv.number(r, csv.column("busbw_GBps")),
                        in_place ? csv.number(r, csv.column("in_place_time_us")) : 0.0});
  }
  return out;
}

/// The curve as all_reduce_perf prints it (its own formatting of the same numbers).
std::string as_nccl_tests(const Curve& c) {
  std::string text = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n";
  const int per_node = c.ranks / c.nodes;
  for (int r = 0; r < c.ranks; ++r)
    text += "#  Rank " + std::to_string(r) + " Group  0 Pid " + std::to_string(100 + r) + " on node" +
            std::to_string(r / per_node) + " device " + std::to_string(r % per_node) +
            " [0x04] NVIDIA H100 80GB HBM3\n";
  char line[256];
  const double factor = 2.0 * (c.ranks - 1) / c.ranks;
  for (const Point& p : c.points) {
    const double in_us = p.in_place_us > 0 ? p.in_place_us : p.time_us;
    std::snprintf(line, sizeof line, "%14.0f %14.0f float sum -1 %10.2f 0.00 %8.2f 0 %10.2f 0.00 %8.2f 0\n", p.size,
                  p.size / 4, p.time_us, p.busbw, in_us, p.size / in_us / 1e3 * factor);
    text += line;
  }
  return text;
}

struct Errors {
  double mean = 0;
  std::map<std::string, double> band_mean;
};

/// busbw errors of `collective --algorithm auto` on `platform` against the curve, 64 KiB and up.
Errors compare(const Curve& c, const std::string& platform, const std::string& label) {
  const double first = std::max(65536.0, c.points.front().size);
  const auto r =
      run_trainsim({"collective", "--platform", platform, "--nodes", std::to_string(c.nodes), "--algorithm", "auto",
                    "--bytes", std::to_string(static_cast<long long>(first)) + ":8G:x2", "--json", "-"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  const auto results = trainsim::Json::parse(r.out)["results"];
  std::map<std::string, std::pair<double, int>> bands;
  double sum = 0;
  int n = 0;
  for (const auto& row : results) {
    const double size = row["size_bytes"].get<double>();
    for (const Point& p : c.points) {
      if (p.size != size) continue;
      // busbw from the measured time (the printed busbw has two decimals), the faster column's.
      const double measured = size / (p.best_us() * 1e-6) / 1e9 * 2.0 * (c.ranks - 1) / c.ranks;
      const double err = std::fabs(row["busbw_GBps"].get<double>() - measured) / measured;
      const std::string band = size < (1 << 20) ? "64K-1M" : size < (64 << 20) ? "1M-64M" : ">=64M";
      std::printf("%-12s %12.0f measured %7.2f GB/s simulated %7.2f GB/s %-10s %-7s error %6.1f%%\n", label.c_str(),
                  size, measured, row["busbw_GBps"].get<double>(), row["algorithm"].get<std::string>().c_str(),
                  row["protocol"].get<std::string>().c_str(), 100 * err);
      bands[band].first += err;
      bands[band].second += 1;
      sum += err;
      ++n;
    }
  }
  Errors e;
  e.mean = n > 0 ? sum / n : 0;
  for (const auto& [band, s] : bands) e.band_mean[band] = s.first / s.second;
  std::printf("%-12s mean %.1f%%", label.c_str(), 100 * e.mean);
  for (const auto& [band, m] : e.band_mean) std::printf("  %s %.1f%%", band.c_str(), 100 * m);
  std::printf("\n");
  return e;
}

// One test per curve, so that ctest runs the curves side by side (each simulates its curve about
// 50 times: the comparison before, the calibration's search, the comparison after).
class NcclCurves : public ::testing::TestWithParam<const char*> {};

TEST_P(NcclCurves, CalibratingOnTheCurveReproducesIt) {
  const std::string name = GetParam();
  const auto all = curves();
  const auto it = all.find(name);
  ASSERT_NE(it, all.end()) << name << " is not in the curves file";
  const Curve& c = it->second;
  const std::string dir = trainsim_test::make_temp_dir("nccl_calibrate");
  const std::string input = dir + "/" + name + ".txt", out = dir + "/calibrated.json";
  std::ofstream(input) << as_nccl_tests(c);
  const Errors before = compare(c, c.platform, name);
  const auto cal = run_trainsim({"calibrate", "nccl-tests", input, "--platform", c.platform, "--out", out});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  std::printf("%s", cal.out.c_str());
  const Errors after = compare(c, out, name + "+cal");
  // Never worse (equal where the defaults are already the best the search finds).
  EXPECT_LE(after.mean, before.mean) << name;
  const Expected* e = expected(name);
  ASSERT_NE(e, nullptr) << name;
  EXPECT_NEAR(before.mean, e->plain, kSlack) << name;
  EXPECT_NEAR(after.mean, e->calibrated, kSlack) << name;
  // The goal as written: 15 % over the curve, 30 % in every band.
  EXPECT_LE(before.mean, kGoalMean) << name;
  for (const auto& [band, m] : before.band_mean) EXPECT_LE(m, kGoalBand) << name << " " << band;
  for (const auto& [band, m] : after.band_mean) EXPECT_LE(m, kCalibratedBand) << name << " " << band;
  // The calibrated platform says what it was fitted to.
  const auto info = run_trainsim({"platform", "info", out, "--json", "-"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("calibrated_from"), std::string::npos) << info.out;
}

INSTANTIATE_TEST_SUITE_P(Published, NcclCurves,
                         ::testing::Values(kExpected[0].dataset, kExpected[1].dataset, kExpected[2].dataset,
                                           kExpected[3].dataset, kExpected[4].dataset, kExpected[5].dataset,
                                           kExpected[6].dataset, kExpected[7].dataset),
                         [](const ::testing::TestParamInfo<const char*>& param) { return std::string(param.param); });

TEST(NcclCurvesFile, EveryCurveHasItsExpectedFigures) {
  static_assert(std::size(kExpected) == 8, "a row added to kExpected needs its value in INSTANTIATE_TEST_SUITE_P");
  for (const auto& [name, c] : curves()) EXPECT_NE(expected(name), nullptr) << name << ": add its figures to kExpected";
}

TEST(NcclCurvesFile, CalibrationIsDeterministic) {
  // Every other size from 64 KiB (9 sizes) of the Nebius curve: the same code path for less
  // simulation work (Azure's A100 curve, the first by name, takes 5 times as long to calibrate).
  Curve c = curves().at("nebius_h100_2x8");
  std::vector<Point> few;
  for (std::size_t i = 0; i < c.points.size(); ++i)
    if (c.points[i].size >= 65536 && i % 2 == 0) few.push_back(c.points[i]);
  c.points = few;
  const std::string dir = trainsim_test::make_temp_dir("nccl_calibrate_det");
  std::ofstream(dir + "/run.txt") << as_nccl_tests(c);
  const std::vector<std::string> a{"calibrate", "nccl-tests", dir + "/run.txt", "--platform",
                                   c.platform,  "--out",      dir + "/a.json"};
  std::vector<std::string> b = a;
  b.back() = dir + "/b.json";
  const auto ra = run_trainsim(a), rb = run_trainsim(b);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  const std::string ja = trainsim_test::read_file(dir + "/a.json"), jb = trainsim_test::read_file(dir + "/b.json");
  EXPECT_EQ(ja, jb);
}

// The same system at several node counts (nccl_allreduce_multinode_scaling.csv): calibrated on
// its 2-node curve, the platform predicts the 4- and 8-node curves. Mean busbw error from 64 KiB
// (1 MiB where the run starts there) as written and calibrated on the 2-node curve, each held
// within kSlack either way. The goal, 15 % at 4 nodes, is reached on the XE9680 pair (its 2-node
// run on bare metal, its 4-node run on VMs) and on gj-aion's cluster (7.8 %), whose 4 and 8 nodes
// level off at 325 GB/s where its 2 nodes' NVLS_TREE reaches 467 (simulator/README.md): the 2
// nodes leave its NICs' efficiency open from 0.815 to 1, and the calibration writes the middle.
// `calibrated` is the platform calibrated on the system's 2-node curve.
constexpr Expected kScaling[] = {
    {"gjaion_h100_ib_2x8", 0.054, 0.044}, {"gjaion_h100_ib_4x8", 0.114, 0.078}, {"gjaion_h100_ib_8x8", 0.146, 0.110},
    {"xe9680_h100_ib_2x8", 0.104, 0.069}, {"xe9680_h100_ib_4x8", 0.104, 0.096},
};

class NcclScaling : public ::testing::TestWithParam<const char*> {};

TEST_P(NcclScaling, CalibratedOnTwoNodesPredictsMore) {
  const std::string system = GetParam();
  const auto all = curves("validation/nccl_allreduce_multinode_scaling.csv");
  const auto two = all.find(system + "_2x8");
  ASSERT_NE(two, all.end()) << system;
  const std::string dir = trainsim_test::make_temp_dir("nccl_scaling");
  const std::string input = dir + "/two_nodes.txt", out = dir + "/calibrated.json";
  std::ofstream(input) << as_nccl_tests(two->second);
  const auto cal = run_trainsim({"calibrate", "nccl-tests", input, "--platform", two->second.platform, "--out", out,
                                 "--json", dir + "/fit.json"});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  std::printf("%s", cal.out.c_str());
  // The efficiency is fitted with the range that fits the 2 nodes alike, and its middle is written
  // (gj-aion: their NVLS_TREE leaves every NIC far from its rate, and a fifth of it open).
  const auto fit = trainsim::Json::parse(trainsim_test::read_file(dir + "/fit.json"));
  const auto& efficiency = fit["constants"][0];
  ASSERT_EQ(efficiency["name"].get<std::string>(), "network efficiency");
  // Fitted under the platform's ring efficiency, which the report names and the written platform
  // keeps (both systems name InfiniBand: 0.94).
  EXPECT_DOUBLE_EQ(fit["ring_efficiency"].get<double>(), 0.94);
  EXPECT_NE(cal.out.find("ring efficiency            0.94  the platform's"), std::string::npos) << cal.out;
  EXPECT_DOUBLE_EQ(
      trainsim::Json::parse(trainsim_test::read_file(out))["network"]["nccl"]["ring_efficiency"].get<double>(), 0.94);
  ASSERT_TRUE(efficiency.contains("range")) << "the efficiency is fitted on both systems";
  const double lo = efficiency["range"][0].get<double>(), hi = efficiency["range"][1].get<double>();
  EXPECT_LE(hi, 1.0);
  if (system == "gjaion_h100_ib") {
    // 0.815 to 1 (five bisections: to about 0.02); the middle is written.
    EXPECT_EQ(hi, 1.0);
    EXPECT_NEAR(lo, 0.815, 0.02) << "2 nodes leave the NICs' efficiency open";
    EXPECT_DOUBLE_EQ(efficiency["value"].get<double>(), (lo + hi) / 2);
    EXPECT_NE(cal.out.find("fitted, the middle of the range; 0.815 to 1 fit these sizes alike"), std::string::npos)
        << cal.out;
    // The ends of the range predict the 4 nodes within 8.3 % (the low end) and 13.6 % (1): the
    // band a user sees; the middle written, 7.8 % (below).
    const auto at = [&](double e, const std::string& label) {
      auto p = trainsim::Json::parse(trainsim_test::read_file(out));
      p["network"]["bandwidth_Gbps"] =
          p["network"]["bandwidth_Gbps"].get<double>() * e / efficiency["value"].get<double>();
      std::ofstream(dir + "/" + label + ".json") << p.dump(2);
      return compare(all.at("gjaion_h100_ib_4x8"), dir + "/" + label + ".json", "gjaion_h100_ib_4x8+" + label).mean;
    };
    EXPECT_NEAR(at(lo, "low"), 0.083, kSlack);
    EXPECT_NEAR(at(hi, "high"), 0.136, kSlack);
  }
  int checked = 0;
  for (const Expected& e : kScaling) {
    const auto it = all.find(e.dataset);
    if (std::string(e.dataset).rfind(system + "_", 0) != 0) continue;
    ASSERT_NE(it, all.end()) << e.dataset << " is not in the scaling file";
    const Errors plain = compare(it->second, it->second.platform, e.dataset);
    const Errors calibrated = compare(it->second, out, std::string(e.dataset) + "+cal");
    EXPECT_NEAR(plain.mean, e.plain, kSlack) << e.dataset;
    EXPECT_NEAR(calibrated.mean, e.calibrated, kSlack) << e.dataset;
    // The goal as written holds on every node count too: 15 % over the curve, 30 % in every band.
    EXPECT_LE(plain.mean, kGoalMean) << e.dataset;
    for (const auto& [band, m] : plain.band_mean) EXPECT_LE(m, kGoalBand) << e.dataset << " " << band;
    if (it->second.nodes == 4) {
      EXPECT_LE(calibrated.mean, kGoalMean) << e.dataset << ": the goal from 2 nodes";
    }
    // The goal on its own input, met by gj-aion's 2 nodes; XE9680's read 6.9 % (their 1–4 MiB, the
    // tree under LL128, 27–32 % slow).
    if (it->second.nodes == 2 && system == "gjaion_h100_ib") {
      EXPECT_LE(calibrated.mean, kGoalOwnInput) << e.dataset << ": the goal on its own input";
    }
    ++checked;
  }
  EXPECT_GE(checked, 2) << system << ": a 2-node curve and at least one more";
}

INSTANTIATE_TEST_SUITE_P(Published, NcclScaling, ::testing::Values("gjaion_h100_ib", "xe9680_h100_ib"),
                         [](const ::testing::TestParamInfo<const char*>& param) { return std::string(param.param); });

// What the 2-node curve leaves open (gj-aion's NICs reach four fifths of their rate from 4 nodes,
// where its 2 nodes' NVLS_TREE keeps them far from it: 0.815 to 1 fit its 2 nodes alike), 2 and 4
// nodes together fit: calibrated on both files, the efficiency's range is a few hundredths wide,
// and the 8-node curve is predicted within 10.3 % (14.6 % as written, 11.0 % from the middle of
// the 2 nodes' range; 11.8 % from every other size of each, which this test fits in half the time).
TEST(NcclScaling, CalibratedOnTwoAndFourNodesPredictsEight) {
  const auto all = curves("validation/nccl_allreduce_multinode_scaling.csv");
  const std::string dir = trainsim_test::make_temp_dir("nccl_scaling_24");
  std::vector<std::string> args{"calibrate", "nccl-tests"};
  // Every other size of each (7 of 14, 1 MiB to 4 GiB): the same fit for half the simulations.
  for (const char* name : {"gjaion_h100_ib_2x8", "gjaion_h100_ib_4x8"}) {
    Curve c = all.at(name);
    std::vector<Point> half;
    for (std::size_t i = 0; i < c.points.size(); i += 2) half.push_back(c.points[i]);
    c.points = half;
    const std::string file = dir + "/" + name + ".txt";
    std::ofstream(file) << as_nccl_tests(c);
    args.push_back(file);
  }
  const Curve& eight = all.at("gjaion_h100_ib_8x8");
  const std::string out = dir + "/calibrated.json";
  args.insert(args.end(), {"--platform", eight.platform, "--out", out, "--json", dir + "/fit.json"});
  const auto cal = run_trainsim(args);
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  std::printf("%s", cal.out.c_str());
  const auto efficiency = trainsim::Json::parse(trainsim_test::read_file(dir + "/fit.json"))["constants"][0];
  ASSERT_TRUE(efficiency.contains("range")) << efficiency.dump();
  EXPECT_LT(efficiency["range"][1].get<double>() - efficiency["range"][0].get<double>(), 0.1)
      << "the 4 nodes fit what the 2 leave open";
  EXPECT_NEAR(compare(eight, out, "gjaion_h100_ib_8x8+cal24").mean, 0.118, kSlack);
}

TEST(NcclScalingFile, EveryCurveHasItsExpectedFigures) {
  for (const auto& [name, c] : curves("validation/nccl_allreduce_multinode_scaling.csv"))
    EXPECT_TRUE(
        std::any_of(std::begin(kScaling), std::end(kScaling), [&](const Expected& e) { return name == e.dataset; }))
        << name << ": add its figures to kScaling";
}

}  // namespace
