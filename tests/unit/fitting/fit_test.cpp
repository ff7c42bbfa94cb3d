#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/fit.hpp"
#include "trainsim/fitting/models.hpp"

using namespace trainsim;
using namespace trainsim::fitting;

namespace {

// An S-SGD-shaped expression with six constants, every term visible in the data.
const char* const kExpression = "c0 + c1*w^c2 + c3*m*(p-1)/p + c4*(p-1) + c5*log2(p)";
const std::vector<double> kTruth = {0.2, 0.5, 0.8, 0.4, 0.01, 0.2};
const BoundsMap kBounds = {{"c0", {0, 5}}, {"c1", {0, 10}}, {"c2", {0.3, 1.5}},
                           {"c3", {0, 10}}, {"c4", {0, 1}}, {"c5", {0, 1}}};

// n rows of (m, p, w) drawn with a fixed seed: p = 1…256, w and m log-uniform over [0.1, 100] and
// [0.2, 5] so that every term dominates somewhere; y = truth × (1 + N(0, noise)).
Dataset synthetic(std::size_t n, std::uint64_t seed, double noise) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_w(std::log(0.1), std::log(100.0)), log_m(std::log(0.2), std::log(5.0));
  std::normal_distribution<double> epsilon(0.0, noise);
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (std::size_t i = 0; i < n; ++i) {
    const double p = std::exp2(static_cast<double>(i % 9));
    const double mi = std::exp(log_m(rng)), wi = std::exp(log_w(rng));
    rows.push_back({mi, p, wi});
    const double truth = kTruth[0] + kTruth[1] * std::pow(wi, kTruth[2]) + kTruth[3] * mi * (p - 1) / p +
                         kTruth[4] * (p - 1) + kTruth[5] * std::log2(p);
    y.push_back(truth * (1 + epsilon(rng)));
  }
  return Dataset::from_values("synthetic.csv", {"m", "p", "w"}, "t", rows, y);
}

FitOptions quick() {
  FitOptions o;
  o.bootstrap_samples = 20;
  return o;
}

}  // namespace

TEST(Fit, RecoversKnownConstantsFromNoisyData) {
  const auto e = Expression::parse(kExpression, "test");
  const auto bounds = resolve_bounds(e, kBounds);
  // 500 rows: with 5% noise, fewer rows leave the log2 term's constant less certain than 5%.
  for (std::uint64_t data_seed : {1u, 2u, 3u}) {
    const Dataset data = synthetic(500, data_seed, 0.05);
    const FitResult r = fit_expression(e, data, bounds, quick());
    ASSERT_TRUE(r.summary.usable()) << r.summary.full_report();
    EXPECT_EQ(r.summary.termination, TerminationReason::converged) << r.summary.full_report();
    EXPECT_GE(r.r2, 0.99) << "data seed " << data_seed;
    for (std::size_t j = 0; j < kTruth.size(); ++j)
      EXPECT_NEAR(r.constants[j], kTruth[j], 0.05 * kTruth[j]) << e.constants()[j] << ", data seed " << data_seed;
    ASSERT_EQ(r.confidence.size(), kTruth.size());
    for (std::size_t j = 0; j < kTruth.size(); ++j) {
      EXPECT_LE(r.confidence[j].lower, r.constants[j] * (1 + 1e-9) + 1e-12);
      EXPECT_GE(r.confidence[j].upper, r.constants[j] * (1 - 1e-9) - 1e-12);
    }
  }
}

TEST(Fit, SameSeedSameResultBitForBit) {
  const auto e = Expression::parse(kExpression, "test");
  const auto bounds = resolve_bounds(e, kBounds);
  const Dataset data = synthetic(120, 5, 0.05);
  const FitResult a = fit_expression(e, data, bounds, quick());
  const FitResult b = fit_expression(e, data, bounds, quick());
  EXPECT_EQ(a.constants, b.constants);
  ASSERT_EQ(a.confidence.size(), b.confidence.size());
  for (std::size_t j = 0; j < a.confidence.size(); ++j) {
    EXPECT_EQ(a.confidence[j].lower, b.confidence[j].lower);
    EXPECT_EQ(a.confidence[j].upper, b.confidence[j].upper);
  }
  EXPECT_EQ(a.summary.function_evaluations, b.summary.function_evaluations);
  EXPECT_EQ(a.summary.lambda, b.summary.lambda);
}

TEST(Fit, CrossValidationPicksLambdaFromTheGrid) {
  const auto e = Expression::parse(kExpression, "test");
  const Dataset data = synthetic(100, 3, 0.05);
  FitOptions o = quick();
  o.bootstrap_samples = 0;
  o.lambda_grid = {1e-1, 0.0, 1e-4};
  const FitResult r = fit_expression(e, data, resolve_bounds(e, kBounds), o);
  EXPECT_EQ(r.summary.lambda_source, "cross-validation");
  ASSERT_EQ(r.summary.cross_validation.size(), 3u);  // sorted, one per distinct λ
  EXPECT_EQ(r.summary.cross_validation[0].lambda, 0.0);
  double best = r.summary.cross_validation[0].validation_msre;
  for (const auto& p : r.summary.cross_validation) best = std::min(best, p.validation_msre);
  bool chosen_is_best = false;
  for (const auto& p : r.summary.cross_validation)
    chosen_is_best |= p.lambda == r.summary.lambda && p.validation_msre <= best * (1 + 1e-9);
  EXPECT_TRUE(chosen_is_best);
  EXPECT_LT(r.summary.lambda, 0.1);  // a heavy penalty cannot win on clean, well-posed data
}

TEST(Fit, GivenLambdaAndL2PenaltyAreReported) {
  const auto e = Expression::parse("c0 + c1*w", "test");
  const auto data = Dataset::from_values("d", {"w"}, "y", {{1}, {2}, {3}, {4}}, {3, 5, 7, 9});
  FitOptions o;
  o.regularization = Regularization::l2;
  o.lambda = 1e-3;
  o.bootstrap_samples = 0;
  const auto r = fit_expression(e, data, resolve_bounds(e, {{"c0", {0, 10}}, {"c1", {0, 10}}}), o);
  EXPECT_EQ(r.summary.lambda_source, "given");
  const double expected_penalty = 1e-3 * (std::pow(r.constants[0] / 10, 2) + std::pow(r.constants[1] / 10, 2));
  EXPECT_NEAR(r.summary.penalty, expected_penalty, 1e-15);
  EXPECT_NEAR(r.constants[0], 1.0, 0.05);
  EXPECT_NEAR(r.constants[1], 2.0, 0.05);
}

TEST(Fit, PolishReachesTheOptimumOfALinearProblem) {
  // y = 1 + 2w exactly: without penalty the only minimum has cost 0.
  const auto e = Expression::parse("c0 + c1*w", "test");
  const auto data = Dataset::from_values("d", {"w"}, "y", {{1}, {2}, {3}, {4}, {5}}, {3, 5, 7, 9, 11});
  FitOptions o;
  o.regularization = Regularization::none;
  o.bootstrap_samples = 0;
  o.restarts = 1;
  o.generations = 5;  // DE alone gets nowhere near in 5 generations
  const auto r = fit_expression(e, data, resolve_bounds(e, {{"c0", {0, 10}}, {"c1", {0, 10}}}), o);
  EXPECT_NEAR(r.constants[0], 1.0, 1e-6);
  EXPECT_NEAR(r.constants[1], 2.0, 1e-6);
  EXPECT_LT(r.summary.final_cost, 1e-12);
  EXPECT_LT(r.summary.final_cost, r.summary.de_cost);
  EXPECT_TRUE(r.summary.polish_converged);
}

TEST(Fit, ExhaustedBudgetIsNoConvergenceNotAnException) {
  const auto e = Expression::parse(kExpression, "test");
  FitOptions o;
  o.generations = 2;
  o.restarts = 1;
  o.polish = false;
  o.regularization = Regularization::none;
  o.bootstrap_samples = 0;
  const auto r = fit_expression(e, synthetic(60, 1, 0.05), resolve_bounds(e, kBounds), o);
  EXPECT_EQ(r.summary.termination, TerminationReason::no_convergence);
  EXPECT_TRUE(r.summary.usable());
  EXPECT_EQ(r.constants.size(), 6u);
}

// Every row has constants that make it finite, but no constants make all rows finite at once: a
// fit that finds nothing is a result (failure), not bad input.
TEST(Fit, NoConstantsFiniteAtEveryRowIsFailure) {
  const auto e = Expression::parse("sqrt(c0 - w) + sqrt(w + 0.5 - c0)", "test");
  const auto data = Dataset::from_values("d", {"w"}, "y", {{0}, {0.6}, {0}}, {1, 2, 3});
  FitOptions o;
  o.generations = 10;
  const auto r = fit_expression(e, data, resolve_bounds(e, {{"c0", {0, 1}}}), o);
  EXPECT_EQ(r.summary.termination, TerminationReason::failure);
  EXPECT_FALSE(r.summary.usable());
  EXPECT_TRUE(r.constants.empty());
}

// A row where the expression is undefined whatever the constants is the user's to fix: an
// InputError at that row's CSV line, naming the expression.
TEST(Fit, RowUndefinedForEveryConstantIsBadInput) {
  const auto e = Expression::parse("c0/(w - 2)", "--expression");
  const auto data = Dataset::from_values("d.csv", {"w"}, "y", {{1}, {2}, {3}}, {1, 2, 3});
  try {
    fit_expression(e, data, resolve_bounds(e, {{"c0", {0, 1}}}), FitOptions{});
    FAIL() << "expected an InputError";
  } catch (const trainsim::InputError& err) {
    EXPECT_EQ(err.source(), "d.csv");
    EXPECT_EQ(err.location(), "line 3");
    EXPECT_NE(err.detail().find("'c0/(w - 2)'"), std::string::npos) << err.detail();
    EXPECT_NE(err.detail().find("w = 2"), std::string::npos) << err.detail();
  }
}

TEST(Fit, DefaultSummarySaysNotRun) {
  const FitSummary s;
  EXPECT_EQ(s.termination, TerminationReason::not_run);
  EXPECT_FALSE(s.usable());
  EXPECT_NE(s.brief_report().find("not_run"), std::string::npos);
  EXPECT_NE(s.full_report().find("fit not run"), std::string::npos);
}

TEST(Fit, FewerRowsThanConstantsIsInputError) {
  const auto e = Expression::parse(kExpression, "test");
  try {
    fit_expression(e, synthetic(5, 1, 0.0), resolve_bounds(e, kBounds), FitOptions{});
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "synthetic.csv");
    EXPECT_NE(std::string(error.what()).find("5 rows to fit but the expression has 6 constants"), std::string::npos);
  }
}

TEST(FitOptions, ValidateRejectsEachBadField) {
  struct Case {
    const char* field;
    void (*mutate)(FitOptions&);
  };
  const Case cases[] = {
      {"generations", [](FitOptions& o) { o.generations = 0; }},
      {"restarts", [](FitOptions& o) { o.restarts = 0; }},
      {"population_size", [](FitOptions& o) { o.population_size = 3; }},
      {"de_tolerance", [](FitOptions& o) { o.de_tolerance = -1; }},
      {"lambda", [](FitOptions& o) { o.lambda = -0.1; }},
      {"lambda_grid", [](FitOptions& o) { o.lambda_grid = {}; }},
      {"lambda_grid", [](FitOptions& o) { o.lambda_grid = {0.1, -1}; }},
      {"cv_folds", [](FitOptions& o) { o.cv_folds = 1; }},
      {"confidence_level", [](FitOptions& o) { o.confidence_level = 1.0; }},
  };
  for (const auto& c : cases) {
    FitOptions o;
    c.mutate(o);
    try {
      o.validate();
      ADD_FAILURE() << c.field << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), c.field);
    }
  }
  EXPECT_NO_THROW(FitOptions{}.validate());
}

TEST(ErrorMetrics, MatchesHandComputedValues) {
  const auto m = error_metrics({1, 2, 4}, {1.1, 2, 3});
  EXPECT_NEAR(m.mape, (0.1 + 0 + 0.25) / 3, 1e-12);
  EXPECT_NEAR(m.max_ape, 0.25, 1e-12);
  EXPECT_NEAR(m.rmse, std::sqrt((0.01 + 1) / 3), 1e-12);
  const double mean = 7.0 / 3, ss_tot = std::pow(1 - mean, 2) + std::pow(2 - mean, 2) + std::pow(4 - mean, 2);
  EXPECT_NEAR(m.r2, 1 - 1.01 / ss_tot, 1e-12);
}

TEST(Fit, AmdahlAndGustafsonModelsRecoverExactConstants) {
  // Amdahl: time = 2 s serial + 10 s parallel / p.  Gustafson: throughput = 100·p − 100·0.05·(p−1).
  std::vector<std::vector<double>> rows;
  std::vector<double> amdahl, gustafson;
  for (double p : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0}) {
    rows.push_back({p});
    amdahl.push_back(2 + 10 / p);
    gustafson.push_back(100 * p - 100 * 0.05 * (p - 1));
  }
  FitOptions o;
  o.regularization = Regularization::none;
  o.bootstrap_samples = 0;
  const auto a_data = Dataset::from_values("a", {"gpus"}, "t", rows, amdahl);
  const auto& a_model = find_model("amdahl");
  const auto a = fit_expression(model_expression(a_model), a_data,
                                resolve_bounds(model_expression(a_model), a_model.default_bounds(a_data)), o);
  EXPECT_NEAR(a.constants[0], 2.0, 1e-6);
  EXPECT_NEAR(a.constants[1], 10.0, 1e-6);
  const auto g_data = Dataset::from_values("g", {"gpus"}, "x", rows, gustafson);
  const auto& g_model = find_model("gustafson");
  const auto g = fit_expression(model_expression(g_model), g_data,
                                resolve_bounds(model_expression(g_model), g_model.default_bounds(g_data)), o);
  EXPECT_NEAR(g.constants[0], 100.0, 1e-4);
  EXPECT_NEAR(g.constants[1], 0.05, 1e-6);
}

TEST(Fit, EpochModelIsIterationsTimesTheIterationModel) {
  const Expression epoch = model_expression(find_model("ssgd_ring_epoch"));
  const Expression iteration = model_expression(find_model("ssgd_ring_iteration"));
  ASSERT_EQ(epoch.terms().size(), iteration.terms().size());
  const auto data = Dataset::from_values(
      "d", {"batch_per_gpu", "dataset_samples", "flops_per_sample", "gpus", "model_bytes"}, "y",
      {{32, 1.28e6, 8.2e9, 16, 1.02e8}}, {1});
  const auto iteration_data = Dataset::from_values("d", {"batch_per_gpu", "flops_per_sample", "gpus", "model_bytes"}, "y",
                                                   {{32, 8.2e9, 16, 1.02e8}}, {1});
  ExpressionEvaluator e(epoch, data), i(iteration, iteration_data);
  const std::vector<double> c = {0.01, 2, 0.9, 1.5, 1e-4, 0.02};
  e.set_constants(c);
  i.set_constants(c);
  EXPECT_NEAR(e.value(0), 1.28e6 / (16 * 32) * i.value(0), 1e-9 * e.value(0));
}
