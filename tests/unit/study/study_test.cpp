// The study library (simulator/study) without the app: sweep points, results files and validate's
// input checks, none of which runs a simulation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainsim/plan/scenario.hpp"
#include "trainsim/study/sweep.hpp"
#include "trainsim/study/validate.hpp"
#include "trainsim_test/errors.hpp"
#include "trainsim_test/files.hpp"

namespace {

namespace fs = std::filesystem;
using trainsim::Json;
using trainsim_test::error_of;

trainsim::plan::Scenario scenario_of(const std::string& text) {
  return trainsim::plan::read_scenario(Json::parse(text), "s.json");
}

const char* kSweep = R"({
  "workload": { "model": "resnet18", "batch_per_gpu": 32 },
  "platform": { "preset": "dgx-a100", "nodes": 2 },
  "strategy": { "kind": "ring_allreduce" },
  "sweep": { "platform.nodes": [1, 2, 4, 2], "strategy.kind": ["ring_allreduce", "parameter_server"] }
})";

TEST(StudySweep, PointsAreTheCartesianProductOfDistinctValuesFirstAxisSlowest) {
  const auto base = scenario_of(kSweep);
  std::vector<std::string> warnings;
  const auto points = trainsim::study::expand_sweep(base, &warnings);
  ASSERT_EQ(points.size(), 6u);  // nodes 1, 2, 4 (2 given twice counts once) × two kinds
  EXPECT_EQ(trainsim::study::count_sweep_points(base), 6u);
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(points[0].point, (Json{{"platform.nodes", 1}, {"strategy.kind", "ring_allreduce"}}));
  EXPECT_EQ(points[5].point, (Json{{"platform.nodes", 4}, {"strategy.kind", "parameter_server"}}));
  EXPECT_EQ(points[3].scenario.platform.nodes, 2);
  EXPECT_EQ(points[3].scenario.strategy.kind, trainsim::plan::StrategyKind::parameter_server);
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, i);
  EXPECT_NE(points[0].key, points[1].key);  // each point's document has its own fingerprint
  EXPECT_EQ(points[0].key, trainsim::study::expand_sweep(base)[0].key);
}

TEST(StudySweep, AnAxisThatIsNotAScenarioFieldIsReportedAtItsSweepKey) {
  const auto base = scenario_of(R"({
    "workload": { "model": "resnet18", "batch_per_gpu": 32 }, "platform": { "preset": "dgx-a100" },
    "strategy": { "kind": "ring_allreduce" }, "sweep": { "platform.node": [1, 2] } })");
  const auto e = error_of([&] { trainsim::study::expand_sweep(base); });
  EXPECT_EQ(e.location().rfind("/sweep/platform.node", 0), 0u) << e.what();
}

// Fixed values: results.jsonl files written by earlier builds must still resume.
TEST(StudySweep, FingerprintIsStableAcrossBuilds) {
  EXPECT_EQ(trainsim::study::fingerprint(""), "14650fb0739d0383");
  EXPECT_EQ(trainsim::study::fingerprint("a"), "44bd8ad473cd9906");
}

TEST(StudySweep, ResultsFileLinesAreReadBackAndAnUnterminatedPartialLineIsLeftOut) {
  const fs::path dir = trainsim_test::make_temp_dir("study_results");
  const fs::path path = dir / "results.jsonl";
  std::ofstream(path) << R"({"index": 0, "point": {}, "error": "x"})"
                      << "\n"
                      << R"({"index": 1, "poi)";
  std::vector<std::size_t> lines;
  const auto results = trainsim::study::read_results(path.string(), &lines);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["index"], 0);
  EXPECT_EQ(lines, (std::vector<std::size_t>{1}));
}

// validate refuses bad inputs before it simulates anything.
TEST(StudyValidate, TheSameMeasuredFileTwiceIsRefusedBeforeAnySimulation) {
  const fs::path dir = trainsim_test::make_temp_dir("study_validate");
  trainsim::study::ValidateOptions o;
  const std::string good = std::string(TRAINSIM_TEST_DATA_DIR) + "/good/validate/";
  o.measured = {good + "measured.csv", good + "measured.csv"};
  o.systems = good + "systems.json";
  o.out_dir = (dir / "out").string();
  std::ostringstream out;
  const auto e = error_of([&] { trainsim::study::run_validate(o, out); });
  EXPECT_NE(std::string(e.what()).find("given twice on the command line (measured files 1 and 2"), std::string::npos)
      << e.what();
  EXPECT_TRUE(out.str().empty());
}

// The error `validate` gives for the test's measured CSV against a systems file holding `text`.
trainsim::InputError validate_error(const std::string& name, const std::string& text) {
  const fs::path dir = trainsim_test::make_temp_dir(name);
  const fs::path systems = dir / "systems.json";
  std::ofstream(systems) << text;
  trainsim::study::ValidateOptions o;
  o.measured = {std::string(TRAINSIM_TEST_DATA_DIR) + "/good/validate/measured.csv"};
  o.systems = systems.string();
  o.out_dir = (dir / "out").string();
  std::ostringstream out;
  return error_of([&] { trainsim::study::run_validate(o, out); });
}

TEST(StudyValidate, ASystemsPlatformThatSetsNodesIsRefusedAtItsPointer) {
  const auto e = validate_error(
      "study_systems", R"({"systems": [{"dataset": "d", "system": "s", "platform": {"preset": "dgx1-v100", "nodes": 2},
    "strategies": {"ring": {"strategy": {"kind": "ring_allreduce"}}}}]})");
  EXPECT_EQ(e.location(), "/systems/0/platform/nodes") << e.what();
  EXPECT_NE(e.detail().find("comes from the measured CSV's nodes and gpus columns"), std::string::npos) << e.what();
}

TEST(StudyValidate, TwoEntriesForOneDatasetAndSystemAreRefused) {
  const std::string entry = R"({"dataset": "d", "system": "s", "platform": {"preset": "dgx1-v100"},
    "strategies": {"ring": {"strategy": {"kind": "ring_allreduce"}}}})";
  const auto e = validate_error("study_duplicate", R"({"systems": [)" + entry + "," + entry + "]}");
  EXPECT_EQ(e.location(), "/systems/1") << e.what();
  EXPECT_NE(e.detail().find("is already mapped at /systems/0"), std::string::npos) << e.what();
}

}  // namespace
