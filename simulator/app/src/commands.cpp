// The command registry and the helpers every command shares (commands.hpp): what the executable
// and the Python module both link (the trainsim_commands object library); main.cpp adds main().
#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"

namespace trainsim::app {
namespace {
std::vector<std::pair<int, CommandAdder>>& registry() {
  static std::vector<std::pair<int, CommandAdder>> commands;
  return commands;
}
}  // namespace

namespace {
CLI::Validator number_at_least(double min, bool strict, const char* name) {
  return CLI::Validator(
      [min, strict](std::string& text) -> std::string {
        double value = 0;
        std::size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return "expected a number, got '" + text + "'";
        }
        if (used != text.size() || !std::isfinite(value)) return "expected a finite number, got '" + text + "'";
        if (strict ? !(value > min) : !(value >= min))
          return std::string("must be ") + (strict ? "> " : "≥ ") + fmt::format("{:g}", min) + ", got " + text;
        return {};
      },
      name);
}
}  // namespace

void notice_large_platform(int nodes) {
  if (nodes > 4096)
    std::cerr << "trainsim: " << nodes
              << " nodes: building and simulating a platform this large takes tens of seconds (simulator/README.md, "
                 "Troubleshooting and limits)\n";
}

CLI::Validator positive_number() {
  return number_at_least(0, true, "POSITIVE");
}
CLI::Validator non_negative_number() {
  return number_at_least(0, false, "NON-NEGATIVE");
}

bool register_command(int order, CommandAdder adder) {
  registry().emplace_back(order, adder);
  return true;
}

std::vector<CommandAdder> registered_commands() {
  auto commands = registry();
  std::stable_sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CommandAdder> out;
  for (const auto& [order, adder] : commands) out.push_back(adder);
  return out;
}

}  // namespace trainsim::app
