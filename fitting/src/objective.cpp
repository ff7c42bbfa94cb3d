#include "objective.hpp"

#include <cmath>
#include <limits>

#include "trainsim/core/error.hpp"

namespace trainsim::fitting::detail {

Objective::Objective(const Expression& expression, const Dataset& data, std::vector<Bound> bounds,
                     Regularization regularization)
    : evaluator_(expression, data), bounds_(std::move(bounds)), regularization_(regularization) {
  TRAINSIM_CHECK(bounds_.size() == expression.constants().size(), "one bound per constant");
  for (const auto& b : bounds_) scale_.push_back(std::max({std::abs(b.lower), std::abs(b.upper), 1e-300}));
  reset_weights();
}

void Objective::set_weights(const std::vector<double>& weights) {
  TRAINSIM_CHECK(weights.size() == evaluator_.data().size(), "one weight per row");
  active_.clear();
  weight_.clear();
  double total = 0;
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i] > 0) {
      active_.push_back(i);
      weight_.push_back(weights[i]);
      total += weights[i];
    }
  TRAINSIM_CHECK(total > 0, "at least one row with positive weight");
  for (auto& w : weight_) w /= total;
}

void Objective::reset_weights() { set_weights(std::vector<double>(evaluator_.data().size(), 1.0)); }

double Objective::msre(const double* c) {
  ++evaluations_;
  evaluator_.set_constants({c, dimension()});
  const Dataset& data = evaluator_.data();
  double sum = 0;
  for (std::size_t i = 0; i < active_.size(); ++i) {
    const std::size_t row = active_[i];
    const double f = evaluator_.value(row);
    if (!std::isfinite(f)) return std::numeric_limits<double>::infinity();
    const double e = (f - data.y(row)) / data.y(row);
    sum += weight_[i] * e * e;
  }
  return sum;
}

double Objective::msre_on(const double* c, const std::vector<std::size_t>& rows) {
  ++evaluations_;
  evaluator_.set_constants({c, dimension()});
  const Dataset& data = evaluator_.data();
  double sum = 0;
  for (std::size_t row : rows) {
    const double f = evaluator_.value(row);
    if (!std::isfinite(f)) return std::numeric_limits<double>::infinity();
    const double e = (f - data.y(row)) / data.y(row);
    sum += e * e;
  }
  return rows.empty() ? 0.0 : sum / static_cast<double>(rows.size());
}

double Objective::penalty(const double* c) const {
  if (lambda_ <= 0 || regularization_ == Regularization::none) return 0.0;
  double sum = 0;
  for (std::size_t j = 0; j < dimension(); ++j) {
    const double t = c[j] / scale_[j];
    sum += regularization_ == Regularization::l1 ? std::abs(t) : t * t;
  }
  return lambda_ * sum;
}

bool Objective::residuals(const double* c, Eigen::VectorXd& out) {
  ++evaluations_;
  out.resize(static_cast<Eigen::Index>(residual_count()));
  evaluator_.set_constants({c, dimension()});
  const Dataset& data = evaluator_.data();
  for (std::size_t i = 0; i < active_.size(); ++i) {
    const std::size_t row = active_[i];
    const double f = evaluator_.value(row);
    if (!std::isfinite(f)) return false;
    out[static_cast<Eigen::Index>(i)] = std::sqrt(weight_[i]) * (f - data.y(row)) / data.y(row);
  }
  if (lambda_ > 0) {
    for (std::size_t j = 0; j < dimension(); ++j) {
      const double t = c[j] / scale_[j];
      double r = 0;
      if (regularization_ == Regularization::l2) r = std::sqrt(lambda_) * t;
      else if (regularization_ == Regularization::l1) r = std::sqrt(lambda_ * std::sqrt(t * t + 1e-12));
      out[static_cast<Eigen::Index>(active_.size() + j)] = r;
    }
  }
  return true;
}

}  // namespace trainsim::fitting::detail
