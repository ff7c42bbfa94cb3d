// Golden results: `trainsim simulate SCENARIO --set ... --json - --reproducible` for every case of
// tests/data/golden/cases.json must print exactly tests/data/golden/expected/NAME.json. The
// expectations were made before the plan-as-contract refactor; a change meant to alter
// results regenerates them with TRAINSIM_UPDATE_GOLDEN=1 and says so in its commit.
#include <gtest/gtest.h>

#include <ostream>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

namespace {

using trainsim_test::read_file;

struct GoldenCase {
  std::string name;
  std::string scenario;           // relative to the repository root
  std::vector<std::string> sets;  // --set assignments, in order
};
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::string golden_dir() { return trainsim_test::test_data_dir() + "/golden"; }

std::vector<GoldenCase> load_cases() {
  std::ifstream in(golden_dir() + "/cases.json");
  const auto manifest = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : manifest.at("cases")) cases.push_back({c.at("name"), c.at("scenario"), c.at("set")});
  return cases;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, SimulateJsonIsByteIdentical) {
  const GoldenCase& c = GetParam();
  std::vector<std::string> args{"simulate", c.scenario, "--json", "-", "--reproducible"};
  for (const auto& s : c.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  const auto r = trainsim_test::run_trainsim(args, trainsim_test::source_dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string expected_path = golden_dir() + "/expected/" + c.name + ".json";
  if (std::getenv("TRAINSIM_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(golden_dir() + "/expected");
    std::ofstream(expected_path) << r.out;
    GTEST_SKIP() << "wrote " << expected_path;
  }
  ASSERT_TRUE(std::filesystem::exists(expected_path)) << expected_path;
  EXPECT_EQ(r.out, read_file(expected_path)) << "case " << c.name << " differs from " << expected_path;
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& p) { return p.param.name; });

}  // namespace
