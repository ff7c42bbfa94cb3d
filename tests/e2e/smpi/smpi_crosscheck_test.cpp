// trainsim collective against SMPI, SimGrid's own MPI, as an independent oracle (the 2026 new-user audit;
// simulator/README.md, Against SMPI). smpicc builds allreduce_timing.c, one MPI_Allreduce; smpirun
// runs it on a small SimGrid XML platform with trainsim's `ideal` network settings and the
// algorithm forced, and `trainsim collective` times the same all-reduce on the same XML:
//
//   trainsim                        SMPI selector
//   ring                            smpi/allreduce:lr (logical ring reduce-scatter + all-gather)
//   halving_doubling --hd-order far  smpi/allreduce:rab1 (halving from distance n/2), whose all-gather
//                                   is SMPI's allgather; forced to rdb (doubling from distance 1)
//   halving_doubling --hd-order near smpi/allreduce:rab_rdb (MPICH: halving from distance 1,
//                                   doubling from n/2)
//
// SMPI adds a 16-byte header to every message; at 1 MiB and 64 MiB that is far below the 1 %
// allowed. Skips only when smpirun or smpicc is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

namespace {

using trainsim_test::CliResult;

struct Algorithm {
  std::vector<std::string> trainsim;  ///< trainsim collective's options
  std::string smpi;                   ///< smpi/allreduce selector
};

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> all = {
      {{"--algorithm", "ring"}, "lr"},
      {{"--algorithm", "halving_doubling", "--hd-order", "far"}, "rab1"},
      {{"--algorithm", "halving_doubling", "--hd-order", "near"}, "rab_rdb"},
  };
  return all;
}

constexpr double kMiB = 1024.0 * 1024.0;
const std::vector<double> kSizes = {1 * kMiB, 64 * kMiB};  // trainsim's --bytes 1M:64M:x64

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

class SmpiCrossCheck : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    smpirun_ = trainsim_test::find_program("smpirun");
    const std::string smpicc = trainsim_test::find_program("smpicc");
    if (smpirun_.empty() || smpicc.empty()) return;
    dir_ = trainsim_test::make_temp_dir("smpi_crosscheck");
    program_ = dir_ + "/allreduce_timing";
    const CliResult built = trainsim_test::run_program(
        {smpicc, "-O1", "-o", program_, trainsim_test::source_dir() + "/tests/e2e/smpi/allreduce_timing.c"}, dir_);
    build_error_ = built.exit_code == 0 ? "" : "smpicc failed (" + std::to_string(built.exit_code) + "): " + built.err;
  }

  void SetUp() override {
    if (smpirun_.empty()) GTEST_SKIP() << "smpirun or smpicc not in PATH (Debian: libsimgrid-dev; .ci/setup installs it)";
    ASSERT_TRUE(build_error_.empty()) << build_error_;
  }

  /// SMPI's time for one all-reduce: from the first rank's start to the last rank's end.
  static double smpi_time(const std::string& platform, int hosts, const std::string& selector, double bytes) {
    const std::string data = trainsim_test::test_data_dir() + "/smpi/";
    const CliResult r = trainsim_test::run_program(
        {smpirun_, "-np", std::to_string(hosts), "-platform", data + platform + ".xml", "-hostfile", data + platform + ".hosts",
         // trainsim's `ideal` network (simgrid_builder.cpp, configure_max_min_network)
         "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/latency-factor:1",
         "--cfg=network/bandwidth-factor:1", "--cfg=network/weight-S:0", "--cfg=network/TCP-gamma:0",
         "--cfg=smpi/simulate-computation:0", "--cfg=smpi/allreduce:" + selector, "--cfg=smpi/allgather:rdb", program_,
         std::to_string(static_cast<long long>(bytes))},
        dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    double first_start = std::numeric_limits<double>::infinity(), last_end = 0;
    int ranks = 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      char host[64];
      int rank = 0;
      double start = 0, end = 0;
      if (std::sscanf(line.c_str(), "host %63s rank %d start %lf end %lf", host, &rank, &start, &end) != 4) continue;
      ++ranks;
      first_start = std::min(first_start, start);
      last_end = std::max(last_end, end);
    }
    EXPECT_EQ(ranks, hosts) << r.out << r.err;
    return last_end - first_start;
  }

  /// trainsim collective's times for kSizes, checking it counts the XML's hosts as its GPUs.
  static std::vector<double> trainsim_times(const std::string& platform, int hosts, const Algorithm& a) {
    std::vector<std::string> args = {"collective", "--platform", trainsim_test::test_data_dir() + "/smpi/" + platform + ".xml",
                                     "--bytes", "1M:64M:x64", "--json", "-"};
    args.insert(args.end(), a.trainsim.begin(), a.trainsim.end());
    const CliResult r = trainsim_test::run_trainsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<double> times;
    if (r.exit_code != 0) return times;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("gpus").get<int>(), hosts);
    for (const auto& row : j.at("results")) times.push_back(row.at("time_s").get<double>());
    return times;
  }

  /// Both agree within 1 % for every algorithm and size; returns trainsim's times [algorithm][size].
  static std::vector<std::vector<double>> expect_agreement(const std::string& platform, int hosts) {
    std::vector<std::vector<double>> all;
    for (const Algorithm& a : algorithms()) {
      const std::vector<double> ours = trainsim_times(platform, hosts, a);
      if (ours.size() != kSizes.size()) {
        ADD_FAILURE() << platform << ": trainsim " << join(a.trainsim) << " gave " << ours.size() << " sizes";
        all.emplace_back(kSizes.size(), 0.0);
        continue;
      }
      for (std::size_t i = 0; i < kSizes.size(); ++i) {
        const double theirs = smpi_time(platform, hosts, a.smpi, kSizes[i]);
        EXPECT_NEAR(ours[i], theirs, 0.01 * theirs)
            << platform << ", " << kSizes[i] / kMiB << " MiB: trainsim " << join(a.trainsim) << " vs smpirun " << a.smpi;
      }
      all.push_back(ours);
    }
    return all;
  }

  static std::string smpirun_, dir_, program_, build_error_;
};

std::string SmpiCrossCheck::smpirun_, SmpiCrossCheck::dir_, SmpiCrossCheck::program_, SmpiCrossCheck::build_error_;

TEST_F(SmpiCrossCheck, FlatClusterOf8Hosts) { expect_agreement("flat8", 8); }

TEST_F(SmpiCrossCheck, FlatClusterOf16Hosts) { expect_agreement("flat16", 16); }

TEST_F(SmpiCrossCheck, TwoNodesOf4HostsAndNearFirstKeepsTheBigHalvesInside) {
  const auto t = expect_agreement("nodes2x4", 8);
  // 64 MiB: far sends S/2 through each node's one NIC in both phases; near only S/8.
  EXPECT_LT(t[2][1] * 2, t[1][1]) << "near " << t[2][1] << " s, far " << t[1][1] << " s";
}

TEST_F(SmpiCrossCheck, FourNodesOf4Hosts) {
  const auto t = expect_agreement("nodes4x4", 16);
  EXPECT_LT(t[2][1] * 2, t[1][1]) << "near " << t[2][1] << " s, far " << t[1][1] << " s";
}

}  // namespace
