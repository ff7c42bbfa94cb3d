#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

/// Levenshtein edit distance between two strings (case-sensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name` by edit distance (case-insensitive), if it is close enough to be
/// a plausible typo: distance ≤ max(2, |name|/3). Ties go to the earliest candidate.
std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& candidates);

/// "unknown X 'name'" followed by "; did you mean 'y'?" or "; expected one of a, b, c".
std::string unknown_name_message(std::string_view what, std::string_view name, const std::vector<std::string>& candidates);

}  // namespace trainsim
