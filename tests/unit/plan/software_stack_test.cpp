// The software stack's constants, bands and costs (plan/software_stack.hpp, stack_costs.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/software_stack.hpp"
#include "trainsim/plan/training_plan.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

Json scenario_json(int nodes, const Json& strategy, const Json& stack = Json()) {
  Json doc{{"name", "stack test"},
           {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 32}}},
           {"platform", Json{{"preset", "dgx1-v100"}, {"nodes", nodes}}},
           {"strategy", strategy}};
  if (!stack.is_null()) doc["stack"] = stack;
  return doc;
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "stack_test.json");
  return build_training_plan(s, load_scenario_workload(s));
}

std::string error_of(const Json& document) {
  try {
    read_scenario(document, "stack_test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const Json kPs{{"kind", "parameter_server"}, {"servers", 2}};
const Json kPublished{{"model", "published"}};

}  // namespace

TEST(SoftwareStack, ExpectedMaximumOfNormalsMatchesClosedForms) {
  EXPECT_EQ(expected_max_of_normals(1), 0.0);
  EXPECT_NEAR(expected_max_of_normals(2), 1 / std::sqrt(M_PI), 1e-6);    // E[max of 2] = 1/√π
  EXPECT_NEAR(expected_max_of_normals(3), 1.5 / std::sqrt(M_PI), 1e-6);  // 3/(2√π)
  EXPECT_NEAR(expected_max_of_normals(1000), 3.2414, 1e-3);              // tabulated
}

TEST(SoftwareStack, EndsOfTheBandMoveEachConstantTheWayThatSlowsOrSpeeds) {
  SoftwareStack s;
  s.modelled = true;
  EXPECT_DOUBLE_EQ(s.get(StackKey::rpc_rate), 0.57e9);
  EXPECT_DOUBLE_EQ(s.at(BandEnd::slow).get(StackKey::rpc_rate), 0.2e9);       // slower: the low rate
  EXPECT_DOUBLE_EQ(s.at(BandEnd::slow).get(StackKey::rpc_overhead), 300e-6);  // slower: the high overhead
  EXPECT_DOUBLE_EQ(s.at(BandEnd::fast).get(StackKey::rpc_overhead), 30e-6);
  // One constant alone at its end leaves the others at their defaults.
  EXPECT_DOUBLE_EQ(s.at(BandEnd::slow, StackKey::rpc_rate).get(StackKey::rpc_overhead), s.get(StackKey::rpc_overhead));
}

TEST(SoftwareStack, GrpcCostsApplyBetweenMachinesAndMakeTheIterationSlower) {
  const TrainingPlan one = plan_of(scenario_json(1, kPs, kPublished));
  for (const CommOp& op : one.ops) EXPECT_EQ(op.worker_software_s, 0.0);  // local parameter server: in process
  const TrainingPlan two = plan_of(scenario_json(2, kPs, kPublished));
  double worker_s = 0;
  for (const CommOp& op : two.ops) worker_s += op.worker_software_s;
  // Each node pushes and pulls the model once: at least its bytes at one channel's rate over the threads.
  const double model_bytes = std::accumulate(two.buckets.begin(), two.buckets.end(), 0.0,
                                             [](double a, const PlannedBucket& b) { return a + b.bytes; });
  EXPECT_GE(worker_s, 2 * model_bytes / 0.57e9 / 8);
  EXPECT_GT(two.barrier_s, 0);
  EXPECT_GT(two.straggler_s, 0);
  // tf_cnn_benchmarks' default variable update, parameter_server, reads the variables in the
  // forward pass: every read follows every push and the step's barrier.
  for (const CommOp& op : two.ops) {
    EXPECT_EQ(op.after_all_pushes, op.kind == CommKind::pull);
    EXPECT_EQ(op.variable_barrier_s, 0.0);
  }
  // The engine runs those reads at the next step's start and each layer group's forward waits for
  // its own: the plan splits the forward by bucket, in forward order, exactly.
  for (const ComputeProfile& profile : two.profiles) {
    ASSERT_EQ(profile.forward_groups_s.size(), two.buckets.size());
    double forward = 0, groups = 0;
    for (const PlannedTask& t : profile.forward) forward += t.seconds;
    for (double g : profile.forward_groups_s) groups += g;
    EXPECT_NEAR(groups, forward, 1e-12 * forward);
  }
  // distributed_replicated reads each variable after its own barrier (two small messages), not
  // after every push: the step's one global barrier is at its end (barrier_s).
  const TrainingPlan replicated =
      plan_of(scenario_json(2, kPs, Json{{"model", "published"}, {"ps_variable_update", "distributed_replicated"}}));
  for (const CommOp& op : replicated.ops) {
    EXPECT_FALSE(op.after_all_pushes);
    EXPECT_DOUBLE_EQ(op.variable_barrier_s, op.kind == CommKind::pull ? 2 * 95e-6 : 0.0);
  }
  for (const ComputeProfile& profile : replicated.profiles)
    EXPECT_TRUE(profile.forward_groups_s.empty());  // nothing gates the forward
  // The receiving process parses the bytes: a push's on the server, a pull's on the worker, each
  // worker's channel on one of the server's rpc_threads (8).
  for (const CommOp& op : two.ops) {
    if (op.kind != CommKind::push) continue;
    for (std::size_t i = 0; i < op.bytes_per_server.size(); ++i) {
      if (op.bytes_per_server[i] > 0) {
        EXPECT_GE(op.server_software_s.at(i), op.ranks * op.bytes_per_server[i] / 0.57e9 / std::min(8, op.ranks));
      }
    }
  }
  const TrainingPlan ideal = plan_of(scenario_json(2, kPs, Json{{"model", "ideal"}}));
  for (const CommOp& op : ideal.ops) EXPECT_EQ(op.worker_software_s, 0.0);
  EXPECT_EQ(ideal.straggler_s, 0.0);
  EXPECT_EQ(ideal.barrier_s, 0.0);
}

TEST(SoftwareStack, BadConstantsAndBandsNameTheirPointer) {
  EXPECT_NE(error_of(scenario_json(2, kPs, Json{{"rpc_GBps", 0}})).find("stack_test.json: /stack/rpc_GBps:"),
            std::string::npos);
  EXPECT_NE(error_of(scenario_json(2, kPs, Json{{"iteration_cv", 2}})).find("/stack/iteration_cv:"), std::string::npos);
  const std::string outside = error_of(scenario_json(2, kPs, Json{{"bands", Json{{"rpc_GBps", Json::array({1, 2})}}}}));
  EXPECT_NE(outside.find("/stack/bands/rpc_GBps: [1, 2] does not contain the value 0.57"), std::string::npos)
      << outside;
  const std::string reversed =
      error_of(scenario_json(2, kPs, Json{{"bands", Json{{"rpc_GBps", Json::array({0.9, 0.2})}}}}));
  EXPECT_NE(reversed.find("low end 0.9 is above the high end 0.2"), std::string::npos) << reversed;
  EXPECT_NE(error_of(scenario_json(2, kPs, Json{{"rpc_gbps", 1}})).find("/stack"), std::string::npos);
  EXPECT_NE(error_of(scenario_json(2, kPs, Json{{"ps_variable_update", "replicated"}}))
                .find("stack_test.json: /stack/ps_variable_update:"),
            std::string::npos);
}

// Stragglers: the GPUs of one job clock anywhere between their base and boost clocks, so where the
// catalog gives that range it sets iteration_cv's default and the slow end of its band.
TEST(SoftwareStack, IterationSpreadFollowsTheGpuClockRange) {
  const auto stack_on = [](const char* preset, const Json& stack) {
    Json doc = scenario_json(2, kPs, stack);
    doc["platform"] = Json{{"preset", preset}, {"nodes", 2}};
    return read_scenario(doc, "stack_test.json").stack;
  };
  const double k80 = (875.0 - 562.0) / std::sqrt(12.0) / 875.0;  // 10.3 %
  SoftwareStack on_k80 = stack_on("aws-p2.8xlarge", kPublished);
  EXPECT_NEAR(on_k80.get(StackKey::iteration_cv), k80, 1e-12);
  EXPECT_NEAR(on_k80.at(BandEnd::slow).get(StackKey::iteration_cv), k80, 1e-12);
  // A single-GPU board (the P100) or no clock range in the catalog: the measured V100 default; a
  // value the scenario gives wins.
  EXPECT_DOUBLE_EQ(stack_on("dgx1-p100", kPublished).get(StackKey::iteration_cv), 0.005);
  EXPECT_DOUBLE_EQ(stack_on("dgx1-v100", kPublished).get(StackKey::iteration_cv), 0.005);
  EXPECT_DOUBLE_EQ(
      stack_on("aws-p2.8xlarge", Json{{"model", "published"}, {"iteration_cv", 0.01}}).get(StackKey::iteration_cv),
      0.01);
}

// Horovod over MPI on host buffers: each fused round's software time is the negotiation wait, the
// fusion copies at one core's rate, and per step of Open MPI's all-reduce (its fixed decision by
// size and ranks) the slowest of n ranks' delays, mpi_step · H_n.
TEST(SoftwareStack, HostStagedRoundsPayOpenMpisStepsEachWaitingForTheSlowestRank) {
  const auto round_s = [](double bytes, int n) {
    double steps = 0;
    const double segment = 1 << 20;
    if (bytes < 10000)
      steps = std::ceil(std::log2(n));  // recursive doubling (n a power of two here)
    else if (n * segment >= bytes)
      steps = 2.0 * (n - 1);  // the ring
    else                      // the segmented ring: phases of about 1 MiB per block, then an allgather
      steps =
          (std::floor(bytes / (n * segment)) + (std::fmod(bytes, n * segment) > n * segment / 2 ? 1 : 0) + 1) * (n - 1);
    double harmonic = 0;
    for (int k = 1; k <= n; ++k) harmonic += 1.0 / k;
    return 2.5e-3 + 2 * bytes / 10e9 + 290e-6 * harmonic * steps;
  };
  for (int nodes : {4, 16}) {
    Json doc{{"name", "host staged"},
             {"workload", Json{{"model", "vgg16"}, {"batch_per_gpu", 32}}},
             {"platform", Json{{"preset", "cluster-25gbe"}, {"nodes", nodes}}},
             {"strategy", Json{{"kind", "ring_allreduce"}, {"bucket_MB", 64}, {"transport", "host"}}}};
    const TrainingPlan plan = plan_of(doc);
    int rounds = 0;
    for (const CommOp& op : plan.ops) {
      if (op.kind != CommKind::all_reduce) continue;
      ++rounds;
      EXPECT_EQ(op.ranks, 4 * nodes);
      EXPECT_NEAR(op.software_s, round_s(op.bytes, op.ranks), 1e-9) << op.bytes << " bytes";
    }
    EXPECT_GT(rounds, 0);
    doc["stack"] = Json{{"model", "ideal"}};
    for (const CommOp& op : plan_of(doc).ops) EXPECT_EQ(op.software_s, 0.0);
  }
  // A 64 MiB round: the segmented ring's 75 steps at 16 ranks, the ring's 126 at 64, each waiting
  // longer (H_16 = 3.38, H_64 = 4.74): 2.3 times the per-step cost from 16 to 64 GPUs.
  const double mib64 = 64.0 * (1 << 20), fixed = 2.5e-3 + 2 * mib64 / 10e9;
  EXPECT_NEAR((round_s(mib64, 64) - fixed) / (round_s(mib64, 16) - fixed), 126 * 4.7439 / (75 * 3.3807), 1e-3);
}
