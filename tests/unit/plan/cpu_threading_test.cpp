// The CPU plan (no SimGrid): op graph, threads per op, Amdahl and fork-join parts, calibration,
// Wang et al.'s graph width, and the threading object's checks.
#include <gtest/gtest.h>

#include <cmath>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim_test/errors.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

Json cpu_scenario(const std::string& model, int batch, const Json& threading) {
  return Json{{"name", "cpu test"},
              {"workload", Json{{"model", model}, {"batch_per_gpu", batch}}},
              {"platform", Json{{"preset", "cpu-2s-xeon-8160"}}},
              {"threading", threading}};
}

CpuPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "cpu_test.json");
  return build_cpu_plan(s, load_scenario_workload(s));
}

std::string error_of(const Json& document) {
  return trainsim_test::error_of([&] { plan_of(document); }).what();
}

TEST(CpuPlan, InferenceHasOneOpPerComputingLayerTrainingAddsBackwardAndUpdates) {
  const auto workload = workloads::load_workload("mlp");
  const CpuPlan inference = plan_of(cpu_scenario("mlp", 8, Json{{"mode", "inference"}}));
  const CpuPlan training = plan_of(cpu_scenario("mlp", 8, Json::object()));
  std::size_t computing = 0, weighted = 0;
  for (const auto& l : workload.layers) {
    computing += l.op_class != workloads::OpClass::data;
    weighted += l.op_class != workloads::OpClass::data && l.params > 0;
  }
  EXPECT_EQ(inference.ops.size(), computing);
  EXPECT_EQ(training.ops.size(), 2 * computing + weighted);
  for (std::size_t i = 0; i < training.ops.size(); ++i)
    for (int d : training.ops[i].deps) EXPECT_LT(d, static_cast<int>(i)) << training.ops[i].name;
}

TEST(CpuPlan, DefaultThreadsAreTheCoresOverThePools) {
  EXPECT_EQ(plan_of(cpu_scenario("resnet50", 1, Json::object())).threads_per_pool, 48);
  EXPECT_EQ(plan_of(cpu_scenario("resnet50", 1, Json{{"inter_op_pools", 4}})).threads_per_pool, 12);
  EXPECT_EQ(plan_of(cpu_scenario("resnet50", 1, Json{{"inter_op_pools", 4}, {"intra_op_threads", 3}})).threads_per_pool, 3);
}

TEST(CpuPlan, OpTimeIsDispatchAmdahlAndForkJoin) {
  // One thread: dispatch + compute; k threads on one socket: the serial share stays, the rest is
  // split, and the fork-join tree over 8 threads has 3 levels.
  const Json t1{{"mode", "inference"}, {"intra_op_threads", 1}};
  const Json t8{{"mode", "inference"}, {"intra_op_threads", 8}};
  const CpuPlan one = plan_of(cpu_scenario("resnet50", 32, t1));
  const CpuPlan eight = plan_of(cpu_scenario("resnet50", 32, t8));
  const ThreadingOptions o;
  const auto& c1 = one.ops[0];
  const auto& c8 = eight.ops[0];
  ASSERT_EQ(c1.op_class, "conv");
  const double compute = c1.parallel_s;  // one thread: serial share in serial_s, no fork-join
  EXPECT_NEAR(c1.serial_s, o.dispatch_s + o.serial_fraction / (1 - o.serial_fraction) * compute, 1e-12);
  EXPECT_EQ(c8.threads, 8);
  EXPECT_NEAR(c8.serial_s, c1.serial_s + 3 * o.fork_join_s, 1e-12);
  EXPECT_NEAR(c8.parallel_s, c1.parallel_s, 1e-12);
  EXPECT_NEAR(c8.alone_s(1e12), c8.serial_s + std::max(c8.parallel_s / 8, c8.bytes / (8 * o.core_bandwidth_Bps)), 1e-12);
}

TEST(CpuPlan, ThreadsSpanningSocketsCostMoreToJoin) {
  const ThreadingOptions o;
  const double at24 = plan_of(cpu_scenario("resnet50", 32, Json{{"intra_op_threads", 24}})).ops[0].serial_s;
  const double at48 = plan_of(cpu_scenario("resnet50", 32, Json{{"intra_op_threads", 48}})).ops[0].serial_s;
  const double at96 = plan_of(cpu_scenario("resnet50", 32, Json{{"intra_op_threads", 96}})).ops[0].serial_s;
  // 24 and 48 threads: 5 and 6 levels; 96 threads: 7 levels. Oversubscription (96 threads on 48
  // cores) is not a constant of the op: the engine adds it from what runs at the time.
  EXPECT_NEAR(at48 - at24, 6 * o.fork_join_s * o.cross_socket_factor - 5 * o.fork_join_s, 1e-12);
  EXPECT_NEAR(at96 - at24, 7 * o.fork_join_s * o.cross_socket_factor - 5 * o.fork_join_s, 1e-12);
}

TEST(CpuPlan, WorkingSetIsAThreadsShareOfTheBytesUpToTheL2) {
  const CpuPlan p = plan_of(cpu_scenario("resnet50", 64, Json{{"mode", "inference"}, {"intra_op_threads", 24}}));
  const double l2 = p.platform.cpu.l2_bytes;
  EXPECT_EQ(l2, 1024.0 * 1024);  // Skylake-SP: 1 MiB per core
  bool capped = false, shared = false;
  for (const auto& op : p.ops) {
    EXPECT_DOUBLE_EQ(op.working_set_bytes, std::min(l2, op.bytes / op.threads)) << op.name;
    capped = capped || op.working_set_bytes == l2;
    shared = shared || op.working_set_bytes < l2;
  }
  EXPECT_TRUE(capped);
  EXPECT_TRUE(shared);
}

TEST(CpuPlan, SmallOpsUseFewerThreadsThanGiven) {
  // The MLP's last layer has 10 outputs: one batch-1 sample is one block of 16, one thread.
  const CpuPlan p = plan_of(cpu_scenario("mlp", 1, Json{{"mode", "inference"}, {"intra_op_threads", 24}}));
  EXPECT_EQ(p.ops.back().threads, 1);
}

TEST(CpuPlan, CalibrationMakesOneThreadLastTheMeasuredTime) {
  Json doc = cpu_scenario("googlenet", 4, Json{{"mode", "inference"}, {"intra_op_threads", 1}});
  doc["calibration"] = Json{{"single_thread_iteration_s", 2.5}};
  const CpuPlan p = plan_of(doc);
  double sequential = 0;
  for (const auto& op : p.ops) sequential += op.alone_s(p.platform.memory_bandwidth_Bps());
  EXPECT_NEAR(sequential, 2.5, 1e-9);
  EXPECT_NE(p.calibration_factor, 1);
  doc["calibration"] = Json{{"single_thread_iteration_s", 1e-6}};
  EXPECT_NE(error_of(doc).find("/calibration/single_thread_iteration_s: must exceed"), std::string::npos);
}

TEST(CpuPlan, GraphWidthOfWideAndSequentialModels) {
  // A chain of heavy layers has width 1; GoogLeNet's inception modules run four branches.
  const auto [mlp_heavy, mlp_depth] = heavy_width(workloads::load_workload("mlp"));
  EXPECT_EQ(mlp_heavy, mlp_depth);
  const auto [g_heavy, g_depth] = heavy_width(workloads::load_workload("googlenet"));
  EXPECT_GT(static_cast<double>(g_heavy) / g_depth, 2.0);
  const auto [r_heavy, r_depth] = heavy_width(workloads::load_workload("resnet50"));
  EXPECT_LT(static_cast<double>(r_heavy) / r_depth, 1.1);
}

TEST(CpuScenario, ReadsTheOversubscriptionConstants) {
  const CpuPlan defaults = plan_of(cpu_scenario("mlp", 1, Json::object()));
  EXPECT_DOUBLE_EQ(defaults.threading.context_switch_s, 3.8e-6);
  EXPECT_DOUBLE_EQ(defaults.threading.spin_wait_s, 0.2);
  const CpuPlan set = plan_of(cpu_scenario("mlp", 1, Json{{"context_switch_us", 10}, {"spin_wait_ms", 0}}));
  EXPECT_DOUBLE_EQ(set.threading.context_switch_s, 1e-5);
  EXPECT_DOUBLE_EQ(set.threading.spin_wait_s, 0.0);
  EXPECT_NE(error_of(cpu_scenario("mlp", 1, Json{{"spin_wait_ms", -1}})).find("/threading/spin_wait_ms"), std::string::npos);
}

TEST(CpuScenario, BadThreadingAndPrecisionNameThePointer) {
  EXPECT_NE(error_of(cpu_scenario("resnet50", 1, Json{{"inter_op_pools", 0}})).find("/threading/inter_op_pools: must be ≥ 1"),
            std::string::npos);
  EXPECT_NE(error_of(cpu_scenario("resnet50", 1, Json{{"intra_op_threads", 385}})).find("/threading/intra_op_threads: must be ≤ 384"),
            std::string::npos);
  Json fp16 = cpu_scenario("resnet50", 1, Json::object());
  fp16["workload"]["precision"] = "fp16";
  EXPECT_NE(error_of(fp16).find("/workload/precision: precision \"fp16\" is a GPU format"), std::string::npos);
  Json gpu = Json{{"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 1}}},
                  {"platform", Json{{"preset", "dgx-a100"}}},
                  {"strategy", Json{{"kind", "ring_allreduce"}}},
                  {"threading", Json{{"inter_op_pools", 2}}}};
  EXPECT_NE(error_of(gpu).find("/threading: 'threading' applies to CPU platforms"), std::string::npos);
}

}  // namespace
