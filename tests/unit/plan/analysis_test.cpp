// What bounds an iteration (from its breakdown and its connections' limit shares) and which plans
// draw a warning, without simulating.
#include <gtest/gtest.h>

#include <ostream>

#include <string>
#include <vector>

#include "trainsim/plan/analysis.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim_test/names.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

struct BoundCase {
  const char* label;
  Breakdown breakdown;  ///< compute, communication, exposed, idle (s) of a 1 s iteration
  const char* strategy;
  std::vector<ConnectionLimit> connections;
  BoundKind kind;
  const char* resource;
  const char* link_class;
  int connections_limiting;
  const char* sentence;
};
void PrintTo(const BoundCase& c, std::ostream* os) {
  *os << c.label;
}

class FindBound : public ::testing::TestWithParam<BoundCase> {};

TEST_P(FindBound, NamesWhatTheIterationWaitsOn) {
  const BoundCase& c = GetParam();
  IterationResult r;
  r.iteration_time_s = 1.0;
  r.breakdown = c.breakdown;
  r.strategy = c.strategy;
  const IterationBound b = find_bound(r, c.connections);
  EXPECT_EQ(b.kind, c.kind) << to_string(b.kind);
  EXPECT_EQ(b.resource, c.resource);
  EXPECT_EQ(b.link_class, c.link_class);
  EXPECT_EQ(b.connections, c.connections_limiting);
  EXPECT_EQ(b.sentence, c.sentence);
}

const ConnectionLimit nic{"node 0 NIC 0 ↔ network", "nic", 0.381, ""};
const ConnectionLimit cable0{"node 0 ↔ switch", "fabric", 0.3805, ""};
const ConnectionLimit cable1{"node 1 ↔ switch", "fabric", 0.38, ""};
const ConnectionLimit pcie{"node 3 GPU 1 ↔ PCIe switch 0", "pcie", 0.1, ""};

INSTANTIATE_TEST_SUITE_P(
    Kinds, FindBound,
    ::testing::Values(
        BoundCase{"no_communication",
                  {1.0, 0, 0, 0},
                  "ring_allreduce",
                  {},
                  BoundKind::compute,
                  "",
                  "",
                  0,
                  "The iteration is compute-bound: there is no communication."},
        BoundCase{"fully_hidden",
                  {1.0, 0.3, 0, 0},
                  "ring_allreduce",
                  {},
                  BoundKind::compute,
                  "",
                  "",
                  0,
                  "The iteration is compute-bound: communication is fully hidden behind compute."},
        BoundCase{
            "mostly_hidden",
            {0.97, 0.3, 0.03, 0.01},
            "ring_allreduce",
            {pcie},
            BoundKind::compute,
            "",
            "",
            0,
            "The iteration is compute-bound: communication is hidden behind compute but for 3.0 % of the iteration."},
        BoundCase{"stragglers",
                  {0.99, 0.3, 0.01, 0.2},
                  "ring_allreduce",
                  {},
                  BoundKind::stragglers,
                  "",
                  "",
                  0,
                  "The iteration is bound by stragglers: GPUs wait 200.000 ms on average (20.0 % of the iteration) for "
                  "the slowest one."},
        BoundCase{
            "latency",
            {0.6, 0.5, 0.4, 0},
            "ring_allreduce",
            {pcie},
            BoundKind::latency,
            "",
            "",
            0,
            "The iteration is bound by communication latency and per-message overheads: communication is exposed for "
            "40.0 % of the iteration, but no link is busy through more than 25 % of it."},
        BoundCase{
            "latency_of_servers",
            {0.6, 0.5, 0.4, 0},
            "parameter_server",
            {},
            BoundKind::latency,
            "",
            "",
            0,
            "The iteration is bound by communication latency, per-message overheads or the servers' aggregation: "
            "communication is exposed for 40.0 % of the iteration, but no link is busy through more than 0 % of it."},
        BoundCase{"one_link",
                  {0.6, 0.5, 0.4, 0},
                  "ring_allreduce",
                  {pcie, {"leaf 2 ↔ spine 0", "fabric", 0.39, ""}},
                  BoundKind::link,
                  "leaf 2 ↔ spine 0",
                  "fabric",
                  1,
                  "The iteration is bound by leaf 2 ↔ spine 0 (fabric): it is busy through 98 % of the exposed "
                  "communication, "
                  "39.0 % of the iteration."},
        BoundCase{
            "equal_links_of_two_classes",
            {0.6, 0.5, 0.4, 0},
            "ring_allreduce",
            {cable1, pcie, nic, cable0},
            BoundKind::link,
            "node 0 NIC 0 ↔ network",
            "fabric+nic",
            3,
            "The iteration is bound by 3 fabric and NIC connections (node 0 NIC 0 ↔ network, …), equally busy through "
            "95 % of the exposed communication, 38.1 % of the iteration."},
        BoundCase{
            "server_incast",
            {0.4, 0.7, 0.6, 0},
            "parameter_server",
            {{"node 0 NIC 0 ↔ network", "nic", 0.6, "node 0"}, {"node 1 NIC 0 ↔ network", "nic", 0.2, ""}},
            BoundKind::incast,
            "node 0 NIC 0 ↔ network",
            "nic",
            1,
            "The iteration is bound by node 0 NIC 0 ↔ network (NIC), the parameter server's incast: it is busy through "
            "100 % of the exposed communication, 60.0 % of the iteration."},
        BoundCase{
            "one_servers_incast_on_two_connections",
            {0.4, 0.7, 0.6, 0},
            "parameter_server",
            {{"node 0 ↔ switch", "fabric", 0.6, "node 0"}, {"node 0 NIC 0 ↔ network", "nic", 0.6, "node 0"}},
            BoundKind::incast,
            "node 0 NIC 0 ↔ network",
            "fabric+nic",
            2,
            "The iteration is bound by the parameter server's incast into node 0: 2 fabric and NIC connections (node 0 "
            "NIC 0 ↔ network, …) are equally busy through 100 % of the exposed communication, 60.0 % of the "
            "iteration."},
        BoundCase{
            "servers_incast",
            {0.4, 0.7, 0.6, 0},
            "parameter_server",
            {{"node 1 PCIe switch 0 ↔ host bridge", "pcie", 0.55, "node 1"},
             {"node 0 PCIe switch 0 ↔ host bridge", "pcie", 0.55, "node 0"}},
            BoundKind::incast,
            "node 0 PCIe switch 0 ↔ host bridge",
            "pcie",
            2,
            "The iteration is bound by the parameter servers' incast: 2 PCIe connections (node 0 PCIe switch 0 ↔ host "
            "bridge, …) are equally busy through 92 % of the exposed communication, 55.0 % of the iteration."},
        BoundCase{
            "incast_and_not",
            {0.4, 0.7, 0.6, 0},
            "parameter_server",
            {{"node 0 ↔ switch", "fabric", 0.55, "node 0"}, {"node 1 ↔ switch", "fabric", 0.55, ""}},
            BoundKind::link,
            "node 0 ↔ switch",
            "fabric",
            2,
            "The iteration is bound by 2 fabric connections (node 0 ↔ switch, …), equally busy through 92 % of the "
            "exposed communication, 55.0 % of the iteration."}),
    [](const auto& p) { return trainsim_test::test_name(p.param.label); });

TEST(FindBound, OfAnIterationWithoutTimeIsUnknown) {
  const IterationBound b = find_bound(IterationResult{}, {});
  EXPECT_EQ(b.kind, BoundKind::unknown);
  EXPECT_TRUE(b.sentence.empty());
}

// `nodes` nodes of the preset on its network, ResNet-50 at batch 32.
TrainingPlan plan_of(const char* preset, int nodes, const Json& strategy) {
  const Json doc{{"name", "warnings"},
                 {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 32}}},
                 {"platform", Json{{"preset", preset}, {"nodes", nodes}}},
                 {"strategy", strategy}};
  const Scenario s = read_scenario(doc, "analysis_test.json");
  return build_training_plan(s, load_scenario_workload(s));
}

std::vector<std::string> kinds(const std::vector<Warning>& warnings) {
  std::vector<std::string> out;
  for (const auto& w : warnings) out.push_back(w.kind);
  return out;
}

std::vector<std::string> warning_kinds(const char* preset, int nodes, const Json& strategy) {
  const TrainingPlan plan = plan_of(preset, nodes, strategy);
  return kinds(plan_warnings(plan, platforms::preset_by_name(preset)));
}

using Kinds = std::vector<std::string>;

TEST(PlanWarnings, OneServerForManyWorkersIsAnIncast) {
  const TrainingPlan plan = plan_of("dgx1-v100", 4, Json{{"kind", "parameter_server"}, {"servers", 1}, {"worker_aggregation", "none"}});
  const std::vector<Warning> w = plan_warnings(plan, platforms::preset_by_name("dgx1-v100"));
  ASSERT_EQ(kinds(w), Kinds{"single_server"});
  EXPECT_EQ(w[0].message.rfind("one parameter server for 32 workers: ", 0), 0u) << w[0].message;
  EXPECT_NE(w[0].message.find("through node 0's NIC"), std::string::npos) << w[0].message;
  // On a dedicated node, its NICs; with four workers, no warning.
  const TrainingPlan dedicated =
      plan_of("dgx1-v100", 4, Json{{"kind", "parameter_server"}, {"servers", 1}, {"server_placement", "dedicated"}, {"worker_aggregation", "none"}});
  EXPECT_NE(
      plan_warnings(dedicated, platforms::preset_by_name("dgx1-v100"))[0].message.find("through server node 0's NICs"),
      std::string::npos);
  EXPECT_EQ(warning_kinds("cluster-100gbe", 1, Json{{"kind", "parameter_server"}, {"servers", 1}}), Kinds{});
  // Aggregated per worker (the default on multi-GPU nodes) the nodes are the workers: 4 push, 16 are an incast.
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, Json{{"kind", "parameter_server"}, {"servers", 1}}), Kinds{});
  const TrainingPlan per_node = plan_of("dgx1-v100", 16, Json{{"kind", "parameter_server"}, {"servers", 1}});
  const std::vector<Warning> nodes = plan_warnings(per_node, platforms::preset_by_name("dgx1-v100"));
  ASSERT_EQ(kinds(nodes), Kinds{"single_server"});
  EXPECT_EQ(nodes[0].message.rfind("one parameter server for 16 workers: ", 0), 0u) << nodes[0].message;
}

TEST(PlanWarnings, ServersForSixteenWorkersOrMoreEachAreAnIncast) {
  const auto each_gpu = [](int servers) {
    return Json{{"kind", "parameter_server"}, {"servers", servers}, {"worker_aggregation", "none"}};
  };
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, each_gpu(2)), Kinds{"few_servers"});
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, each_gpu(3)), Kinds{});
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, each_gpu(4)), Kinds{});
  // Per node: 32 nodes for 2 servers are an incast, 4 nodes are not.
  EXPECT_EQ(warning_kinds("dgx1-v100", 32, Json{{"kind", "parameter_server"}, {"servers", 2}}), Kinds{"few_servers"});
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, Json{{"kind", "parameter_server"}, {"servers", 2}}), Kinds{});
}

TEST(PlanWarnings, ManyBucketsWithoutOverlapWhenTheirLatencyCounts) {
  // ResNet-50's layers in one bucket each, 256 GPUs in a ring: over a hundred extra all-reduces of
  // 510 steps each over a 10 us network are far more than 5 % of the compute. (Most of those
  // buckets also move less per ring step than 100 GbE's α·β, hence ring_latency with or without overlap.)
  const Json per_layer{{"kind", "ring_allreduce"}, {"bucket_MB", 0}, {"overlap", false}};
  EXPECT_EQ(warning_kinds("cluster-100gbe", 64, per_layer), (Kinds{"overlap_off_buckets", "ring_latency"}));
  Json overlapped = per_layer;
  overlapped["overlap"] = true;
  EXPECT_EQ(warning_kinds("cluster-100gbe", 64, overlapped), Kinds{"ring_latency"});
  Json one_bucket = per_layer;
  one_bucket["bucket_MB"] = 1000;
  EXPECT_EQ(warning_kinds("cluster-100gbe", 64, one_bucket), Kinds{});
  // Two nodes: a handful of extra latencies, under 5 % of the compute.
  EXPECT_EQ(warning_kinds("cluster-100gbe", 2, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}, {"overlap", false}}),
            Kinds{});
}

TEST(PlanWarnings, RingStepsBelowTheLatencyBandwidthProduct) {
  // 256 GPUs over 25 GbE (10 us): α·β = 31.25 kB; 1 MiB buckets move 4 KiB per step.
  const std::vector<std::string> w =
      warning_kinds("cluster-25gbe", 64, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 1}});
  EXPECT_EQ(w, Kinds{"ring_latency"});
  EXPECT_EQ(warning_kinds("cluster-25gbe", 64, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}}), Kinds{});
  EXPECT_EQ(warning_kinds("cluster-25gbe", 64, Json{{"kind", "hierarchical_allreduce"}, {"bucket_MB", 1}}), Kinds{});
}

TEST(PlanWarnings, NoneForASensibleJob) {
  EXPECT_EQ(warning_kinds("dgx1-v100", 4, Json{{"kind", "ring_allreduce"}}), Kinds{});
}

}  // namespace

// The result is the plan's reading of what the engine measured (analyse_iteration): checked here on
// made-up measurements, without SimGrid.
TEST(AnalyseIteration, ReadsTheMeasurementsAgainstThePlan) {
  const TrainingPlan plan = plan_of("dgx1-v100", 2, Json{{"kind", "ring_allreduce"}});
  const double compute = plan.compute_s(0);
  MeasuredIteration m;
  m.end_s.assign(static_cast<std::size_t>(plan.gpus), compute + 0.010);
  m.end_s[3] = compute + 0.020;  // the last GPU ends 20 ms after its compute
  m.kernel_slowdown_s.assign(static_cast<std::size_t>(plan.gpus), 0.0);
  m.kernel_slowdown_s[3] = 0.005;
  // Two buckets that only touch and a third inside the second: 30 ms of communication in all.
  m.buckets = {BucketTiming{1e6, 0.0, 0.100, 0.110}, BucketTiming{1e6, 0.0, 0.110, 0.130},
               BucketTiming{1e6, 0.0, 0.115, 0.120}};
  m.network_bytes = 42;
  const IterationResult r = analyse_iteration(plan, m);
  EXPECT_EQ(r.gpus, plan.gpus);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, compute + 0.020);
  EXPECT_DOUBLE_EQ(r.samples_per_s, plan.global_batch / (compute + 0.020));
  EXPECT_DOUBLE_EQ(r.breakdown.compute_s, compute);
  EXPECT_DOUBLE_EQ(r.breakdown.comm_kernel_slowdown_s, 0.005);
  EXPECT_NEAR(r.breakdown.exposed_communication_s, 0.015, 1e-12);  // beyond compute and the kernels' loss
  EXPECT_NEAR(r.breakdown.communication_s, 0.030, 1e-12);
  EXPECT_EQ(r.network_bytes, 42);
  EXPECT_EQ(r.buckets.size(), 3u);
  EXPECT_EQ(r.strategy, "ring_allreduce");
  EXPECT_NE(r.bound.kind, BoundKind::unknown);
  EXPECT_FALSE(r.input_pipeline);
}

TEST(AnalyseIteration, LoadersSlowerThanTheIterationMakeItInputBound) {
  const Json doc{{"name", "input"},
                 {"workload", Json{{"model", "resnet50"},
                                   {"batch_per_gpu", 32},
                                   {"input_pipeline", Json{{"decode_ms_per_sample", 50}, {"loader_threads", 1}}}}},
                 {"platform", Json{{"preset", "dgx1-v100"}, {"nodes", 1}}},
                 {"strategy", Json{{"kind", "ring_allreduce"}}}};
  const Scenario s = read_scenario(doc, "analysis_test.json");
  const TrainingPlan plan = build_training_plan(s, load_scenario_workload(s));
  MeasuredIteration m;
  m.end_s.assign(static_cast<std::size_t>(plan.gpus), 0.5);
  m.kernel_slowdown_s.assign(static_cast<std::size_t>(plan.gpus), 0.0);
  const IterationResult r = analyse_iteration(plan, m);
  ASSERT_TRUE(r.input_pipeline);
  // 32 samples × 50 ms on one core: 1.6 s to load against a 0.5 s iteration.
  EXPECT_NEAR(r.input_pipeline->load_s, 1.6, 1e-12);
  EXPECT_NEAR(r.iteration_time_s, 1.6, 1e-12);
  EXPECT_EQ(r.bound.kind, BoundKind::input);
  EXPECT_EQ(r.warnings.back().kind, "input_bound");
}
