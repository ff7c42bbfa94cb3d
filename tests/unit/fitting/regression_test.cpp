#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/regression.hpp"

using namespace trainsim;
using namespace trainsim::fitting;

TEST(Regression, ForwardSelectionFindsTheGeneratingFeatures) {
  // y = 2 + 3·x + 5·x/z exactly: the selection must pick x and x/z and reproduce y.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    const double x = 1 + i % 7, z = 1 + (i * 3) % 5, u = 2 + (i * 5) % 11;  // u is a distractor
    rows.push_back({u, x, z});
    y.push_back(2 + 3 * x + 5 * x / z);
  }
  const auto data = Dataset::from_values("d", {"u", "x", "z"}, "y", rows, y);
  const auto r = fit_regression_baseline(data, {"u", "x", "z"}, RegressionOptions{});
  ASSERT_TRUE(r.fitted) << r.status;
  std::vector<std::string> names;
  for (const auto& f : r.features) names.push_back(f.name());
  EXPECT_NE(std::find(names.begin(), names.end(), "x"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "x/z"), names.end());
  EXPECT_GT(r.r2, 0.999999);
  EXPECT_LT(r.mape, 1e-6);
  for (std::size_t i = 0; i < data.size(); ++i) EXPECT_NEAR(r.predict(data, i), y[i], 1e-6 * y[i]);
}

TEST(Regression, FeatureNamesAndValues) {
  const auto data = Dataset::from_values("d", {"a", "b"}, "y", {{4, 2}}, {1});
  using K = RegressionFeature::Kind;
  const std::pair<RegressionFeature, double> cases[] = {
      {{K::identity, "a", ""}, 4}, {{K::inverse, "a", ""}, 0.25}, {{K::log2, "a", ""}, 2},
      {{K::product, "a", "b"}, 8}, {{K::ratio, "a", "b"}, 2}};
  const char* names[] = {"a", "1/a", "log2(a)", "a*b", "a/b"};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(cases[i].first.name(), names[i]);
    EXPECT_DOUBLE_EQ(cases[i].first.value(data, 0), cases[i].second);
  }
}

TEST(Regression, TooFewRowsIsAResultNotAnError) {
  const auto data = Dataset::from_values("d", {"a"}, "y", {{1}, {2}, {3}}, {1, 2, 3});
  const auto r = fit_regression_baseline(data, {"a"}, RegressionOptions{});
  EXPECT_FALSE(r.fitted);
  EXPECT_NE(r.status.find("too few rows"), std::string::npos);
}

TEST(Regression, OptionsAreValidated) {
  RegressionOptions o;
  o.max_features = 0;
  EXPECT_THROW(o.validate(), InputError);
  o = {};
  o.min_improvement = 1.0;
  EXPECT_THROW(o.validate(), InputError);
}
