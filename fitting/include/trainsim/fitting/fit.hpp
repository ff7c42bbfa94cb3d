#pragma once
// Fitting the constants of an expression (Kavarakuntla et al.'s generic performance model): global
// search by differential evolution (pagmo2, single-threaded, seeded), restarts, a bounded
// Levenberg–Marquardt polish, the cost
//
//     cost(c) = mean_i ((f(x_i; c) − y_i) / y_i)²  +  λ · R(c),   R = Σ_j |c_j|/s_j (L1) or Σ_j (c_j/s_j)² (L2)
//
// with s_j = max(|lower_j|, |upper_j|) so that the penalty does not depend on each constant's
// units, λ chosen by k-fold cross-validation unless given, and percentile bootstrap confidence
// intervals. Shaped like Ceres: Options with defaults and validate(), a Summary whose default
// says "not run", and non-convergence reported as a result, not an exception.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/fitting/dataset.hpp"
#include "trainsim/fitting/expression.hpp"

namespace trainsim::fitting {

/// The penalty on the constants.
enum class Regularization { none, l1, l2 };
/// pagmo2's differential-evolution flavours: classic DE (rand/1/exp) or self-adaptive jDE (sade).
enum class DeAlgorithm { de, sade };

/// "none", "l1", "l2".
std::string to_string(Regularization r);
/// "de", "sade".
std::string to_string(DeAlgorithm a);

/// Every knob of a fit, with its default.
struct FitOptions {
  /// Seeds every random choice (DE populations, folds, bootstrap): same seed → identical result.
  std::uint64_t seed = 1;
  DeAlgorithm algorithm = DeAlgorithm::sade;
  /// Individuals per DE population; 0 = 10 × number of constants, at least 20.
  unsigned population_size = 0;
  /// Generation budget of one DE run.
  unsigned generations = 150;
  /// Independent DE runs from different seeds; the best is kept. ≥ 1.
  unsigned restarts = 3;
  /// DE stops early when the population's spread of cost and of constants falls below this.
  double de_tolerance = 1e-8;
  /// Polish the best DE solution with bounded Levenberg–Marquardt.
  bool polish = true;
  /// Iteration budget of one polish.
  unsigned polish_iterations = 100;
  Regularization regularization = Regularization::l1;
  /// λ; when absent it is chosen by cross-validation over `lambda_grid`.
  std::optional<double> lambda;
  /// Candidate λ values for cross-validation (each ≥ 0).
  std::vector<double> lambda_grid = {0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2};
  /// Folds of the cross-validation (≥ 2; reduced when there are few rows).
  unsigned cv_folds = 5;
  /// Bootstrap resamples for the confidence intervals; 0 = no intervals; at most kMaxBootstrapSamples.
  unsigned bootstrap_samples = 200;
  /// Each resample is one polish of the fit over every row and keeps a copy of the constants:
  /// time grows linearly (fitting/README.md, "Fitting and divergence"), and percentile intervals settle
  /// within a few thousand resamples, so more than this is a typo, not a wish.
  static constexpr unsigned kMaxBootstrapSamples = 100000;
  /// Two-sided level of the confidence intervals, in (0, 1).
  double confidence_level = 0.95;

  /// Throws InputError("fit options", field, what is wrong) for an out-of-range field.
  void validate() const;
};

/// Why the fit stopped.
enum class TerminationReason {
  not_run,         ///< the default: nothing has been fitted
  converged,       ///< the polish met its tolerance, or the best DE run met its tolerance
  no_convergence,  ///< budgets ran out first; the constants are the best found (a usable result)
  failure          ///< no constants gave a finite cost (e.g. the expression is NaN everywhere)
};

/// "not_run", "converged", "no_convergence", "failure".
std::string to_string(TerminationReason reason);

/// One λ of the cross-validation and its mean validation error (mean squared relative error).
struct CrossValidationPoint {
  double lambda = 0.0;
  double validation_msre = 0.0;
};

/// How the fit went.
struct FitSummary {
  TerminationReason termination = TerminationReason::not_run;
  std::string message = "fit not run";
  std::size_t points = 0;            ///< rows fitted
  std::size_t constants = 0;
  unsigned de_runs = 0;
  unsigned de_generations = 0;       ///< generations of the best run
  bool de_converged = false;         ///< the best run met de_tolerance before its budget
  std::uint64_t function_evaluations = 0;  ///< cost evaluations, all phases
  unsigned polish_iterations = 0;
  bool polish_converged = false;
  double de_cost = 0.0;              ///< best cost after DE
  double final_cost = 0.0;           ///< cost of the returned constants (msre + penalty)
  double msre = 0.0;                 ///< mean squared relative error of the returned constants
  double penalty = 0.0;              ///< λ·R(c)
  Regularization regularization = Regularization::none;
  double lambda = 0.0;
  std::string lambda_source = "given";  ///< "given", "cross-validation", or why CV was skipped
  std::vector<CrossValidationPoint> cross_validation;
  unsigned bootstrap_samples = 0;

  /// True unless not_run or failure: the constants may be used.
  bool usable() const noexcept {
    return termination == TerminationReason::converged || termination == TerminationReason::no_convergence;
  }
  /// One line: termination, cost, λ.
  std::string brief_report() const;
  /// Several lines: every phase, evaluations, the cross-validation table.
  std::string full_report() const;
};

/// A closed interval.
struct Interval {
  double lower = 0.0;
  double upper = 0.0;
};

/// What a fit returns.
struct FitResult {
  FitSummary summary;
  std::vector<std::string> names;          ///< constant names, Expression::constants() order
  std::vector<double> constants;           ///< fitted values (empty unless summary.usable())
  std::vector<Interval> confidence;        ///< bootstrap intervals (empty when bootstrap_samples = 0)
  std::vector<double> predictions;         ///< f(x_i; c) per fitted row
  double r2 = 0.0;                         ///< 1 − SS_res/SS_tot on the fitted rows
  double mape = 0.0;                       ///< mean |f − y|/|y|, as a fraction (0.05 = 5%)
  double rmse = 0.0;                       ///< root mean squared error, in y's units
};

/// Fits the constants of `expression` to `data` within `bounds` (Expression::constants() order).
/// Throws InputError when the options are invalid or there are not more rows than constants
/// ("data.csv: N rows to fit … constants"). Never throws for a fit that does not converge: see
/// FitResult::summary.
FitResult fit_expression(const Expression& expression, const Dataset& data, const std::vector<Bound>& bounds,
                         const FitOptions& options);

/// Goodness of a prediction: R², mean and largest absolute percentage error (fractions), RMSE (y's units).
struct ErrorMetrics {
  double r2 = 0.0;
  double mape = 0.0;
  double rmse = 0.0;
  double max_ape = 0.0;
};
/// Metrics of `predicted` against `observed` (same size, ≥ 1, observed ≠ 0; TRAINSIM_CHECKed).
/// R² is 1 − SS_res/SS_tot (1 or 0 when the observations are all equal).
ErrorMetrics error_metrics(const std::vector<double>& observed, const std::vector<double>& predicted);

}  // namespace trainsim::fitting
