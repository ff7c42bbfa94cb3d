#include "trainsim_test/golden_compare.hpp"

#include "trainsim/core/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace trainsim_test {

namespace {

using json = nlohmann::json;
using Kind = JsonDifference::Kind;

const char* const kAbsent = "(absent)";

std::string format_double(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

const char* type_name(const json& value) {
  if (value.is_number()) return "number";
  return value.type_name();
}

JsonDifference make_difference(Kind kind, const std::string& pointer, const std::string& expected,
                               const std::string& actual) {
  JsonDifference d;
  d.kind = kind;
  d.pointer = pointer;
  d.field = generalise_pointer(pointer);
  d.expected = expected;
  d.actual = actual;
  return d;
}

void compare_numbers(const json& expected, const json& actual, const std::string& pointer, const Tolerance& tolerance,
                     std::vector<JsonDifference>& out) {
  const bool both_integers = expected.is_number_integer() && actual.is_number_integer();
  if (both_integers && expected == actual) return;
  const double e = expected.get<double>();
  const double a = actual.get<double>();
  if (!both_integers && e == a) return;  // 8192 and 8192.0 are the same number
  JsonDifference d = make_difference(Kind::number, pointer, expected.dump(), actual.dump());
  d.absolute_change = a - e;
  d.relative_change = e != 0.0 ? (a - e) / std::fabs(e) : std::copysign(INFINITY, a - e);
  d.within_tolerance =
      !both_integers && std::fabs(a - e) <= std::max(tolerance.relative * std::fabs(e), tolerance.absolute);
  out.push_back(std::move(d));
}

void compare_at(const json& expected, const json& actual, const std::string& pointer, const Tolerance& tolerance,
                std::vector<JsonDifference>& out) {
  if (expected.is_number() && actual.is_number()) {
    compare_numbers(expected, actual, pointer, tolerance, out);
    return;
  }
  if (expected.is_object() && actual.is_object()) {
    std::set<std::string> keys;
    for (const auto& item : expected.items()) keys.insert(item.key());
    for (const auto& item : actual.items()) keys.insert(item.key());
    for (const auto& key : keys) {
      const std::string at = trainsim::json_pointer_append(pointer, key);
      const bool in_expected = expected.contains(key);
      const bool in_actual = actual.contains(key);
      if (in_expected && in_actual)
        compare_at(expected.at(key), actual.at(key), at, tolerance, out);
      else
        out.push_back(make_difference(Kind::structure, at, in_expected ? expected.at(key).dump() : kAbsent,
                                      in_actual ? actual.at(key).dump() : kAbsent));
    }
    return;
  }
  if (expected.is_array() && actual.is_array()) {
    const std::size_t common = std::min(expected.size(), actual.size());
    for (std::size_t i = 0; i < common; ++i)
      compare_at(expected[i], actual[i], pointer + "/" + std::to_string(i), tolerance, out);
    if (expected.size() != actual.size())
      out.push_back(make_difference(Kind::structure, pointer, "array of " + std::to_string(expected.size()),
                                    "array of " + std::to_string(actual.size())));
    return;
  }
  if (std::string(type_name(expected)) != type_name(actual)) {
    out.push_back(make_difference(Kind::structure, pointer, expected.dump(), actual.dump()));
    return;
  }
  if (expected != actual) out.push_back(make_difference(Kind::value, pointer, expected.dump(), actual.dump()));
}

// How large a difference is, for "largest change per field": structure and value changes above every
// number; a number by |relative change|, or by |Δ| when the expected value is 0.
double magnitude(const JsonDifference& d) {
  if (d.kind != Kind::number) return INFINITY;
  return std::isfinite(d.relative_change) ? std::fabs(d.relative_change) : std::fabs(d.absolute_change);
}

// A table cell: a '|' would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string change_text(const JsonDifference& d) {
  switch (d.kind) {
    case Kind::structure: return "structure";
    case Kind::value: return "value";
    case Kind::number: break;
  }
  if (std::isfinite(d.relative_change)) return format_double("%+.3e", d.relative_change) + " relative";
  return format_double("%+.3e", d.absolute_change) + " absolute (expected 0)";
}

}  // namespace

std::string Tolerance::describe() const {
  return "relative " + format_double("%.0e", relative) + ", absolute floor " + format_double("%.0e", absolute) +
         ", integers exact";
}

std::string JsonDifference::describe() const {
  std::string text = pointer.empty() ? "(document)" : pointer;
  switch (kind) {
    case Kind::structure: text += ": structure differs"; break;
    case Kind::value: text += ": value differs"; break;
    case Kind::number: break;
  }
  text += ": expected " + expected + ", actual " + actual;
  if (kind == Kind::number) {
    text += ", change " + change_text(*this);
    if (within_tolerance) text += " (within tolerance)";
  }
  return text;
}

std::vector<JsonDifference> compare_json(const json& expected, const json& actual, const Tolerance& tolerance) {
  std::vector<JsonDifference> out;
  compare_at(expected, actual, "", tolerance, out);
  return out;
}

bool all_within_tolerance(const std::vector<JsonDifference>& differences) {
  return std::all_of(differences.begin(), differences.end(),
                     [](const JsonDifference& d) { return d.within_tolerance; });
}

std::string generalise_pointer(const std::string& pointer) {
  std::string out;
  std::size_t start = 0;
  while (start < pointer.size()) {
    // pointer[start] is '/': the token runs to the next '/'.
    const std::size_t end = std::min(pointer.find('/', start + 1), pointer.size());
    const std::string token = pointer.substr(start + 1, end - start - 1);
    const bool index =
        !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    out += "/" + (index ? std::string("*") : token);
    start = end;
  }
  return out;
}

void ChangeSummary::add(const std::string& case_name, const std::vector<JsonDifference>& differences) {
  for (const auto& d : differences) {
    auto [it, inserted] = fields_.try_emplace(d.field, FieldChange{case_name, d, 0});
    FieldChange& field = it->second;
    ++field.count;
    if (!inserted && magnitude(d) > magnitude(field.difference)) {
      field.case_name = case_name;
      field.difference = d;
    }
  }
}

std::string ChangeSummary::describe() const {
  std::ostringstream out;
  for (const auto& [name, field] : fields_) {
    const JsonDifference& d = field.difference;
    out << "  " << (name.empty() ? "(document)" : name) << "  " << change_text(d) << " (" << field.count
        << (field.count == 1 ? " change" : " changes") << "; largest in " << field.case_name << " at "
        << (d.pointer.empty() ? "(document)" : d.pointer) << ": " << d.expected << " → " << d.actual << ")\n";
  }
  return out.str();
}

std::string ChangeSummary::markdown_table() const {
  std::ostringstream out;
  out << "| field | changes | largest change | expected → actual | case |\n";
  out << "|---|---|---|---|---|\n";
  for (const auto& [name, field] : fields_) {
    const JsonDifference& d = field.difference;
    out << "| `" << (name.empty() ? "(document)" : name) << "` | " << field.count << " | " << change_text(d) << " | `"
        << cell(d.expected) << "` → `" << cell(d.actual) << "` | " << field.case_name << " |\n";
  }
  return out.str();
}

std::string golden_changelog_entry(const std::string& date, const std::string& reason,
                                   const std::vector<std::string>& cases_changed, std::size_t case_count,
                                   const ChangeSummary& summary) {
  std::ostringstream out;
  out << "## " << date << "\n\n";
  out << "Reason: " << reason << "\n\n";
  out << "Cases rewritten (" << cases_changed.size() << " of " << case_count << "): ";
  for (std::size_t i = 0; i < cases_changed.size(); ++i) out << (i ? ", " : "") << cases_changed[i];
  out << "\n\nLargest change per field over the rewritten cases:\n\n" << summary.markdown_table() << "\n";
  return out.str();
}

}  // namespace trainsim_test
