// `trainsim simulate --plan`: a plan dumped by `simulate --dump-plan` (GPU or CPU) replays to the same result,
// byte for byte, for every scenario in scenarios/ (their base scenario; sweeps are not run); an
// edited plan runs as edited. Bad plan files are rows of tests/e2e/audit/plan.tsv.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

using trainsim_test::read_file;
using trainsim_test::run_trainsim;

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> scenario_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(trainsim_test::source_dir() + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Dumps the plan of `scenario` (+ sets) to dir/NAME.plan.json and its --json result to dir/NAME.a.json
// (without the band over the software stack's ranges: a plan carries the stack's costs, not their ranges).
void dump(const std::string& scenario, const std::vector<std::string>& sets, const std::string& dir, const std::string& name) {
  std::vector<std::string> args{"simulate",       scenario,
                                "--dump-plan",    dir + "/" + name + ".plan.json",
                                "--json",         dir + "/" + name + ".a.json",
                                "--reproducible", "--no-band"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const auto r = run_trainsim(args);
  ASSERT_EQ(r.exit_code, 0) << scenario << "\n" << r.err;
}

// The --json text of replaying `plan`.
std::string replay_text(const std::string& plan, const std::string& working_directory = "") {
  const auto r = run_trainsim({"simulate", "--plan", plan, "--json", "-", "--reproducible"}, working_directory);
  EXPECT_EQ(r.exit_code, 0) << plan << "\n" << r.err;
  return r.exit_code == 0 ? r.out : std::string();
}

nlohmann::json replay(const std::string& plan) {
  const std::string text = replay_text(plan);
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

TEST(PlanReplay, EveryScenarioReplaysByteForByte) {
  const std::string dir = trainsim_test::make_temp_dir("plan_replay");
  int gpu_scenarios = 0, cpu_scenarios = 0;
  for (const std::string& scenario : scenario_files()) {
    SCOPED_TRACE(scenario);
    const std::string name = std::filesystem::path(scenario).stem().string();
    ASSERT_NO_FATAL_FAILURE(dump(scenario, {}, dir, name));
    const std::string plan = dir + "/" + name + ".plan.json";
    // A CPU scenario's plan is a thread schedule of one node (CpuPlan), replayed the same way.
    ++(nlohmann::json::parse(read_file(plan)).contains("gpu_plans") ? gpu_scenarios : cpu_scenarios);
    const auto r = run_trainsim({"simulate", "--plan", plan, "--json", dir + "/" + name + ".b.json", "--reproducible"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_file(dir + "/" + name + ".b.json"), read_file(dir + "/" + name + ".a.json"));
  }
  EXPECT_GE(gpu_scenarios, 10);
  EXPECT_GE(cpu_scenarios, 1);
}

// A SimGrid XML platform is referenced by an absolute path, so the plan replays from anywhere.
TEST(PlanReplay, XmlPlatformReplaysFromAnotherDirectory) {
  const std::string dir = trainsim_test::make_temp_dir("plan_replay_xml");
  dump(trainsim_test::test_data_dir() + "/good/scenarios/xml_platform.json", {}, dir, "xml");
  const auto plan = nlohmann::json::parse(read_file(dir + "/xml.plan.json"));
  ASSERT_TRUE(plan["platform"].contains("simgrid_xml"));
  EXPECT_TRUE(std::filesystem::path(plan["platform"]["simgrid_xml"].get<std::string>()).is_absolute());
  EXPECT_EQ(replay_text("xml.plan.json", dir), read_file(dir + "/xml.a.json"));
}

// The same outputs as a scenario run: the summary, --csv, --trace, and --dump-plan again (a fixed point).
TEST(PlanReplay, GivesEveryOutputOfSimulate) {
  const std::string dir = trainsim_test::make_temp_dir("plan_replay_outputs");
  const std::string scenario = trainsim_test::source_dir() + "/scenarios/quickstart.json";
  const auto a = run_trainsim({"simulate", scenario, "--dump-plan", dir + "/p.json", "--csv", dir + "/a.csv", "--trace", dir + "/a.trace"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_trainsim({"simulate", "--plan", dir + "/p.json", "--csv", dir + "/b.csv", "--trace", dir + "/b.trace", "--dump-plan",
                               dir + "/q.json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto without_wall = [](std::string s) { return s.substr(0, s.find("  simulated in")); };
  EXPECT_EQ(without_wall(b.out), without_wall(a.out));
  EXPECT_EQ(read_file(dir + "/b.trace"), read_file(dir + "/a.trace"));
  EXPECT_EQ(read_file(dir + "/q.json"), read_file(dir + "/p.json"));
  auto without_last_column = [](std::string s) {
    s = s.substr(s.find('\n') + 1);
    for (int i = 0; i < 2; ++i) s = s.substr(0, s.rfind(','));  // sim_wall_s, error
    return s;
  };
  EXPECT_EQ(without_last_column(read_file(dir + "/b.csv")), without_last_column(read_file(dir + "/a.csv")));
}

// Edited plans run as edited: the engine decides nothing anew.
class EditedPlan : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = trainsim_test::make_temp_dir("plan_edit");
    dump(trainsim_test::source_dir() + "/scenarios/quickstart.json", {}, dir_, "base");
    plan_ = nlohmann::json::parse(read_file(dir_ + "/base.plan.json"));
    base_ = nlohmann::json::parse(read_file(dir_ + "/base.a.json"));
  }
  nlohmann::json run_edited() {
    write_file(dir_ + "/edited.json", plan_.dump(2));
    return replay(dir_ + "/edited.json");
  }
  std::string dir_;
  nlohmann::json plan_, base_;
};

// Dividing the NIC bandwidth by 50 in the plan gives what planning the scenario on that bandwidth gives
// (quickstart's ring plan does not depend on the bandwidth): the oracle is the scenario itself.
TEST_F(EditedPlan, LinkBandwidthChangesTheResultAsThePlatformWould) {
  const double bw = plan_["platform"]["network"]["bandwidth_Bps"].get<double>();
  plan_["platform"]["network"]["bandwidth_Bps"] = bw / 50;
  const auto edited = run_edited();
  ASSERT_FALSE(edited.is_null());
  const auto r = run_trainsim({"simulate", trainsim_test::source_dir() + "/scenarios/quickstart.json", "--set",
                               "platform.network.bandwidth_Gbps=" + nlohmann::json(bw * 8 / 1e9 / 50).dump(), "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto oracle = nlohmann::json::parse(r.out);
  EXPECT_GT(edited["iteration_time_s"].get<double>(), base_["iteration_time_s"].get<double>() * 1.01);
  EXPECT_GT(edited["breakdown_s"]["communication"].get<double>(), 5 * base_["breakdown_s"]["communication"].get<double>());
  EXPECT_NEAR(edited["iteration_time_s"].get<double>(), oracle["iteration_time_s"].get<double>(),
              1e-9 * oracle["iteration_time_s"].get<double>());
  EXPECT_NEAR(edited["breakdown_s"]["communication"].get<double>(), oracle["breakdown_s"]["communication"].get<double>(),
              1e-9 * oracle["breakdown_s"]["communication"].get<double>());
}

// Merging every bucket into one (a bucket size past the model): one all-reduce of all the bytes,
// started when backward ends; the communication can no longer overlap backward.
TEST_F(EditedPlan, OneBucketForTheWholeModel) {
  ASSERT_GE(plan_["buckets"].size(), 2u);
  double bytes = 0;
  std::vector<std::string> layers;
  for (const auto& b : plan_["buckets"]) {
    bytes += b["bytes"].get<double>();
    for (const auto& l : b["layers"]) layers.push_back(l);
  }
  auto& profile = plan_["profiles"][0];
  const std::size_t last_task = profile["backward"].size() - 1;
  ASSERT_EQ(plan_["profiles"].size(), 1u);
  // The backward tasks sum afresh in order, as the reader checks them.
  double sum = 0;
  for (const auto& t : profile["backward"]) sum += t["seconds"].get<double>();
  profile["segments_s"] = nlohmann::json::array({profile["segments_s"][0], sum, 0.0});
  plan_["buckets"] = nlohmann::json::array(
      {{{"index", 0}, {"bytes", bytes}, {"ready_after", last_task}, {"layers", layers}}});
  auto op = plan_["ops"][0];
  op["bytes"] = bytes;
  op.erase("link_class_bytes");
  plan_["ops"] = nlohmann::json::array({op});
  const auto edited = run_edited();
  ASSERT_FALSE(edited.is_null());
  ASSERT_EQ(edited["buckets"].size(), 1u);
  EXPECT_DOUBLE_EQ(edited["buckets"][0]["bytes"].get<double>(), bytes);
  // The one all-reduce starts when backward ends (everything exposed) and the iteration takes longer.
  EXPECT_NEAR(edited["buckets"][0]["start_s"].get<double>(), profile["segments_s"][0].get<double>() + sum, 1e-12);
  EXPECT_GT(edited["iteration_time_s"].get<double>(), base_["iteration_time_s"].get<double>());
  EXPECT_GT(edited["breakdown_s"]["exposed_communication"].get<double>(), base_["breakdown_s"]["exposed_communication"].get<double>());
}

// A straggler written into the plan: its compute sets the iteration.
TEST_F(EditedPlan, SlowdownOfOneGpu) {
  plan_["gpu_plans"][5]["slowdown"] = 2.0;
  const auto edited = run_edited();
  ASSERT_FALSE(edited.is_null());
  const double compute = plan_["gpu_plans"][5]["compute_s"].get<double>() * 2;
  EXPECT_DOUBLE_EQ(edited["breakdown_s"]["compute"].get<double>(), compute);
  EXPECT_GE(edited["iteration_time_s"].get<double>(), compute);
  EXPECT_GT(edited["breakdown_s"]["idle"].get<double>(), 0);
}

}  // namespace
