// `trainsim calibrate stack`: one software-stack constant fitted to an iteration measured on a
// small run recovers the value the "measurement" was made with, and the calibrated scenario
// predicts a larger run as that value does. Measurements the stack cannot explain, constants that
// do not act and ambiguous measurements are refused (exit 2) naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

using trainsim_test::read_file;
using trainsim_test::run_trainsim;

namespace {

// TensorFlow parameter servers colocated with the workers: 2 nodes × 4 V100 over 25 GbE.
std::string two_node_scenario(const std::string& dir) {
  const std::string path = dir + "/ps2.json";
  std::ofstream(path) << R"({
  "name": "TF parameter servers, 2 nodes",
  "workload": { "model": "resnet50", "batch_per_gpu": 32, "precision": "fp32" },
  "platform": { "preset": "cluster-25gbe", "nodes": 2 },
  "strategy": { "kind": "parameter_server", "servers": 2, "server_placement": "colocated" }
})";
  return path;
}

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

double iteration_s(const std::vector<std::string>& args) {
  const auto r = run_trainsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
}

}  // namespace

TEST(CalibrateStack, RecoversThePlantedConstantAndPredictsTheLargerRun) {
  const std::string dir = trainsim_test::make_temp_dir("calibrate_stack");
  const std::string scenario = two_node_scenario(dir);
  // The "measurement": the same run with a slower gRPC than the published default (0.57 GB/s).
  const std::string planted = R"(stack={"rpc_GBps": 0.3})";
  const double measured = iteration_s({"simulate", scenario, "--set", planted, "--no-band", "--json", "-"});
  const auto r = run_trainsim({"calibrate", "stack", scenario, "--measured-iteration-s", exact(measured), "--out",
                               dir + "/cal.json", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fit = nlohmann::json::parse(r.out);
  EXPECT_EQ(fit["constant"], "rpc_GBps");  // the constant whose range moves this run most
  EXPECT_NEAR(fit["value"].get<double>(), 0.3, 0.003);
  EXPECT_LT(std::abs(fit["residual"].get<double>()), 1e-4);
  // The calibrated scenario on 8 nodes predicts what the planted value gives there.
  const double predicted =
      iteration_s({"simulate", dir + "/cal.json", "--set", "platform.nodes=8", "--no-band", "--json", "-"});
  const double truth =
      iteration_s({"simulate", scenario, "--set", "platform.nodes=8", "--set", planted, "--no-band", "--json", "-"});
  EXPECT_NEAR(predicted, truth, 0.01 * truth);
  const auto written = nlohmann::json::parse(read_file(dir + "/cal.json"));
  EXPECT_EQ(written["stack"]["model"], "published");
}

TEST(CalibrateStack, RefusesAMeasurementTheRangeCannotExplain) {
  const std::string dir = trainsim_test::make_temp_dir("calibrate_stack_bad");
  const std::string scenario = two_node_scenario(dir);
  const auto r = run_trainsim({"calibrate", "stack", scenario, "--measured-iteration-s", "100", "--constant",
                               "rpc_GBps", "--out", dir + "/x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--measured-iteration-s: the measured iteration (100 s) lies outside what rpc_GBps can explain"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::ifstream(dir + "/x.json").good());
}

TEST(CalibrateStack, RefusesAConstantThatDoesNotActAndAnAmbiguousMeasurement) {
  const std::string dir = trainsim_test::make_temp_dir("calibrate_stack_bad2");
  const std::string scenario = two_node_scenario(dir);
  auto err = [&](std::vector<std::string> args) {
    std::vector<std::string> all{"calibrate", "stack", scenario, "--out", dir + "/x.json"};
    all.insert(all.end(), args.begin(), args.end());
    const auto r = run_trainsim(all);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    return r.err;
  };
  EXPECT_NE(err({"--measured-iteration-s", "1", "--constant", "tcp_stream_Gbps"})
                .find("--constant: 'tcp_stream_Gbps' does not act on strategy parameter_server"),
            std::string::npos);
  EXPECT_NE(err({"--measured-iteration-s", "1", "--constant", "rpc_speed"}).find("unknown constant 'rpc_speed'"),
            std::string::npos);
  EXPECT_NE(err({"--measured-iteration-s", "1", "--measured-samples-per-s", "100"})
                .find("give exactly one of --measured-iteration-s and --measured-samples-per-s"),
            std::string::npos);
  // A GPU ring runs the hardware-only model: nothing to fit.
  EXPECT_NE(err({"--measured-iteration-s", "1", "--set", R"(strategy={"kind": "ring_allreduce"})"})
                .find("/stack: no software-stack constant with a range acts"),
            std::string::npos);
}
