#pragma once
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/result.hpp"
#include "trainsim/plan/scenario.hpp"

namespace trainsim::study {

/// A self-contained HTML report of a sweep (inline CSS and SVG, no script, nothing fetched):
/// throughput and scaling efficiency against GPUs per series, the iteration breakdown of every
/// point, and the results table. `results` are result lines sorted by index; failed points appear
/// in the table with their error.
std::string sweep_report_html(const plan::Scenario& base, const std::vector<plan::ResultRecord>& results);

}  // namespace trainsim::study
