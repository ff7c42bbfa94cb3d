#include "golden_cases.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

namespace trainsim_golden {

std::string golden_dir() {
  return trainsim_test::test_data_dir() + "/golden";
}

std::string expected_path(const GoldenCase& c) {
  return golden_dir() + "/expected/" + c.name + ".json";
}

std::vector<GoldenCase> load_cases() {
  std::ifstream in(golden_dir() + "/cases.json");
  const auto manifest = nlohmann::json::parse(in);
  std::vector<GoldenCase> cases;
  for (const auto& c : manifest.at("cases")) cases.push_back({c.at("name"), c.at("scenario"), c.at("set")});
  return cases;
}

trainsim_test::CliResult run_case(const GoldenCase& c) {
  std::vector<std::string> args{"simulate", c.scenario, "--json", "-", "--reproducible"};
  for (const auto& s : c.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  return trainsim_test::run_trainsim(args, trainsim_test::source_dir());
}

}  // namespace trainsim_golden
