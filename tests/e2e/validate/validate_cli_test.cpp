// `trainsim validate` end to end on the real binary: what it writes, what it skips and says so, bad
// input (exit 2 naming the file and the line or pointer), determinism.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "browser_check.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim_test/cli.hpp"

using trainsim_test::run_trainsim;

namespace {

std::string good(const std::string& name) { return trainsim_test::test_data_dir() + "/good/validate/" + name; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the published CSVs end lines with CRLF
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST(ValidateCli, HelpNamesTheOutputs) {
  const auto r = run_trainsim({"validate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--systems"), std::string::npos);
  EXPECT_NE(r.out.find("simulated.csv"), std::string::npos);
}

// PyTorch DDP's ResNet-50 and ResNet-101 groups are simulated; ResNeXt-50 is not in the zoo and the
// TensorFlow VGG-16 rows come without their one-GPU row: both are reported and skipped.
TEST(ValidateCli, WritesTheOutputsAndSkipsWhatItCannotCalibrate) {
  const auto dir = trainsim_test::make_temp_dir("validate");
  const auto r = run_trainsim({"validate", good("measured.csv"), good("no_one_gpu.csv"), "--systems", good("systems.json"),
                               "--out", dir, "--jobs", "2", "--bootstrap", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| PyTorch DDP, DGX-1 V100, resnet50, batch 32 | 16 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped PyTorch DDP, DGX-1 V100, resnext50_32x4d, batch 32: model 'resnext50_32x4d' is not in the zoo"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped TensorFlow replicated NCCL, DGX-1 P100, vgg16, batch 64: no one-GPU row to calibrate on"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 groups validated, 2 skipped"), std::string::npos) << r.out;

  // simulated.csv: the measured columns first, one row per row of the simulated groups (one-GPU rows too).
  const auto measured = lines(slurp(good("measured.csv")));
  const auto simulated = lines(slurp(dir + "/simulated.csv"));
  ASSERT_EQ(simulated.size(), 1u + 10u);
  EXPECT_EQ(simulated[0].rfind(measured[0] + ",", 0), 0u) << simulated[0];
  for (const char* column : {"iteration_time_s", "model_bytes", "intra_node_bandwidth_GBps", "network_latency_us",
                             "compute_s", "exposed_communication_s", "single_gpu_time_s"})
    EXPECT_NE(simulated[0].find(column), std::string::npos) << column;

  EXPECT_EQ(lines(slurp(dir + "/errors.csv")).size(), 1u + 8u);  // multi-GPU points only
  const std::string mape = slurp(dir + "/mape.csv");
  EXPECT_NE(mape.find("dataset,pytorch_ddp_benchmark,,8,"), std::string::npos) << mape;
  EXPECT_NE(mape.find("\nall,,,8,"), std::string::npos) << mape;
  const std::string skipped = slurp(dir + "/skipped.csv");
  EXPECT_EQ(lines(skipped).size(), 1u + 2u) << skipped;

  // compare ran on the pair: its files, and its sections in the report.
  for (const char* file : {"measured.csv", "simulated.csv", "divergence.json", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/compare/pytorch_ddp_benchmark-allreduce/" + file)) << file;
  const std::string html = slurp(dir + "/report.html");
  for (const char* part : {"Speed-up over one GPU: pytorch_ddp_benchmark", "Constants", "Skipped groups",
                           "no one-GPU row to calibrate on", "MAPE Paleo"})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ValidateCli, SameInputsGiveByteIdenticalOutputs) {
  std::vector<std::string> dirs;
  for (int run = 0; run < 2; ++run) {
    dirs.push_back(trainsim_test::make_temp_dir("validate-det"));
    const auto r = run_trainsim({"validate", good("measured.csv"), "--systems", good("systems.json"), "--out", dirs.back(),
                                 "--jobs", "2", "--bootstrap", "20"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  for (const char* file : {"simulated.csv", "errors.csv", "mape.csv", "skipped.csv", "report.html",
                           "compare/pytorch_ddp_benchmark-allreduce/divergence.json"})
    EXPECT_EQ(slurp(dirs[0] + "/" + file), slurp(dirs[1] + "/" + file)) << file;
}

// The README's accuracy table, through the command the README shows: the shipped systems on the
// published measurements. Thresholds, not pinned numbers (the strategy models keep improving); the
// table itself is regenerated with `cmake --build build --target validation_report`.
TEST(Validation, ShippedSystemsOnThePublishedMeasurementsWithinThresholds) {
  const auto dir = trainsim_test::make_temp_dir("validation");
  const std::string data = trainsim_test::test_data_dir() + "/validation/";
  const auto r = run_trainsim({"validate", data + "nccl_allreduce.csv", data + "nvidia_dle_resnet50.csv",
                               data + "pytorch_ddp_2019.csv", data + "tf_benchmarks_2017.csv", "--systems",
                               trainsim_test::source_dir() + "/scenarios/validation/systems.json", "--out", dir, "--jobs",
                               "2", "--bootstrap", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // every simulation succeeded
  std::cout << slurp(dir + "/accuracy.md");

  // Every dataset of the published measurements is validated (nccl-tests timings excepted: `collective`).
  std::map<std::string, std::pair<double, double>> mape;  // dataset → (trainsim, Paleo)
  double overall = 0, overall_paleo = 0;
  const auto table = trainsim::CsvTable::read(dir + "/mape.csv");
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const std::string level = table.cell(row, table.column("level"));
    const double m = table.number(row, table.column("mape_percent"));
    const double p = table.number(row, table.column("paleo_mape_percent"));
    if (level == "dataset") mape[table.cell(row, table.column("dataset"))] = {m, p};
    if (level == "all") overall = m, overall_paleo = p;
  }
  for (const char* dataset : {"pytorch_ddp_benchmark", "nvidia_dle_resnet50_v1.5", "tf_benchmarks_2017_dgx1",
                              "tf_benchmarks_2017_gce_k80", "tf_benchmarks_2017_p2_8xlarge",
                              "tf_benchmarks_2017_aws_distributed"}) {
    ASSERT_TRUE(mape.count(dataset)) << dataset;
    EXPECT_LE(mape[dataset].first, 20.0) << dataset;
  }
  EXPECT_LE(mape["pytorch_ddp_benchmark"].first, 10.0);
  EXPECT_LE(overall, 12.0);
  EXPECT_LT(overall, overall_paleo) << "the simulation should beat Paleo's scaling rules over all points";

  // The groups of the first validation (PyTorch DDP and TensorFlow's replicated NCCL on DGX-1) stay ≤ 10 %.
  const auto errors = trainsim::CsvTable::read(dir + "/errors.csv");
  double sum = 0;
  std::size_t points = 0;
  for (std::size_t row = 0; row < errors.row_count(); ++row) {
    const std::string group = errors.cell(row, errors.column("group"));
    if (group.rfind("PyTorch DDP, DGX-1 V100,", 0) == 0 || group.rfind("TensorFlow replicated NCCL, DGX-1 P100,", 0) == 0)
      sum += errors.number(row, errors.column("error_percent")), ++points;
  }
  EXPECT_EQ(points, 17u);
  EXPECT_LE(sum / points, 10.0);

  // The whole report (six datasets, eight comparisons) holds its layout in a browser.
  const std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const auto check = trainsim_test::check_report_in_browser(browser, dir + "/report.html", dir);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_GE(trainsim_test::count_of(check.counts, "verdicts"), 14) << check.counts;  // list + sections
  EXPECT_EQ(check.problems, "") << "layout problems in " << dir << "/report.html";
}
