#pragma once
// The numbers a fit works on: the CSV columns an expression (or a hold-out rule, or the regression
// baseline) uses, and the observed quantity y, row by row, each row remembering its CSV line so
// every later message can point at the file.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/csv.hpp"

namespace trainsim::fitting {

/// Throws InputError(table source, "header", "column 'x' used by PURPOSE is missing; did you mean
/// …") for the first of `columns` the table lacks.
void require_columns(const CsvTable& table, const std::vector<std::string>& columns, const std::string& purpose);

/// A numeric table: `variables()` columns plus the observed `y`, in CSV row order.
class Dataset {
public:
  /// Reads the named columns and `y_column` from `table`. `purpose` says who needs the columns
  /// ("the expression", "--holdout") for the missing-column message. Throws InputError naming the
  /// file: a missing column ("column 'x' used by the expression is missing", with the nearest
  /// name), a non-numeric or non-finite cell (with its line and column), a y equal to 0 (relative
  /// errors need y ≠ 0), or a table with no rows.
  static Dataset from_csv(const CsvTable& table, const std::vector<std::string>& variables,
                          const std::string& y_column, const std::string& purpose = "the expression");

  /// Builds a dataset from values already in memory (tests, benchmarks). `rows[i]` holds one value
  /// per variable; `lines` may be empty (then lines are 2, 3, …). TRAINSIM_CHECKs the shapes.
  static Dataset from_values(std::string source, std::vector<std::string> variables, std::string y_name,
                             const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                             std::vector<std::size_t> lines = {});

  /// The file (or label) the rows came from, for messages.
  const std::string& source() const noexcept { return source_; }
  /// Variable (column) names, in the order given at construction.
  const std::vector<std::string>& variables() const noexcept { return variables_; }
  /// Name of the observed quantity (the --y column).
  const std::string& y_name() const noexcept { return y_name_; }
  /// Number of rows.
  std::size_t size() const noexcept { return y_.size(); }
  /// Index of a variable; nullopt when it is not part of this dataset.
  std::optional<std::size_t> find_variable(std::string_view name) const;
  /// Value of variable `variable` (index into variables()) at `row`.
  double value(std::size_t row, std::size_t variable) const { return values_[row * variables_.size() + variable]; }
  /// Value of the named variable at `row`; TRAINSIM_CHECK that it exists.
  double value(std::size_t row, std::string_view name) const;
  /// Observed value at `row` (never 0 when read from CSV).
  double y(std::size_t row) const { return y_[row]; }
  /// All observed values, in row order.
  const std::vector<double>& ys() const noexcept { return y_; }
  /// The 1-based CSV line the row came from.
  std::size_t line(std::size_t row) const { return lines_[row]; }
  /// The rows at `rows`, in that order (same variables).
  Dataset subset(const std::vector<std::size_t>& rows) const;

private:
  std::string source_;
  std::vector<std::string> variables_;
  std::string y_name_;
  std::vector<double> values_;  // row-major, size() × variables_.size()
  std::vector<double> y_;
  std::vector<std::size_t> lines_;
};

}  // namespace trainsim::fitting
