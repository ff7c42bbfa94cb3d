#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trainsim/fitting/models.hpp"
#include "trainsim_test/cli.hpp"
#include "trainsim_test/names.hpp"

using trainsim_test::run_trainsim;
using trainsim_test::test_data_dir;

namespace {

using trainsim_test::read_file;

std::string good(const std::string& name) { return test_data_dir() + "/good/fitting/" + name; }
std::string bad(const std::string& name) { return test_data_dir() + "/bad/fitting/" + name; }

}  // namespace

TEST(FitCli, HelpListsTheModels) {
  const auto r = run_trainsim({"fit", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("ssgd_ps_iteration"), std::string::npos);
  EXPECT_NE(r.out.find("--holdout"), std::string::npos);
  EXPECT_EQ(run_trainsim({"compare", "--help"}).exit_code, 0);
}

TEST(FitCli, AwsParameterServerHumanReport) {
  const auto r = run_trainsim({"fit", good("tf_aws_ps.csv"), "--y", "iteration_time_s", "--model",
                               "ssgd_ps_iteration_calibrated", "--holdout", "gpus>16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dominant term at 64 GPUs: compute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hold-out (gpus>16): 10 rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("baseline (linear regression"), std::string::npos) << r.out;
}

TEST(FitCli, JsonToStdoutIsTheOnlyOutputAndIsDeterministic) {
  const std::vector<std::string> args = {"fit", good("tf_aws_ps.csv"), "--y", "iteration_time_s", "--model",
                                         "ssgd_ps_iteration_calibrated", "--holdout", "gpus>16", "--seed", "7",
                                         "--bootstrap", "40", "--json", "-"};
  const auto a = run_trainsim(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto json = nlohmann::json::parse(a.out);  // throws (fails the test) if anything else is on stdout
  for (const char* key : {"constants", "r2", "mape", "terms", "holdout", "dominant_term"})
    EXPECT_TRUE(json.contains(key)) << key;
  EXPECT_GE(json["r2"].get<double>(), 0.95);
  EXPECT_LE(json["holdout"]["errors"]["max_ape"].get<double>(), 0.15);
  EXPECT_EQ(json["dominant_term"]["term"], "compute");
  const auto b = run_trainsim(args);
  EXPECT_EQ(a.out, b.out);  // same seed, byte-identical
}

TEST(FitCli, JsonToAFile) {
  const auto dir = trainsim_test::make_temp_dir("fit_json");
  const auto file = dir + "/fit.json";
  const auto r = run_trainsim({"fit", good("compare_measured.csv"), "--y", "iteration_time_s", "--expression",
                               "c0 + c1*log2(gpus)", "--bounds", "c0=0:2", "--bounds", "c1=0:1", "--json", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(read_file(file));
  EXPECT_EQ(json["constants"].size(), 2u);
  EXPECT_NE(r.out.find("R²"), std::string::npos);  // the human report still goes to stdout
}

// One case per kind of bad input: exit 2 and one message naming the file and the place.
TEST(FitCli, BadInputExitsTwoWithOneMessage) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<std::string> expected;
  };
  const std::string measured = good("compare_measured.csv");
  const std::vector<Case> cases = {
      {"missing column",
       {"fit", bad("missing_column.csv"), "--y", "iteration_time_s", "--model", "ssgd_ps_iteration"},
       {"missing_column.csv", "column 'flops_per_sample' used by the expression is missing"}},
      {"non-numeric cell",
       {"fit", bad("non_numeric.csv"), "--y", "iteration_time_s", "--model", "scaling"},
       {"non_numeric.csv: line 4", "expected a number, got 'n/a'"}},
      {"constant without bounds",
       {"fit", measured, "--y", "iteration_time_s", "--expression", "c0 + c1*gpus", "--bounds", "c0=0:1"},
       {"--bounds", "constant c1 has no bounds"}},
      {"expression does not parse",
       {"fit", measured, "--y", "iteration_time_s", "--expression", "c0 + (c1*gpus", "--bounds", "c0=0:1,c1=0:1"},
       {"--expression: character", "c0 + (c1*gpus"}},
      {"fewer points than constants",
       {"fit", bad("few_rows.csv"), "--y", "iteration_time_s", "--model", "scaling"},
       {"few_rows.csv", "3 rows to fit but the expression has 4 constants"}},
      {"zero y", {"fit", bad("zero_y.csv"), "--y", "iteration_time_s", "--model", "scaling"}, {"zero_y.csv: line 3"}},
      {"unknown y column", {"fit", measured, "--y", "time_s", "--model", "scaling"}, {"column 'time_s' used by --y"}},
      {"missing file", {"fit", bad("no_such.csv"), "--y", "t", "--model", "scaling"}, {"no_such.csv", "cannot open"}},
      {"both expression and model",
       {"fit", measured, "--y", "iteration_time_s", "--model", "scaling", "--expression", "c0"},
       {"excludes"}},
      {"compare without gpus",
       {"compare", "--measured", bad("no_gpus.csv"), "--simulated", good("compare_simulated.csv"), "--out",
        trainsim_test::make_temp_dir("cmp_bad")},
       {"no_gpus.csv", "column 'gpus' used by compare"}},
  };
  for (const auto& c : cases) {
    const auto r = run_trainsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    for (const auto& e : c.expected) EXPECT_NE(r.err.find(e), std::string::npos) << c.name << ": " << r.err;
    if (std::string(c.name) != "both expression and model") {  // CLI11 prints usage too
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
}

TEST(CompareCli, WritesDivergenceJsonAndSelfContainedHtml) {
  const auto dir = trainsim_test::make_temp_dir("compare");
  const auto r = run_trainsim({"compare", "--measured", good("compare_measured.csv"), "--simulated",
                               good("compare_simulated.csv"), "--out", dir, "--bootstrap", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("from 32 GPUs on; term responsible: linear"), std::string::npos) << r.out;
  const auto json = nlohmann::json::parse(read_file(dir + "/divergence.json"));
  EXPECT_EQ(json["divergence_gpus"], 32.0);
  EXPECT_EQ(json["responsible_term"]["name"], "linear");
  const std::string html = read_file(dir + "/report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
  // No temporary files left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2u);
}

// A sweep's results.csv carries every variable the built-in models use, so every model
// fits the output of every scenario in scenarios/ (fast DE settings: this checks that the fit
// runs, not its quality). One test per scenario file, found when the tests are built (a new
// scenario is covered without editing this list), so CTest runs them side by side.
class EveryModel : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryModel, FitsTheScenariosSweep) {
  const std::string scenario = trainsim_test::source_dir() + "/scenarios/" + GetParam() + ".json";
  const std::string dir = trainsim_test::make_temp_dir("every_model");
  const auto sweep = trainsim_test::run_trainsim({"sweep", scenario, "--out", dir, "--jobs", "2"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  for (const auto& model : trainsim::fitting::named_models()) {
    const std::string y = model.name.find("epoch") != std::string::npos ? "epoch_time_s"
                          : model.name == "gustafson"                    ? "samples_per_s"
                                                                         : "iteration_time_s";
    const auto fit = trainsim_test::run_trainsim({"fit", dir + "/results.csv", "--y", y, "--model", model.name, "--restarts", "1",
                                                  "--generations", "20", "--lambda", "0", "--json", "-"});
    EXPECT_EQ(fit.exit_code, 0) << GetParam() << ", model " << model.name << ": " << fit.err;
    if (fit.exit_code == 0) {
      EXPECT_TRUE(nlohmann::json::parse(fit.out).contains("constants")) << model.name;
    }
  }
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(trainsim_test::source_dir() + "/scenarios"))
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryModel, ::testing::ValuesIn(scenario_names()),
                         [](const auto& p) { return trainsim_test::test_name(p.param); });
