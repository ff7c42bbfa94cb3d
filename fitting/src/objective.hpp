#pragma once
// The regularised cost of a fit and its residual form for the polish (private to fitting/).
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "trainsim/fitting/expression.hpp"
#include "trainsim/fitting/fit.hpp"

namespace trainsim::fitting::detail {

/// cost(c) = Σ_i w_i ((f_i − y_i)/y_i)² / Σ_i w_i + λ·R(c). Row weights make one object serve the
/// full fit (all 1), cross-validation folds (0/1) and bootstrap resamples (counts). Not copyable
/// (it owns a compiled expression); not thread-safe.
class Objective {
public:
  Objective(const Expression& expression, const Dataset& data, std::vector<Bound> bounds, Regularization regularization);

  std::size_t dimension() const noexcept { return bounds_.size(); }
  const std::vector<Bound>& bounds() const noexcept { return bounds_; }
  void set_lambda(double lambda) noexcept { lambda_ = lambda; }
  double lambda() const noexcept { return lambda_; }
  /// Row weights (≥ 0, at least one > 0), one per dataset row.
  void set_weights(const std::vector<double>& weights);
  /// All weights 1.
  void reset_weights();

  /// Weighted mean squared relative error; +inf when a weighted row's prediction is not finite.
  double msre(const double* c);
  /// Unweighted mean squared relative error over `rows` (validation folds).
  double msre_on(const double* c, const std::vector<std::size_t>& rows);
  /// λ·R(c) (exact, non-smooth for L1).
  double penalty(const double* c) const;
  double cost(const double* c) { return msre(c) + penalty(c); }
  /// Residuals whose squared norm approximates cost(c): one per weighted
  /// row, then one per constant for the penalty (L1 smoothed as |c| ≈ sqrt(c² + ε²)). False when a
  /// prediction is not finite.
  bool residuals(const double* c, Eigen::VectorXd& out);
  std::size_t residual_count() const noexcept { return active_.size() + (lambda_ > 0 ? bounds_.size() : 0); }

  std::uint64_t evaluations() const noexcept { return evaluations_; }

private:
  ExpressionEvaluator evaluator_;
  std::vector<Bound> bounds_;
  std::vector<double> scale_;  // s_j = max(|lower|, |upper|)
  Regularization regularization_;
  double lambda_ = 0.0;
  std::vector<std::size_t> active_;  // rows with weight > 0
  std::vector<double> weight_;       // weight of active_[i], normalised to sum 1
  std::uint64_t evaluations_ = 0;
};

/// Result of one bounded Levenberg–Marquardt polish.
struct PolishOutcome {
  std::vector<double> x;
  double cost = 0.0;  ///< exact cost at x
  unsigned iterations = 0;
  bool converged = false;
};

/// Minimises the objective from `start` inside the bounds by Levenberg–Marquardt on the residuals
/// (forward-difference Jacobian, Marquardt scaling, bound-active constants frozen). Returns the
/// start itself when it cannot improve on it.
PolishOutcome polish(Objective& objective, const std::vector<double>& start, unsigned max_iterations);

}  // namespace trainsim::fitting::detail
