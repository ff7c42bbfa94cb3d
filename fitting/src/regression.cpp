#include "trainsim/fitting/regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "random.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::fitting {
namespace {

using Kind = RegressionFeature::Kind;

// Weighted least squares for relative error: each row is divided by y, so the normal equations
// minimise Σ((ŷ−y)/y)². Returns false when the design is rank-deficient.
bool solve(const Eigen::MatrixXd& design, const Eigen::VectorXd& y, const std::vector<std::size_t>& rows,
           Eigen::VectorXd& beta) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, design.cols());
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto r = static_cast<Eigen::Index>(rows[static_cast<std::size_t>(i)]);
    a.row(i) = design.row(r) / y[r];
    b[i] = 1.0;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  if (qr.rank() < design.cols()) return false;
  beta = qr.solve(b);
  return beta.allFinite();
}

double cv_error(const Eigen::MatrixXd& design, const Eigen::VectorXd& y,
                const std::vector<std::vector<std::size_t>>& folds) {
  const std::size_t n = static_cast<std::size_t>(y.size());
  double total = 0;
  for (const auto& validation : folds) {
    std::vector<char> held(n, 0);
    for (std::size_t r : validation) held[r] = 1;
    std::vector<std::size_t> train;
    for (std::size_t r = 0; r < n; ++r)
      if (!held[r]) train.push_back(r);
    Eigen::VectorXd beta;
    if (!solve(design, y, train, beta)) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (std::size_t r : validation) {
      const auto i = static_cast<Eigen::Index>(r);
      const double e = (design.row(i).dot(beta) - y[i]) / y[i];
      sum += e * e;
    }
    total += sum / static_cast<double>(validation.size()) / static_cast<double>(folds.size());
  }
  return total;
}

}  // namespace

void RegressionOptions::validate() const {
  const std::string source = "regression options";
  if (max_features < 1) throw InputError(source, "max_features", "must be ≥ 1");
  if (cv_folds < 2) throw InputError(source, "cv_folds", "must be ≥ 2");
  if (!(min_improvement >= 0 && min_improvement < 1)) throw InputError(source, "min_improvement", "must be in [0, 1)");
}

std::string RegressionFeature::name() const {
  switch (kind) {
    case Kind::identity: return a;
    case Kind::inverse: return "1/" + a;
    case Kind::log2: return "log2(" + a + ")";
    case Kind::product: return a + "*" + b;
    case Kind::ratio: return a + "/" + b;
  }
  return a;
}

double RegressionFeature::value(const Dataset& data, std::size_t row) const {
  const double va = data.value(row, a);
  switch (kind) {
    case Kind::identity: return va;
    case Kind::inverse: return 1.0 / va;
    case Kind::log2: return std::log2(va);
    case Kind::product: return va * data.value(row, b);
    case Kind::ratio: return va / data.value(row, b);
  }
  return va;
}

double RegressionResult::predict(const Dataset& data, std::size_t row) const {
  double y = intercept;
  for (std::size_t j = 0; j < features.size(); ++j) y += coefficients[j] * features[j].value(data, row);
  return y;
}

RegressionResult fit_regression_baseline(const Dataset& data, const std::vector<std::string>& variables,
                                         const RegressionOptions& options) {
  options.validate();
  RegressionResult result;
  const std::size_t n = data.size();
  if (n < 4) {
    result.status = "too few rows for a cross-validated regression (need ≥ 4)";
    return result;
  }

  // Candidate features: defined and non-constant on every row.
  std::vector<RegressionFeature> candidates;
  for (std::size_t i = 0; i < variables.size(); ++i) {
    candidates.push_back({Kind::identity, variables[i], ""});
    candidates.push_back({Kind::inverse, variables[i], ""});
    candidates.push_back({Kind::log2, variables[i], ""});
    for (std::size_t j = i + 1; j < variables.size(); ++j) {
      candidates.push_back({Kind::product, variables[i], variables[j]});
      candidates.push_back({Kind::ratio, variables[i], variables[j]});
      candidates.push_back({Kind::ratio, variables[j], variables[i]});
    }
  }
  std::vector<RegressionFeature> usable;
  std::vector<std::vector<double>> columns;
  for (const auto& feature : candidates) {
    std::vector<double> column(n);
    bool ok = true;
    for (std::size_t r = 0; r < n && ok; ++r) {
      column[r] = feature.value(data, r);
      ok = std::isfinite(column[r]);
    }
    if (!ok) continue;
    const auto [lo, hi] = std::minmax_element(column.begin(), column.end());
    if (*hi - *lo <= 1e-12 * std::max(std::abs(*hi), std::abs(*lo))) continue;
    usable.push_back(feature);
    columns.push_back(std::move(column));
  }

  Eigen::VectorXd y(static_cast<Eigen::Index>(n));
  for (std::size_t r = 0; r < n; ++r) y[static_cast<Eigen::Index>(r)] = data.y(r);
  const unsigned k = static_cast<unsigned>(std::min<std::size_t>(options.cv_folds, n));
  const auto folds = detail::make_folds(n, k, options.seed);
  const std::size_t smallest_train = n - (n + k - 1) / k;

  auto design_of = [&](const std::vector<std::size_t>& chosen) {
    Eigen::MatrixXd design(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(chosen.size() + 1));
    for (std::size_t r = 0; r < n; ++r) {
      const auto i = static_cast<Eigen::Index>(r);
      design(i, 0) = 1.0;
      for (std::size_t j = 0; j < chosen.size(); ++j) design(i, static_cast<Eigen::Index>(j + 1)) = columns[chosen[j]][r];
    }
    return design;
  };

  std::vector<std::size_t> chosen;
  double current = cv_error(design_of(chosen), y, folds);
  while (chosen.size() < options.max_features && chosen.size() + 2 < smallest_train) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_index = usable.size();
    for (std::size_t c = 0; c < usable.size(); ++c) {
      if (std::find(chosen.begin(), chosen.end(), c) != chosen.end()) continue;
      auto trial = chosen;
      trial.push_back(c);
      const double error = cv_error(design_of(trial), y, folds);
      if (error < best) {
        best = error;
        best_index = c;
      }
    }
    if (best_index == usable.size() || !(best < current * (1 - options.min_improvement))) break;
    chosen.push_back(best_index);
    current = best;
  }

  std::vector<std::size_t> all(n);
  for (std::size_t r = 0; r < n; ++r) all[r] = r;
  Eigen::VectorXd beta;
  const Eigen::MatrixXd design = design_of(chosen);
  if (!solve(design, y, all, beta)) {
    result.status = "the selected features are linearly dependent";
    return result;
  }
  result.fitted = true;
  result.status = chosen.empty() ? "fitted (no feature improved on the mean)" : "fitted";
  result.intercept = beta[0];
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    result.features.push_back(usable[chosen[j]]);
    result.coefficients.push_back(beta[static_cast<Eigen::Index>(j + 1)]);
  }
  result.cv_msre = current;
  for (std::size_t r = 0; r < n; ++r) result.predictions.push_back(design.row(static_cast<Eigen::Index>(r)).dot(beta));
  const auto m = error_metrics(data.ys(), result.predictions);
  result.r2 = m.r2;
  result.mape = m.mape;
  result.rmse = m.rmse;
  return result;
}

}  // namespace trainsim::fitting
