// Plans are checked without simulating: bucket contents, server ownership, bytes per link class,
// calibration and per-GPU profiles follow from the scenario in closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/nccl_tuner.hpp"
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
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"worker_aggregation", "none"}}));
  std::size_t with_params = 0;
  for (const auto& layer : resnet50().layers) with_params += layer.params > 0;
  ASSERT_EQ(p.buckets.size(), with_params);
  ASSERT_EQ(p.ops.size(), 2 * with_params);  // a push and a pull per variable
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const CommOp& op = p.ops[i];
    EXPECT_EQ(op.id, static_cast<int>(i));
    EXPECT_EQ(op.after_op, i % 2 == 0 ? -1 : static_cast<int>(i) - 1);  // pushes run concurrently, a pull after its push
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

TEST(TrainingPlan, ShardedServersOwnAnEqualShareOfEveryBucket) {
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 3}, {"bucket_MB", 25}, {"placement", "sharded"}}));
  EXPECT_TRUE(p.placed_variables.empty());
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

TEST(TrainingPlan, EveryAllReducePaysNcclsLaunchCostPerCollectiveCall) {
  // tuning.cc baseLat, Simple protocol: 8.4 µs for ring and tree; hierarchical makes three calls.
  const std::vector<std::pair<std::string, double>> expected{
      {"ring_allreduce", 8.4e-6}, {"tree_allreduce", 8.4e-6}, {"halving_doubling", 8.4e-6}, {"hierarchical_allreduce", 3 * 8.4e-6}};
  for (const auto& [kind, launch] : expected) {
    const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", kind}, {"bucket_MB", 25}}));
    ASSERT_FALSE(p.ops.empty()) << kind;
    for (const auto& op : p.ops) EXPECT_DOUBLE_EQ(op.launch_s, launch) << kind;
    EXPECT_DOUBLE_EQ(p.to_json()["ops"][0]["launch_s"].get<double>(), launch) << kind;
  }
  // Parameter-server RPCs launch no collective.
  const TrainingPlan ps = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}}));
  for (const auto& op : ps.ops) EXPECT_EQ(op.launch_s, 0.0);
  EXPECT_FALSE(ps.to_json()["ops"][0].contains("launch_s"));
}

TEST(TrainingPlan, NcclAllReduceTakesTheTunersPickPerBucketSize) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "nccl_allreduce"}, {"bucket_MB", 1}}));
  const Scenario s = read_scenario(scenario_json(2, Json{{"kind", "nccl_allreduce"}}), "plan_test.json");
  const NcclTopology topo = nccl_topology(s.platform, 16);
  ASSERT_GE(p.ops.size(), 10u);
  std::set<std::string> picks;
  for (const auto& op : p.ops) {
    const NcclChoice choice = nccl_choose(topo, op.bytes);
    const ProtocolCosts costs = protocol_costs(topo, choice, op.bytes);
    EXPECT_EQ(op.algorithm, choice.algorithm);
    ASSERT_TRUE(op.protocol);
    EXPECT_EQ(*op.protocol, choice.protocol);
    EXPECT_EQ(op.channels, choice.algorithm == Algorithm::nvls ? 0 : choice.channels);
    EXPECT_DOUBLE_EQ(op.launch_s, costs.launch_s);
    EXPECT_DOUBLE_EQ(op.step_overhead_s, costs.step_overhead_s);
    EXPECT_DOUBLE_EQ(op.wire_factor, costs.wire_factor);
    picks.insert(to_string(op.algorithm) + "/" + to_string(*op.protocol));
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);  // per the op's own algorithm, wire bytes included
    EXPECT_GT(bytes->inter_node, 0.0);
  }
  EXPECT_GE(picks.size(), 2u);  // 1 MiB buckets and ResNet-50's small last layers: not one pick for all
  ASSERT_TRUE(p.nccl_intra_node_latency_s);
  EXPECT_DOUBLE_EQ(*p.nccl_intra_node_latency_s, s.platform.intra_node.latency_s - fabric_latency_cut_s(topo));
  const Json first = p.to_json()["ops"][0];
  EXPECT_EQ(first["protocol"].get<std::string>(), to_string(*p.ops[0].protocol));
  EXPECT_TRUE(first.contains("wire_factor") && first.contains("channels") && first.contains("step_overhead_s"));
  // The textbook kinds keep the platform's latencies and no protocol.
  const TrainingPlan ring = plan_of(scenario_json(2, Json{{"kind", "ring_allreduce"}, {"bucket_MB", 1}}));
  EXPECT_FALSE(ring.nccl_intra_node_latency_s);
  for (const auto& op : ring.ops) EXPECT_FALSE(op.protocol);
  EXPECT_FALSE(ring.to_json()["ops"][0].contains("protocol"));
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
  // 16 GPUs in 2 nodes, hd_order "far": recursive halving first exchanges S/2 with the rank 8 away
  // (the other node), then S/4, S/8, S/16 inside the node; recursive doubling mirrors it.
  const TrainingPlan hd = plan_of(scenario_json(2, Json{{"kind", "halving_doubling"}, {"hd_order", "far"}}));
  EXPECT_EQ(hd.hd_order, trainsim::plan::HdOrder::far);
  for (const auto& op : hd.ops) {
    const auto bytes = hd.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 16 * op.bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 16 * 2 * (0.25 + 0.125 + 0.0625) * op.bytes);
  }
  // The default, "near": S/2, S/4, S/8 inside the node, only S/16 across it, and back.
  const TrainingPlan near = plan_of(scenario_json(2, Json{{"kind", "halving_doubling"}}));
  EXPECT_EQ(near.hd_order, trainsim::plan::HdOrder::near);
  for (const auto& op : near.ops) {
    const auto bytes = near.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 16 * 2 * 0.0625 * op.bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 16 * 2 * (0.5 + 0.25 + 0.125) * op.bytes);
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
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 4}, {"bucket_MB", 25}, {"placement", "sharded"},
                                                       {"worker_aggregation", "none"}}));
  for (const auto& op : p.ops) {
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 32 * op.bytes / 4);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 32 * 3 * op.bytes / 4);
  }
  const TrainingPlan dedicated = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"server_placement", "dedicated"},
                                                               {"worker_aggregation", "none"}}));
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

// A K80 board holds two dies behind one power limit (platform.gpu_board): a die whose sibling runs
// the same job goes at shared_speed; alone (one GPU per node, or the odd GPU out) at full speed.
// The one-GPU calibration is a die alone, so it is untouched.
TEST(TrainingPlan, GpusSharingABoardRunAtTheBoardsSharedSpeed) {
  auto k80 = [](int nodes, int gpus_per_node, double shared_speed) {
    Json doc = scenario_json(nodes, Json{{"kind", "parameter_server"}, {"servers", 1}});
    doc["platform"] = Json{{"preset", "aws-p2.8xlarge"}, {"nodes", nodes}, {"gpus_per_node", gpus_per_node},
                           {"gpu_board", Json{{"shared_speed", shared_speed}}}};
    doc["calibration"] = Json{{"single_gpu_samples_per_s", 50}};
    return plan_of(doc);
  };
  const TrainingPlan eight = k80(1, 8, 0.8);
  for (int r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(eight.gpu_plans[static_cast<std::size_t>(r)].slowdown, 1.25) << r;
  EXPECT_NEAR(eight.single_gpu_iteration_s, 32.0 / 50, 1e-12);
  EXPECT_NEAR(eight.compute_s(7), 1.25 * 32.0 / 50, 1e-9);
  const TrainingPlan three = k80(1, 3, 0.8);  // boards {0, 1} and {2}
  EXPECT_DOUBLE_EQ(three.gpu_plans[0].slowdown, 1.25);
  EXPECT_DOUBLE_EQ(three.gpu_plans[1].slowdown, 1.25);
  EXPECT_DOUBLE_EQ(three.gpu_plans[2].slowdown, 1.0);
  const TrainingPlan spread = k80(2, 1, 0.8);  // one die per node: alone on its board
  for (const auto& g : spread.gpu_plans) EXPECT_DOUBLE_EQ(g.slowdown, 1.0);
  const TrainingPlan unset = k80(1, 8, 1.0);  // the preset's default: no published figure, no effect
  for (const auto& g : unset.gpu_plans) EXPECT_DOUBLE_EQ(g.slowdown, 1.0);
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
  const Scenario s = read_scenario(doc, "plan_test.json");
  try {
    build_training_plan(s, load_scenario_workload(s));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/strategy/server_placement");
  }
}

// The plan knows an XML platform's GPUs before SimGrid builds anything: its hosts, counted from the file.
TEST(TrainingPlan, ASimGridXmlPlatformsGpusAreCountedBeforePlanning) {
  Json doc = scenario_json(1, Json{{"kind", "ring_allreduce"}});
  const std::string file = std::string(TRAINSIM_TEST_DATA_DIR) + "/good/platforms/shared_star.xml";  // 3 hosts
  doc["platform"] = Json{{"file", file}};
  const TrainingPlan p = plan_of(doc);
  EXPECT_EQ(p.gpus, 3);
  EXPECT_EQ(p.nodes, 3);
  EXPECT_EQ(p.platform.nodes, 3);
  EXPECT_EQ(p.gpu_plans.size(), 3u);
  ASSERT_FALSE(p.ops.empty());
  EXPECT_EQ(p.ops.front().ranks, 3);
  // Hosts that do not fill whole nodes are refused as building the platform refuses them.
  doc["platform"]["gpus_per_node"] = 2;
  try {
    plan_of(doc);
    FAIL() << "3 hosts in nodes of 2 were accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), file);
    EXPECT_NE(std::string(e.what()).find("has 3 hosts, not a multiple of gpus_per_node 2"), std::string::npos)
        << e.what();
  }
}

// The platform the engine builds is the plan's to say: NCCL's fabric latency, dedicated server nodes.
TEST(TrainingPlan, ThePlanSaysWhichPlatformTheEngineBuilds) {
  const TrainingPlan nccl = plan_of(scenario_json(2, Json{{"kind", "nccl_allreduce"}}));
  ASSERT_TRUE(nccl.nccl_intra_node_latency_s);
  EXPECT_EQ(nccl.effective_platform().intra_node.latency_s, *nccl.nccl_intra_node_latency_s);
  EXPECT_LT(nccl.effective_platform().intra_node.latency_s, nccl.platform.intra_node.latency_s);
  const TrainingPlan ring = plan_of(scenario_json(2, Json{{"kind", "ring_allreduce"}}));
  EXPECT_EQ(ring.effective_platform().intra_node.latency_s, ring.platform.intra_node.latency_s);
  EXPECT_EQ(ring.server_nodes(), 0);
  const TrainingPlan dedicated =
      plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 3}, {"server_placement", "dedicated"}}));
  EXPECT_EQ(dedicated.server_nodes(), 3);
  const TrainingPlan colocated = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 3}}));
  EXPECT_EQ(colocated.server_nodes(), 0);
}

TEST(TrainingPlan, JsonListsEveryPart) {
  const Json j = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"bucket_MB", 25}, {"worker_aggregation", "none"}})).to_json();
  for (const char* key : {"name", "strategy", "gpus", "profiles", "gpu_plans", "buckets", "servers", "ops", "calibration_factor"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["gpu_plans"].size(), 16u);
  EXPECT_EQ(j["servers"][1]["node"], 1);
  EXPECT_EQ(j["ops"][0]["kind"], "push");
  EXPECT_EQ(j["ops"][1]["after_op"], 0);
  EXPECT_EQ(j["placement"], "round_robin");
  EXPECT_EQ(j["servers"][0]["variables"][0], "conv1");  // the first variable created goes to ps task 0
}

// Whole variables on their owners (TensorFlow's replica_device_setter): closed forms on small cases.
TEST(ServerPlacement, RoundRobinCyclesInCreationOrderAndGreedyTakesTheLeastLoaded) {
  const std::vector<Variable> vars{{"a", 4}, {"b", 1}, {"empty", 0}, {"c", 1}, {"d", 3}};
  const auto rr = place_variables(vars, 2, VariablePlacement::round_robin, 0);
  ASSERT_EQ(rr.size(), 4u);  // a layer without parameters is no variable
  EXPECT_EQ((std::vector<int>{rr[0].server, rr[1].server, rr[2].server, rr[3].server}), (std::vector<int>{0, 1, 0, 1}));
  const auto greedy = place_variables(vars, 2, VariablePlacement::greedy, 0);
  // loads: a→0 (4,0); b→1 (4,1); c→1 (4,2); d→1 (4,5)
  EXPECT_EQ((std::vector<int>{greedy[0].server, greedy[1].server, greedy[2].server, greedy[3].server}), (std::vector<int>{0, 1, 1, 1}));
  // Equal loads: greedy is round robin (TensorFlow's testUniformLoadEqualsRoundRobin).
  const std::vector<Variable> equal{{"u", 2}, {"v", 2}, {"w", 2}, {"x", 2}};
  const auto g = place_variables(equal, 2, VariablePlacement::greedy, 0);
  const auto r = place_variables(equal, 2, VariablePlacement::round_robin, 0);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(g[i].server, r[i].server);
  EXPECT_TRUE(place_variables(vars, 2, VariablePlacement::sharded, 0).empty());
}

TEST(ServerPlacement, PartitionsAreEqualSlicesPlacedLikeVariables) {
  const auto placed = place_variables({{"big", 10}, {"small", 3}}, 3, VariablePlacement::round_robin, 4);
  ASSERT_EQ(placed.size(), 4u);  // ⌈10/4⌉ = 3 slices, then the small one whole
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(placed[i].layer, "big");
    EXPECT_EQ(placed[i].part, i);
    EXPECT_EQ(placed[i].parts, 3);
    EXPECT_DOUBLE_EQ(placed[i].bytes, 10.0 / 3);
    EXPECT_EQ(placed[i].server, i);
  }
  EXPECT_EQ(placed[3].server, 0);
  EXPECT_EQ(bytes_per_server(placed, {"big"}, 3), (std::vector<double>{10.0 / 3, 10.0 / 3, 10.0 / 3}));
  EXPECT_EQ(bytes_per_server(placed, {"small", "big"}, 3), (std::vector<double>{10.0 / 3 + 3, 10.0 / 3, 10.0 / 3}));
}

TEST(TrainingPlan, RoundRobinServersOwnWholeLayersInForwardOrder) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 3}, {"worker_aggregation", "none"}}));
  std::vector<const workloads::LayerCost*> with_params;
  for (const auto& layer : resnet50().layers)
    if (layer.params > 0) with_params.push_back(&layer);
  ASSERT_EQ(p.placed_variables.size(), with_params.size());
  for (std::size_t i = 0; i < with_params.size(); ++i) {
    EXPECT_EQ(p.placed_variables[i].layer, with_params[i]->name);
    EXPECT_EQ(p.placed_variables[i].server, static_cast<int>(i % 3));
  }
  // One bucket per layer: each push goes whole to its layer's owner.
  std::vector<double> expected(3, 0.0);
  for (const auto& op : p.ops) {
    if (op.kind != CommKind::push) continue;
    const std::string& layer = p.buckets[op.bucket].layers.at(0);
    std::size_t i = 0;
    while (with_params[i]->name != layer) ++i;
    for (int server = 0; server < 3; ++server)
      EXPECT_EQ(op.bytes_per_server[server], server == static_cast<int>(i % 3) ? with_params[i]->weight_bytes(Precision::fp32) : 0.0);
    expected[i % 3] += 16 * with_params[i]->weight_bytes(Precision::fp32);
  }
  const std::vector<double> loads = p.server_bytes();
  for (int server = 0; server < 3; ++server) EXPECT_DOUBLE_EQ(loads[server], expected[server]);
}

TEST(TrainingPlan, AFusedBucketMapsToSeveralServersWithUnevenBytes) {
  const TrainingPlan p = plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 4}, {"bucket_MB", 25}, {"placement", "greedy"},
                                                       {"worker_aggregation", "none"}}));
  double total = 0;
  bool uneven = false;
  for (const auto& op : p.ops) {
    const double sum = std::accumulate(op.bytes_per_server.begin(), op.bytes_per_server.end(), 0.0);
    EXPECT_NEAR(sum, op.bytes, 1e-6 * op.bytes);
    const auto [lo, hi] = std::minmax_element(op.bytes_per_server.begin(), op.bytes_per_server.end());
    uneven = uneven || *hi > *lo;
    if (op.kind == CommKind::push) total += sum;
  }
  EXPECT_TRUE(uneven);
  EXPECT_DOUBLE_EQ(total, 25'557'032.0 * 4);
  const std::vector<double> loads = p.server_bytes();
  EXPECT_NEAR(std::accumulate(loads.begin(), loads.end(), 0.0), 16 * 25'557'032.0 * 4, 1e-3);
}

// tf_cnn_benchmarks' distributed parameter server: a node's towers are summed on its host CPU and
// the node pushes and pulls once (variable_mgr.py VariableMgrDistributedFetchFromPS).
TEST(TrainingPlan, WorkerAggregationOnTheHostIsTheDefaultWithSeveralGpusPerNode) {
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 4}, {"bucket_MB", 25}, {"placement", "sharded"}}));
  EXPECT_EQ(p.worker_aggregation, "host");
  ASSERT_EQ(p.ops.size(), 5 * p.buckets.size());
  const CommKind chain[] = {CommKind::device_to_host, CommKind::host_sum, CommKind::push, CommKind::pull, CommKind::host_to_device};
  const double bandwidth = p.host_memory_bandwidth_Bps;
  ASSERT_GT(bandwidth, 0);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const CommOp& op = p.ops[i];
    EXPECT_EQ(op.kind, chain[i % 5]) << i;
    EXPECT_EQ(op.bucket, i / 5);
    EXPECT_EQ(op.after_op, i % 5 == 0 ? -1 : static_cast<int>(i) - 1);
    EXPECT_EQ(op.trigger, i % 5 == 0 ? CommTrigger::bucket_ready : CommTrigger::previous_op);
    const bool per_node = op.kind == CommKind::host_sum || op.kind == CommKind::push || op.kind == CommKind::pull;
    EXPECT_EQ(op.endpoints, per_node ? CommEndpoints::node_hosts : CommEndpoints::gpus);
    EXPECT_EQ(op.ranks, per_node ? 4 : 32);
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    switch (op.kind) {
      case CommKind::host_sum:  // reads the 8 copies, writes the sum
        EXPECT_DOUBLE_EQ(op.host_seconds, 9 * op.bytes / bandwidth);
        EXPECT_EQ(bytes->intra_node + bytes->inter_node, 0.0);
        break;
      case CommKind::push:
      case CommKind::pull:  // a node's own server is on its CPU: only the other three shards cross the network
        EXPECT_EQ(bytes->intra_node, 0.0);
        EXPECT_DOUBLE_EQ(bytes->inter_node, 4 * 3 * op.bytes / 4);
        break;
      default:  // every GPU copies the bucket over PCIe
        EXPECT_DOUBLE_EQ(bytes->intra_node, 32 * op.bytes);
        EXPECT_EQ(bytes->inter_node, 0.0);
    }
  }
  // A server receives one copy per node, not per GPU.
  const std::vector<double> loads = p.server_bytes();
  for (double load : loads) EXPECT_NEAR(load, 4 * 25'557'032.0 * 4 / 4, 1e-3);
  const Json j = p.to_json();
  EXPECT_EQ(j["worker_aggregation"], "host");
  EXPECT_EQ(j["ops"][1]["kind"], "host_sum");
  EXPECT_EQ(j["ops"][2]["participants"]["endpoints"], "node_hosts");
  EXPECT_EQ(j["ops"][2]["participants"]["nodes"], 4);
}

TEST(TrainingPlan, WorkerAggregationDefaultsToNoneForGpuServersAndOneGpuNodes) {
  EXPECT_EQ(plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"aggregation", "gpu"}})).worker_aggregation, "none");
  Json single = scenario_json(4, Json{{"kind", "parameter_server"}, {"servers", 2}});
  single["platform"]["gpus_per_node"] = 1;
  const TrainingPlan none = plan_of(single);
  EXPECT_EQ(none.worker_aggregation, "none");
  EXPECT_EQ(none.ops.at(0).kind, CommKind::push);
  // Asked for with one GPU per node: copies and per-node push/pull, no sum of a single copy.
  single["strategy"]["worker_aggregation"] = "host";
  const TrainingPlan host = plan_of(single);
  ASSERT_GE(host.ops.size(), 4u);
  EXPECT_EQ(host.ops[0].kind, CommKind::device_to_host);
  EXPECT_EQ(host.ops[1].kind, CommKind::push);
  EXPECT_EQ(host.ops[1].endpoints, CommEndpoints::node_hosts);
  EXPECT_EQ(host.ops[3].kind, CommKind::host_to_device);
}

// Horovod's MPIAllreduce on host buffers (transport "host"): copy, MPI ring on the CPUs, copy back.
TEST(TrainingPlan, HostTransportStagesEachBucketThroughTheHosts) {
  const TrainingPlan p = plan_of(scenario_json(4, Json{{"kind", "ring_allreduce"}, {"transport", "host"}}));
  EXPECT_EQ(p.transport, "host");
  ASSERT_EQ(p.ops.size(), 3 * p.buckets.size());
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const CommOp& op = p.ops[i];
    EXPECT_EQ(op.after_op, static_cast<int>(i) - 1);  // one communicator, one operation at a time
    EXPECT_EQ(op.kind, i % 3 == 0 ? CommKind::device_to_host : i % 3 == 1 ? CommKind::all_reduce : CommKind::host_to_device);
    if (op.kind != CommKind::all_reduce) continue;
    EXPECT_EQ(op.transport, Transport::host);
    // 2(n−1) steps of S/n: each step one hop per node crosses the network, the other 7 are shared memory.
    const auto bytes = p.link_class_bytes(op);
    ASSERT_TRUE(bytes);
    EXPECT_DOUBLE_EQ(bytes->inter_node, 2.0 * 31 * 4 * op.bytes / 32);
    EXPECT_DOUBLE_EQ(bytes->intra_node, 2.0 * 31 * 28 * op.bytes / 32);
  }
  EXPECT_EQ(p.to_json()["ops"][1]["transport"], "host");
}

}  // namespace

// platform.gpu_board slows a die for its whole compute, not only while its sibling is busy
// (platforms/README.md, Platforms, Boards): exact when the siblings compute alike (they start forward together,
// run their segments back to back and update when communication ends, so they are busy at the
// same instants); with unequal siblings the slower die keeps the shared speed after the faster
// one is done, which overstates it by (1 − W_fast/W_slow)(1 − shared_speed) of its compute.
TEST(TrainingPlan, ABoardsSharedSpeedAppliesToTheWholeComputeEvenBesideAFasterSibling) {
  Json doc = scenario_json(1, Json{{"kind", "parameter_server"}, {"servers", 1}});
  doc["platform"] = Json{{"preset", "aws-p2.8xlarge"}, {"nodes", 1}, {"gpus_per_node", 2},
                         {"gpu_board", Json{{"shared_speed", 0.8}}}};
  doc["heterogeneity"] = Json{{"gpu_speed", Json{{"1", 0.5}}}};
  const TrainingPlan p = plan_of(doc);
  EXPECT_DOUBLE_EQ(p.gpu_plans[0].slowdown, 1.25);
  EXPECT_DOUBLE_EQ(p.gpu_plans[1].slowdown, 2.5);  // per instant 2.25: half its work at 2.5 beside die 0, the rest at 2
  EXPECT_NEAR(p.compute_s(1), 2.5 * p.compute_s(0) / 1.25, 1e-9 * p.compute_s(1));
}

// Limits of the representations: counted and refused on the plan, before any platform.
TEST(SimulationSize, ServerFlowsCountEveryCopyPushAndPullOfTheIteration) {
  // 2 nodes of 8 GPUs, 2 sharded servers, host aggregation: per bucket 16 GPU → host copies, a
  // push and a pull per node and server (2 × 2 each), 16 host → GPU copies.
  const TrainingPlan p =
      plan_of(scenario_json(2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"bucket_MB", 25}, {"placement", "sharded"}}));
  ASSERT_EQ(p.worker_aggregation, "host");
  EXPECT_EQ(server_flows(p), 40 * static_cast<long long>(p.buckets.size()));
  // Without aggregation every GPU pushes and pulls: 16 × 2 each way per bucket, no copies.
  const TrainingPlan none = plan_of(scenario_json(
      2, Json{{"kind", "parameter_server"}, {"servers", 2}, {"bucket_MB", 25}, {"placement", "sharded"}, {"worker_aggregation", "none"}}));
  EXPECT_EQ(server_flows(none), 64 * static_cast<long long>(none.buckets.size()));
  EXPECT_EQ(server_flows(plan_of(scenario_json(2, Json{{"kind", "ring_allreduce"}}))), 0);
}

TEST(SimulationSize, AutoRunsCopiesAtFlowLevelOnlyUpToItsLimit) {
  const Json small{{"kind", "parameter_server"}, {"servers", 2}};
  const TrainingPlan p = plan_of(scenario_json(2, small));
  ASSERT_LE(server_flows(p), kAutoCoarseServerFlows);
  EXPECT_EQ(resolve_server_representation(p), ServerRepresentation::flow);  // GPU ↔ host copies, small
  Json coarse = small;
  coarse["representation"] = "coarse";
  EXPECT_EQ(resolve_server_representation(plan_of(scenario_json(2, coarse))), ServerRepresentation::coarse);
  Json none = small;
  none["worker_aggregation"] = "none";
  EXPECT_EQ(resolve_server_representation(plan_of(scenario_json(2, none))), ServerRepresentation::coarse);  // no copies
  const TrainingPlan big = plan_of(scenario_json(64, small));
  ASSERT_GT(server_flows(big), kAutoCoarseServerFlows);
  EXPECT_EQ(resolve_server_representation(big), ServerRepresentation::coarse);
  Json flow = small;
  flow["representation"] = "flow";
  EXPECT_EQ(resolve_server_representation(plan_of(scenario_json(64, flow))), ServerRepresentation::flow);
}

TEST(SimulationSize, FlowLevelPastItsLimitIsRefusedAtTheRepresentation) {
  Json strategy{{"kind", "parameter_server"}, {"servers", 8}, {"representation", "flow"}};
  const Scenario within = read_scenario(scenario_json(2, strategy), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(within, load_scenario_workload(within)), within));
  const Scenario past = read_scenario(scenario_json(256, strategy), "plan_test.json");
  const TrainingPlan p = build_training_plan(past, load_scenario_workload(past));
  ASSERT_GT(server_flows(p), kMaxFlowLevelServerFlows);
  try {
    check_simulation_size(p, past);
    FAIL() << "a flow-level plan of " << server_flows(p) << " flows was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "plan_test.json");
    EXPECT_EQ(e.location(), "/strategy/representation");
    EXPECT_NE(std::string(e.what()).find(std::to_string(server_flows(p))), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"coarse\""), std::string::npos) << e.what();
  }
  strategy["representation"] = "auto";
  const Scenario automatic = read_scenario(scenario_json(256, strategy), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(automatic, load_scenario_workload(automatic)), automatic));
}

TEST(SimulationSize, StepRepresentationPastItsLimitIsRefusedAtTheRepresentation) {
  EXPECT_EQ(step_representation_refusal(kMaxStepRanks), "");
  EXPECT_NE(step_representation_refusal(kMaxStepRanks + 1).find("lockstep"), std::string::npos);
  // One bucket: a single all-reduce on kMaxStepRanks GPUs is exactly the iteration's step limit.
  const Json strategy{{"kind", "ring_allreduce"}, {"representation", "step"}, {"bucket_MB", 1000}};
  const Scenario within = read_scenario(scenario_json(kMaxStepRanks / 8, strategy), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(within, load_scenario_workload(within)), within));
  const Scenario past = read_scenario(scenario_json(kMaxStepRanks / 8 + 1, strategy), "plan_test.json");
  try {
    check_simulation_size(build_training_plan(past, load_scenario_workload(past)), past);
    FAIL() << "step on " << past.gpus() << " GPUs was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/strategy/representation");
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxStepRanks)), std::string::npos) << e.what();
  }
}

// A training iteration runs one all-reduce per bucket: 256 GPUs of per-layer buckets passed the
// per-collective limit and ran past 90 s. The whole iteration's step-level transfers are bounded.
TEST(SimulationSize, StepRepresentationBoundsTheWholeIterationNotOneCollective) {
  // One function holds the limit: one all-reduce of kMaxStepRanks GPUs is exactly kMaxStepTransfers;
  // a second one of any size passes it, and one participant moves nothing.
  EXPECT_EQ(step_refusal({kMaxStepRanks}), "");
  EXPECT_EQ(step_refusal({kMaxStepRanks, 1}), "");
  EXPECT_NE(step_refusal({kMaxStepRanks, 2}).find("step-level transfers"), std::string::npos);
  EXPECT_EQ(step_refusal({kMaxStepRanks + 1}), step_representation_refusal(kMaxStepRanks + 1));
  const Json five{{"kind", "ring_allreduce"}, {"representation", "step"}};  // 25 MB buckets
  const Scenario few = read_scenario(scenario_json(4, five), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(few, load_scenario_workload(few)), few));
  const Json per_layer{{"kind", "ring_allreduce"}, {"representation", "step"}, {"bucket_MB", 0}};
  for (int nodes : {4, 32}) {
    const Scenario many = read_scenario(scenario_json(nodes, per_layer), "plan_test.json");
    try {
      check_simulation_size(build_training_plan(many, load_scenario_workload(many)), many);
      FAIL() << "step with per-layer buckets on " << many.gpus() << " GPUs was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.location(), "/strategy/representation");
      EXPECT_NE(std::string(e.what()).find("step-level transfers"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxStepTransfers)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("fewer, larger buckets"), std::string::npos) << e.what();
    }
  }
}

TEST(SimulationSize, ParameterServersPastTheirGpuLimitAreRefusedAtTheNodes) {
  const Json strategy{{"kind", "parameter_server"}, {"servers", 16}};
  const Scenario within = read_scenario(scenario_json(kMaxServerGpus / 8, strategy), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(within, load_scenario_workload(within)), within));
  const Scenario past = read_scenario(scenario_json(kMaxServerGpus / 8 + 1, strategy), "plan_test.json");
  try {
    check_simulation_size(build_training_plan(past, load_scenario_workload(past)), past);
    FAIL() << "a parameter-server plan of " << past.gpus() << " GPUs was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.location(), "/platform/nodes");
    EXPECT_NE(std::string(e.what()).find("use at most 4096 nodes of 8 GPUs"), std::string::npos) << e.what();
  }
  // All-reduce strategies have the platform's limit only.
  const Scenario ring = read_scenario(scenario_json(kMaxServerGpus / 8 + 1, Json{{"kind", "ring_allreduce"}}), "plan_test.json");
  EXPECT_NO_THROW(check_simulation_size(build_training_plan(ring, load_scenario_workload(ring)), ring));
}
