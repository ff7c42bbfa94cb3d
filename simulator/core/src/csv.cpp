#include "trainsim/core/csv.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim {

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable table;
  table.source_ = source;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, field_started = false, record_has_content = false;
  std::size_t line = 1, record_line = 1;

  auto end_record = [&]() {
    record.push_back(field);
    field.clear();
    const bool blank = record.size() == 1 && record[0].empty() && !record_has_content;
    if (!blank) {
      if (table.columns_.empty()) {
        // A column named twice is ambiguous (which one is "value"?): every reader would silently
        // take the first, as JSON readers would with a duplicate key, which they reject too. Empty
        // names (trailing commas of spreadsheet exports) can never be asked for, so they may repeat.
        // A map, not a pair loop: a header of a million columns must not take 10^12 comparisons.
        std::unordered_map<std::string_view, std::size_t> first_column;
        for (std::size_t i = 0; i < record.size(); ++i) {
          if (record[i].empty()) continue;
          const auto [seen, inserted] = first_column.emplace(record[i], i);
          if (!inserted)
            throw InputError(source, "line " + std::to_string(record_line),
                             "column '" + record[i] + "' appears twice in the header (columns " +
                                 std::to_string(seen->second + 1) + " and " + std::to_string(i + 1) + "); name each column once");
        }
        table.columns_ = record;
      } else {
        if (record.size() != table.columns_.size())
          throw InputError(source, "line " + std::to_string(record_line),
                           "expected " + std::to_string(table.columns_.size()) + " fields as in the header, got " +
                               std::to_string(record.size()));
        table.rows_.push_back(record);
        table.lines_.push_back(record_line);
      }
    }
    record.clear();
    record_has_content = false;
    field_started = false;
  };

  // Excel's "CSV UTF-8" and Notepad start the file with a byte-order mark; it is not part of the
  // first column's name (the JSON reader skips it too).
  const std::size_t start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!field_started || field.empty()) {
          in_quotes = true;
          field_started = record_has_content = true;
        } else {
          field += c;
        }
        break;
      case ',':
        record.push_back(field);
        field.clear();
        field_started = false;
        record_has_content = true;
        break;
      case '\r': break;
      case '\n':
        end_record();
        ++line;
        record_line = line;
        break;
      default:
        field += c;
        field_started = record_has_content = true;
    }
  }
  if (in_quotes) throw InputError(source, "line " + std::to_string(record_line), "unterminated quoted field");
  if (!field.empty() || !record.empty() || record_has_content) end_record();
  if (table.columns_.empty()) throw InputError(source, "", "empty CSV file: expected a header row");
  return table;
}

CsvTable CsvTable::read(const std::filesystem::path& path) {
  return parse(read_input_text(path, "CSV file"), path.string());
}

std::optional<std::size_t> CsvTable::find_column(const std::string& name) const {
  for (std::size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i] == name) return i;
  return std::nullopt;
}

std::size_t CsvTable::column(const std::string& name) const {
  if (auto index = find_column(name)) return *index;
  throw InputError(source_, "header", unknown_name_message("column", name, columns_));
}

std::string CsvTable::location_of(std::size_t row) const { return "line " + std::to_string(line_of(row)); }

double CsvTable::number(std::size_t row, std::size_t column) const {
  const std::string& text = cell(row, column);
  std::size_t begin = 0, end = text.size();
  while (begin < end && text[begin] == ' ') ++begin;
  while (end > begin && text[end - 1] == ' ') --end;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + end, value);
  if (begin == end || ec != std::errc() || ptr != text.data() + end || !std::isfinite(value))
    throw InputError(source_, location_of(row),
                     "column '" + columns_[column] + "': expected a number, got '" + text + "'");
  return value;
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace trainsim
