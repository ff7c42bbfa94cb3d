#include "trainsim/fitting/dataset.hpp"

#include <cmath>

#include "trainsim/core/error.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::fitting {

void require_columns(const CsvTable& table, const std::vector<std::string>& columns, const std::string& purpose) {
  for (const auto& name : columns) {
    if (table.find_column(name)) continue;
    std::string detail = "column '" + name + "' used by " + purpose + " is missing";
    if (auto near = nearest_name(name, table.columns())) {
      detail += "; did you mean '" + *near + "'?";
    } else {
      detail += "; the columns are";
      for (std::size_t i = 0; i < table.columns().size(); ++i) detail += (i ? ", " : " ") + table.columns()[i];
    }
    throw InputError(table.source(), "header", detail);
  }
}

Dataset Dataset::from_csv(const CsvTable& table, const std::vector<std::string>& variables,
                          const std::string& y_column, const std::string& purpose) {
  auto require = [&](const std::string& name, const std::string& who) {
    require_columns(table, {name}, who);
    return *table.find_column(name);
  };
  const std::size_t y_index = require(y_column, "--y");
  std::vector<std::size_t> indices;
  for (const auto& name : variables) indices.push_back(require(name, purpose));
  if (table.row_count() == 0) throw InputError(table.source(), "", "no data rows after the header");

  Dataset data;
  data.source_ = table.source();
  data.variables_ = variables;
  data.y_name_ = y_column;
  data.values_.reserve(table.row_count() * variables.size());
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    for (std::size_t index : indices) data.values_.push_back(table.number(row, index));
    const double y = table.number(row, y_index);
    if (y == 0.0)
      throw InputError(table.source(), table.location_of(row),
                       "column '" + y_column + "': the fitted quantity must be non-zero (errors are relative), got 0");
    data.y_.push_back(y);
    data.lines_.push_back(table.line_of(row));
  }
  return data;
}

Dataset Dataset::from_values(std::string source, std::vector<std::string> variables, std::string y_name,
                             const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                             std::vector<std::size_t> lines) {
  TRAINSIM_CHECK(rows.size() == y.size(), "one y per row");
  TRAINSIM_CHECK(lines.empty() || lines.size() == y.size(), "one line per row");
  Dataset data;
  data.source_ = std::move(source);
  data.variables_ = std::move(variables);
  data.y_name_ = std::move(y_name);
  for (const auto& row : rows) {
    TRAINSIM_CHECK(row.size() == data.variables_.size(), "one value per variable");
    data.values_.insert(data.values_.end(), row.begin(), row.end());
  }
  data.y_ = y;
  if (lines.empty())
    for (std::size_t i = 0; i < y.size(); ++i) lines.push_back(i + 2);
  data.lines_ = std::move(lines);
  return data;
}

std::optional<std::size_t> Dataset::find_variable(std::string_view name) const {
  for (std::size_t i = 0; i < variables_.size(); ++i)
    if (variables_[i] == name) return i;
  return std::nullopt;
}

double Dataset::value(std::size_t row, std::string_view name) const {
  auto index = find_variable(name);
  TRAINSIM_CHECK(index.has_value(), "variable '" + std::string(name) + "' is not in the dataset");
  return value(row, *index);
}

Dataset Dataset::subset(const std::vector<std::size_t>& rows) const {
  Dataset out;
  out.source_ = source_;
  out.variables_ = variables_;
  out.y_name_ = y_name_;
  for (std::size_t row : rows) {
    TRAINSIM_CHECK(row < size(), "row index in range");
    for (std::size_t v = 0; v < variables_.size(); ++v) out.values_.push_back(value(row, v));
    out.y_.push_back(y_[row]);
    out.lines_.push_back(lines_[row]);
  }
  return out;
}

}  // namespace trainsim::fitting
