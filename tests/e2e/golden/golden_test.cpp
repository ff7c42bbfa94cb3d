// Golden results: `trainsim simulate SCENARIO --set ... --json - --reproducible` for every case of
// tests/data/golden/cases.json must agree with tests/data/golden/expected/NAME.json in structure
// (same keys, array lengths and types), strings, booleans and nulls, and in numbers within
//   relative 1e-9 of the expected value, with an absolute floor of 1e-12 (values near 0);
//   integers exactly
// (trainsim_test::Tolerance, tests/support/include/trainsim_test/golden_compare.hpp). A failure
// names the case, the JSON pointer, expected and actual values and the relative change.
//
// A change meant to alter results regenerates the expectations with trainsim_golden_update
// (`TRAINSIM_GOLDEN_REASON="why" cmake --build build --target golden_update`): it prints the largest
// change per field, rewrites only the cases outside tolerance and appends a dated entry to
// tests/data/golden/CHANGELOG.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>

#include "golden_cases.hpp"
#include "trainsim_test/golden_compare.hpp"

namespace trainsim_golden {
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }
}  // namespace trainsim_golden

namespace {

using trainsim_golden::GoldenCase;

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, SimulateJsonMatchesWithinTolerance) {
  const GoldenCase& c = GetParam();
  if (std::getenv("TRAINSIM_UPDATE_GOLDEN"))
    FAIL() << "TRAINSIM_UPDATE_GOLDEN no longer rewrites the expectations from the test; run "
              "TRAINSIM_GOLDEN_REASON=\"why\" cmake --build build --target golden_update";
  const auto r = trainsim_golden::run_case(c);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string path = trainsim_golden::expected_path(c);
  ASSERT_TRUE(std::filesystem::exists(path)) << "case " << c.name << ": no expectation " << path;
  const auto expected = nlohmann::json::parse(trainsim_test::read_file(path));
  const auto actual = nlohmann::json::parse(r.out);
  const trainsim_test::Tolerance tolerance;
  const auto differences = trainsim_test::compare_json(expected, actual, tolerance);
  std::size_t reported = 0;
  for (const auto& d : differences) {
    if (d.within_tolerance) continue;
    if (++reported > 20) break;
    ADD_FAILURE() << "case " << c.name << " (" << path << "): " << d.describe() << " [tolerance "
                  << tolerance.describe() << "]";
  }
  if (reported > 20) ADD_FAILURE() << "case " << c.name << ": more differences not shown";
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(trainsim_golden::load_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& p) { return p.param.name; });

}  // namespace
