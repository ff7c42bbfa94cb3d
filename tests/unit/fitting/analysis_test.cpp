#include <cmath>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/analysis.hpp"
#include "trainsim_test/files.hpp"

using namespace trainsim;
using namespace trainsim::fitting;

namespace {

CsvTable good(const std::string& name) { return CsvTable::read(trainsim_test::test_data_dir() + "/good/fitting/" + name); }
CsvTable bad(const std::string& name) { return CsvTable::read(trainsim_test::test_data_dir() + "/bad/fitting/" + name); }

FitRequest aws(const std::string& model) {
  FitRequest r;
  r.y_column = "iteration_time_s";
  r.model = model;
  r.options.bootstrap_samples = 50;
  return r;
}

}  // namespace

// The acceptance figures (fitting/README.md) on the published AWS parameter-server measurements.
TEST(AwsParameterServer, CalibratedSsgdExpressionFitsAndNamesTheDominantTerm) {
  const auto report = run_fit(good("tf_aws_ps.csv"), aws("ssgd_ps_iteration_calibrated"));
  ASSERT_TRUE(report.fit.summary.usable());
  EXPECT_GE(report.fit.r2, 0.95);
  ASSERT_TRUE(report.dominant.has_value());
  EXPECT_EQ(report.dominant->gpus, 64.0);
  EXPECT_EQ(report.terms[report.dominant->term].name, "compute");
  const std::string text = fit_report_text(report);
  EXPECT_NE(text.find("dominant term at 64 GPUs: compute"), std::string::npos) << text;
}

TEST(AwsParameterServer, FittedOnAtMost16GpusPredicts32And64Within15Percent) {
  FitRequest request = aws("ssgd_ps_iteration_calibrated");
  request.holdout = "gpus>16";
  const auto report = run_fit(good("tf_aws_ps.csv"), request);
  ASSERT_TRUE(report.holdout.has_value());
  EXPECT_EQ(report.holdout->rows, 10u);
  EXPECT_LE(report.holdout->errors.max_ape, 0.15);
  for (const auto& p : report.points) {
    if (!p.held_out) continue;
    EXPECT_GT(*p.gpus, 16);
    EXPECT_LE(std::abs(p.predicted / p.y - 1), 0.15) << "line " << p.line;
  }
  const Json json = fit_report_json(report);
  EXPECT_TRUE(json["holdout"]["extrapolation_mape"].is_number());
  EXPECT_EQ(json["rows"]["held_out"], 10);
}

TEST(AwsParameterServer, FlopBasedExpressionIsReportedToo) {
  // Compute from FLOPs alone cannot express Inception v3's lower per-FLOP efficiency on the K80
  // (fitting/README.md): the fit is usable but clearly worse than the calibrated one.
  const auto report = run_fit(good("tf_aws_ps.csv"), aws("ssgd_ps_iteration"));
  ASSERT_TRUE(report.fit.summary.usable());
  EXPECT_GT(report.fit.r2, 0.8);
  EXPECT_LT(report.fit.mape, 0.12);
}

TEST(FitReport, TermSharesSumToOneAndJsonHasTheSpecKeys) {
  const auto report = run_fit(good("tf_aws_ps.csv"), aws("ssgd_ring_iteration_calibrated"));
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    double sum = 0;
    for (std::size_t t = 0; t < report.terms.size(); ++t) sum += report.share(i, t);
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
  const Json json = fit_report_json(report);
  for (const char* key : {"constants", "r2", "mape", "rmse", "terms", "points", "confidence_intervals", "summary", "baseline"})
    EXPECT_TRUE(json.contains(key)) << key;
  EXPECT_EQ(json["constants"].size(), 6u);
  EXPECT_EQ(json["terms"].size(), 5u);
  EXPECT_EQ(json["terms"][1]["name"], "compute");
  EXPECT_EQ(json["terms"][0]["share"].size(), report.points.size());
  EXPECT_EQ(json["summary"]["termination"], "converged");
  EXPECT_EQ(fit_report_json(run_fit(good("tf_aws_ps.csv"), aws("ssgd_ring_iteration_calibrated"))).dump(), json.dump());
}

TEST(FitReport, UserExpressionWithBounds) {
  FitRequest r;
  r.y_column = "iteration_time_s";
  r.expression = "c0 + c1*log2(gpus)";
  r.bounds = {"c0=0:2", "c1=0:1"};
  r.options.bootstrap_samples = 0;
  r.baseline = false;
  const auto report = run_fit(good("compare_measured.csv"), r);
  EXPECT_FALSE(report.model.has_value());
  EXPECT_EQ(report.terms.size(), 2u);
  EXPECT_EQ(report.terms[1].name, "c1*log2(gpus)");
  EXPECT_FALSE(report.baseline.has_value());
  EXPECT_GT(report.fit.r2, 0.8);
}

// One case per kind of bad input: the message names the file and the place.
TEST(FitBadInput, EachKindIsAnInputErrorWithItsLocation) {
  struct Case {
    std::string name;
    CsvTable table;
    FitRequest request;
    std::string source;
    std::string location;
    std::string detail;
  };
  auto request = [](std::optional<std::string> model, std::optional<std::string> expression,
                    std::vector<std::string> bounds = {}, std::optional<std::string> holdout = std::nullopt) {
    FitRequest r;
    r.model = std::move(model);
    r.expression = std::move(expression);
    r.bounds = std::move(bounds);
    r.holdout = std::move(holdout);
    r.options.bootstrap_samples = 0;
    return r;
  };
  const std::string bad_dir = trainsim_test::test_data_dir() + "/bad/fitting/";
  const std::string good_file = trainsim_test::test_data_dir() + "/good/fitting/compare_measured.csv";
  const std::vector<Case> cases = {
      {"missing column", bad("missing_column.csv"), request("ssgd_ps_iteration", {}), bad_dir + "missing_column.csv",
       "header", "column 'flops_per_sample' used by the expression is missing"},
      {"non-numeric cell", bad("non_numeric.csv"), request("scaling", {}), bad_dir + "non_numeric.csv", "line 4",
       "column 'iteration_time_s': expected a number, got 'n/a'"},
      {"constant without bounds", good("compare_measured.csv"), request({}, "c0 + c1*gpus", {"c0=0:1"}), "--bounds", "",
       "constant c1 has no bounds"},
      {"expression does not parse", good("compare_measured.csv"), request({}, "c0 + (c1*gpus", {"c0=0:1,c1=0:1"}),
       "--expression", "character", "c0 + (c1*gpus"},
      {"fewer points than constants", bad("few_rows.csv"), request("scaling", {}), bad_dir + "few_rows.csv", "",
       "3 rows to fit but the expression has 4 constants"},
      {"zero y", bad("zero_y.csv"), request("scaling", {}), bad_dir + "zero_y.csv", "line 3", "must be non-zero"},
      {"hold-out keeps nothing", good("compare_measured.csv"), request("scaling", {}, {}, "gpus>0"), "--holdout", "",
       "holds out every row"},
      {"hold-out column missing", good("compare_measured.csv"), request("scaling", {}, {}, "nodes>2"), good_file,
       "header", "column 'nodes' used by --holdout is missing"},
      {"unknown model", good("compare_measured.csv"), request("scalling", {}), "--model", "", "did you mean 'scaling'"},
      {"expression uses y", good("compare_measured.csv"), request({}, "c0*iteration_time_s", {"c0=0:1"}),
       "--expression", "", "the fitted column"},
      {"feature is y", good("compare_measured.csv"), [&] {
         auto r = request("scaling", {});
         r.features = {"gpus", "iteration_time_s"};
         return r;
       }(),
       "--features", "", "cannot be a feature"},
      {"both expression and model", good("compare_measured.csv"), request("scaling", "c0"), "command line", "",
       "not both"},
  };
  for (const auto& c : cases) {
    try {
      run_fit(c.table, c.request);
      ADD_FAILURE() << c.name << ": no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), c.source) << c.name << ": " << e.what();
      EXPECT_NE(e.location().find(c.location), std::string::npos) << c.name << ": " << e.what();
      EXPECT_NE(e.detail().find(c.detail), std::string::npos) << c.name << ": " << e.what();
    }
  }
}
