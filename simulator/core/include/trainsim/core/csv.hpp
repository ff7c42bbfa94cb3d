#pragma once
// A small RFC 4180 CSV reader: a header row, quoted fields with "" escapes, and every cell
// remembering its line so errors read "data.csv: line 12: column 'gpus': expected a number, got 'x'".
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

class CsvTable {
public:
  /// Parses text; `source` names it in errors. A leading UTF-8 byte-order mark is skipped. Throws
  /// InputError on a missing header, a header naming a (non-empty) column twice, an unterminated
  /// quote or a row whose field count differs from the header's.
  static CsvTable parse(const std::string& text, const std::string& source);
  /// Reads a file (InputError when it cannot be opened).
  static CsvTable read(const std::filesystem::path& path);

  const std::string& source() const noexcept { return source_; }
  const std::vector<std::string>& columns() const noexcept { return columns_; }
  std::size_t row_count() const noexcept { return rows_.size(); }
  /// Index of a column; nullopt when absent.
  std::optional<std::size_t> find_column(const std::string& name) const;
  /// Index of a column; InputError (suggesting the nearest name) when absent.
  std::size_t column(const std::string& name) const;
  const std::string& cell(std::size_t row, std::size_t column) const { return rows_.at(row).at(column); }
  /// A numeric cell; InputError "source: line N: column 'c': expected a number, got 'x'" otherwise.
  double number(std::size_t row, std::size_t column) const;
  /// The 1-based line of the file a row came from.
  std::size_t line_of(std::size_t row) const { return lines_.at(row); }
  /// "line N" for errors about a row.
  std::string location_of(std::size_t row) const;

private:
  std::string source_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

/// Quotes a field when it holds a comma, quote or newline.
std::string csv_escape(const std::string& field);

}  // namespace trainsim
