#include "trainsim/plan/compute_model.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim::plan {

using workloads::OpClass;

void ComputeModelOptions::validate(const JsonNode& where) const {
  const std::pair<const char*, double> fractions[] = {{"conv_efficiency", conv_efficiency},
                                                     {"matmul_efficiency", matmul_efficiency},
                                                     {"attention_efficiency", attention_efficiency},
                                                     {"other_efficiency", other_efficiency},
                                                     {"memory_efficiency", memory_efficiency}};
  for (const auto& [name, value] : fractions)
    if (!(value > 0 && value <= 1)) throw where.error(std::string(name) + " must be in (0, 1], got " + std::to_string(value));
  if (!(launch_overhead_s >= 0)) throw where.error("launch_overhead_s must be ≥ 0");
}

ComputeModelOptions ComputeModelOptions::read(const JsonNode& node) {
  node.allow_only({"conv_efficiency", "matmul_efficiency", "attention_efficiency", "other_efficiency",
                   "memory_efficiency", "launch_overhead_us"});
  ComputeModelOptions o;
  auto fraction = [&](const char* key, double& target) {
    if (auto v = node.find(key)) target = v->number_in(1e-6, 1.0);
  };
  fraction("conv_efficiency", o.conv_efficiency);
  fraction("matmul_efficiency", o.matmul_efficiency);
  fraction("attention_efficiency", o.attention_efficiency);
  fraction("other_efficiency", o.other_efficiency);
  fraction("memory_efficiency", o.memory_efficiency);
  if (auto v = node.find("launch_overhead_us")) o.launch_overhead_s = us_to_s(v->non_negative_number());
  return o;
}

namespace {
double flop_efficiency(OpClass op, const ComputeModelOptions& o) {
  switch (op) {
    case OpClass::conv: return o.conv_efficiency;
    case OpClass::matmul:
    case OpClass::embedding: return o.matmul_efficiency;
    case OpClass::attention: return o.attention_efficiency;
    default: return o.other_efficiency;
  }
}
}  // namespace

double task_time_s(const workloads::ComputeTask& task, const platforms::GpuSpec& gpu, Precision precision,
                   const ComputeModelOptions& options) {
  // The optimizer step runs on fp32 master weights whatever the training precision.
  const Precision arithmetic = task.phase == workloads::TaskPhase::update ? Precision::fp32 : precision;
  const double compute_s = task.flops / (gpu.peak_flops(arithmetic) * flop_efficiency(task.op_class, options));
  const double memory_s = task.bytes / (gpu.memory_bandwidth_Bps * options.memory_efficiency);
  return std::max(compute_s, memory_s) + task.kernels * options.launch_overhead_s;
}

double IterationTimes::forward_total_s() const { return std::accumulate(forward_s.begin(), forward_s.end(), 0.0); }
double IterationTimes::backward_total_s() const { return std::accumulate(backward_s.begin(), backward_s.end(), 0.0); }
double IterationTimes::total_s() const { return forward_total_s() + backward_total_s() + update_s; }

IterationTimes iteration_times(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                               const ComputeModelOptions& options, double calibration_factor) {
  IterationTimes times;
  times.calibration_factor = calibration_factor;
  for (const auto& t : graph.forward) times.forward_s.push_back(calibration_factor * task_time_s(t, gpu, graph.precision, options));
  for (const auto& t : graph.backward) times.backward_s.push_back(calibration_factor * task_time_s(t, gpu, graph.precision, options));
  times.update_s = calibration_factor * task_time_s(graph.update, gpu, graph.precision, options);
  return times;
}

}  // namespace trainsim::plan
