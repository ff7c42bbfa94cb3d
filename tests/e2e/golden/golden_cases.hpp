#pragma once
// The golden cases of tests/data/golden/cases.json and how each is run; shared by the golden test
// (compares) and trainsim_golden_update (regenerates).
#include <string>
#include <vector>

#include "trainsim_test/cli.hpp"

namespace trainsim_golden {

struct GoldenCase {
  std::string name;
  std::string scenario;           // relative to the repository root
  std::vector<std::string> sets;  // --set assignments, in order
};

/// tests/data/golden
std::string golden_dir();
/// tests/data/golden/expected/NAME.json
std::string expected_path(const GoldenCase& c);
/// Every case of tests/data/golden/cases.json, in its order.
std::vector<GoldenCase> load_cases();
/// `trainsim simulate SCENARIO --set ... --json - --reproducible`, run from the repository root.
trainsim_test::CliResult run_case(const GoldenCase& c);

}  // namespace trainsim_golden
