// bench_fit: wall time of a 6-constant fit on 200 points (the S-SGD ring expression on synthetic
// data with 5% noise), phase by phase. Not a test: it prints figures for tests/README.md's Performance
// section. Run it pinned to one core: `taskset -c 0 build/fitting/bench_fit`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "trainsim/fitting/fit.hpp"
#include "trainsim/fitting/models.hpp"

using namespace trainsim::fitting;

namespace {

const std::vector<double> kTruth = {0.05, 2.0, 0.9, 1.5, 0.002, 0.02};

Dataset synthetic(std::size_t points, std::uint64_t seed) {
  const Expression expression = model_expression(find_model("ssgd_ring_iteration"));
  const std::vector<std::string> variables = expression.variables();  // alphabetical
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  const double models[][2] = {{8.2e9, 1.02e8}, {11.4e9, 1.09e8}, {31e9, 5.5e8}, {1.4e9, 2.4e8}, {23e9, 2.4e8}};
  for (std::size_t i = 0; i < points; ++i) {
    const double gpus = std::pow(2.0, static_cast<double>(i % 8));
    const double batch = 16.0 * static_cast<double>(1 + (i / 8) % 4);
    const auto& m = models[(i / 32) % 5];
    rows.push_back({batch, m[0], gpus, m[1]});  // batch_per_gpu, flops_per_sample, gpus, model_bytes
    y.push_back(0);
  }
  Dataset data = Dataset::from_values("synthetic", variables, "t", rows, std::vector<double>(points, 1.0));
  ExpressionEvaluator evaluator(expression, data);
  evaluator.set_constants(kTruth);
  for (std::size_t i = 0; i < points; ++i) y[i] = evaluator.value(i) * (1 + noise(rng));
  return Dataset::from_values("synthetic", variables, "t", rows, y);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  const Expression expression = model_expression(find_model("ssgd_ring_iteration"));
  const Dataset data = synthetic(200, 7);
  const auto bounds = resolve_bounds(expression, find_model("ssgd_ring_iteration").default_bounds(data));

  struct Case {
    const char* name;
    FitOptions options;
  };
  FitOptions full;  // the defaults: DE restarts + polish + λ by cross-validation + bootstrap
  FitOptions no_bootstrap = full;
  no_bootstrap.bootstrap_samples = 0;
  FitOptions fixed_lambda = no_bootstrap;
  fixed_lambda.lambda = 1e-5;
  FitOptions de_only = fixed_lambda;
  de_only.restarts = 1;
  de_only.polish = false;
  FitOptions classic = full;
  classic.algorithm = DeAlgorithm::de;
  const Case cases[] = {{"defaults (DE×3 + polish + CV λ + 200 bootstrap)", full},
                        {"without bootstrap", no_bootstrap},
                        {"λ given, no CV, no bootstrap", fixed_lambda},
                        {"one DE run only (no polish)", de_only},
                        {"defaults with classic pagmo::de", classic}};
  std::printf("bench_fit: 6 constants, %zu points, expression %s\n", data.size(), expression.text().c_str());
  std::printf("  truth:    ");
  for (double v : kTruth) std::printf(" %.4g", v);
  std::printf("\n  (median wall time of 3 runs each)\n");
  for (const auto& c : cases) {
    std::vector<double> times;
    FitResult r;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const auto t0 = std::chrono::steady_clock::now();
      r = fit_expression(expression, data, bounds, c.options);
      times.push_back(seconds_since(t0));
    }
    std::sort(times.begin(), times.end());
    const double s = times[1];
    std::printf("  %-50s %7.3f s  %8llu evals  R2 %.4f  MAPE %.2f%%  %s\n", c.name, s,
                static_cast<unsigned long long>(r.summary.function_evaluations), r.r2, 100 * r.mape,
                to_string(r.summary.termination).c_str());
    std::printf("    constants:");
    for (double v : r.constants) std::printf(" %.4g", v);
    std::printf("\n");
  }
  return 0;
}
