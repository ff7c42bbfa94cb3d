#include <gtest/gtest.h>

#include <ostream>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

using trainsim_test::run_trainsim;

namespace {

using trainsim_test::read_file;

std::string bad(const std::string& name) { return trainsim_test::test_data_dir() + "/bad/scenarios/" + name; }
std::string scenario(const std::string& name) { return trainsim_test::source_dir() + "/scenarios/" + name; }

struct BadScenario {
  const char* file;
  const char* location;  // JSON pointer (or "line L, column C")
  const char* message;   // a fragment of the detail
};
void PrintTo(const BadScenario& c, std::ostream* os) { *os << c.file; }

class SimulateBadInput : public ::testing::TestWithParam<BadScenario> {};

TEST_P(SimulateBadInput, ExitsTwoNamingFileAndPointer) {
  const auto& c = GetParam();
  const auto r = run_trainsim({"simulate", bad(c.file)});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::string(": ") + c.location + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one message: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, SimulateBadInput,
    ::testing::Values(BadScenario{"unknown_key.json", "/strategy/bucket_mb", "did you mean 'bucket_MB'?"},
                      BadScenario{"unknown_top_key.json", "/platfrom", "did you mean 'platform'?"},
                      BadScenario{"wrong_type.json", "/workload/batch_per_gpu", "expected an integer"},
                      BadScenario{"option_not_applicable.json", "/strategy/servers", "applies to kind \"parameter_server\" only"},
                      BadScenario{"zero_batch.json", "/workload/batch_per_gpu", "must be ≥ 1, got 0"},
                      BadScenario{"negative_batch.json", "/workload/batch_per_gpu", "must be ≥ 1, got -8"},
                      BadScenario{"zero_nodes.json", "/platform/nodes", "got 0"},
                      BadScenario{"zero_gpus_per_node.json", "/platform/gpus_per_node", "got 0"},
                      BadScenario{"unknown_model_file.json", "/workload/file", "no_such_network.json"},
                      BadScenario{"unknown_model.json", "/workload/model", "did you mean 'resnet50'?"},
                      BadScenario{"unknown_strategy.json", "/strategy/kind", "did you mean 'ring_allreduce'?"},
                      BadScenario{"strong_without_global_batch.json", "/workload", "missing required key 'global_batch'"},
                      BadScenario{"global_batch_too_small.json", "/workload/global_batch", "smaller than the 8 GPUs"},
                      BadScenario{"straggler_gpu_out_of_range.json", "/heterogeneity/gpu_speed", "GPU 8 does not exist"},
                      BadScenario{"unknown_placement.json", "/strategy/placement", "did you mean 'round_robin'?"},
                      BadScenario{"zero_partition.json", "/strategy/partition_MB", "must be > 0, got 0"},
                      BadScenario{"zero_server_throughput.json", "/strategy/server_throughput_GBps", "must be > 0, got 0"},
                      BadScenario{"lockstep_parameter_server.json", "/strategy/representation", "expected one of auto, coarse, flow"},
                      BadScenario{"too_many_colocated_servers.json", "/strategy/servers", "5 colocated parameter servers on 4 GPUs"},
                      BadScenario{"unknown_worker_aggregation.json", "/strategy/worker_aggregation", "did you mean 'host'?"},
                      BadScenario{"worker_aggregation_wrong_type.json", "/strategy/worker_aggregation", "expected a string"},
                      BadScenario{"worker_aggregation_not_applicable.json", "/strategy/worker_aggregation",
                                  "applies to kind \"parameter_server\" only"},
                      BadScenario{"worker_aggregation_on_xml.json", "/strategy/worker_aggregation", "no node CPUs to aggregate on"},
                      BadScenario{"unknown_transport.json", "/strategy/transport", "did you mean 'host'?"},
                      BadScenario{"transport_wrong_type.json", "/strategy/transport", "expected a string"},
                      BadScenario{"host_transport_not_ring.json", "/strategy/transport", "modelled for kind \"ring_allreduce\" only"},
                      BadScenario{"host_transport_on_xml.json", "/strategy/transport", "no node CPUs to stage through"},
                      BadScenario{"hd_order_not_hd.json", "/strategy/hd_order", "kind \"halving_doubling\" only"},
                      BadScenario{"hd_order_unknown.json", "/strategy/hd_order", "did you mean 'near'?"},
                      BadScenario{"malformed.json", "line 3, column 12", "invalid JSON"}),
    [](const auto& case_info) { return std::filesystem::path(case_info.param.file).stem().string(); });

TEST(Simulate, MissingScenarioFileExitsTwo) {
  const auto r = run_trainsim({"simulate", "/nonexistent/scenario.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/scenario.json: cannot open file"), std::string::npos) << r.err;
}

TEST(Simulate, BadSetIsReported) {
  auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--set", "platform.nodes=0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/platform/nodes"), std::string::npos) << r.err;
  r = run_trainsim({"simulate", scenario("quickstart.json"), "--set", "nodes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected PATH=VALUE"), std::string::npos) << r.err;
}

TEST(Simulate, QuickstartPrintsASummary) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* field : {"iteration time", "throughput", "scaling efficiency", "breakdown", "memory per GPU", "busiest links"})
    EXPECT_NE(r.out.find(field), std::string::npos) << field << "\n" << r.out;
}

// A GPU-aggregating server on a one-node platform sends to its own GPU, over SimGrid's loopback
// link; the link accounting knows it (it aborted before: the one-node builder did not record it).
TEST(Simulate, GpuAggregatingServerOnOneNode) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--set", "platform.nodes=1", "--set",
                               "strategy.kind=parameter_server", "--set", "strategy.aggregation=gpu", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_GT(json["iteration_time_s"].get<double>(), 0);
  EXPECT_EQ(json["strategy"], "parameter_server");
}

// One parameter server for 16 workers on 25 GbE (every GPU pushing on its own): node 0's NIC and
// its cable to the switch carry every worker's push and pull, and the summary says so in one sentence.
// With a later TensorFlow's eight serving threads the one server's NIC bounds the iteration (with
// the 2017 releases' one polling thread, the server's parse of what it receives does).
TEST(Simulate, SummaryNamesTheParameterServersIncast) {
  const auto r =
      run_trainsim({"simulate", scenario("strategies_by_network.json"), "--set", "strategy.kind=parameter_server",
                    "--set", "strategy.servers=1", "--set", "platform.nodes=4", "--set",
                    "strategy.worker_aggregation=none", "--set", "stack.rpc_threads=8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(
                "\n  The iteration is bound by the parameter server's incast into node 0: 2 fabric and NIC connections "
                "(node 0 NIC 0 ↔ network, …) are equally busy through "),
            std::string::npos)
      << r.out;
  // The busiest links are node 0's, named by what they are, with their class.
  EXPECT_NE(r.out.find("\n    network → node 0 NIC 0  nic "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n    switch → node 0         fabric "), std::string::npos) << r.out;
  EXPECT_EQ(
      r.err,
      "trainsim: warning: one parameter server for 16 workers: it receives every worker's gradients and sends every "
      "worker the parameters, 16 times a worker's traffic, through node 0's NIC (an incast); use a server per node or "
      "an all-reduce strategy\n");
}

TEST(Simulate, SummarySaysWhenComputeBoundsTheIteration) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  The iteration is compute-bound: communication is hidden behind compute but for 0.1 % of "
                       "the iteration.\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");
  const auto one = run_trainsim(
      {"simulate", scenario("quickstart.json"), "--set", "platform.nodes=1", "--set", "platform.gpus_per_node=1"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("\n  The iteration is compute-bound: there is no communication.\n"), std::string::npos)
      << one.out;
}

// GPT-2 small at batch 50 on one H100: its peak reserve exceeds the GPU, the allocated peak does
// not, and PyTorch's allocator frees its cache and retries: it fits, and the summary says why.
TEST(Simulate, FitsWhenTheAllocatorMustFreeItsCache) {
  const std::vector<std::string> args = {"simulate",
                                         scenario("quickstart.json"),
                                         "--set",
                                         "workload={\"model\":\"gpt2\",\"batch_per_gpu\":50,"
                                         "\"precision\":\"bf16\",\"optimizer\":\"adam\"}",
                                         "--set",
                                         "platform={\"preset\":\"dgx-h100\","
                                         "\"nodes\":1,\"gpus_per_node\":1}",
                                         "--set",
                                         "strategy.kind=ring_allreduce"};
  const auto r = run_trainsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fits once PyTorch's allocator frees its cached blocks: needs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  auto with_json = args;
  with_json.insert(with_json.end(), {"--json", "-"});
  const auto j = nlohmann::json::parse(run_trainsim(with_json).out);
  const auto& m = j["memory_per_gpu_bytes"];
  EXPECT_GT(m["total"].get<double>(), m["available"].get<double>());
  EXPECT_LE(m["required"].get<double>(), m["available"].get<double>());
  EXPECT_TRUE(j["fits_in_memory"].get<bool>());
}

TEST(Simulate, JsonCarriesTheBoundTheWarningsAndLinksByBusyTime) {
  const auto r =
      run_trainsim({"simulate", scenario("resnet50_dgx1_ring_vs_ps.json"), "--set", "strategy.kind=parameter_server",
                    "--set", "strategy.servers=1", "--set", "strategy.worker_aggregation=none", "--links", "8",
                    // the hardware-only model: the incast on the PCIe link, not the gRPC software, bounds it
                    "--set", "stack.model=\"ideal\"", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "warnings stay in the JSON when it takes stdout";
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bound"]["kind"], "incast");
  EXPECT_EQ(j["bound"]["resource"], "node 0 PCIe switch 0 ↔ host bridge");
  EXPECT_EQ(j["bound"]["class"], "pcie");
  EXPECT_EQ(j["bound"]["connections"], 1);
  EXPECT_EQ(j["bound"]["sentence"].get<std::string>().rfind(
                "The iteration is bound by node 0 PCIe switch 0 ↔ host bridge (PCIe), the "
                "parameter server's incast: ",
                0),
            0u);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["kind"], "single_server");
  const auto& links = j["busiest_links"];
  ASSERT_EQ(links.size(), 8u);
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_TRUE(links[i]["class"].is_string());
    EXPECT_LE(links[i]["limit_share"].get<double>(),
              j["breakdown_s"]["exposed_communication"].get<double>() / j["iteration_time_s"].get<double>() + 1e-9);
    if (i > 0) {
      EXPECT_GE(links[i - 1]["busy_fraction"].get<double>(), links[i]["busy_fraction"].get<double>());
    }
  }
}

TEST(Simulate, JsonToStdoutIsTheResultObjectOnly) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws if anything else was printed
  for (const char* key : {"name", "point", "gpus", "global_batch", "iteration_time_s", "samples_per_s", "scaling_efficiency",
                          "breakdown_s", "network_bytes", "sim_wall_s"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"compute", "communication", "exposed_communication", "idle"}) EXPECT_TRUE(j["breakdown_s"].contains(key)) << key;
  EXPECT_EQ(j["gpus"], 32);
  EXPECT_NEAR(j["samples_per_s"].get<double>(), j["global_batch"].get<double>() / j["iteration_time_s"].get<double>(), 1e-6);
}

TEST(Simulate, SameScenarioGivesByteIdenticalJson) {
  const std::string dir = trainsim_test::make_temp_dir("determinism");
  const std::vector<std::string> args = {"simulate", scenario("resnet50_dgx1_ring_vs_ps.json"), "--set", "strategy.kind=parameter_server",
                                         "--set", "heterogeneity={\"jitter_sigma\":0.1,\"straggler_probability\":0.1,\"straggler_slowdown\":2,\"seed\":7}",
                                         "--reproducible", "--json"};
  auto a = args, b = args;
  a.push_back(dir + "/a.json");
  b.push_back(dir + "/b.json");
  ASSERT_EQ(run_trainsim(a).exit_code, 0);
  ASSERT_EQ(run_trainsim(b).exit_code, 0);
  const std::string first = read_file(dir + "/a.json");
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, read_file(dir + "/b.json"));
}

class DumpPlan : public ::testing::TestWithParam<const char*> {};

// The plan the engine executes, for every strategy kind: its operations agree with the result's
// buckets, and it is the only thing on stdout.
TEST_P(DumpPlan, WritesThePlanTheEngineExecutes) {
  const std::string kind = GetParam();
  const std::string dir = trainsim_test::make_temp_dir("dump_plan");
  const auto r = run_trainsim({"simulate", scenario("resnet50_dgx1_ring_vs_ps.json"), "--set", "strategy.kind=" + kind, "--set",
                               "platform.nodes=2", "--dump-plan", "-", "--json", dir + "/result.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plan = nlohmann::json::parse(r.out);  // throws if anything else was printed
  const auto result = nlohmann::json::parse(read_file(dir + "/result.json"));
  EXPECT_EQ(plan["strategy"], kind);
  EXPECT_EQ(plan["gpus"], 16);
  EXPECT_EQ(plan["gpu_plans"].size(), 16u);
  EXPECT_EQ(plan["buckets"].size(), result["buckets"].size());
  const bool ps = kind == "parameter_server";
  // A parameter server on DGX-1 nodes aggregates per worker (the default with 8 GPUs per node):
  // copies to the host, the host's sum, one push and one pull per node, copies back.
  EXPECT_EQ(plan["ops"].size(), (ps ? 5 : 1) * plan["buckets"].size());
  EXPECT_EQ(plan["servers"].empty(), !ps);
  for (const auto& op : plan["ops"]) {
    if (op["participants"].contains("nodes"))
      EXPECT_EQ(op["participants"]["nodes"], 2);
    else
      EXPECT_EQ(op["participants"]["ranks"], 16);
    EXPECT_EQ(op["kind"] == "all_reduce", !ps);
  }
  EXPECT_DOUBLE_EQ(plan["calibration_factor"].get<double>(), result["calibration_factor"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(EveryStrategyKind, DumpPlan,
                         ::testing::Values("ring_allreduce", "hierarchical_allreduce", "tree_allreduce", "halving_doubling",
                                           "parameter_server"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

TEST(Simulate, DumpPlanToAFileKeepsTheSummary) {
  const std::string dir = trainsim_test::make_temp_dir("dump_plan_file");
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--dump-plan", dir + "/plan.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("iteration time"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(read_file(dir + "/plan.json"))["gpus"], 32);
}

TEST(Simulate, PlanAndResultCannotBothGoToStdout) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--dump-plan", "-", "--json", "-"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("--dump-plan"), std::string::npos) << r.err;
}

TEST(Simulate, CsvIsOneRowOfTheSweepSchema) {
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--csv", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto newline = r.out.find('\n');
  ASSERT_NE(newline, std::string::npos);
  EXPECT_EQ(
      r.out.substr(0, newline),
      "index,gpus,nodes,global_batch,iteration_time_s,samples_per_s,scaling_efficiency,network_bytes,strategy,network_"
      "model,"
      "fits_in_memory,compute_s,communication_s,exposed_communication_s,idle_s,memory_per_gpu_bytes,gpus_per_node,"
      "batch_per_gpu,flops_per_sample,model_bytes,params,precision,intra_node_bandwidth_GBps,intra_node_latency_us,"
      "network_bandwidth_Gbps,network_latency_us,nics_per_node,servers,single_gpu_time_s,dataset_samples,epoch_time_s,"
      "samples_per_s_low,samples_per_s_high,sim_wall_s,error");
  const std::string row = r.out.substr(newline + 1);
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), 34) << row;
  EXPECT_EQ(row.rfind("0,32,4,", 0), 0u) << row;
  EXPECT_NE(row.find(",ring_allreduce,ideal,true,"), std::string::npos) << row;
}

TEST(Simulate, TraceIsAChromeTrace) {
  const std::string dir = trainsim_test::make_temp_dir("trace");
  const auto r = run_trainsim({"simulate", scenario("quickstart.json"), "--set", "platform.nodes=1", "--trace", dir + "/t.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trace = nlohmann::json::parse(read_file(dir + "/t.json"));
  ASSERT_TRUE(trace.contains("traceEvents"));
  int compute = 0, communication = 0, gpu_tracks = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && (e["cat"] == "forward" || e["cat"] == "backward")) ++compute;
    if (e["ph"] == "X" && e["cat"] == "communication") ++communication;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"].get<std::string>().rfind("GPU ", 0) == 0) ++gpu_tracks;
  }
  EXPECT_EQ(gpu_tracks, 8);
  EXPECT_GT(compute, 8 * 100);
  EXPECT_GT(communication, 0);
}

TEST(Simulate, SimgridXmlPlatformIsUsedAsIs) {
  const auto r = run_trainsim({"simulate", trainsim_test::test_data_dir() + "/good/scenarios/xml_platform.json", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_GT(j["network_bytes"].get<double>(), 0);
  // The size is known only once SimGrid built the platform; rank references are checked then.
  const auto bad = run_trainsim({"simulate", trainsim_test::test_data_dir() + "/good/scenarios/xml_platform.json", "--set",
                                 "heterogeneity={\"gpu_speed\":{\"5\":0.5}}"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("/heterogeneity/gpu_speed: GPU 5 does not exist: the platform has 2 GPUs"), std::string::npos) << bad.err;
}

TEST(Simulate, PlacementScenarioShowsFc6OnOneServerUnlessSharded) {
  std::map<std::string, nlohmann::json> by_placement;
  for (const char* placement : {"round_robin", "greedy", "sharded"}) {
    const auto r = run_trainsim({"simulate", scenario("vgg16_parameter_server_placement.json"), "--set",
                                 std::string("strategy.placement=") + placement, "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    by_placement[placement] = nlohmann::json::parse(r.out);
    EXPECT_EQ(by_placement[placement]["placement"], placement);
    EXPECT_EQ(by_placement[placement]["servers"].size(), 4u);
  }
  // fc6 (392 MiB of 528 MiB) is one variable: round robin and greedy give it to one server.
  EXPECT_GT(by_placement["round_robin"]["most_loaded_server"]["share"].get<double>(), 0.7);
  EXPECT_GT(by_placement["greedy"]["most_loaded_server"]["share"].get<double>(), 0.7);
  EXPECT_NEAR(by_placement["sharded"]["most_loaded_server"]["share"].get<double>(), 0.25, 1e-9);
  EXPECT_GT(by_placement["round_robin"]["iteration_time_s"].get<double>(), 1.5 * by_placement["sharded"]["iteration_time_s"].get<double>());
  // The text summary names the most loaded server.
  const auto text = run_trainsim({"simulate", scenario("vgg16_parameter_server_placement.json")});
  EXPECT_NE(text.out.find("\n  parameter servers     4 (round_robin placement): most loaded server 1 receives "), std::string::npos)
      << text.out;
}

// Horovod without GPU operations on 100 GbE: every bucket crosses PCIe twice and is reduced by the
// CPUs, so the host-staged ring is slower than NCCL's, and the plan shows the copies around it.
TEST(Simulate, HostStagedScenarioIsSlowerThanTheGpuRingAndShowsItsCopies) {
  std::map<std::string, nlohmann::json> by_transport;
  for (const char* transport : {"gpu", "host"}) {
    const auto r = run_trainsim({"simulate", scenario("horovod_host_staged_vs_nccl.json"), "--set", "platform.nodes=8", "--set",
                                 std::string("strategy.transport=") + transport, "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    by_transport[transport] = nlohmann::json::parse(r.out);
  }
  EXPECT_GT(by_transport["host"]["iteration_time_s"].get<double>(), 1.05 * by_transport["gpu"]["iteration_time_s"].get<double>());
  EXPECT_GT(by_transport["host"]["breakdown_s"]["communication"].get<double>(),
            2 * by_transport["gpu"]["breakdown_s"]["communication"].get<double>());
  const auto dump = run_trainsim({"simulate", scenario("horovod_host_staged_vs_nccl.json"), "--dump-plan", "-"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const auto plan = nlohmann::json::parse(dump.out);
  EXPECT_EQ(plan["transport"], "host");
  ASSERT_EQ(plan["ops"].size(), 3 * plan["buckets"].size());
  EXPECT_EQ(plan["ops"][0]["kind"], "device_to_host");
  EXPECT_EQ(plan["ops"][1]["kind"], "all_reduce");
  EXPECT_EQ(plan["ops"][1]["transport"], "host");
  EXPECT_EQ(plan["ops"][2]["kind"], "host_to_device");
}

TEST(Simulate, ScenariosRun) {
  for (const char* file : {"quickstart.json", "resnet50_dgx1_ring_vs_ps.json", "vgg16_25gbe.json", "bert_large_dgx_a100_fat_tree.json",
                           "vgg16_parameter_server_placement.json", "horovod_host_staged_vs_nccl.json"}) {
    const auto r = run_trainsim({"simulate", scenario(file), "--json", "-"});
    EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
  }
}

}  // namespace

// nccl_allreduce: while a bucket's kernel holds c of the GPU's S SMs, the backward pass it
// overlaps runs at (S − c)/S. Two buckets of ResNet-50 on 2 DGX A100 nodes: the first bucket's
// all-reduce ends before the backward does, the second starts after it, so the compute lost is
// exactly c/S × the first all-reduce's duration, and the breakdown adds up.
TEST(SimulateCli, NcclKernelsSlowTheComputeTheyOverlapByTheirShareOfSms) {
  const std::vector<std::string> sets{"--set", "strategy.kind=nccl_allreduce", "--set", "strategy.bucket_MB=50",
                                      "--set", "platform.nodes=2"};
  auto args = [&](std::vector<std::string> head) {
    head.insert(head.end(), sets.begin(), sets.end());
    return head;
  };
  const auto run = run_trainsim(args({"simulate", scenario("quickstart.json"), "--json", "-", "--reproducible"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto dump = run_trainsim(args({"simulate", scenario("quickstart.json"), "--dump-plan", "-"}));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  const auto result = nlohmann::json::parse(run.out);
  const auto plan = nlohmann::json::parse(dump.out);
  ASSERT_EQ(plan["ops"].size(), 2u);
  const int sms = plan["gpu_sm_count"];
  ASSERT_EQ(sms, 108);
  const int c = plan["ops"][0]["kernel_sms"];
  ASSERT_GT(c, 0);
  EXPECT_DOUBLE_EQ(plan["ops"][0]["compute_share"].get<double>(), double(sms - c) / sms);
  const auto& b = result["buckets"];
  ASSERT_LT(b[0]["end_s"].get<double>(), b[1]["ready_s"].get<double>()) << "the first all-reduce ends within the backward pass";
  const double first_s = b[0]["end_s"].get<double>() - b[0]["start_s"].get<double>();
  const auto& d = result["breakdown_s"];
  EXPECT_NEAR(d["comm_kernel_slowdown"].get<double>(), double(c) / sms * first_s, 1e-12);
  EXPECT_NEAR(d["compute"].get<double>() + d["comm_kernel_slowdown"].get<double>() + d["exposed_communication"].get<double>(),
              result["iteration_time_s"].get<double>(), 1e-12);
  // The textbook ring takes nothing from compute.
  const auto ring = run_trainsim({"simulate", scenario("quickstart.json"), "--json", "-", "--set", "strategy.bucket_MB=50"});
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_EQ(nlohmann::json::parse(ring.out)["breakdown_s"]["comm_kernel_slowdown"].get<double>(), 0.0);
  // The summary says it.
  const auto text = run_trainsim(args({"simulate", scenario("quickstart.json")}));
  EXPECT_NE(text.out.find("compute slowed"), std::string::npos) << text.out;
}

// The bucket-size scenario at its batch (32 per GPU, PyTorch's DDP benchmark): the best bucket
// size is neither one all-reduce per layer (107 collectives of 2(n−1) step latencies each, more
// than the 89 ms backward pass can hide) nor one bucket (all communication after the backward
// pass), for the textbook ring and for NCCL's tuner alike (simulator/README.md "Bucket size").
TEST(SimulateCli, BucketSizeScenarioHasAnInteriorOptimum) {
  const std::vector<int> sizes{0, 1, 2, 5, 10, 25, 50, 100, 1000};
  for (const char* kind : {"ring_allreduce", "nccl_allreduce"}) {
    std::map<int, double> iteration_s;
    for (int mb : sizes) {
      const auto r = run_trainsim({"simulate", scenario("bucket_size_sweep.json"), "--json", "-", "--set",
                                   std::string("strategy.kind=") + kind, "--set", "strategy.bucket_MB=" + std::to_string(mb)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      iteration_s[mb] = nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
    }
    const auto best = std::min_element(iteration_s.begin(), iteration_s.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    EXPECT_GT(best->first, 0) << kind << ": per-layer buckets should not be best";
    EXPECT_LT(best->first, 100) << kind << ": one bucket (ResNet-50 is 97.5 MiB) should not be best";
    // Clearly better than both ends, not by round-off: per-layer and one bucket lose ≥ 5 %.
    EXPECT_GT(iteration_s[0], 1.05 * best->second) << kind;
    EXPECT_GT(iteration_s[1000], 1.05 * best->second) << kind;
  }
}

// One GPU actor plays alike GPUs together, so a kernel's SM share is one exec on the group's host
// (not one per GPU of the group, which would slow the group's compute 16-fold). Splitting the group
// (GPU 5 a hair slower: its own actor and its own exec) must give the same iteration and the same
// compute lost, up to that hair.
TEST(SimulateCli, NcclKernelSmShareIsTheSameForGroupedAndSingleGpuActors) {
  auto run = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args{"simulate", scenario("quickstart.json"), "--json", "-", "--set", "strategy.kind=nccl_allreduce",
                                  "--set", "platform.nodes=2"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_trainsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto grouped = run({});
  const auto split = run({"--set", "heterogeneity={\"gpu_speed\":{\"5\":0.9999999}}"});
  const double lost = grouped["breakdown_s"]["comm_kernel_slowdown"].get<double>();
  ASSERT_GT(lost, 0);
  EXPECT_NEAR(split["breakdown_s"]["comm_kernel_slowdown"].get<double>(), lost, 1e-6 * lost + 1e-9);
  EXPECT_NEAR(split["iteration_time_s"].get<double>(), grouped["iteration_time_s"].get<double>(),
              1e-6 * grouped["iteration_time_s"].get<double>());
}
