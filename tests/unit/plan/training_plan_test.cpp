// Plans are checked without simulating: bucket contents, server ownership, bytes per link class,
// calibration and per-GPU profiles follow from the scenario in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/training_plan.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

// `nodes` DGX-1-like nodes of 8 V100s on a switch.
Json scenario_json(int nodes, const Json& strategy, int batch = 32) {
  return Json{{"name", "plan test"},
              {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", batch}}},
              {"platform", Json{{"preset", "dgx1-v100"}, {"nodes", nodes}}},
              {"strategy", strategy}};
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "plan_test.json");
  return build_training_plan(s, load_scenario_workload(s));
}

const workloads::Workload& resnet50() {
  static const workloads::Workload w = workloads::load_workload("resnet50");
  return w;
}

double total_bucket_bytes(const TrainingPlan& p) {
  double total = 0;
  for (const auto& b : p.buckets) total += b.bytes;
  return total;
}

TEST(TrainingPlan, BucketsHoldEveryGradientOnceInBackwardOrderWithinTheirCapacity) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}}));
  EXPECT_DOUBLE_EQ(total_bucket_bytes(p), 25'557'032.0 * 4);
  std::set<std::string> seen;
  const auto& backward = p.profiles.at(0).backward;
  std::size_t previous_ready = 0;
  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    const auto& bucket = p.buckets[b];
    // A bucket over capacity holds one gradient that alone exceeds it.
    if (bucket.bytes > 25.0 * kMiB) {
      EXPECT_EQ(bucket.layers.size(), 1u);
    }
    // The next gradient did not fit: the bucket was closed for a reason.
    if (b + 1 < p.buckets.size()) {
      const auto* next = resnet50().find_layer(p.buckets[b + 1].layers.front());
      ASSERT_NE(next, nullptr);
      EXPECT_GT(bucket.bytes + next->weight_bytes(Precision::fp32), 25.0 * kMiB);
    }
    for (const auto& layer : bucket.layers) EXPECT_TRUE(seen.insert(layer).second) << layer;
    EXPECT_EQ(backward.at(bucket.ready_after).layer, bucket.layers.back());
    if (b > 0) {
      EXPECT_GT(bucket.ready_after, previous_ready);
    }
    previous_ready = bucket.ready_after;
  }
  std::size_t with_params = 0;
  for (const auto& layer : resnet50().layers) with_params += layer.params > 0;
  EXPECT_EQ(seen.size(), with_params);
  // Segments: forward, one per bucket, the tail; they add up to the profile's compute.
  EXPECT_EQ(p.profiles.at(0).segments_s.size(), p.buckets.size() + 2);
}

TEST(TrainingPlan, ParameterServerPushesEveryLayerByDefault) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}}));
  std::size_t with_params = 0;
  for (const auto& layer : resnet50().layers) with_params += layer.params > 0;
  ASSERT_EQ(p.buckets.size(), with_params);
  ASSERT_EQ(p.ops.size(), 2 * with_params);  // a push and a pull per variable
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const CommOp& op = p.ops[i];
    EXPECT_EQ(op.id, static_cast<int>(i));
    EXPECT_EQ(op.after_op, static_cast<int>(i) - 1);
    EXPECT_EQ(op.kind, i % 2 == 0 ? CommKind::push : CommKind::pull);
    EXPECT_EQ(op.trigger, i % 2 == 0 ? CommTrigger::bucket_ready : CommTrigger::previous_op);
    EXPECT_EQ(op.bucket, i / 2);
  }
}

TEST(TrainingPlan, ColocatedServersWrapAroundTheNodesOnTheirCpusOrGpus) {
  const TrainingPlan cpu = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 6}}));
  ASSERT_EQ(cpu.servers.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(cpu.servers[i].host, ServerHost::node_cpu);
    EXPECT_EQ(cpu.servers[i].node, i % 4);
    EXPECT_EQ(cpu.servers[i].index, i % 4);
  }
  const TrainingPlan gpu = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 6}, {"aggregation", "gpu"}}));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(gpu.servers[i].host, ServerHost::gpu);
    EXPECT_EQ(gpu.servers[i].index, (i % 4) * 8 + i / 4);  // the second round takes each node's next GPU
  }
  const TrainingPlan dedicated = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 3}, {"server_placement", "dedicated"}}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(dedicated.servers[i].host, ServerHost::server_node);
    EXPECT_EQ(dedicated.servers[i].index, i);
    EXPECT_EQ(dedicated.servers[i].node, -1);
  }
}

TEST(TrainingPlan, EveryServerOwnsAnEqualShareOfEveryBucket) {
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 3}, {"bucket_MB", 25}}));
  for (const auto& op : p.ops) {
    ASSERT_EQ(op.bytes_per_server.size(), 3u);
    for (double b : op.bytes_per_server) EXPECT_DOUBLE_EQ(b, op.bytes / 3);
  }
}

// The plan computes bytes per link class from the schedules the engine runs; these closed forms
// check the schedules' traffic independently.
TEST(TrainingPlan, RingBytesPerLinkClass) {
  // 2(n−1)/n·S on every hop of the ring; one hop per node leaves it.
  for (int nodes : {1, 4}) {
    const TrainingPlan p = plan_of(scenario_json(nodes, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}}));
    const double n = p.gpus;
    for (const auto& op : p.ops) {
      const auto bytes = p.link_class_bytes(op);
      ASSERT_TRUE(bytes);
      const double per_hop = 2 * (n - 1) / n * op.bytes;
      EXPECT_DOUBLE_EQ(bytes->inter_node, nodes > 1 ? nodes * per_hop : 0.0);
      EXPECT_DOUBLE_EQ(bytes->intra_node + bytes->inter_node, 2 * (n - 1) * op.bytes);
    }
  }
}

TEST(TrainingPlan, HierarchicalBytesPerLinkClass) {
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "hierarchical_allreduce"}}));
  for (const auto& op : p.ops) {
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 2 * 4 * 7 * op.bytes);  // reduce-scatter + all-gather in 4 nodes of 8
    EXPECT_DOUBLE_EQ(bytes->inter_node, 2 * 3 * op.bytes);      // 8 rings of 4 nodes on S/8
  }
}

TEST(TrainingPlan, HalvingDoublingAndTreeBytesPerLinkClass) {
  // 16 GPUs in 2 nodes: recursive halving first exchanges S/2 with the rank 8 away (the other
  // node), then S/4, S/8, S/16 inside the node; recursive doubling mirrors it.
  const TrainingPlan hd = plan_of(scenario_json(2, Json{{"kind", "halving_doubling"}}));
  for (const auto& op : hd.ops) {
    const auto bytes = hd.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 16 * op.bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 16 * 2 * (0.25 + 0.125 + 0.0625) * op.bytes);
  }
  // Double binary tree: each of the two trees carries S/2 up and down each of its n−1 edges.
  for (int nodes : {1, 2}) {
    const TrainingPlan tree = plan_of(scenario_json(nodes, Json{{"kind", "tree_allreduce"}}));
    const double n = tree.gpus;
    for (const auto& op : tree.ops) {
      const auto bytes = tree.link_class_bytes(op);
      ASSERT_TRUE(bytes);
      EXPECT_NEAR(bytes->intra_node + bytes->inter_node, 2 * (n - 1) * op.bytes, 1e-6 * op.bytes);
      if (nodes == 1) {
        EXPECT_EQ(bytes->inter_node, 0.0);
      } else {
        EXPECT_GT(bytes->inter_node, 0.0);
      }
    }
  }
}

TEST(TrainingPlan, ParameterServerBytesPerLinkClass) {
  // One CPU server per node: a worker's share for its own node's server stays inside the node.
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 4}, {"bucket_MB", 25}}));
  for (const auto& op : p.ops) {
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 32 * op.bytes / 4);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 32 * 3 * op.bytes / 4);
  }
  const TrainingPlan dedicated = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"server_placement", "dedicated"}}));
  const auto bytes = dedicated.link_class_bytes(dedicated.ops.at(0));
  EXPECT_EQ(bytes->intra_node, 0.0);
  EXPECT_DOUBLE_EQ(bytes->inter_node, 16 * dedicated.ops.at(0).bytes);
}

TEST(TrainingPlan, CalibrationMakesOneGpuReproduceTheMeasuredThroughput) {
  Json doc = scenario_json(2, Json{{"kind", "ring_allreduce"}});
  doc["calibration"] = Json{{"single_gpu_samples_per_s", 400}};
  const TrainingPlan p = plan_of(doc);
  EXPECT_EQ(p.reference_batch, 32);
  EXPECT_NEAR(p.single_gpu_iteration_s, 32.0 / 400, 1e-15);
  // Every GPU runs the reference batch (weak scaling): its compute is the one-GPU iteration.
  EXPECT_NEAR(p.compute_s(5), 32.0 / 400, 1e-12);
}

TEST(TrainingPlan, StrongScalingSpreadsTheRemainderOverTheFirstRanks) {
  Json doc = scenario_json(2, Json{{"kind", "ring_allreduce"}});
  doc["workload"] = Json{{"model", "resnet50"}, {"scaling", "strong"}, {"global_batch", 1001}};
  const TrainingPlan p = plan_of(doc);
  EXPECT_EQ(p.reference_batch, 1001);
  ASSERT_EQ(p.profiles.size(), 2u);
  double total = 0;
  for (int r = 0; r < p.gpus; ++r) {
    const double batch = p.profile_of(r).batch;
    EXPECT_EQ(batch, r < 1001 % 16 ? 63 : 62) << r;
    total += batch;
  }
  EXPECT_EQ(total, 1001);
  EXPECT_GT(p.compute_s(0), p.compute_s(15));
}

TEST(TrainingPlan, SlowerGpusScaleTheirProfile) {
  Json doc = scenario_json(2, Json{{"kind", "ring_allreduce"}});
  doc["heterogeneity"] = Json{{"gpu_speed", Json{{"3", 0.5}}}, {"node_speed", Json{{"1", 0.8}}}};
  const TrainingPlan p = plan_of(doc);
  EXPECT_DOUBLE_EQ(p.gpu_plans[3].slowdown, 2.0);
  EXPECT_DOUBLE_EQ(p.gpu_plans[9].slowdown, 1.25);
  EXPECT_DOUBLE_EQ(p.gpu_plans[0].slowdown, 1.0);
  EXPECT_NEAR(p.compute_s(3), 2 * p.compute_s(0), 1e-12);
}

TEST(TrainingPlan, WithoutOverlapEveryOperationWaitsForBackward) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "halving_doubling"}, {"overlap", false}}));
  ASSERT_FALSE(p.ops.empty());
  for (const auto& op : p.ops) {
    EXPECT_EQ(op.trigger, CommTrigger::backward_done);
    EXPECT_EQ(op.algorithm, Algorithm::halving_doubling);
    EXPECT_EQ(op.ranks, 16);
  }
}

TEST(TrainingPlan, OneGpuCommunicatesOnlyWithServers) {
  Json ring = scenario_json(1, Json{{"kind", "ring_allreduce"}});
  ring["platform"]["gpus_per_node"] = 1;
  EXPECT_TRUE(plan_of(ring).ops.empty());
  Json ps = scenario_json(1, Json{{"kind", "parameter_server"}});
  ps["platform"]["gpus_per_node"] = 1;
  EXPECT_FALSE(plan_of(ps).ops.empty());
}

TEST(TrainingPlan, DedicatedServersOnASimGridXmlPlatformAreBadInput) {
  Json doc = scenario_json(1, Json{{"kind", "parameter_server"}, {"server_placement", "dedicated"}});
  doc["platform"] = Json{{"file", std::string(TRAINSIM_TEST_DATA_DIR) + "/good/platforms/two_hosts.xml"}, {"gpu", "V100-SXM2-16GB"}};
  Scenario s = read_scenario(doc, "plan_test.json");
  s.platform.nodes = 2;  // what the engine learns from SimGrid
  try {
    build_training_plan(s, load_scenario_workload(s));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/strategy/server_placement");
  }
}

TEST(TrainingPlan, JsonListsEveryPart) {
  const Json j = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"bucket_MB", 25}})).to_json();
  for (const char* key : {"name", "strategy", "gpus", "profiles", "gpu_plans", "buckets", "servers", "ops", "calibration_factor"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["gpu_plans"].size(), 16u);
  EXPECT_EQ(j["servers"][1]["node"], 1);
  EXPECT_EQ(j["ops"][0]["kind"], "push");
  EXPECT_EQ(j["ops"][1]["after_op"], 0);
}

}  // namespace
