#include "trainsim/core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace trainsim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}
}  // namespace

std::optional<std::string> nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string key = lower(name);
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(key, lower(candidate));
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string unknown_name_message(std::string_view what, std::string_view name, const std::vector<std::string>& candidates) {
  std::string message = "unknown " + std::string(what) + " '" + std::string(name) + "'";
  // A short name that starts longer ones ("H100" for "H100-SXM5-80GB", "H100-PCIe-80GB") means
  // those, however close another name is by edit distance ("H200").
  std::vector<std::string> extensions;
  const std::string key = lower(name);
  if (!key.empty())
    for (const auto& candidate : candidates)
      if (candidate.size() > key.size() && lower(candidate).rfind(key, 0) == 0) extensions.push_back(candidate);
  if (extensions.size() == 1) return message + "; did you mean '" + extensions.front() + "'?";
  if (extensions.size() > 1) {
    message += "; did you mean one of ";
    for (std::size_t i = 0; i < extensions.size(); ++i) message += (i ? ", '" : "'") + extensions[i] + "'";
    return message + "?";
  }
  if (auto suggestion = nearest_name(name, candidates)) return message + "; did you mean '" + *suggestion + "'?";
  if (candidates.empty()) return message;
  message += "; expected one of ";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) message += ", ";
    message += candidates[i];
  }
  return message;
}

}  // namespace trainsim
