// Accumulation, sharded training state and activation checkpointing in the plan, in closed form:
// accumulation k computes k micro-batches and reduces once; ZeRO stage 3 moves 1.5× the bytes of
// stage 0 (two all-gathers and a reduce-scatter against one all-reduce) and holds
// (weights + gradients + optimizer state) / N per GPU; checkpointing re-runs exactly the
// recomputed forward. Bad input names the scenario's pointer.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/data_parallel.hpp"
#include "trainsim/plan/training_plan.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

// `nodes` DGX A100 nodes, ResNet-18 (small: fast to expand), ring all-reduce.
Json scenario_json(int nodes, const Json& workload_extra = Json::object(),
                   const Json& strategy_extra = Json::object()) {
  Json workload{{"model", "resnet18"}, {"batch_per_gpu", 32}, {"precision", "fp16"}, {"optimizer", "adam"}};
  Json strategy{{"kind", "ring_allreduce"}, {"bucket_MB", 25}};
  workload.update(workload_extra);
  strategy.update(strategy_extra);
  return Json{{"name", "dp test"},
              {"workload", workload},
              {"platform", Json{{"preset", "dgx-a100"}, {"nodes", nodes}}},
              {"strategy", strategy}};
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "dp_test.json");
  return build_training_plan(s, load_scenario_workload(s));
}

double sum(const std::vector<PlannedTask>& tasks) {
  return std::accumulate(tasks.begin(), tasks.end(), 0.0, [](double a, const PlannedTask& t) { return a + t.seconds; });
}

// Bytes every operation of a plan moves over all links (intra + inter node).
double plan_bytes(const TrainingPlan& p) {
  double total = 0;
  for (const CommOp& op : p.ops) {
    const auto b = p.link_class_bytes(op);
    EXPECT_TRUE(b.has_value()) << to_string(op.kind);
    if (b) total += b->intra_node + b->inter_node;
  }
  return total;
}

std::string error_pointer(const Json& document) {
  try {
    plan_of(document);
  } catch (const InputError& e) {
    return e.location();
  }
  return "no error";
}

}  // namespace

TEST(Accumulation, KMicroBatchesComputeKTimesAndReduceOnce) {
  const TrainingPlan one = plan_of(scenario_json(2));
  const TrainingPlan four = plan_of(scenario_json(2, Json{{"accumulation_steps", 4}}));
  const ComputeProfile& p1 = one.profiles.at(0);
  const ComputeProfile& p4 = four.profiles.at(0);
  const double micro = sum(p1.forward) + sum(p1.backward);
  EXPECT_DOUBLE_EQ(p4.accumulation_s, 3 * micro);
  // k × (forward + backward) + one optimizer step.
  EXPECT_NEAR(p4.total_s(), 4 * micro + p1.update.seconds, 1e-12 * p4.total_s());
  EXPECT_DOUBLE_EQ(p4.batch, 32);
  EXPECT_DOUBLE_EQ(four.global_batch, 4 * one.global_batch);
  // One reduction: the same operations, bytes and triggers as without accumulation.
  ASSERT_EQ(four.ops.size(), one.ops.size());
  for (std::size_t i = 0; i < one.ops.size(); ++i) {
    EXPECT_EQ(four.ops[i].bytes, one.ops[i].bytes);
    EXPECT_EQ(four.ops[i].trigger, one.ops[i].trigger);
  }
  // Memory holds one micro-batch's activations; the generic model's variables carry k.
  EXPECT_DOUBLE_EQ(four.memory.activations, one.memory.activations);
  EXPECT_EQ(four.variables.accumulation_steps, 4);
  EXPECT_DOUBLE_EQ(four.variables.batch_per_gpu, 4 * 32);
  // Calibration refers to one GPU running all four micro-batches and one step.
  EXPECT_DOUBLE_EQ(four.reference_batch, 4 * 32);
}

TEST(Accumulation, StrongScalingSplitsEveryGpusShareIntoMicroBatches) {
  Json doc = scenario_json(2, Json{{"accumulation_steps", 4}});
  doc["workload"].erase("batch_per_gpu");
  doc["workload"]["scaling"] = "strong";
  doc["workload"]["global_batch"] = 1024;
  const TrainingPlan p = plan_of(doc);
  EXPECT_DOUBLE_EQ(p.profiles.at(0).batch, 1024.0 / 16 / 4);
  EXPECT_DOUBLE_EQ(p.global_batch, 1024);
}

TEST(Sharding, StageThreeMovesOneAndAHalfTimesTheBytesOfStageZero) {
  const TrainingPlan zero = plan_of(scenario_json(2));
  const TrainingPlan three = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 3}}));
  // Two all-gathers per group (forward, backward) and one reduce-scatter per bucket.
  const auto count = [&](CommKind kind) {
    return std::count_if(three.ops.begin(), three.ops.end(), [kind](const CommOp& o) { return o.kind == kind; });
  };
  EXPECT_EQ(count(CommKind::all_gather), static_cast<long>(2 * three.buckets.size()));
  EXPECT_EQ(count(CommKind::reduce_scatter), static_cast<long>(three.buckets.size()));
  EXPECT_EQ(count(CommKind::all_reduce), 0);
  EXPECT_NEAR(plan_bytes(three), 1.5 * plan_bytes(zero), 1e-9 * plan_bytes(zero));
  // Stages 1 and 2 move as many bytes as stage 0: all-reduce (or reduce-scatter) and one all-gather of the update.
  const TrainingPlan one = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 1}}));
  const TrainingPlan two = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 2}}));
  EXPECT_NEAR(plan_bytes(two), plan_bytes(zero), 1e-9 * plan_bytes(zero));
  EXPECT_NEAR(plan_bytes(one), 1.5 * plan_bytes(zero), 1e-9 * plan_bytes(zero));
}

TEST(Sharding, StageThreeHoldsTheStateOverN) {
  const TrainingPlan zero = plan_of(scenario_json(2));
  const TrainingPlan three = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 3}}));
  const double n = 16;
  const MemoryUsage& a = zero.memory;
  const MemoryUsage& b = three.memory;
  EXPECT_NEAR(b.weights + b.gradients + b.optimizer_state, (a.weights + a.gradients + a.optimizer_state) / n, 1.0);
  EXPECT_GT(b.gathered_parameters, 0);
  EXPECT_GE(b.total, b.weights + b.optimizer_state + b.activations + b.gathered_parameters);
  EXPECT_LT(b.total, a.total);
  // The optimizer steps the GPU's shard only.
  EXPECT_NEAR(three.profiles.at(0).update.seconds, zero.profiles.at(0).update.seconds / n, 1e-15);
  // ZeRO's Figure 1 as PyTorch's autocast keeps the state (fp32 weights and gradients, Adam's two
  // fp32 moments: 16Ψ): stage 1 keeps 4Ψ + 4Ψ + 8Ψ/N, stage 2 4Ψ + 12Ψ/N, stage 3 16Ψ/N.
  const double psi = static_cast<double>(workloads::load_workload("resnet18").params());
  const TrainingPlan one = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 1}}));
  const TrainingPlan two = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 2}}));
  EXPECT_NEAR(a.weights + a.gradients + a.optimizer_state, 16 * psi, 1.0);
  EXPECT_NEAR(one.memory.weights + one.memory.gradients + one.memory.optimizer_state, 8 * psi + 8 * psi / n, 1.0);
  EXPECT_NEAR(two.memory.weights + two.memory.gradients + two.memory.optimizer_state, 4 * psi + 12 * psi / n, 1.0);
}

TEST(Sharding, StageThreeGatesEveryGroupOnceAndPrefetchesOneAhead) {
  const TrainingPlan p = plan_of(scenario_json(2, Json::object(), Json{{"zero_stage", 3}, {"bucket_MB", 5}}));
  const int k = static_cast<int>(p.buckets.size());
  ASSERT_GT(k, 2);
  EXPECT_EQ(p.gates(), 2 * k);
  std::vector<int> opened(static_cast<std::size_t>(p.gates()), -1);
  for (const CommOp& op : p.ops) {
    if (op.opens_gate >= 0) opened.at(static_cast<std::size_t>(op.opens_gate)) = op.id;
    // An all-gather is issued once the GPUs began the group before it: one group ahead.
    if (op.trigger == CommTrigger::gate_passed) {
      EXPECT_EQ(op.trigger_gate, op.opens_gate - 1);
      EXPECT_GE(opened.at(static_cast<std::size_t>(op.trigger_gate)), 0);
    }
  }
  for (int id : opened) EXPECT_GE(id, 0);
  // The forward groups split the forward exactly.
  const ComputeProfile& profile = p.profiles.at(0);
  ASSERT_EQ(profile.forward_groups_s.size(), p.buckets.size());
  const double groups = std::accumulate(profile.forward_groups_s.begin(), profile.forward_groups_s.end(), 0.0);
  EXPECT_NEAR(groups, sum(profile.forward), 1e-12);
}

TEST(Sharding, FsdpNamesAreZeroStages) {
  EXPECT_EQ(plan_of(scenario_json(2, Json::object(), Json{{"fsdp", "FULL_SHARD"}})).zero_stage, 3);
  EXPECT_EQ(plan_of(scenario_json(2, Json::object(), Json{{"fsdp", "SHARD_GRAD_OP"}})).zero_stage, 2);
  const TrainingPlan hybrid = plan_of(scenario_json(2, Json::object(), Json{{"fsdp", "HYBRID_SHARD"}}));
  EXPECT_EQ(hybrid.zero_stage, 3);
  EXPECT_TRUE(hybrid.hybrid_sharding);
  EXPECT_EQ(hybrid.shard_group, 8);
  // Inside a node the state is divided by the node's GPUs.
  const TrainingPlan zero = plan_of(scenario_json(2));
  EXPECT_NEAR(hybrid.memory.optimizer_state, zero.memory.optimizer_state / 8, 1.0);
  // Hybrid all-gathers stay in the node; the reduce-scatter's shards cross it.
  for (const CommOp& op : hybrid.ops) {
    const auto b = hybrid.link_class_bytes(op);
    ASSERT_TRUE(b);
    if (op.kind == CommKind::all_gather) {
      EXPECT_EQ(b->inter_node, 0);
    }
    if (op.kind == CommKind::reduce_scatter) {
      EXPECT_GT(b->inter_node, 0);
    }
  }
}

TEST(Checkpointing, RecomputesExactlyTheCheckpointedSegmentsForward) {
  const int every = 4;
  // Under graph capture: no host floor stretching the GPU's work (a host-bound eager iteration
  // slows every kernel alike, the recomputed ones included).
  auto captured = [](Json document) {
    document["compute"] = Json{{"graph_capture", true}};
    return document;
  };
  const TrainingPlan plain = plan_of(captured(scenario_json(1)));
  const TrainingPlan ckpt = plan_of(captured(scenario_json(1, Json{{"activation_checkpointing", every}})));
  const workloads::Workload w = workloads::load_workload("resnet18");
  // The recomputed tasks: the forward of every layer of a checkpointed segment that computes.
  double expected = 0;
  std::size_t layers = 0;
  for (const CheckpointSegment& s : checkpoint_segments(w, every))
    if (s.recomputed)
      for (std::size_t i = s.first; i <= s.last; ++i)
        if (w.layers[i].op_class != workloads::OpClass::data) {
          expected += plain.profiles.at(0).forward.at(i).seconds;
          ++layers;
        }
  double recomputed = 0;
  std::size_t tasks = 0;
  for (const PlannedTask& t : ckpt.profiles.at(0).backward)
    if (t.layer.ends_with(" (recompute)")) {
      recomputed += t.seconds;
      ++tasks;
    }
  EXPECT_EQ(tasks, layers);
  EXPECT_EQ(tasks, recomputed_layer_count(w, every));
  EXPECT_NEAR(recomputed, expected, 1e-15);
  EXPECT_NEAR(ckpt.profiles.at(0).total_s() - plain.profiles.at(0).total_s(), expected, 1e-12);
  // Buckets still become ready after the same layers' gradients.
  ASSERT_EQ(ckpt.buckets.size(), plain.buckets.size());
  for (std::size_t b = 0; b < plain.buckets.size(); ++b)
    EXPECT_EQ(ckpt.profiles.at(0).backward.at(ckpt.buckets[b].ready_after).layer,
              plain.profiles.at(0).backward.at(plain.buckets[b].ready_after).layer);
  // Less activation memory, and more samples fit with it than without.
  EXPECT_LT(ckpt.memory.activations + ckpt.memory.recompute_activations, plain.memory.activations);
  ASSERT_TRUE(ckpt.largest_batch);
  EXPECT_GT(ckpt.largest_batch->with_checkpointing, ckpt.largest_batch->without_checkpointing);
  EXPECT_EQ(ckpt.largest_batch->checkpoint_every_layers, every);
}

TEST(Checkpointing, LargestBatchIsWhereMemoryReachesTheGpus) {
  // GPT-2 medium on a 40 GB A100: batches in the tens, so the scenarios at b and b + 1 run fast.
  auto gpt2 = [](int batch, const Json& extra) {
    Json w{{"model", "gpt2_medium"}, {"batch_per_gpu", batch}, {"precision", "fp16"}, {"optimizer", "adam"}};
    w.update(extra);
    return plan_of(Json{{"name", "dp test"},
                        {"workload", w},
                        {"platform", Json{{"preset", "dgx-a100"}, {"nodes", 1}}},
                        {"strategy", Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}}}});
  };
  const TrainingPlan p = gpt2(1, Json::object());
  ASSERT_TRUE(p.largest_batch);
  const auto without = p.largest_batch->without_checkpointing;
  ASSERT_GT(without, 0);
  EXPECT_EQ(p.memory.largest_batch_per_gpu, without);
  EXPECT_TRUE(gpt2(static_cast<int>(without), Json::object()).memory.fits());
  EXPECT_FALSE(gpt2(static_cast<int>(without) + 1, Json::object()).memory.fits());
  // With the segments the report assumed, the same holds at its "with" figure.
  const auto with = p.largest_batch->with_checkpointing;
  const Json ck{{"activation_checkpointing", p.largest_batch->checkpoint_every_layers}};
  EXPECT_GT(with, without);
  EXPECT_TRUE(gpt2(static_cast<int>(with), ck).memory.fits());
  EXPECT_FALSE(gpt2(static_cast<int>(with) + 1, ck).memory.fits());
  EXPECT_EQ(gpt2(1, ck).memory.largest_batch_per_gpu, with);
}

TEST(DataParallelBadInput, NamesThePointer) {
  EXPECT_EQ(error_pointer(scenario_json(2, Json{{"accumulation_steps", 0}})), "/workload/accumulation_steps");
  Json ps = scenario_json(2, Json::object(), Json{{"zero_stage", 2}});
  ps["strategy"]["kind"] = "parameter_server";
  ps["strategy"].erase("bucket_MB");
  EXPECT_EQ(error_pointer(ps), "/strategy/zero_stage");
  Json one_gpu = scenario_json(1, Json::object(), Json{{"fsdp", "FULL_SHARD"}});
  one_gpu["platform"] = Json{{"preset", "dgx-a100"}, {"nodes", 1}, {"gpus_per_node", 1}};
  EXPECT_EQ(error_pointer(one_gpu), "/strategy/fsdp");
  // ResNet-18 has fewer than 1,000 layers: one segment, never recomputed.
  EXPECT_EQ(error_pointer(scenario_json(1, Json{{"activation_checkpointing", 1000}})),
            "/workload/activation_checkpointing");
  EXPECT_EQ(error_pointer(scenario_json(2, Json::object(), Json{{"zero_stage", 4}})), "/strategy/zero_stage");
  EXPECT_EQ(error_pointer(scenario_json(2, Json::object(), Json{{"zero_stage", 1}, {"fsdp", "FULL_SHARD"}})),
            "/strategy/fsdp");
  EXPECT_EQ(error_pointer(scenario_json(2, Json{{"accumulation_steps", 2}}, Json{{"zero_stage", 3}})),
            "/workload/accumulation_steps");
  EXPECT_EQ(error_pointer(scenario_json(2, Json{{"activation_checkpointing", "yes"}})),
            "/workload/activation_checkpointing");
}

TEST(DataParallelPlanJson, RoundTripsShardedAccumulatedCheckpointedPlans) {
  for (const Json& doc :
       {scenario_json(2, Json{{"accumulation_steps", 3}, {"activation_checkpointing", 5}}, Json{{"zero_stage", 2}}),
        scenario_json(2, Json::object(), Json{{"fsdp", "HYBRID_SHARD"}})}) {
    const TrainingPlan p = plan_of(doc);
    const Json j = p.to_json();
    const TrainingPlan back = TrainingPlan::from_json(json_root(std::make_shared<const Json>(j), "p.json"));
    EXPECT_EQ(back.to_json().dump(), j.dump());
  }
}
