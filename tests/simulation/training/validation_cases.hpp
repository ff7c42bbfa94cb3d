#pragma once
// The validation protocol of DESIGN.md on tests/data/validation: for each group (one system, model,
// batch and strategy), calibrate with the one-GPU throughput only, predict every multi-GPU point,
// report the absolute percentage error per point and the mean. Nothing is tuned per point: the
// scenario of a group differs from the group's one-GPU scenario only in the GPU count.
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"

namespace trainsim_validation {

struct Point {
  std::string group;
  int gpus = 0;
  double measured = 0;   ///< in the CSV's metric
  double predicted = 0;
  double error_percent() const;
};

struct Report {
  std::vector<Point> points;  ///< multi-GPU points only
  double mape_percent() const;
  /// A Markdown table: group, GPUs, measured, predicted, error.
  std::string markdown() const;
};

/// Runs every group (simulations in forked children). `validation_dir` is tests/data/validation.
Report run_validation(const std::string& validation_dir);

}  // namespace trainsim_validation
