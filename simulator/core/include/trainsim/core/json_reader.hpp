#pragma once
// Checked JSON reading. Every value is read through a JsonNode that knows the file it came from and
// its JSON pointer, so every error reads "file: /json/pointer: what was expected, got what".
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>


#include "trainsim/core/error.hpp"

namespace trainsim {

/// trainsim reads and writes JSON with keys kept in document order (deterministic, readable output).
using Json = nlohmann::ordered_json;

/// A read-only view of one value inside a parsed JSON document. Cheap to copy; keeps the document
/// alive. Every accessor throws InputError naming the source and pointer when the value is not
/// what the caller expects.
class JsonNode {
public:
  JsonNode(std::shared_ptr<const Json> document, const Json* value, std::shared_ptr<const std::string> source,
           std::string pointer);

  const Json& raw() const noexcept { return *value_; }
  const std::string& source() const noexcept { return *source_; }
  /// RFC 6901 pointer of this value ("" for the root).
  const std::string& pointer() const noexcept { return pointer_; }
  /// An InputError located at this value.
  [[nodiscard]] InputError error(const std::string& detail) const;

  bool is_object() const noexcept { return value_->is_object(); }
  bool is_array() const noexcept { return value_->is_array(); }
  bool is_string() const noexcept { return value_->is_string(); }
  bool is_number() const noexcept { return value_->is_number(); }
  bool is_bool() const noexcept { return value_->is_boolean(); }
  bool is_null() const noexcept { return value_->is_null(); }

  /// Any JSON number (integers included).
  double as_number() const;
  /// A number > 0.
  double positive_number() const;
  /// A number ≥ 0.
  double non_negative_number() const;
  /// A number in [lo, hi].
  double number_in(double lo, double hi) const;
  /// An integer-valued number (5 or 5.0, not 5.5).
  std::int64_t as_int() const;
  /// An integer ≥ min.
  std::int64_t int_at_least(std::int64_t min) const;
  /// An integer in [lo, hi]: what a count stored as int is read with, so that no value past the
  /// int range is truncated (2^32 + 1 read as 1).
  int int_in(int lo, int hi) const;
  std::string as_string() const;
  bool as_bool() const;
  /// A string that is one of `allowed`; otherwise the error suggests the nearest.
  std::string one_of(const std::vector<std::string>& allowed) const;

  /// Throws unless this value is an object.
  void require_object() const;
  /// Throws unless this value is an array.
  void require_array() const;
  bool has(std::string_view key) const;
  /// A required member; error "missing required key 'k'" at this object.
  JsonNode at(std::string_view key) const;
  /// An optional member.
  std::optional<JsonNode> find(std::string_view key) const;
  /// Rejects any member not in `allowed`, suggesting the nearest valid key.
  void allow_only(const std::vector<std::string>& allowed) const;
  /// Members in document order.
  std::vector<std::pair<std::string, JsonNode>> members() const;

  std::size_t size() const;
  /// Element i of an array.
  JsonNode element(std::size_t index) const;
  std::vector<JsonNode> elements() const;

private:
  JsonNode child(const Json* value, std::string pointer) const;
  [[noreturn]] void type_error(std::string_view expected) const;

  std::shared_ptr<const Json> document_;
  const Json* value_;
  std::shared_ptr<const std::string> source_;
  std::string pointer_;
};

/// Appends one reference token to a JSON pointer, escaping '~' and '/'.
std::string json_pointer_append(const std::string& pointer, std::string_view token);
/// A short description of a JSON value's type and content for error messages ("string \"abc\"", "number -3").
std::string describe_json(const Json& value);

/// A view of the root of an already-parsed document (nothing is re-parsed); errors name `source`.
JsonNode json_root(std::shared_ptr<const Json> document, const std::string& source);
/// Parses text; syntax errors become InputError "source: line L, column C: ...".
JsonNode parse_json_text(std::string_view text, const std::string& source);
/// Reads and parses a file; an unreadable file is an InputError naming it.
JsonNode read_json_file(const std::filesystem::path& path);

}  // namespace trainsim
