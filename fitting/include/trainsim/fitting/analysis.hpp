#pragma once
// The whole `trainsim fit` pipeline on a CSV table: choose the expression (a built-in model or the
// user's), split off the hold-out rows, fit, evaluate every term at every row, measure the
// extrapolation error, fit the regression baseline, and render the result as JSON or text.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/fitting/dataset.hpp"
#include "trainsim/fitting/expression.hpp"
#include "trainsim/fitting/fit.hpp"
#include "trainsim/fitting/regression.hpp"

namespace trainsim::fitting {

/// What to fit. Exactly one of `expression` and `model`.
struct FitRequest {
  std::string y_column = "iteration_time_s";
  std::optional<std::string> expression;  ///< muParser text (source "--expression")
  std::optional<std::string> model;       ///< a built-in model name (see models.hpp)
  std::vector<std::string> bounds;        ///< "--bounds" texts, applied in order over the model's defaults
  std::optional<std::string> holdout;     ///< rule over columns; rows where it is non-zero are held out
  std::vector<std::string> features;      ///< regression features; empty = the expression's variables
  bool baseline = true;                   ///< fit the regression baseline too
  FitOptions options;
};

/// One CSV row after the fit.
struct PointReport {
  std::size_t line = 0;
  bool held_out = false;
  std::optional<double> gpus;     ///< when the table has a gpus column
  double y = 0.0;
  double predicted = 0.0;
  std::vector<double> term_values;  ///< signed value of each term, in y's units
};

/// Errors on the held-out rows (predicted from constants fitted without them).
struct HoldoutReport {
  std::string rule;
  std::size_t rows = 0;
  ErrorMetrics errors;  ///< meaningful only when rows > 0
  std::optional<ErrorMetrics> baseline_errors;
};

/// The term with the largest mean share of the prediction at the largest GPU count.
struct DominantTerm {
  double gpus = 0.0;
  std::size_t term = 0;
  double share = 0.0;
};

/// Everything `trainsim fit` reports.
struct FitReport {
  std::string data_source;
  std::string y_name;
  std::optional<std::string> model;
  std::string expression;
  std::vector<Term> terms;
  std::vector<std::string> constant_names;
  std::vector<Bound> bounds;
  FitResult fit;
  std::vector<PointReport> points;  ///< every CSV row, in file order
  std::optional<HoldoutReport> holdout;
  std::optional<DominantTerm> dominant;
  std::optional<RegressionResult> baseline;
  double confidence_level = 0.95;

  /// Share of term `term` at point `point`: term value / prediction (NaN when the prediction is 0).
  double share(std::size_t point, std::size_t term) const;
};

/// Runs the pipeline. Throws InputError (exit 2) for: both or neither of expression/model, an
/// expression that does not parse (with the character position), a column the expression, the
/// hold-out rule or the features use that the CSV lacks, a non-numeric cell (with its line), a
/// constant without bounds, a hold-out rule that leaves no row, fewer rows than constants+1.
FitReport run_fit(const CsvTable& table, const FitRequest& request);

/// The JSON object `trainsim fit --json` writes (constants, r2, mape, terms, holdout …).
/// Deterministic: same report → same text.
Json fit_report_json(const FitReport& report);

/// The human summary: constants with intervals, R², MAPE, the dominant term, hold-out and baseline.
/// `full` adds the solver's full report.
std::string fit_report_text(const FitReport& report, bool full = false);

}  // namespace trainsim::fitting
