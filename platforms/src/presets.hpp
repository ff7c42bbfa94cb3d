#pragma once
// Private: the preset catalog as platform JSON texts.
#include <string>
#include <vector>

namespace trainsim::platforms::detail {

/// One preset: its name, a one-line description and its platform JSON (every key present).
struct PresetText {
  std::string name;
  std::string description;
  std::string json;
};

/// Every preset, in catalog order.
const std::vector<PresetText>& preset_texts();

}  // namespace trainsim::platforms::detail
