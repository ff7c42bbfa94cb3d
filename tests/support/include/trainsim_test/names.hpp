#pragma once
// Readable, stable names for parameterised tests: GoogleTest accepts only [A-Za-z0-9_] in a name,
// and a parameter it cannot print shows up in CTest's test names as raw bytes (pointers included)
// that change from run to run. Give every parameter struct a PrintTo and a name generator.
#include <string>

namespace trainsim_test {

/// `text` with every character outside [A-Za-z0-9] replaced by '_', runs collapsed, ends trimmed
/// ("/layers/1/groups" → "layers_1_groups", "unknown_gpu.json" → "unknown_gpu_json").
inline std::string test_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "case" : out;
}

}  // namespace trainsim_test
