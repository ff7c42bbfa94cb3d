// The single-GPU calibration in closed form: which side of the model a measurement corrects
// (fit_calibration), how it moves to another GPU (calibration.gpu) and to other settings
// (calibration.precision, calibration.batch_per_gpu).
#include <gtest/gtest.h>

#include "trainsim/plan/compute_model.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim/platforms/gpu_catalog.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

constexpr auto kMemory = static_cast<std::size_t>(Engine::memory);
constexpr auto kCuda = static_cast<std::size_t>(Engine::cuda_cores);
constexpr auto kTf32 = static_cast<std::size_t>(Engine::tensor_tf32);
constexpr auto kHalf = static_cast<std::size_t>(Engine::tensor_16bit);

IterationLoad load_of(double host_s, double memory_s, double tf32_s) {
  IterationLoad l;
  l.host_s = host_s;
  l.engine_s[kMemory] = memory_s;
  l.engine_s[kTf32] = tf32_s;
  return l;
}

// One task of one kernel: a streaming pass of `bytes`, or a square GEMM of side `n`.
workloads::IterationGraph one_kernel_graph(workloads::KernelKind kind, double size) {
  workloads::Kernel k;
  k.kind = kind;
  if (kind == workloads::KernelKind::memory) {
    k.bytes = size;
  } else {
    k.m = k.n = k.k = size;
    k.flops = 2 * size * size * size;
    k.bytes = 3 * size * size * 4;
  }
  workloads::IterationGraph g;
  g.precision = Precision::tf32;
  workloads::ComputeTask t;
  t.layer = "only";
  t.launches = {k};
  g.forward = {t};
  g.update.layer = "optimizer";
  g.update.phase = workloads::TaskPhase::update;
  g.update.kernels = 0;
  return g;
}

ComputeModelOptions no_gaps() {
  ComputeModelOptions o;
  o.launch_overhead_s = 0;
  return o;
}

Json resnet_h100(const std::string& precision, int batch) {
  return Json{{"name", "calibration test"},
              {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", batch}, {"precision", precision}}},
              {"platform", Json{{"preset", "dgx-h100"}, {"nodes", 1}, {"gpus_per_node", 1}}},
              {"strategy", Json{{"kind", "ring_allreduce"}}}};
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "calibration_test.json");
  return build_training_plan(s, load_scenario_workload(s));
}

}  // namespace

TEST(Calibration, AHostBoundMeasurementCorrectsTheHostAlone) {
  const ComputeCalibration c = fit_calibration(load_of(10, 2, 3), 12);
  EXPECT_TRUE(c.host_bound);
  EXPECT_DOUBLE_EQ(c.host, 1.2);
  for (double e : c.engine) EXPECT_EQ(e, 1.0);
}

TEST(Calibration, AGpuBoundMeasurementCorrectsTheEnginesItRanAndNoOther) {
  const ComputeCalibration c = fit_calibration(load_of(1, 4, 6), 12);
  EXPECT_FALSE(c.host_bound);
  EXPECT_EQ(c.host, 1.0);
  EXPECT_DOUBLE_EQ(c.engine[kMemory], 1.2);
  EXPECT_DOUBLE_EQ(c.engine[kTf32], 1.2);
  EXPECT_EQ(c.engine[kCuda], 1.0);
  EXPECT_EQ(c.engine[kHalf], 1.0);
}

// A measurement faster than the side that does not bound it scales that side down too, so that
// the calibrated model reproduces it.
TEST(Calibration, TheOtherSideIsScaledDownOnlyWhereItAloneWouldOutlastTheMeasurement) {
  const ComputeCalibration host_bound = fit_calibration(load_of(5, 4, 6), 4);
  EXPECT_DOUBLE_EQ(host_bound.engine[kMemory], 0.4);
  EXPECT_DOUBLE_EQ(host_bound.host, 0.8);
  const ComputeCalibration gpu_bound = fit_calibration(load_of(8, 4, 6), 5);
  EXPECT_DOUBLE_EQ(gpu_bound.engine[kTf32], 0.5);
  EXPECT_DOUBLE_EQ(gpu_bound.host, 5.0 / 8);
}

// H100 → H200 (the same SMs and clocks, 4.8 TB/s of HBM3e for 3.35): calibrated on the H100, a
// memory-bound iteration speeds up by the bandwidth ratio, a compute-bound one not at all.
TEST(Calibration, OnAnH200AMeasuredH100sMemoryBoundPartSpeedsUpByTheBandwidthRatioAndItsGemmsNot) {
  const auto& h100 = platforms::gpu_by_name("H100-SXM");
  const auto& h200 = platforms::gpu_by_name("H200");
  const ComputeModelOptions o = no_gaps();
  const auto memory = one_kernel_graph(workloads::KernelKind::memory, 1e9);
  const ComputeCalibration cm = fit_calibration(iteration_load(memory, h100, o), 0.5);
  EXPECT_NEAR(iteration_times(memory, h200, o, cm).total_s(), 0.5 * 3350 / 4800, 1e-12);
  const auto gemm = one_kernel_graph(workloads::KernelKind::gemm, 8192);
  const ComputeCalibration cg = fit_calibration(iteration_load(gemm, h100, o), 0.02);
  EXPECT_NEAR(iteration_times(gemm, h200, o, cg).total_s(), 0.02, 1e-12);
}

// The same through a scenario: ResNet-50 (tf32, batch 256) measured on an H100, predicted on an
// H200, speeds up by more than nothing and less than the bandwidth ratio; its host-bound batch 16
// not at all.
TEST(Calibration, CalibrationGpuMovesAnH100MeasurementToAnH200) {
  for (const int batch : {16, 256}) {
    Json doc = resnet_h100("tf32", batch);
    const double measured_s = plan_of(doc).single_gpu_iteration_s * 1.1;
    doc["platform"]["gpu"] = "H200";
    doc["calibration"] = Json{{"single_gpu_samples_per_s", batch / measured_s}, {"gpu", "H100-SXM"}};
    const double speedup = measured_s / plan_of(doc).single_gpu_iteration_s;
    if (batch == 16) {
      EXPECT_NEAR(speedup, 1.0, 1e-12);
    } else {
      EXPECT_GT(speedup, 1.1);
      EXPECT_LT(speedup, 4.8 / 3.35);
    }
  }
}

// Measured at the scenario's own settings, naming them changes nothing; measured at bf16 batch
// 256, a tf32 batch 256 scenario keeps its modelled tensor-core time and takes the measured
// memory-bound correction.
TEST(Calibration, ThePrecisionAndBatchOfTheMeasurementAreTheScenariosUnlessGiven) {
  Json doc = resnet_h100("tf32", 128);
  doc["calibration"] = Json{{"single_gpu_samples_per_s", 1500}};
  const TrainingPlan implicit = plan_of(doc);
  doc["calibration"]["precision"] = "tf32";
  doc["calibration"]["batch_per_gpu"] = 128;
  EXPECT_DOUBLE_EQ(plan_of(doc).single_gpu_iteration_s, implicit.single_gpu_iteration_s);
  EXPECT_NEAR(implicit.single_gpu_iteration_s, 128.0 / 1500, 1e-12);

  const double bf16_model_s = plan_of(resnet_h100("bf16", 256)).single_gpu_iteration_s;
  const double tf32_model_s = plan_of(resnet_h100("tf32", 256)).single_gpu_iteration_s;
  Json other = resnet_h100("tf32", 256);
  other["calibration"] = Json{{"single_gpu_samples_per_s", 256 / (1.2 * bf16_model_s)}, {"precision", "bf16"}};
  const TrainingPlan p = plan_of(other);
  EXPECT_GT(p.single_gpu_iteration_s, tf32_model_s);
  EXPECT_LT(p.single_gpu_iteration_s, 1.2 * tf32_model_s);
  EXPECT_NEAR(p.calibration_factor, p.single_gpu_iteration_s / tf32_model_s, 1e-12);
}
