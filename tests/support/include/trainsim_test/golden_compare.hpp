#pragma once
// Golden results compared by structure and value instead of byte for byte.
//
// Two JSON documents agree when they have the same structure (the same keys in every object, the
// same length for every array, the same type at every place), the same strings, booleans and nulls,
// and numbers that agree within a tolerance:
//
//   - both integers (counts, ids, GPU numbers): equal;
//   - otherwise: |actual − expected| ≤ max(relative · |expected|, absolute)
//     with relative = 1e-9 and absolute = 1e-12 by default. The absolute floor covers values that
//     are zero up to rounding (an idle time of 2.2e-16 s may come out as 0 or 4.4e-16 s).
//
// Every difference, within tolerance or not, is reported with its JSON pointer (RFC 6901) and its
// field: the pointer with array indices generalised to `*` (/busiest_links/3/bytes →
// /busiest_links/*/bytes), the unit in which a regeneration reports its largest change.
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim_test {

struct Tolerance {
  double relative = 1e-9;   ///< allowed |Δ| / |expected|
  double absolute = 1e-12;  ///< allowed |Δ| however small |expected| is
  /// "relative 1e-09, absolute floor 1e-12"
  std::string describe() const;
};

struct JsonDifference {
  enum class Kind {
    number,     ///< both sides numbers that differ (within_tolerance says whether it matters)
    structure,  ///< a key missing or added, an array of another length, another type
    value,      ///< a string, boolean or null that differs
  };
  Kind kind = Kind::number;
  std::string pointer;   ///< where: "/breakdown_s/idle"
  std::string field;     ///< pointer with array indices as "*": "/busiest_links/*/bytes"
  std::string expected;  ///< the expected value as JSON text ("(absent)" when missing)
  std::string actual;    ///< the actual value as JSON text ("(absent)" when missing)
  double absolute_change = std::numeric_limits<double>::quiet_NaN();  ///< actual − expected (numbers)
  double relative_change =
      std::numeric_limits<double>::quiet_NaN();  ///< (actual − expected) / |expected|; ±inf when expected is 0
  bool within_tolerance = false;                 ///< only numbers can be within tolerance

  /// "/breakdown_s/compute: expected 0.2729, actual 0.2731, relative change +7.3e-04" (one line).
  std::string describe() const;
};

/// Every place where `actual` differs from `expected`, in document order (object keys sorted).
std::vector<JsonDifference> compare_json(const nlohmann::json& expected, const nlohmann::json& actual,
                                         const Tolerance& tolerance = {});

/// True when none of `differences` is outside the tolerance.
bool all_within_tolerance(const std::vector<JsonDifference>& differences);

/// "/busiest_links/3/bytes" → "/busiest_links/*/bytes": every all-digit path segment becomes "*".
std::string generalise_pointer(const std::string& pointer);

/// The largest change seen in one field over a set of cases.
struct FieldChange {
  std::string case_name;
  JsonDifference difference;  ///< the difference with the largest |relative change| in the field
  std::size_t count = 0;      ///< how many differences the field had over all cases
};

/// Collects differences case by case and keeps, per field, the one with the largest relative
/// change (structure and value changes rank above every number; an expected 0 ranks by |Δ|).
class ChangeSummary {
 public:
  void add(const std::string& case_name, const std::vector<JsonDifference>& differences);
  const std::map<std::string, FieldChange>& fields() const { return fields_; }
  bool empty() const { return fields_.empty(); }
  /// One line per field: "/breakdown_s/idle  +1.0e-03 relative (2 changes; largest in case X: 1 → 1.001)".
  std::string describe() const;
  /// A Markdown table of the same (field, changes, largest relative change, expected → actual, case).
  std::string markdown_table() const;

 private:
  std::map<std::string, FieldChange> fields_;
};

/// A dated entry of tests/data/golden/CHANGELOG.md: the reason, the cases rewritten and the largest
/// change per field over them. `date` is what heads the entry ("2026-11-26 13:40 UTC").
std::string golden_changelog_entry(const std::string& date, const std::string& reason,
                                   const std::vector<std::string>& cases_changed, std::size_t case_count,
                                   const ChangeSummary& summary);

}  // namespace trainsim_test
