// Simulated iterations with accumulation, sharded state and checkpointing against closed forms
// (ideal network model; every simulation in a forked child).
#include <gtest/gtest.h>

#include <numeric>

#include "trainsim/engine/training.hpp"
#include "trainsim/plan/compute_model.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim_test/fork.hpp"

using namespace trainsim;
using namespace trainsim::engine;
using namespace trainsim::plan;
using trainsim_test::run_forked;

namespace {

// `nodes` nodes of `gpus` V100s on PCIe, one switch, ideal network model.
Json scenario_json(int nodes, int gpus, bool overlap, const Json& workload_extra = Json::object(),
                   const Json& strategy_extra = Json::object()) {
  Json workload{{"model", "resnet18"}, {"batch_per_gpu", 16}};
  workload.update(workload_extra);
  Json strategy{{"kind", "ring_allreduce"}, {"bucket_MB", 25}, {"overlap", overlap}};
  strategy.update(strategy_extra);
  return Json{
      {"name", "dp oracle"},
      {"workload", workload},
      {"platform",
       Json{{"gpu", "V100-SXM2-16GB"},
            {"nodes", nodes},
            {"gpus_per_node", gpus},
            {"intra_node", Json{{"kind", "pcie"}, {"bandwidth_GBps", 12}, {"latency_us", 1}}},
            {"network", Json{{"topology", "switch"}, {"bandwidth_Gbps", 10}, {"latency_us", 5}, {"model", "ideal"}}}}},
      {"strategy", strategy}};
}

IterationResult simulate(const Json& document) {
  const std::string text =
      run_forked([&] { return simulate_iteration(read_scenario(document, "dp.json"), {}).to_json().dump(); });
  return IterationResult::from_json(parse_json_text(text, "simulated result"));
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "dp.json");
  return build_training_plan(s, load_scenario_workload(s));
}

double forward_backward_s(const TrainingPlan& p) {
  double total = 0;
  for (const auto& t : p.profiles.at(0).forward) total += t.seconds;
  for (const auto& t : p.profiles.at(0).backward) total += t.seconds;
  return total;
}

}  // namespace

TEST(DataParallelOracle, AccumulationAddsKMinusOneMicroBatchesOfComputeAndNoCommunication) {
  // Without overlap the reduction follows backward: T(k) = k·(fwd + bwd) + comm + update.
  const Json one = scenario_json(2, 1, false);
  const Json four = scenario_json(2, 1, false, Json{{"accumulation_steps", 4}});
  const IterationResult r1 = simulate(one);
  const IterationResult r4 = simulate(four);
  const double micro = forward_backward_s(plan_of(one));
  EXPECT_NEAR(r4.iteration_time_s - r1.iteration_time_s, 3 * micro, 1e-9 * r4.iteration_time_s);
  EXPECT_NEAR(r4.breakdown.communication_s, r1.breakdown.communication_s, 1e-9 * r1.breakdown.communication_s);
  EXPECT_DOUBLE_EQ(r4.network_bytes, r1.network_bytes);
  EXPECT_DOUBLE_EQ(r4.global_batch, 4 * r1.global_batch);
  EXPECT_NEAR(r4.samples_per_s, r4.global_batch / r4.iteration_time_s, 1e-9 * r4.samples_per_s);
}

TEST(DataParallelOracle, CheckpointingOnOneGpuAddsExactlyTheRecomputedForward) {
  const Json plain = scenario_json(1, 1, true);
  const Json ckpt = scenario_json(1, 1, true, Json{{"activation_checkpointing", 3}});
  const TrainingPlan p = plan_of(ckpt);
  double recomputed = 0;
  for (const auto& t : p.profiles.at(0).backward)
    if (t.layer.ends_with(" (recompute)")) recomputed += t.seconds;
  ASSERT_GT(recomputed, 0);
  const IterationResult a = simulate(plain);
  const IterationResult b = simulate(ckpt);
  EXPECT_NEAR(b.iteration_time_s - a.iteration_time_s, recomputed, 1e-9 * b.iteration_time_s);
}

TEST(DataParallelOracle, StageThreeCarriesOneAndAHalfTimesStageZerosNetworkBytes) {
  const IterationResult zero = simulate(scenario_json(4, 1, true));
  const IterationResult three = simulate(scenario_json(4, 1, true, Json::object(), Json{{"zero_stage", 3}}));
  const IterationResult two = simulate(scenario_json(4, 1, true, Json::object(), Json{{"zero_stage", 2}}));
  EXPECT_NEAR(three.network_bytes, 1.5 * zero.network_bytes, 1e-6 * zero.network_bytes);
  EXPECT_NEAR(two.network_bytes, zero.network_bytes, 1e-6 * zero.network_bytes);
  // Gathers before compute cost time the all-reduce never did; an iteration ends after them all.
  EXPECT_GT(three.iteration_time_s, zero.iteration_time_s * 0.99);
  EXPECT_GT(three.breakdown.communication_s, zero.breakdown.communication_s);
}

TEST(DataParallelOracle, StageOneEndsWithTheAllGatherOfTheUpdatedShards) {
  // Stage 1 without overlap: backward, all-reduce, the shard's update, then the all-gather of
  // S bytes over the ring: (n−1) steps of S/n on 10 Gb/s links with 5 µs per hop (plus launch).
  const Json zero = scenario_json(4, 1, false);
  const Json one = scenario_json(4, 1, false, Json::object(), Json{{"zero_stage", 1}});
  const IterationResult r0 = simulate(zero);
  const IterationResult r1 = simulate(one);
  const TrainingPlan p0 = plan_of(zero);
  const TrainingPlan p1 = plan_of(one);
  const double update_saved = p0.profiles.at(0).update.seconds - p1.profiles.at(0).update.seconds;
  double gathered = 0;
  for (const auto& b : p1.buckets) gathered += b.bytes;
  // The all-gather's bandwidth term alone: 3/4 of the buckets' bytes through one 10 Gb/s NIC.
  const double bandwidth_s = 0.75 * gathered / (10e9 / 8);
  const double extra = r1.iteration_time_s - r0.iteration_time_s + update_saved;
  EXPECT_GT(extra, bandwidth_s);
  EXPECT_LT(extra, bandwidth_s * 1.1);
}
