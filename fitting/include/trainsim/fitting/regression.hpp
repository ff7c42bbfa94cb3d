#pragma once
// The regression baseline in the style of Lattuada et al. (Cluster Computing 2022): linear
// regression on features derived from the network, hyper-parameter and hardware columns, chosen by
// greedy forward selection under k-fold cross-validation. Reported beside the expression fit as
// the "black box" it has to beat.
//
// Candidate features of variables v, w:  v, 1/v, log2(v), v·w, v/w  (each only where defined on
// every row and not constant). The fit minimises the squared relative error Σ((ŷ−y)/y)², the
// same error measure as the expression fit.
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/fitting/dataset.hpp"
#include "trainsim/fitting/fit.hpp"

namespace trainsim::fitting {

/// Knobs of the forward selection.
struct RegressionOptions {
  /// At most this many features besides the intercept (≥ 1).
  unsigned max_features = 6;
  /// Folds of the cross-validation that scores candidates (≥ 2; reduced when rows are few).
  unsigned cv_folds = 5;
  /// A feature is added only when it lowers the CV error by at least this fraction, in [0, 1).
  double min_improvement = 0.01;
  std::uint64_t seed = 1;
  /// Throws InputError("regression options", field, …).
  void validate() const;
};

/// One derived feature: kind applied to variables a (and b).
struct RegressionFeature {
  enum class Kind { identity, inverse, log2, product, ratio };
  Kind kind = Kind::identity;
  std::string a;
  std::string b;
  /// "gpus", "1/gpus", "log2(gpus)", "gpus*batch_per_gpu", "gpus/batch_per_gpu".
  std::string name() const;
  /// Value at `row` of `data` (which must hold a and b); may be non-finite.
  double value(const Dataset& data, std::size_t row) const;
};

/// The selected model.
struct RegressionResult {
  bool fitted = false;               ///< false: `status` says why no model was fitted
  std::string status = "not run";
  std::vector<RegressionFeature> features;  ///< in the order forward selection added them
  double intercept = 0.0;
  std::vector<double> coefficients;  ///< one per feature
  double cv_msre = 0.0;              ///< cross-validated mean squared relative error of the selection
  std::vector<double> predictions;   ///< on the fitted rows
  double r2 = 0.0, mape = 0.0, rmse = 0.0;

  /// ŷ at `row` of `data` (same variables as the fit).
  double predict(const Dataset& data, std::size_t row) const;
};

/// Fits the baseline to `data` using the listed variables (each must be in data). Too few rows
/// (fewer than 4) or no usable feature is a result with fitted = false, not an exception; throws
/// InputError only for invalid options.
RegressionResult fit_regression_baseline(const Dataset& data, const std::vector<std::string>& variables,
                                         const RegressionOptions& options);

}  // namespace trainsim::fitting
