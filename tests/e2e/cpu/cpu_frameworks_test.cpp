// Frameworks on the CPU through the CLI. The accuracy test follows the validation protocol: each
// measured curve of tests/data/validation/cpu_threads_2026.csv (ResNet-50, PyTorch eager, 1-16
// threads on a 16-core Emerald Rapids VM) is calibrated on its one-thread time only, and the
// 2-16-thread times are predicted; simulator/README.md "Frameworks on the CPU" holds the table.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

namespace {

using Json = nlohmann::json;
using trainsim_test::run_trainsim;

const std::string scenario = trainsim_test::source_dir() + "/scenarios/cpu_resnet50_pytorch_16_cores.json";

struct Curve {
  std::string mode;
  int batch = 0;
  std::map<int, double> seconds;  // by intra-op threads
};

std::vector<Curve> pytorch_curves() {
  std::ifstream in(trainsim_test::test_data_dir() + "/validation/cpu_threads_2026.csv");
  std::string line;
  std::getline(in, line);  // header
  std::map<std::pair<std::string, int>, Curve> curves;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (cells.size() < 8 || cells[0] != "pytorch" || cells[1] != "resnet50") continue;
    Curve& c = curves[{cells[2], std::stoi(cells[3])}];
    c.mode = cells[2];
    c.batch = std::stoi(cells[3]);
    c.seconds[std::stoi(cells[5])] = std::stod(cells[6]);
  }
  std::vector<Curve> out;
  for (auto& [key, c] : curves) out.push_back(c);
  return out;
}

std::string fmt_double(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

double simulate_s(const Curve& c, int threads) {
  const auto r = run_trainsim({"simulate", scenario, "--json", "-", "--set", "threading.mode=" + c.mode, "--set",
                               "workload.batch_per_gpu=" + std::to_string(c.batch), "--set",
                               "calibration.single_thread_iteration_s=" + fmt_double(c.seconds.at(1)), "--set",
                               "threading.intra_op_threads=" + std::to_string(threads)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out).at("iteration_time_s").get<double>();
}

TEST(CpuFrameworks, ResNet50PyTorchCurvesWithinTenPercentCalibratedOnOneThread) {
  const auto curves = pytorch_curves();
  ASSERT_EQ(curves.size(), 3u);
  double sum = 0;
  int n = 0;
  for (const auto& c : curves) {
    ASSERT_EQ(c.seconds.size(), 5u);
    // Calibrated on one thread: that point is reproduced.
    EXPECT_NEAR(simulate_s(c, 1), c.seconds.at(1), 1e-6 * c.seconds.at(1));
    for (const auto& [threads, measured] : c.seconds) {
      if (threads == 1) continue;
      const double predicted = simulate_s(c, threads);
      const double error = std::abs(predicted - measured) / measured;
      std::cout << c.mode << " batch " << c.batch << ", " << threads << " threads: measured " << measured
                << " s, predicted " << predicted << " s, error " << 100 * error << " %\n";
      sum += error;
      ++n;
    }
  }
  const double mape = 100 * sum / n;
  std::cout << "MAPE over " << n << " points: " << mape << " %\n";
  EXPECT_LE(mape, 10.0);
}

TEST(CpuFrameworks, UnknownFrameworkSuggestsTheNearest) {
  const auto r = run_trainsim({"simulate", scenario, "--set", "threading.framework=pytorhc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/threading/framework"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pytorch"), std::string::npos) << r.err;
}

TEST(CpuFrameworks, PyTorchEagerTakesOnePool) {
  const auto r = run_trainsim({"simulate", scenario, "--set", "threading.inter_op_pools=2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/threading/inter_op_pools: PyTorch eager runs one op at a time"), std::string::npos) << r.err;
}

TEST(CpuFrameworks, SharedIntraOpPoolIsNotPoolsTimesThreads) {
  // ONNX Runtime's parallel mode: 2 pools over ONE pool of 12 threads use 12 cores where a
  // pool-per-team framework's 2 × 12 uses 24; and 2 pools over a pool of every core add spinning
  // inter-op threads past the cores, so 1 × 24 beats 2 × 24 (as measured: 1 × 16 wins on 16 cores).
  auto time_of = [](const std::vector<std::string>& sets) {
    std::vector<std::string> args{
        "simulate", trainsim_test::source_dir() + "/scenarios/cpu_threading_inception_vs_resnet.json",
        "--json",   "-",
        "--set",    "platform.sockets=1",
        "--set",    "workload.batch_per_gpu=16"};
    for (const auto& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const auto r = run_trainsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out).at("iteration_time_s").get<double>();
  };
  const double ort_2x12 =
      time_of({"threading.framework=onnxruntime", "threading.inter_op_pools=2", "threading.intra_op_threads=12"});
  const double generic_2x12 = time_of({"threading.inter_op_pools=2", "threading.intra_op_threads=12"});
  const double ort_1x24 =
      time_of({"threading.framework=onnxruntime", "threading.inter_op_pools=1", "threading.intra_op_threads=24"});
  const double ort_2x24 =
      time_of({"threading.framework=onnxruntime", "threading.inter_op_pools=2", "threading.intra_op_threads=24"});
  EXPECT_GT(ort_2x12, generic_2x12);
  // TensorFlow with oneDNN: an OpenMP team per running op, as the generic model's pools own theirs.
  const double tf_2x12 =
      time_of({"threading.framework=tensorflow", "threading.inter_op_pools=2", "threading.intra_op_threads=12"});
  const double tf_onednn_2x12 = time_of({"threading.framework=tensorflow", "threading.onednn=true",
                                         "threading.inter_op_pools=2", "threading.intra_op_threads=12"});
  EXPECT_NEAR(tf_onednn_2x12, generic_2x12, 1e-9 * generic_2x12);
  EXPECT_GT(tf_2x12, tf_onednn_2x12);
  EXPECT_GT(ort_2x24, 1.2 * ort_1x24);
}

TEST(CpuFrameworks, ThisCpuPrintsAnObjectAScenarioTakes) {
  const auto r = run_trainsim({"platform", "info", "--this-cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json cpu = Json::parse(r.out);
  for (const char* key : {"sockets", "cores_per_socket", "threads_per_core", "clock_GHz", "fp32_flops_per_cycle",
                          "memory_GBps", "l2_KiB"})
    EXPECT_TRUE(cpu.contains(key)) << key;
  EXPECT_NE(r.err.find("memory_GBps"), std::string::npos) << r.err;  // said to be assumed
  // One command further: simulate this machine.
  const std::string dir = trainsim_test::make_temp_dir("this-cpu");
  const auto sim = run_trainsim({"simulate", scenario, "--set", "platform.cpu=" + cpu.dump(), "--set",
                                 "threading.intra_op_threads=1", "--json", dir + "/r.json"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

TEST(CpuFrameworks, RecommendThreadsSpeaksPerFramework) {
  const std::string dir = trainsim_test::make_temp_dir("rec");
  const auto r = run_trainsim(
      {"recommend-threads", trainsim_test::source_dir() + "/scenarios/cpu_threading_inception_vs_resnet.json", "--set",
       "platform.sockets=1", "--set", "threading.framework=onnxruntime", "--json", dir + "/r.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/r.json");
  const Json j = Json::parse(in);
  const Json& m = j.at("models").at(0);
  EXPECT_EQ(m.at("framework"), "onnxruntime");
  bool guideline_flagged = false;
  const auto human = run_trainsim({"recommend-threads",
                                   trainsim_test::source_dir() + "/scenarios/cpu_threading_inception_vs_resnet.json",
                                   "--set", "platform.sockets=1", "--set", "threading.framework=onnxruntime"});
  guideline_flagged = human.out.find("does not apply") != std::string::npos;
  EXPECT_TRUE(guideline_flagged) << human.out;
  EXPECT_NE(human.out.find("ort-sequential"), std::string::npos);
  // PyTorch: one pool only.
  const auto pt = run_trainsim({"recommend-threads", scenario, "--json", dir + "/pt.json"});
  ASSERT_EQ(pt.exit_code, 0) << pt.err;
  std::ifstream pin(dir + "/pt.json");
  const Json p = Json::parse(pin);
  for (const auto& s : p.at("models").at(0).at("grid")) EXPECT_EQ(s.at("inter_op_pools"), 1);
}

}  // namespace
