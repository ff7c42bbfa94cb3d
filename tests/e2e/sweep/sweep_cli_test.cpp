#include <gtest/gtest.h>

#include <ostream>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

using nlohmann::json;
using trainsim_test::run_trainsim;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string good(const std::string& name) { return trainsim_test::test_data_dir() + "/good/scenarios/" + name; }
std::string bad(const std::string& name) { return trainsim_test::test_data_dir() + "/bad/sweep/" + name; }

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// index → result with the wall-clock field removed (the only field that may differ between runs).
std::map<int, json> results_by_index(const std::string& dir) {
  std::map<int, json> out;
  for (const auto& line : lines_of(dir + "/results.jsonl")) {
    json j = json::parse(line);
    j.erase("sim_wall_s");
    const int index = j["index"];
    EXPECT_FALSE(out.count(index)) << "point " << index << " appears twice";
    out[index] = j;
  }
  return out;
}

// Whether the flock on PATH can be taken within ten seconds (taken and dropped again at once).
bool lock_released(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool free = false;
  while (!(free = ::flock(fd, LOCK_EX | LOCK_NB) == 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::close(fd);
  return free;
}

// The live processes whose parent is `parent` (from /proc/PID/stat: "pid (comm) state ppid ..."),
// zombies left out: they hold no descriptors.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (fields >> state >> ppid && ppid == parent && state != "Z") out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// What the descriptors of `pid` point to (empty once it is exiting: its files are gone).
std::set<std::string> descriptor_targets(pid_t pid) {
  std::set<std::string> out;
  std::error_code error;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error))
    out.insert(std::filesystem::read_symlink(fd.path(), error).string());
  return out;
}

}  // namespace

TEST(Sweep, WritesResultsCsvAndReport) {
  const std::string dir = trainsim_test::make_temp_dir("sweep");
  const auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 points: 8 simulated"), std::string::npos) << r.out;
  const auto results = results_by_index(dir);
  ASSERT_EQ(results.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(results.count(i));
    EXPECT_TRUE(results.at(i)["point"].contains("platform.nodes"));
    EXPECT_GT(results.at(i)["samples_per_s"].get<double>(), 0);
  }
  // First axis varies slowest: index 3 = nodes 2, parameter_server.
  EXPECT_EQ(results.at(3)["point"]["platform.nodes"], 2);
  EXPECT_EQ(results.at(3)["point"]["strategy.kind"], "parameter_server");
  EXPECT_EQ(lines_of(dir + "/results.csv").size(), 9u);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
}

TEST(Sweep, FailingPointIsRecordedAndTheOthersRun) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-fail");
  const auto r = run_trainsim({"sweep", good("sweep_with_failure.json"), "--out", dir});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto results = results_by_index(dir);
  ASSERT_EQ(results.size(), 4u);
  int failed = 0;
  for (const auto& [index, j] : results)
    if (j.contains("error")) {
      ++failed;
      EXPECT_NE(j["error"].get<std::string>().find("SimGrid rejected the platform"), std::string::npos) << j.dump();
    }
  EXPECT_EQ(failed, 2);
  std::ifstream csv(dir + "/results.csv");
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_NE(text.str().find("simgrid_rejects.xml"), std::string::npos);
}

TEST(Sweep, KilledMidwayAndResumedYieldsEveryPointOnceWithIdenticalValues) {
  const std::string reference = trainsim_test::make_temp_dir("sweep-reference");
  ASSERT_EQ(run_trainsim({"sweep", good("small_sweep.json"), "--out", reference, "--jobs", "1"}).exit_code, 0);

  const std::string dir = trainsim_test::make_temp_dir("sweep-killed");
  const int pid = trainsim_test::start_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--jobs", "1"});
  // The eight points take a fraction of a second; on a loaded machine this poller could sleep through
  // all of them. Lowest priority for the sweep (its point children inherit it) keeps the poller ahead.
  setpriority(PRIO_PGRP, static_cast<id_t>(pid), 19);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines_of(dir + "/results.jsonl").size() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const int status = trainsim_test::kill_group(pid, SIGKILL);
  const std::size_t before = lines_of(dir + "/results.jsonl").size();
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed";
  ASSERT_GE(before, 3u);
  ASSERT_LT(before, 8u);
  // The kernel releases the lock with the killed sweep's descriptor (its point children keep none:
  // the test below); waited for, so that a resume never finds the directory in use.
  ASSERT_TRUE(lock_released(dir + "/.trainsim-sweep.lock")) << "the killed sweep's lock was never released";

  const auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--jobs", "2", "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(before) + " already done"), std::string::npos) << r.out;
  EXPECT_EQ(results_by_index(dir), results_by_index(reference));
  EXPECT_EQ(lines_of(dir + "/results.csv").size(), 9u);  // rows differ from the reference only in sim_wall_s
}

// A point child keeps no descriptor of its parent's but its pipe: killed outright, a sweep leaves
// its output directory free at once, though a point child it forked is still alive (stopped here,
// so its parent-death signal waits).
TEST(Sweep, AKilledSweepsDirectoryIsFreeWhileAPointChildLives) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-orphan");
  const int pid = trainsim_test::start_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--jobs", "1"});
  setpriority(PRIO_PGRP, static_cast<id_t>(pid), 19);
  const std::string lock = dir + "/.trainsim-sweep.lock";
  pid_t stopped = 0;
  int status = 0;
  bool finished = false, held = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (stopped == 0 && !finished && std::chrono::steady_clock::now() < deadline) {
    for (const pid_t child : children_of(pid)) {
      if (::kill(child, SIGSTOP) != 0) continue;
      // Stopped between fork and its first lines, a child may not have closed them yet, and one
      // already exiting has no descriptors left: let it go on.
      const std::set<std::string> targets = descriptor_targets(child);
      const bool running =
          std::any_of(targets.begin(), targets.end(), [](const std::string& t) { return t.rfind("pipe:", 0) == 0; });
      const bool holds_lock = targets.count(std::filesystem::canonical(lock).string()) > 0;
      if (running && !holds_lock) {
        stopped = child;
        break;
      }
      held = held || (running && holds_lock);
      ::kill(child, SIGCONT);
    }
    finished = stopped == 0 && ::waitpid(pid, &status, WNOHANG) == pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!finished) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ASSERT_FALSE(held && stopped == 0) << "every point child caught held the directory's lock";
  ASSERT_NE(stopped, 0) << "no point child was caught running before the sweep ended";
  const bool free = lock_released(lock);
  ::kill(stopped, SIGKILL);
  EXPECT_TRUE(free) << "a point child of the killed sweep keeps its output directory locked";
}

TEST(Sweep, ResumeCutsAPartialLastLine) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-partial");
  ASSERT_EQ(run_trainsim({"sweep", good("small_sweep.json"), "--out", dir}).exit_code, 0);
  auto lines = lines_of(dir + "/results.jsonl");
  {
    std::ofstream out(dir + "/results.jsonl", std::ios::trunc);
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) out << lines[i] << "\n";
    out << lines.back().substr(0, lines.back().size() / 2);  // a writer killed mid-line
  }
  const auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 simulated, 7 already done"), std::string::npos) << r.out;
  EXPECT_EQ(results_by_index(dir).size(), 8u);
}

// A last line that is whole JSON but lost its newline is a result, not an interrupted write: kept.
TEST(Sweep, ResumeKeepsAnUnterminatedWholeLastLine) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-unterminated");
  ASSERT_EQ(run_trainsim({"sweep", good("small_sweep.json"), "--out", dir}).exit_code, 0);
  auto lines = lines_of(dir + "/results.jsonl");
  {
    std::ofstream out(dir + "/results.jsonl", std::ios::trunc);
    for (std::size_t i = 0; i < lines.size(); ++i) out << lines[i] << (i + 1 < lines.size() ? "\n" : "");
  }
  const auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0 simulated, 8 already done"), std::string::npos) << r.out;
  EXPECT_EQ(results_by_index(dir).size(), 8u);
}

// Another sweep's directory is refused before anything is read into it or cut off it: a partial
// last line stays, byte for byte.
TEST(Sweep, RefusalLeavesAPartialLastLineInPlace) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-refused-partial");
  {
    std::ofstream out(dir + "/results.jsonl", std::ios::binary);
    out << "{\"index\":0,\"a\":1}\n{\"index\":1,\"b\":";
  }
  const auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::ifstream in(dir + "/results.jsonl", std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "{\"index\":0,\"a\":1}\n{\"index\":1,\"b\":");
}

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// --resume never discards a result: another scenario's directory is refused, untouched; a grown
// sweep space of the same scenario reuses every point it already has, renumbered.
TEST(Sweep, ResumeReusesASmallerSweepsPointsRenumberedAndRefusesAnotherScenario) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-edited");
  const std::string smaller = "sweep={\"platform.nodes\":[2,4,8],\"strategy.kind\":[\"ring_allreduce\",\"parameter_server\"]}";
  auto r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--set", smaller});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string before = text_of(dir + "/results.jsonl");
  // Another batch size is another scenario: refused, and nothing of the first run is lost.
  r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--resume", "--set", "workload.batch_per_gpu=16", "--set", smaller});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("holds 6 results of another sweep (scenario 'small sweep' from "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("6 of them are not points of this sweep and --resume would discard them"), std::string::npos) << r.err;
  EXPECT_EQ(text_of(dir + "/results.jsonl"), before);
  // A plain sweep of another sweep space would replace them: refused too.
  r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a new sweep would replace them"), std::string::npos) << r.err;
  EXPECT_EQ(text_of(dir + "/results.jsonl"), before);
  // The whole sweep (nodes 1 added) resumed: the 6 points are kept, renumbered to their new positions.
  r = run_trainsim({"sweep", good("small_sweep.json"), "--out", dir, "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 points: 2 simulated, 6 already done"), std::string::npos) << r.out;
  const auto results = results_by_index(dir);
  ASSERT_EQ(results.size(), 8u);
  EXPECT_EQ(results.at(0)["point"]["platform.nodes"], 1);
  EXPECT_EQ(results.at(2)["point"]["platform.nodes"], 2);
  EXPECT_EQ(lines_of(dir + "/results.csv").size(), 9u);
}

TEST(Sweep, TwoMpiRanksGiveTheSameResultsAsALocalSweep) {
  const std::string mpirun = trainsim_test::find_program("mpirun");
  ASSERT_FALSE(mpirun.empty()) << "mpirun not installed (Debian openmpi-bin)";
  const std::string local = trainsim_test::make_temp_dir("sweep-local");
  ASSERT_EQ(run_trainsim({"sweep", good("small_sweep.json"), "--out", local}).exit_code, 0);
  const std::string distributed = trainsim_test::make_temp_dir("sweep-mpi");
  // Open MPI's dlopen'ed components leak by design and are unloaded before LeakSanitizer reports
  // (their frames cannot be symbolised or suppressed): no leak check for the ranks of this test in
  // the sanitizer build. The sweep code itself is leak-checked by the local sweep tests.
  const auto r = trainsim_test::run_program({mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_warn_on_fork", "0",
                                             "-x", "ASAN_OPTIONS=detect_leaks=0", "-np", "2",
                                             trainsim_test::trainsim_binary(), "sweep", good("small_sweep.json"), "--out", distributed,
                                             "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(results_by_index(distributed), results_by_index(local));
  EXPECT_TRUE(std::filesystem::exists(distributed + "/report.html"));
  EXPECT_EQ(lines_of(distributed + "/results.csv").size(), 9u);
}

// The report names a series by the values that vary between series, a bar by every varying value, and gives
// every measured column of the table its unit (the layout itself is checked in a browser by
// report_browser_test.cpp).
TEST(Sweep, ReportLabelsByTheVaryingValuesAndGivesEveryColumnItsUnit) {
  const std::string dir = trainsim_test::make_temp_dir("sweep-report");
  const auto r = run_trainsim({"sweep", trainsim_test::source_dir() + "/scenarios/strategies_by_network.json", "--out", dir, "--jobs", "2",
                               "--set", R"(sweep={"platform.preset": ["cluster-10gbe", "cluster-100gbe"],)"
                                        R"( "strategy.kind": ["ring_allreduce", "parameter_server"], "platform.nodes": [2, 4]})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* series : {"cluster-10gbe · ring_allreduce", "cluster-10gbe · parameter_server", "cluster-100gbe · ring_allreduce",
                             "cluster-100gbe · parameter_server"})
    EXPECT_NE(html.find(std::string(">") + series + "</tspan>"), std::string::npos) << "legend entry " << series;
  EXPECT_EQ(html.find("platform.preset="), std::string::npos) << "a label names a string-valued axis";
  EXPECT_NE(html.find(">#3 cluster-10gbe · parameter_server · nodes=4</text>"), std::string::npos) << "bar label of point 3";
  for (const char* header : {"<th>iteration (ms)</th>", "<th>throughput (samples/s)</th>", "<th>scaling efficiency (%)</th>",
                             "<th>compute (ms)</th>", "<th>exposed comm. (ms)</th>", "<th>idle (ms)</th>", "<th>network traffic (GiB)</th>",
                             "<th>memory per GPU (GiB)</th>"})
    EXPECT_NE(html.find(header), std::string::npos) << header;
  EXPECT_EQ(lines_of(dir + "/results.csv").front().rfind("index,platform.preset,strategy.kind,platform.nodes,gpus,", 0), 0u);
}

struct BadSweep {
  const char* file;
  const char* location;
  const char* message;
};
void PrintTo(const BadSweep& c, std::ostream* os) { *os << c.file; }

class SweepBadInput : public ::testing::TestWithParam<BadSweep> {};

TEST_P(SweepBadInput, ExitsTwoBeforeAnythingRuns) {
  const auto& c = GetParam();
  const std::string dir = trainsim_test::make_temp_dir("sweep-bad");
  const auto r = run_trainsim({"sweep", bad(c.file), "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(std::string(c.file) + ": " + c.location + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/results.jsonl"));
}

INSTANTIATE_TEST_SUITE_P(Kinds, SweepBadInput,
                         ::testing::Values(BadSweep{"unknown_path.json", "/sweep/platform.nodse", "did you mean 'nodes'?"},
                                           BadSweep{"empty_axis.json", "/sweep/platform.nodes", "at least one value"},
                                           BadSweep{"bad_value.json", "/sweep/platform.nodes", "value 0: /platform/nodes"},
                                           BadSweep{"axis_not_array.json", "/sweep/platform.nodes", "expected an array"},
                                           BadSweep{"unknown_model_in_axis.json", "/sweep/workload.model", "did you mean 'resnet50'?"}),
                         [](const auto& case_info) { return std::filesystem::path(case_info.param.file).stem().string(); });

TEST(Plan, RanksTheCheapestConfigurationsThatMeetTheTarget) {
  const auto r = run_trainsim({"plan", good("small_sweep.json"), "--price-per-gpu-hour", "2.5", "--target-samples-per-s", "1500", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json::parse(r.out);
  ASSERT_FALSE(j["feasible"].empty()) << r.out;
  double previous_cost = 0;
  for (const auto& c : j["feasible"]) {
    EXPECT_GE(c["samples_per_s"].get<double>(), 1500);
    EXPECT_GE(c["cost_per_hour_usd"].get<double>(), previous_cost);
    previous_cost = c["cost_per_hour_usd"];
  }
}

// The parameter-server placement and Horovod host-staged scenarios run the published software stack:
// their reports draw its band as error bars and name the widest constant.
TEST(SweepReport, ShowsTheStackBandOfParameterServersAndHostStagedRings) {
  for (const std::string name : {"vgg16_parameter_server_placement", "horovod_host_staged_vs_nccl"}) {
    const std::string dir = trainsim_test::make_temp_dir("sweep_band");
    const auto r = run_trainsim({"sweep", trainsim_test::source_dir() + "/scenarios/" + name + ".json", "--set",
                                 R"(sweep={"platform.nodes": [2, 4]})", "--out", dir, "--jobs", "1"});
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    const std::string html = trainsim_test::read_file(dir + "/report.html");
    EXPECT_EQ(count_of(html, "class=\"error-bar\""), 2u) << name;
    EXPECT_NE(html.find("the band over the software stack's published ranges"), std::string::npos) << name;
    EXPECT_NE(html.find("<td class=\"text\">band: "), std::string::npos) << name;
    const std::string csv = trainsim_test::read_file(dir + "/results.csv");
    EXPECT_NE(csv.find("samples_per_s_low,samples_per_s_high"), std::string::npos);
  }
}

TEST(Plan, PessimisticPlansByTheSlowEndOfTheStackBand) {
  // Ring all-reduce (no band) against TensorFlow parameter servers (a band over gRPC's ranges),
  // 1 and 2 DGX-1 nodes.
  const std::string scenario = trainsim_test::source_dir() + "/scenarios/resnet50_dgx1_ring_vs_ps.json";
  auto plan = [&](bool pessimistic) {
    std::vector<std::string> args{
        "plan",
        scenario,
        "--set",
        R"(sweep={"strategy.kind": ["ring_allreduce", "parameter_server"], "platform.nodes": [1, 2]})",
        "--price-per-gpu-hour",
        "2.5",
        "--target-samples-per-s",
        "1",
        "--json",
        "-"};
    if (pessimistic) args.push_back("--pessimistic");
    const auto r = run_trainsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  const json nominal = plan(false), pessimistic = plan(true);
  EXPECT_EQ(nominal["by"], "prediction");
  EXPECT_EQ(pessimistic["by"], "pessimistic");
  int banded = 0;
  for (const auto& c : pessimistic["feasible"]) {
    const double planned = c["planned_samples_per_s"], sps = c["samples_per_s"];
    if (c["samples_per_s_range"].is_null()) {
      EXPECT_EQ(planned, sps);
    } else {
      ++banded;
      EXPECT_DOUBLE_EQ(planned, c["samples_per_s_range"][0].get<double>());
      EXPECT_LT(planned, sps);
    }
  }
  EXPECT_GT(banded, 0) << pessimistic.dump(1);
  for (const auto& c : nominal["feasible"]) EXPECT_EQ(c["planned_samples_per_s"], c["samples_per_s"]);
}

TEST(Plan, DeadlineTargetGivesTimeAndCostToTrain) {
  const auto r = run_trainsim({"plan", good("small_sweep.json"), "--price-per-gpu-hour", "2.5", "--epochs", "90", "--dataset-size", "1281167", "--deadline-hours", "400"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("train (h, $)"), std::string::npos) << r.out;
}

TEST(Plan, ImpossibleTargetSaysTheBestReachable) {
  const auto r = run_trainsim({"plan", good("small_sweep.json"), "--price-per-gpu-hour", "2.5", "--target-samples-per-s", "1e9"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("No configuration meets the target. Best reachable:"), std::string::npos) << r.out;
}

TEST(Plan, NeedsExactlyOneKindOfTarget) {
  EXPECT_EQ(run_trainsim({"plan", good("small_sweep.json")}).exit_code, 2);
  EXPECT_EQ(run_trainsim({"plan", good("small_sweep.json"), "--price-per-gpu-hour", "2.5", "--deadline-hours", "3"}).exit_code, 2);
}
