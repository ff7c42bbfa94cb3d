// Bad and extreme input, as a new user would try it: each row runs the real CLI and checks the exit
// code, that stdout stayed empty (nothing ran), and fragments of the one-line message. Paths:
// {data} = tests/data/bad/hardening, {scenarios} = scenarios/, {good} = tests/data/good, {file} = an
// existing regular file, {dir} = an existing directory.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "trainsim_test/cli.hpp"
#include "trainsim_test/names.hpp"

namespace {

struct Case {
  const char* name;
  std::vector<std::string> args;
  int exit_code;
  std::vector<std::string> fragments;  // each must appear in stderr
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string expand(std::string s, const std::string& dir) {
  const std::pair<std::string, std::string> vars[] = {{"{data}", trainsim_test::test_data_dir() + "/bad/hardening"},
                                                      {"{scenarios}", trainsim_test::source_dir() + "/scenarios"},
                                                      {"{good}", trainsim_test::test_data_dir() + "/good"},
                                                      {"{file}", dir + "/file"},
                                                      {"{dir}", dir}};
  for (const auto& [key, value] : vars)
    for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key)) s.replace(at, key.size(), value);
  return s;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitsWithOneMessageBeforeAnyWork) {
  const Case& c = GetParam();
  const std::string dir = trainsim_test::make_temp_dir("hardening");
  std::ofstream(dir + "/file") << "not a directory\n";
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(expand(a, dir));
  const auto r = trainsim_test::run_trainsim(args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
  for (const auto& f : c.fragments) EXPECT_NE(r.err.find(expand(f, dir)), std::string::npos) << "missing '" << f << "' in: " << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // the message (and CLI11's help hint)
}

const std::string quickstart = "{scenarios}/quickstart.json";
const std::string proc = "/proc/trainsim-cannot-write-here";

// The cases are a hand-laid table, one case a line where it fits.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Cases, BadInput,
    ::testing::Values(
        // Unwritable outputs: exit 2 before the job, with the OS's reason.
        Case{"simulate_json_in_proc", {"simulate", quickstart, "--json", proc}, 2, {proc + ": cannot write here: No such file or directory"}},
        Case{"simulate_trace_in_proc", {"simulate", quickstart, "--trace", proc + ".json"}, 2, {proc + ".json: cannot write here"}},
        Case{"simulate_json_is_a_directory", {"simulate", quickstart, "--json", "{dir}"}, 2, {"{dir}: is a directory"}},
        Case{"simulate_dump_plan_in_proc", {"simulate", quickstart, "--dump-plan", proc}, 2, {proc + ": cannot write here"}},
        Case{"compare_out_is_a_file",
             {"compare", "--measured", "{good}/fitting/compare_measured.csv", "--simulated", "{good}/fitting/compare_simulated.csv", "--out", "{file}"},
             2, {"{file}: exists and is not a directory"}},
        Case{"sweep_out_is_a_file", {"sweep", quickstart, "--out", "{file}"}, 2, {"{file}: exists and is not a directory"}},
        Case{"workload_export_in_proc", {"workload", "export", "resnet50", "--out", proc}, 2, {proc + ": cannot write here"}},
        Case{"workload_info_in_proc", {"workload", "info", "resnet50", "--json", proc}, 2, {proc + ": cannot write here"}},
        Case{"fit_json_in_proc", {"fit", "{good}/fitting/tf_aws_ps.csv", "--y", "iteration_time_s", "--model", "scaling", "--json", proc}, 2,
             {proc + ": cannot write here"}},
        Case{"plan_json_in_proc", {"plan", "{scenarios}/cheapest_resnet50_cluster.json", "--target-samples-per-s", "1000", "--json", proc}, 2,
             {proc + ": cannot write here"}},
        Case{"collective_json_in_proc", {"collective", "--platform", "dgx-a100", "--bytes", "1M", "--json", proc}, 2, {proc + ": cannot write here"}},
        Case{"platform_info_json_in_proc", {"platform", "info", "dgx-a100", "--json", proc}, 2, {proc + ": cannot write here"}},
        // Numbers and sizes.
        Case{"bandwidth_beyond_double", {"simulate", "{data}/huge_bandwidth.json"}, 2,
             {"huge_bandwidth.json: /platform/network/bandwidth_Gbps: number out of range"}},
        Case{"negative_link_count", {"simulate", quickstart, "--links", "-1"}, 2, {"--links: must be ≥ 0, got -1"}},
        Case{"short_range_message", {"collective", "--platform", "dgx-a100", "--bytes", "1M", "--gpus", "-1"}, 2, {"--gpus: must be > 0, got -1"}},
        Case{"gpus_per_node_capped", {"simulate", "{data}/huge_node.json"}, 2, {"huge_node.json: /platform/gpus_per_node: must be ≤ 1024, got 100000"}},
        // CPU threading: a thread count past 4 × the hardware threads, no pool, a GPU-only precision.
        Case{"cpu_threads_capped", {"simulate", "{data}/cpu_too_many_threads.json"}, 2,
             {"cpu_too_many_threads.json: /threading/intra_op_threads: must be ≤ 384 (4 × the 96 hardware threads", "got 48000"}},
        Case{"cpu_zero_pools", {"simulate", "{data}/cpu_zero_pools.json"}, 2, {"cpu_zero_pools.json: /threading/inter_op_pools: must be ≥ 1, got 0"}},
        Case{"cpu_gpu_precision", {"simulate", "{data}/cpu_gpu_precision.json"}, 2,
             {"cpu_gpu_precision.json: /workload/precision: precision \"tf32\" is a GPU format: Xeon-Platinum-8160 computes in fp32"}},
        Case{"input_pipeline_zero_loaders", {"simulate", quickstart, "--set", "workload.input_pipeline={\"decode_ms_per_sample\": 4, \"loader_threads\": 0}"}, 2,
             {"quickstart.json: /workload/input_pipeline/loader_threads: must be ≥ 1, got 0"}},
        Case{"recommend_threads_gpu_scenario", {"recommend-threads", quickstart}, 2, {"quickstart.json: /platform: recommend-threads needs a CPU platform"}},
        Case{"recommend_threads_unknown_model", {"recommend-threads", "{scenarios}/cpu_threading_inception_vs_resnet.json", "--models", "resnet51"}, 2,
             {"--models: resnet51: unknown zoo model 'resnet51'; did you mean 'resnet50'?"}},
        Case{"platform_size_capped", {"simulate", "{data}/huge_platform.json"}, 2,
             {"huge_platform.json: /platform/nodes: nodes × gpus_per_node = 200000 GPUs, more than the 131072"}},
        // What NCCL does not run (nccl_tuner.hpp).
        Case{"nvls_without_nvswitch3", {"collective", "--platform", "dgx-a100", "--algorithm", "nvls", "--bytes", "1M"}, 2,
             {"command line: --algorithm: NCCL runs NVLS only with the Simple protocol, on one node of Hopper"}},
        Case{"nvls_with_ll", {"collective", "--platform", "dgx-h200", "--algorithm", "nvls", "--protocol", "LL", "--bytes", "1M"}, 2,
             {"command line: --protocol: NCCL runs NVLS only with the Simple protocol"}},
        Case{"ll128_over_pcie", {"collective", "--platform", "cluster-25gbe", "--protocol", "LL128", "--bytes", "1M"}, 2,
             {"command line: --protocol: NCCL does not run ring with LL128 here (LL128 needs NVLink"}},
        Case{"protocol_for_hierarchical", {"collective", "--platform", "dgx-a100", "--algorithm", "hierarchical", "--protocol", "LL", "--bytes", "1M"}, 2,
             {"command line: --protocol: protocols are modelled for NCCL's algorithms (ring, tree, nvls, nvls_tree, collnet_direct, collnet_chain), not hierarchical"}},
        Case{"collnet_without_sharp", {"collective", "--platform", "dgx-a100", "--nodes", "2", "--algorithm", "collnet_direct", "--bytes", "1G"}, 2,
             {"command line: --algorithm: NCCL runs CollNet only with the Simple protocol, across two or more whole nodes of at most 8 GPUs whose switches run SHARP"}},
        Case{"collnet_on_sixteen_gpu_nodes", {"collective", "--platform", "{data}/dgx2_sharp.json", "--algorithm", "collnet_chain", "--bytes", "256M"}, 2,
             {"command line: --algorithm: NCCL runs CollNet only", "of at most 8 GPUs"}},
        Case{"collnet_partial_nodes", {"collective", "--platform", "{good}/platforms/dgx_h100_sharp_4_nodes.json", "--gpus", "12", "--algorithm", "collnet_direct", "--bytes", "1G"}, 2,
             {"command line: --algorithm: NCCL runs CollNet only", "whole nodes"}},
        Case{"channels_for_nvls_tree", {"collective", "--platform", "dgx-h100", "--nodes", "2", "--algorithm", "nvls_tree", "--channels", "4", "--bytes", "1G"}, 2,
             {"command line: --channels: sets the channels of NCCL's ring and tree; nvls_tree runs on its heads"}},
        Case{"nvls_tree_on_one_node", {"collective", "--platform", "dgx-h100", "--algorithm", "nvls_tree", "--bytes", "1G"}, 2,
             {"command line: --algorithm: NCCL runs NVLS_TREE only with the Simple protocol, across two or more whole nodes"}},
        Case{"nvls_tree_with_host_nics", {"collective", "--platform", "{data}/h100_host_nics.json", "--algorithm", "nvls_tree", "--bytes", "1G"}, 2,
             {"command line: --algorithm: NCCL runs NVLS_TREE only", "(trainsim: \"nic_attach\": \"gpu\")"}},
        Case{"protocol_for_broadcast", {"collective", "--platform", "dgx-a100", "--op", "broadcast", "--protocol", "LL", "--bytes", "1M"}, 2,
             {"command line: --protocol: NVLS, CollNet and protocols are modelled for allreduce only, not broadcast"}},
        Case{"protocol_on_simgrid_xml", {"collective", "--platform", "{good}/platforms/two_hosts.xml", "--protocol", "LL", "--bytes", "1M"}, 2,
             {"command line: --algorithm: NCCL's protocols and NVLS need a platform description"}},
        // SimGrid XML that SimGrid would abort on.
        Case{"xml_zero_bandwidth_link", {"collective", "--platform", "{data}/../platforms/zero_bandwidth_link.xml", "--bytes", "1M"}, 2,
             {"zero_bandwidth_link.xml: line 8:", "bandwidth \"0GBps\": it must be > 0"}},
        Case{"xml_zero_speed_host", {"collective", "--platform", "{data}/../platforms/zero_speed_host.xml", "--bytes", "1M"}, 2,
             {"zero_speed_host.xml: line 7:", "speed \"0f\": it must be > 0"}},
        // Fitting an expression that has no value at a row.
        Case{"fit_undefined_expression", {"fit", "{data}/undefined_expression.csv", "--y", "iteration_time_s", "--expression", "c0/(gpus-gpus)", "--bounds", "c0=0:1"},
             2, {"undefined_expression.csv: line 2: the expression 'c0/(gpus-gpus)'"}},
        // Weak messages made strong.
        Case{"duplicate_key", {"simulate", "{data}/duplicate_key.json"}, 2, {"duplicate_key.json: /workload/batch_per_gpu: duplicate key 'batch_per_gpu'"}},
        Case{"gpu_h100_suggests_h100s", {"simulate", quickstart, "--set", "platform.gpu=H100"}, 2, {"/platform/gpu: unknown GPU 'H100'; did you mean one of 'H100-"}},
        Case{"gpu_a100_suggests_a100s", {"simulate", quickstart, "--set", "platform.gpu=A100"}, 2, {"did you mean one of 'A100-"}},
        Case{"directory_as_scenario", {"simulate", "{dir}"}, 2, {"{dir}: is a directory; expected a JSON file"}},
        Case{"directory_as_csv", {"fit", "{dir}", "--y", "t", "--model", "scaling"}, 2, {"{dir}: is a directory; expected a CSV file"}},
        Case{"mistyped_command", {"simulat", quickstart}, 2, {"unknown command 'simulat'; did you mean 'simulate'?"}},
        Case{"sequence_beyond_positions", {"simulate", "{data}/sequence_beyond_positions.json"}, 2,
             {"sequence_beyond_positions.json: /workload/sequence_length:", "a table of 512 positions cannot hold a sequence of 1024 tokens"}},
        Case{"sequence_for_image_model", {"simulate", "{data}/sequence_for_image_model.json"}, 2,
             {"/workload/sequence_length: 'resnet50' has no sequence input"}},
        Case{"positional_table_too_short", {"workload", "info", "{data}/positional_too_short.json"}, 2,
             {"positional_too_short.json: /layers/1/num_embeddings: layer 'pos': a table of 32 positions cannot hold a sequence of 64 tokens"}}),
    [](const auto& p) { return std::string(p.param.name); });
// clang-format on

// A sweep says how many points it is about to simulate before it starts.
TEST(Hardening, SweepAnnouncesItsPoints) {
  const std::string dir = trainsim_test::make_temp_dir("announce");
  const auto r = trainsim_test::run_trainsim({"sweep", trainsim_test::source_dir() + "/scenarios/vgg16_25gbe.json", "--out", dir, "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("trainsim: 8 points to simulate, 2 at a time"), std::string::npos) << r.err;
}

// A zero-byte collective costs nothing (NCCL returns at once), less than an 8-byte one.
TEST(Hardening, ZeroByteCollectiveTakesNoTime) {
  const auto r = trainsim_test::run_trainsim({"collective", "--platform", "dgx-a100", "--bytes", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"time_s\": 0.0"), std::string::npos) << r.out;
}

// A sweep whose parent is killed outright leaves no simulating child behind.
TEST(Hardening, KilledSweepParentTakesItsChildrenAlong) {
  const std::string dir = trainsim_test::make_temp_dir("orphans");
  // Two points that each simulate for well over 20 s: a ring of 256 GPUs in one bucket, every flow of
  // every step (the most step-level work the limits accept; 1,024 GPUs are refused up front).
  const int pid = trainsim_test::start_trainsim({"sweep", trainsim_test::source_dir() + "/scenarios/quickstart.json", "--out", dir, "--jobs", "2",
                                                 "--set", "sweep={\"workload.batch_per_gpu\": [128, 256]}", "--set", "strategy.kind=ring_allreduce",
                                                 "--set", "platform.nodes=32", "--set", "strategy.representation=step",
                                                 "--set", "strategy.bucket_MB=1000"});
  // Wait until the children run: results.jsonl exists once the sweep has started.
  for (int i = 0; i < 100 && !std::filesystem::exists(dir + "/results.jsonl"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  bool gone = false;
  for (int i = 0; i < 60 && !gone; ++i) {  // 3 s: a child that went on simulating would take over 20 s
    gone = ::kill(-pid, 0) != 0 && errno == ESRCH;  // nothing left in the sweep's process group
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!gone) ::kill(-pid, SIGKILL);
  EXPECT_TRUE(gone) << "a sweep child outlived its parent";
}

}  // namespace
