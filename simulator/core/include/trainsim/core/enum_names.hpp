#pragma once
// One name table per enum, used both ways: to_string, parsing, the list of names a reader offers
// (in the table's order, which is the order error messages list them in) and reading a JSON value.
//
//   inline constexpr EnumNames<Precision, 4> kPrecisionNames{{{Precision::fp32, "fp32"}, …}};
//   to_string(p)          -> kPrecisionNames.name(p)
//   parse_precision(text) -> kPrecisionNames.parse(text)
//   precision_names()     -> kPrecisionNames.names()
//   node.one_of(...)      -> kPrecisionNames.read(node)   (unknown names: the same message as one_of)
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/json_reader.hpp"

namespace trainsim {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
struct EnumNames {
  std::array<EnumName<E>, N> entries;

  /// The value's name; the first entry's for a value missing from the table (a table is complete:
  /// each has a unit test that every value reads back).
  constexpr std::string_view name(E value) const {
    for (const auto& e : entries)
      if (e.value == value) return e.name;
    return entries[0].name;
  }
  /// The value named `text`, or nullopt.
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& e : entries)
      if (e.name == text) return e.value;
    return std::nullopt;
  }
  /// Every name, in the table's order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(N);
    for (const auto& e : entries) out.emplace_back(e.name);
    return out;
  }
  /// The value a JSON string names; JsonNode::one_of's error (with a suggestion) for anything else.
  E read(const JsonNode& node) const { return *parse(node.one_of(names())); }
};

}  // namespace trainsim
