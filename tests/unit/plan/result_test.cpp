// The result record: JSON round trips, checked reading, and the one CSV schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/result.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

IterationResult sample() {
  IterationResult r;
  r.name = "sample";
  r.point = Json{{"platform.nodes", 4}};
  r.gpus = 32;
  r.nodes = 4;
  r.global_batch = 2048;
  r.iteration_time_s = 0.2101;
  r.samples_per_s = 2048 / 0.2101;
  r.scaling_efficiency = 0.83;
  r.single_gpu_samples_per_s = 367.25;
  r.breakdown = Breakdown{0.18, 0.09, 0.03, 0.001};
  r.network_bytes = 1.2e10;
  r.busiest_links = {LinkLoad{"network → node 0 NIC 0", "nic", 3e9, 0.71, 0.12},
                     LinkLoad{"node 0 → switch", "fabric", 3e9, 0.71, 0.1}};
  r.bound = IterationBound{BoundKind::incast,
                           "node 0 NIC 0 ↔ network",
                           "nic",
                           1,
                           0.14,
                           "The iteration is bound by node 0 NIC 0 ↔ network (NIC), the parameter server's incast: …"};
  r.warnings = {Warning{"single_server", "one parameter server for 32 workers: …"}};
  r.memory = MemoryUsage{1e8, 1e8, 1e8, 9e9, 1 << 30, 1.03e10, 0.95e10, 1.6e10};
  r.strategy = "ring_allreduce";
  r.network_model = "ideal";
  r.calibration_factor = 0.7;
  r.buckets = {BucketTiming{2.6e7, 0.1, 0.1, 0.12}, BucketTiming{1e8, 0.15, 0.15, 0.2}};
  r.variables = ModelVariables{8, 64, 8.25e9, 1.02e8, 25'557'032, "fp32", 300, 3.4, 200, 2, 8, 0, 0.17, 1'281'167};
  r.sim_wall_s = 0;
  return r;
}

JsonNode node(const Json& j) { return parse_json_text(j.dump(), "result.json"); }

TEST(IterationResult, JsonRoundTripIsExact) {
  const Json once = sample().to_json();
  EXPECT_EQ(IterationResult::from_json(node(once)).to_json().dump(), once.dump());
}

TEST(IterationResult, LinkClassLimitShareBoundAndWarningsRoundTrip) {
  const IterationResult back = IterationResult::from_json(node(sample().to_json()));
  ASSERT_EQ(back.busiest_links.size(), 2u);
  EXPECT_EQ(back.busiest_links[0].link_class, "nic");
  EXPECT_DOUBLE_EQ(back.busiest_links[0].limit_share, 0.12);
  EXPECT_EQ(back.bound.kind, BoundKind::incast);
  EXPECT_EQ(back.bound.resource, "node 0 NIC 0 ↔ network");
  EXPECT_EQ(back.bound.link_class, "nic");
  EXPECT_EQ(back.bound.connections, 1);
  EXPECT_DOUBLE_EQ(back.bound.share, 0.14);
  EXPECT_EQ(back.bound.sentence, sample().bound.sentence);
  ASSERT_EQ(back.warnings.size(), 1u);
  EXPECT_EQ(back.warnings[0].kind, "single_server");
  const Json j = sample().to_json();
  EXPECT_EQ(j["bound"]["kind"], "incast");
  EXPECT_EQ(j["busiest_links"][0]["class"], "nic");
}

// Lines written before links had classes and results had a bound still read: the new fields
// take their "not known" values.
TEST(IterationResult, OlderLinesWithoutTheNewFieldsRead) {
  Json j = sample().to_json();
  j.erase("bound");
  j.erase("warnings");
  j["busiest_links"] = Json::array({Json{{"name", "link_from_0_7_0_UP"}, {"bytes", 1e9}, {"busy_fraction", 0.2}}});
  const IterationResult back = IterationResult::from_json(node(j));
  EXPECT_EQ(back.bound.kind, BoundKind::unknown);
  EXPECT_TRUE(back.bound.sentence.empty());
  EXPECT_TRUE(back.warnings.empty());
  ASSERT_EQ(back.busiest_links.size(), 1u);
  EXPECT_EQ(back.busiest_links[0].name, "link_from_0_7_0_UP");
  EXPECT_EQ(back.busiest_links[0].link_class, "unknown");
  EXPECT_EQ(back.busiest_links[0].limit_share, 0);
}

TEST(IterationResult, BadBoundIsReportedAtItsPointer) {
  for (const auto& [field, value, pointer] :
       {std::tuple<const char*, Json, const char*>{"kind", "network", "/bound/kind"},
        {"connections", -1, "/bound/connections"},
        {"shares", 0.5, "/bound/shares"}}) {
    Json j = sample().to_json();
    j["bound"][field] = value;
    try {
      IterationResult::from_json(node(j));
      ADD_FAILURE() << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), pointer) << field << ": " << e.what();
    }
  }
}

TEST(IterationResult, MissingFieldIsReportedAtItsPointer) {
  Json j = sample().to_json();
  j["breakdown_s"].erase("idle");
  try {
    IterationResult::from_json(node(j));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "result.json");
    EXPECT_EQ(e.location(), "/breakdown_s");
    EXPECT_NE(e.detail().find("'idle'"), std::string::npos) << e.detail();
  }
}

TEST(IterationResult, LinesWithoutTheModelVariablesStillRead) {
  Json j = sample().to_json();
  j.erase("variables");
  j.erase("epoch_time_s");
  EXPECT_EQ(IterationResult::from_json(node(j)).variables.params, 0);
}

TEST(IterationResult, EpochTimeIsTheDatasetAtTheThroughput) {
  const IterationResult r = sample();
  EXPECT_DOUBLE_EQ(r.epoch_time_s(), 1'281'167 / r.samples_per_s);
  EXPECT_DOUBLE_EQ(r.to_json()["epoch_time_s"].get<double>(), r.epoch_time_s());
}

TEST(IterationResult, InconsistentMemoryVerdictIsRejected) {
  Json j = sample().to_json();
  j["fits_in_memory"] = false;
  EXPECT_THROW(IterationResult::from_json(node(j)), InputError);
}

// What must fit is the memory PyTorch needs once its allocator has freed its cached blocks: a
// process whose peak reserve exceeds the GPU still fits when that does not.
TEST(IterationResult, FitsByWhatMustFitNotByThePeakReserve) {
  IterationResult r = sample();
  r.memory.total = 1.7e10;
  r.memory.required = 1.5e10;
  EXPECT_TRUE(r.memory.fits());
  const Json j = r.to_json();
  EXPECT_EQ(j["memory_per_gpu_bytes"]["required"], 1.5e10);
  EXPECT_TRUE(j["fits_in_memory"].get<bool>());
  EXPECT_TRUE(IterationResult::from_json(node(j)).memory.fits());
}

// Lines written before `required` existed were judged by their total.
TEST(IterationResult, OlderLinesWithoutRequiredAreJudgedByTheirTotal) {
  Json j = sample().to_json();
  j["memory_per_gpu_bytes"].erase("required");
  const IterationResult back = IterationResult::from_json(node(j));
  EXPECT_EQ(back.memory.required, back.memory.total);
  EXPECT_TRUE(back.memory.fits());
}

TEST(ResultRecord, SuccessAndErrorLinesRoundTrip) {
  ResultRecord ok;
  ok.index = 3;
  ok.scenario_key = "00ff";
  ok.name = "sample";
  ok.point = Json{{"strategy.kind", "ring_allreduce"}};
  ok.result = sample();
  const Json line = ok.to_json();
  EXPECT_EQ(line.begin().key(), "index");
  EXPECT_EQ(line["point"], ok.point);
  EXPECT_EQ(ResultRecord::from_json(node(line)).to_json().dump(), line.dump());

  ResultRecord failed = ok;
  failed.result.reset();
  failed.error = "simulation child killed by signal 9";
  const ResultRecord back = ResultRecord::from_json(node(failed.to_json()));
  EXPECT_FALSE(back.ok());
  EXPECT_EQ(back.error, failed.error);
  EXPECT_EQ(back.index, 3u);
}

TEST(ResultCsv, RowsHaveTheHeadersColumns) {
  const std::vector<std::string> axes{"platform.nodes", "strategy.kind"};
  const std::string header = result_csv_header(axes);
  EXPECT_EQ(header.rfind("index,platform.nodes,strategy.kind,gpus,", 0), 0u) << header;
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  ResultRecord ok;
  ok.point = Json{{"platform.nodes", 4}, {"strategy.kind", "ring_allreduce"}};
  ok.result = sample();
  const std::string row = result_csv_row(ok, axes);
  EXPECT_EQ(commas(row), commas(header)) << row;
  EXPECT_EQ(row.rfind("0,4,ring_allreduce,32,4,2048.0,", 0), 0u) << row;
  ResultRecord failed;
  failed.point = ok.point;
  failed.error = "bad, really";
  const std::string error_row = result_csv_row(failed, axes);
  EXPECT_EQ(error_row, "0,4,ring_allreduce" + std::string(result_csv_columns().size(), ',') + "\"bad, really\"");
  EXPECT_EQ(result_csv_columns().back(), "error");
}

}  // namespace
