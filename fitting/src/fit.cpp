#include "trainsim/fitting/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "de_module.hpp"
#include "objective.hpp"
#include "random.hpp"
#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::fitting {
namespace {

using detail::mix_seed;
using detail::Objective;
using detail::uniform_below;

struct DeOutcome {
  std::vector<double> x;
  double cost = std::numeric_limits<double>::infinity();
  unsigned generations = 0;
  bool converged = false;
};

// One DE run by pagmo2, in the module loaded on first use (de_module.hpp). Fitness must be
// comparable, so a non-finite cost becomes the largest double.
DeOutcome run_de(const std::shared_ptr<Objective>& objective, const FitOptions& options, unsigned run) {
  detail::DeRequest request;
  request.fitness = [&objective](const double* x) {
    const double cost = objective->cost(x);
    return std::isfinite(cost) ? cost : std::numeric_limits<double>::max();
  };
  for (const auto& b : objective->bounds()) {
    request.lower.push_back(b.lower);
    request.upper.push_back(b.upper);
  }
  const std::size_t dim = objective->dimension();
  const unsigned pop_size =
      options.population_size ? options.population_size : static_cast<unsigned>(std::max<std::size_t>(20, 10 * dim));
  request.population_size = pop_size;
  request.generations = options.generations;
  request.tolerance = options.de_tolerance;
  request.self_adaptive = options.algorithm == DeAlgorithm::sade;
  request.seed_population = static_cast<unsigned>(mix_seed(options.seed * 1000003ULL + 2 * run) & 0xffffffffU);
  request.seed_algorithm = static_cast<unsigned>(mix_seed(options.seed * 1000003ULL + 2 * run + 1) & 0xffffffffU);
  const detail::DeResponse response = detail::run_de_module(request);
  DeOutcome out;
  out.x = response.x;
  out.cost = response.fitness;
  if (out.cost >= std::numeric_limits<double>::max()) out.cost = std::numeric_limits<double>::infinity();
  out.generations = static_cast<unsigned>((response.evaluations - pop_size) / pop_size);
  out.converged = out.generations < options.generations;
  return out;
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace

namespace {
constexpr EnumNames<Regularization, 3> kRegularizations{
    {{{Regularization::none, "none"}, {Regularization::l1, "l1"}, {Regularization::l2, "l2"}}}};
constexpr EnumNames<DeAlgorithm, 2> kDeAlgorithms{{{{DeAlgorithm::de, "de"}, {DeAlgorithm::sade, "sade"}}}};
constexpr EnumNames<TerminationReason, 4> kTerminationReasons{{{{TerminationReason::not_run, "not_run"},
                                                                {TerminationReason::converged, "converged"},
                                                                {TerminationReason::no_convergence, "no_convergence"},
                                                                {TerminationReason::failure, "failure"}}}};
}  // namespace

std::string to_string(Regularization r) {
  return std::string(kRegularizations.name(r));
}

std::string to_string(DeAlgorithm a) {
  return std::string(kDeAlgorithms.name(a));
}

std::string to_string(TerminationReason reason) {
  return std::string(kTerminationReasons.name(reason));
}

void FitOptions::validate() const {
  const std::string source = "fit options";
  if (generations < 1) throw InputError(source, "generations", "must be ≥ 1");
  if (restarts < 1) throw InputError(source, "restarts", "must be ≥ 1");
  if (population_size != 0 && population_size < 7)
    throw InputError(source, "population_size", "must be 0 (automatic) or ≥ 7 (DE needs distinct donors)");
  if (!(de_tolerance >= 0) || !std::isfinite(de_tolerance)) throw InputError(source, "de_tolerance", "must be ≥ 0");
  if (lambda && (!(*lambda >= 0) || !std::isfinite(*lambda))) throw InputError(source, "lambda", "must be ≥ 0");
  if (!lambda && regularization != Regularization::none) {
    if (lambda_grid.empty()) throw InputError(source, "lambda_grid", "must not be empty when λ is not given");
    for (double l : lambda_grid)
      if (!(l >= 0) || !std::isfinite(l)) throw InputError(source, "lambda_grid", "every λ must be ≥ 0");
    if (cv_folds < 2) throw InputError(source, "cv_folds", "must be ≥ 2");
  }
  if (bootstrap_samples > kMaxBootstrapSamples)
    throw InputError(source, "bootstrap_samples", fmt::format("must be ≤ {} (each resample re-fits every row)", kMaxBootstrapSamples));
  if (!(confidence_level > 0 && confidence_level < 1))
    throw InputError(source, "confidence_level", "must be in (0, 1)");
}

std::string FitSummary::brief_report() const {
  return fmt::format("{}: cost {:.6g} (msre {:.6g} + penalty {:.3g}), {} λ = {:g} ({}), {} points, {} constants",
                     to_string(termination), final_cost, msre, penalty, to_string(regularization), lambda,
                     lambda_source, points, constants);
}

std::string FitSummary::full_report() const {
  std::ostringstream out;
  out << "termination:          " << to_string(termination) << " — " << message << "\n";
  out << fmt::format("points / constants:   {} / {}\n", points, constants);
  out << fmt::format("differential evol.:   {} runs, best after {} generations ({}), cost {:.6g}\n", de_runs,
                     de_generations, de_converged ? "tolerance met" : "budget used", de_cost);
  out << fmt::format("polish (LM):          {} iterations ({})\n", polish_iterations,
                     polish_converged ? "converged" : "budget used");
  out << fmt::format("final cost:           {:.6g} = msre {:.6g} + penalty {:.6g}\n", final_cost, msre, penalty);
  out << fmt::format("regularisation:       {}, λ = {:g} ({})\n", to_string(regularization), lambda, lambda_source);
  for (const auto& point : cross_validation)
    out << fmt::format("  cv λ = {:<8g} validation msre {:.6g}\n", point.lambda, point.validation_msre);
  out << fmt::format("bootstrap resamples:  {}\n", bootstrap_samples);
  out << fmt::format("cost evaluations:     {}\n", function_evaluations);
  return out.str();
}

ErrorMetrics error_metrics(const std::vector<double>& observed, const std::vector<double>& predicted) {
  TRAINSIM_CHECK(observed.size() == predicted.size() && !observed.empty(), "matching, non-empty vectors");
  ErrorMetrics m;
  const double n = static_cast<double>(observed.size());
  double mean = 0;
  for (double y : observed) mean += y / n;
  double ss_res = 0, ss_tot = 0, ape = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const double e = predicted[i] - observed[i];
    ss_res += e * e;
    ss_tot += (observed[i] - mean) * (observed[i] - mean);
    const double a = std::abs(e / observed[i]);
    ape += a;
    m.max_ape = std::max(m.max_ape, a);
  }
  m.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  m.mape = ape / n;
  m.rmse = std::sqrt(ss_res / n);
  return m;
}

namespace {

// A row where the expression has no finite value whatever the constants (a division by zero, the
// log of a non-positive column value) is bad input, not a failed fit: the user must change the
// expression or the data. Probed at the bounds' corners, centre and a fixed set of interior points.
void reject_undefined_rows(const Expression& expression, const Dataset& data, const std::vector<Bound>& bounds) {
  std::vector<std::vector<double>> probes;
  for (const double where : {0.5, 0.0, 1.0, 0.25, 0.75, 0.1, 0.9}) {
    std::vector<double> c;
    for (const Bound& b : bounds) c.push_back(b.lower + where * (b.upper - b.lower));
    probes.push_back(std::move(c));
  }
  ExpressionEvaluator evaluator(expression, data);
  std::vector<bool> defined(data.size(), false);
  for (const auto& c : probes) {
    evaluator.set_constants(c);
    for (std::size_t row = 0; row < data.size(); ++row)
      if (!defined[row] && std::isfinite(evaluator.value(row))) defined[row] = true;
  }
  for (std::size_t row = 0; row < data.size(); ++row) {
    if (defined[row]) continue;
    std::string values;
    for (std::size_t v = 0; v < data.variables().size(); ++v)
      values += fmt::format("{}{} = {:g}", v ? ", " : "", data.variables()[v], data.value(row, v));
    throw InputError(data.source(), "line " + std::to_string(data.line(row)),
                     fmt::format("the expression '{}' ({}) has no finite value at this row{}{}{} whatever the constants "
                                 "inside their bounds: a division by zero, or a logarithm or root of a negative value?",
                                 expression.text(), expression.source(), values.empty() ? "" : " (", values,
                                 values.empty() ? "" : ")"));
  }
}

/// The unregularised error of `x` polished at the objective's current λ, averaged over the folds:
/// each fold held back in turn, the rest fitted.
double cross_validation_error(Objective& objective, const std::vector<std::vector<std::size_t>>& folds,
                              const std::vector<double>& x, const FitOptions& options, std::size_t n) {
  double error = 0;
  for (const auto& validation : folds) {
    std::vector<double> weights(n, 1.0);
    for (std::size_t row : validation) weights[row] = 0.0;
    objective.set_weights(weights);
    auto fitted = detail::polish(objective, x, options.polish_iterations);
    error += objective.msre_on(fitted.x.data(), validation) / static_cast<double>(folds.size());
  }
  return error;
}

/// λ by k-fold cross-validation: each candidate λ is judged by polishing the global solution on the
/// training folds and measuring the unregularised error on the held-back fold. The basin found by
/// DE is kept, which is exactly the procedure the final fit then applies. Returns the chosen λ
/// (`lambda`, the smallest grid value, when there are too few rows) and, when it differs from
/// `lambda`, refits `x` with it. Records the candidates' errors and the choice in `summary`.
double cross_validated_lambda(Objective& objective, const FitOptions& options, std::size_t k, double lambda,
                              std::vector<double>& x, FitSummary& summary) {
  const std::size_t n = summary.points;
  const unsigned folds_count = static_cast<unsigned>(std::min<std::size_t>(options.cv_folds, n));
  const std::size_t largest_fold = (n + folds_count - 1) / folds_count;
  if (n - largest_fold <= k) {
    summary.lambda_source = "smallest grid value (too few rows for cross-validation)";
    return lambda;
  }
  const auto folds = detail::make_folds(n, folds_count, options.seed);
  std::vector<double> grid = options.lambda_grid;
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  double best_error = std::numeric_limits<double>::infinity();
  double best_lambda = lambda;
  for (double candidate : grid) {
    objective.set_lambda(candidate);
    const double error = cross_validation_error(objective, folds, x, options, n);
    summary.cross_validation.push_back({candidate, error});
    // Ties (within rounding) go to the larger λ: the simpler explanation.
    if (error <= best_error * (1 + 1e-9)) {
      best_error = std::min(error, best_error);
      best_lambda = candidate;
    }
  }
  objective.reset_weights();
  summary.lambda_source = "cross-validation";
  if (best_lambda == lambda) return lambda;
  objective.set_lambda(best_lambda);
  auto refit = detail::polish(objective, x, options.polish_iterations);
  x = refit.x;
  summary.polish_iterations += refit.iterations;
  summary.polish_converged = refit.converged;
  return best_lambda;
}

/// Percentile bootstrap: resample rows with replacement (as integer weights) and polish from the
/// fitted constants `x`. Resamples whose fit is not finite are dropped; the intervals at the
/// options' confidence level go to `result.confidence` when any resample is left.
void bootstrap_confidence(Objective& objective, const FitOptions& options, const std::vector<double>& x,
                          FitResult& result) {
  const std::size_t n = result.summary.points;
  const std::size_t k = x.size();
  std::mt19937_64 rng(mix_seed(options.seed ^ 0xb0075ULL));
  std::vector<std::vector<double>> samples(k);
  for (unsigned b = 0; b < options.bootstrap_samples; ++b) {
    std::vector<double> weights(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) weights[uniform_below(rng, n)] += 1.0;
    objective.set_weights(weights);
    auto fitted = detail::polish(objective, x, options.polish_iterations);
    if (!std::isfinite(fitted.cost)) continue;
    for (std::size_t j = 0; j < k; ++j) samples[j].push_back(fitted.x[j]);
  }
  objective.reset_weights();
  result.summary.bootstrap_samples = static_cast<unsigned>(samples[0].size());
  if (samples[0].empty()) return;
  const double tail = (1 - options.confidence_level) / 2;
  for (std::size_t j = 0; j < k; ++j)
    result.confidence.push_back({quantile(samples[j], tail), quantile(samples[j], 1 - tail)});
}

}  // namespace

FitResult fit_expression(const Expression& expression, const Dataset& data, const std::vector<Bound>& bounds,
                         const FitOptions& options) {
  options.validate();
  const std::size_t k = expression.constants().size();
  const std::size_t n = data.size();
  TRAINSIM_CHECK(bounds.size() == k, "one bound per constant");
  if (k == 0) throw InputError(expression.source(), "", "the expression has no constants (c0, c1, …) to fit");
  if (n <= k)
    throw InputError(data.source(), "",
                     fmt::format("{} rows to fit but the expression has {} constants; fitting needs more rows than "
                                 "constants",
                                 n, k));

  reject_undefined_rows(expression, data, bounds);

  FitResult result;
  result.names = expression.constants();
  FitSummary& summary = result.summary;
  summary.points = n;
  summary.constants = k;
  summary.regularization = options.regularization;

  auto objective = std::make_shared<Objective>(expression, data, bounds, options.regularization);
  const bool regularised = options.regularization != Regularization::none;
  const bool cross_validate = regularised && !options.lambda;
  double lambda = 0;
  if (!regularised) summary.lambda_source = "no regularisation";
  else if (options.lambda) lambda = *options.lambda;
  else lambda = *std::min_element(options.lambda_grid.begin(), options.lambda_grid.end());
  objective->set_lambda(lambda);

  // 1. Global search: independent DE runs, best kept.
  DeOutcome best;
  for (unsigned run = 0; run < options.restarts; ++run) {
    DeOutcome outcome = run_de(objective, options, run);
    ++summary.de_runs;
    if (outcome.cost < best.cost) best = std::move(outcome);
  }
  summary.de_cost = best.cost;
  summary.de_generations = best.generations;
  summary.de_converged = best.converged;
  if (!std::isfinite(best.cost)) {
    summary.termination = TerminationReason::failure;
    summary.message = "no constants inside the bounds give a finite prediction at every row";
    summary.function_evaluations = objective->evaluations();
    return result;
  }

  // 2. Local polish.
  std::vector<double> x = best.x;
  if (options.polish) {
    auto polished = detail::polish(*objective, x, options.polish_iterations);
    x = polished.x;
    summary.polish_iterations = polished.iterations;
    summary.polish_converged = polished.converged;
  }

  // 3. λ by k-fold cross-validation (cross_validated_lambda).
  if (cross_validate) lambda = cross_validated_lambda(*objective, options, k, lambda, x, summary);
  objective->set_lambda(lambda);
  objective->reset_weights();
  summary.lambda = lambda;
  summary.msre = objective->msre(x.data());
  summary.penalty = objective->penalty(x.data());
  summary.final_cost = summary.msre + summary.penalty;
  result.constants = x;

  // 4. Percentile bootstrap (bootstrap_confidence).
  if (options.bootstrap_samples > 0) bootstrap_confidence(*objective, options, x, result);

  ExpressionEvaluator evaluator(expression, data);
  evaluator.set_constants(x);
  for (std::size_t row = 0; row < n; ++row) result.predictions.push_back(evaluator.value(row));
  const auto metrics = error_metrics(data.ys(), result.predictions);
  result.r2 = metrics.r2;
  result.mape = metrics.mape;
  result.rmse = metrics.rmse;

  summary.function_evaluations = objective->evaluations();
  const bool converged = options.polish ? summary.polish_converged || best.converged : best.converged;
  summary.termination = converged ? TerminationReason::converged : TerminationReason::no_convergence;
  summary.message = converged ? (summary.polish_converged ? "polish met its tolerance" : "DE met its tolerance")
                              : "iteration budgets used up before the tolerances were met; best constants found";
  return result;
}

}  // namespace trainsim::fitting
