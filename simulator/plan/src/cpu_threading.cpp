#include "trainsim/plan/cpu_threading.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/plan/scenario.hpp"

namespace trainsim::plan {

namespace {
constexpr EnumNames<CpuMode, 2> kCpuModes{{{{CpuMode::training, "training"}, {CpuMode::inference, "inference"}}}};
}  // namespace

std::string_view to_string(CpuMode mode) {
  return kCpuModes.name(mode);
}

CpuMode read_cpu_mode(const JsonNode& node) {
  return kCpuModes.read(node);
}

using workloads::OpClass;

int ThreadingOptions::threads_per_pool(const platforms::CpuPlatformSpec& platform) const {
  return intra_op_threads > 0 ? intra_op_threads : std::max(1, platform.physical_cores() / std::max(1, inter_op_pools));
}

ThreadingOptions ThreadingOptions::read(const JsonNode& node, const platforms::CpuPlatformSpec& platform) {
  node.allow_only({"inter_op_pools", "intra_op_threads", "mode", "dispatch_us", "fork_join_us", "serial_fraction",
                   "conv_efficiency", "matmul_efficiency", "other_efficiency", "core_bandwidth_GBps", "cross_socket_factor",
                   "context_switch_us", "spin_wait_ms"});
  ThreadingOptions o;
  // A sane bound: four software threads per hardware thread is already far into oversubscription;
  // beyond it a setting is a typo (48000 for 48), not a what-if.
  const int bound = 4 * platform.logical_cores();
  auto threads = [&](const char* key, int& target) {
    if (auto v = node.find(key)) {
      const std::int64_t n = v->int_at_least(1);
      if (n > bound)
        throw v->error(fmt::format("must be ≤ {} (4 × the {} hardware threads of {}), got {}", bound, platform.logical_cores(),
                                   platform.describe(), n));
      target = static_cast<int>(n);
    }
  };
  threads("inter_op_pools", o.inter_op_pools);
  threads("intra_op_threads", o.intra_op_threads);
  if (auto v = node.find("mode")) o.mode = read_cpu_mode(*v);
  if (auto v = node.find("dispatch_us")) o.dispatch_s = v->number_in(0, 1e6) * 1e-6;
  if (auto v = node.find("fork_join_us")) o.fork_join_s = v->number_in(0, 1e6) * 1e-6;
  if (auto v = node.find("serial_fraction")) o.serial_fraction = v->number_in(0, 1);
  if (auto v = node.find("conv_efficiency")) o.conv_efficiency = v->number_in(1e-6, 1);
  if (auto v = node.find("matmul_efficiency")) o.matmul_efficiency = v->number_in(1e-6, 1);
  if (auto v = node.find("other_efficiency")) o.other_efficiency = v->number_in(1e-6, 1);
  if (auto v = node.find("core_bandwidth_GBps")) o.core_bandwidth_Bps = v->number_in(1e-3, 1e4) * 1e9;
  if (auto v = node.find("cross_socket_factor")) o.cross_socket_factor = v->number_in(1, 100);
  if (auto v = node.find("context_switch_us")) o.context_switch_s = v->number_in(0, 1e6) * 1e-6;
  if (auto v = node.find("spin_wait_ms")) o.spin_wait_s = v->number_in(0, 1e6) * 1e-3;
  return o;
}

double CpuOp::alone_s(double node_bandwidth_Bps) const {
  const double compute_s = parallel_s / threads;
  const double memory_s = bytes > 0 ? bytes / std::min(bandwidth_cap_Bps, node_bandwidth_Bps) : 0;
  return serial_s + std::max(compute_s, memory_s);
}

namespace {

bool is_heavy(OpClass c) { return c == OpClass::conv || c == OpClass::matmul || c == OpClass::embedding; }

double efficiency(OpClass c, const ThreadingOptions& o) {
  switch (c) {
    case OpClass::conv: return o.conv_efficiency;
    case OpClass::matmul:
    case OpClass::embedding:
    case OpClass::attention: return o.matmul_efficiency;
    default: return o.other_efficiency;
  }
}

// The parts of one op before threading: compute on one core and bytes moved.
struct OpWork {
  std::string name;
  OpClass op_class = OpClass::data;
  bool heavy = false;
  double flops = 0;
  double bytes = 0;
  double items = 1;  // independent pieces of output it can be split into
  std::vector<int> deps;
};

std::vector<OpWork> op_work(const workloads::Workload& w, double batch, Precision p, CpuMode mode, workloads::Optimizer optimizer) {
  const double e = bytes_per_element(p);
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < w.layers.size(); ++i) index_of[w.layers[i].name] = i;
  std::vector<int> fwd(w.layers.size(), -1), bwd(w.layers.size(), -1);
  std::vector<std::vector<std::size_t>> consumers(w.layers.size());
  for (std::size_t i = 0; i < w.layers.size(); ++i)
    for (const auto& parent : w.layers[i].parents) consumers[index_of.at(parent)].push_back(i);
  std::vector<OpWork> ops;
  // Parents that are data layers (no op) are dropped; their consumers start at once.
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const auto& l = w.layers[i];
    if (l.op_class == OpClass::data) continue;
    OpWork op;
    op.name = l.name;
    op.op_class = l.op_class;
    op.heavy = is_heavy(l.op_class);
    op.flops = l.flops_fwd * batch;
    op.bytes = (l.input_elements + l.output_elements) * batch * e + l.weight_bytes(p);
    // MKL-DNN splits an op's output into blocks of 16 elements (one AVX-512 register of fp32).
    op.items = std::max(1.0, std::ceil(l.output_elements * batch / 16));
    for (const auto& parent : l.parents)
      if (int d = fwd[index_of.at(parent)]; d >= 0) op.deps.push_back(d);
    fwd[i] = static_cast<int>(ops.size());
    ops.push_back(std::move(op));
  }
  if (mode == CpuMode::inference) return ops;
  // Backward starts once every output (no consumer) has its forward: the loss needs them all.
  std::vector<int> outputs;
  for (std::size_t i = 0; i < w.layers.size(); ++i)
    if (consumers[i].empty() && fwd[i] >= 0) outputs.push_back(fwd[i]);
  for (std::size_t r = w.layers.size(); r-- > 0;) {
    const auto& l = w.layers[r];
    if (fwd[r] < 0) continue;
    OpWork op;
    op.name = l.name + " (backward)";
    op.op_class = l.op_class;
    op.flops = l.flops_bwd() * batch;
    // Reads the output gradient and the saved input, writes the input gradient and the weight gradient.
    op.bytes = (2 * l.input_elements + l.output_elements) * batch * e + 2 * l.weight_bytes(p);
    op.items = std::max(1.0, std::ceil(std::max(l.input_elements, l.output_elements) * batch / 16));
    op.deps.push_back(fwd[r]);
    for (std::size_t c : consumers[r])
      if (bwd[c] >= 0) op.deps.push_back(bwd[c]);
    if (consumers[r].empty()) op.deps.insert(op.deps.end(), outputs.begin(), outputs.end());
    bwd[r] = static_cast<int>(ops.size());
    ops.push_back(std::move(op));
  }
  // The optimizer step of a layer streams its fp32 weights, gradient and state (read and written).
  const double state_arrays = optimizer == workloads::Optimizer::sgd ? 0 : optimizer == workloads::Optimizer::momentum ? 1 : 2;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const auto& l = w.layers[i];
    if (bwd[i] < 0 || l.params == 0) continue;
    OpWork op;
    op.name = l.name + " (update)";
    op.op_class = OpClass::elementwise;
    op.flops = 2.0 * (1 + state_arrays) * static_cast<double>(l.params);
    op.bytes = (3 + 2 * state_arrays) * 4.0 * static_cast<double>(l.params);
    op.items = std::max(1.0, std::ceil(static_cast<double>(l.params) / 16));
    op.deps.push_back(bwd[i]);
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

std::pair<int, int> heavy_width(const workloads::Workload& w) {
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < w.layers.size(); ++i) index_of[w.layers[i].name] = i;
  // depth[i]: the longest chain of heavy layers ending at layer i (layers are in topological order),
  // which is the longest path of the reduced graph that links heavy layers to nearest heavy ancestors.
  std::vector<int> depth(w.layers.size(), 0);
  int heavy = 0, longest = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    int from_parents = 0;
    for (const auto& parent : w.layers[i].parents) from_parents = std::max(from_parents, depth[index_of.at(parent)]);
    const bool h = is_heavy(w.layers[i].op_class);
    depth[i] = from_parents + (h ? 1 : 0);
    heavy += h ? 1 : 0;
    longest = std::max(longest, depth[i]);
  }
  return {heavy, longest};
}

CpuPlan build_cpu_plan(const Scenario& s, const workloads::Workload& workload) {
  TRAINSIM_CHECK(s.cpu.has_value(), "build_cpu_plan needs a CPU scenario");
  CpuPlan plan;
  plan.name = s.name;
  plan.platform = *s.cpu;
  plan.threading = s.threading;
  plan.precision = s.workload.precision;
  plan.batch = s.reference_batch();
  plan.pools = s.threading.inter_op_pools;
  plan.threads_per_pool = s.threading.threads_per_pool(plan.platform);
  std::tie(plan.heavy_ops, plan.heavy_depth) = heavy_width(workload);
  plan.flops_per_sample = workload.forward_flops();
  plan.weight_bytes = workload.weight_bytes(plan.precision);
  plan.params = workload.params();
  {
    double largest_output = 0;
    for (const auto& layer : workload.layers) largest_output = std::max(largest_output, layer.activation_bytes(plan.precision));
    plan.activation_bytes_per_sample = s.threading.mode == CpuMode::training ? workload.activation_bytes(plan.precision) : 2.0 * largest_output;
  }
  plan.dataset_samples = s.workload.dataset_samples;
  plan.calibrated = s.single_thread_iteration_s.has_value();

  const ThreadingOptions& o = s.threading;
  const double core_peak = plan.platform.cpu.core_peak_flops(plan.precision);
  const int k_setting = plan.threads_per_pool;
  const bool spans_sockets = k_setting > plan.platform.cpu.cores;
  const auto work = op_work(workload, plan.batch, plan.precision, o.mode, s.workload.optimizer);

  // Calibration: κ scales the hardware-rate terms (compute, memory) so that one thread running
  // the ops one after the other takes the measured time; the framework's overheads stay fixed.
  double rate_terms_1 = 0, fixed_1 = 0;
  // One thread: dispatch + κ·(serial share + max(rest of the compute, memory)), linear in κ.
  for (const auto& w : work) {
    const double compute = w.flops / (core_peak * efficiency(w.op_class, o));
    const double memory = w.bytes / std::min(o.core_bandwidth_Bps, plan.platform.memory_bandwidth_Bps());
    const double serial_share = is_heavy(w.op_class) ? o.serial_fraction : 0.0;
    rate_terms_1 += serial_share * compute + std::max((1 - serial_share) * compute, memory);
    fixed_1 += o.dispatch_s;
  }
  if (s.single_thread_iteration_s) {
    if (!(*s.single_thread_iteration_s > fixed_1))
      throw s.root().at("calibration").at("single_thread_iteration_s")
          .error(fmt::format("must exceed the {:.6g} s the model's {} ops take in dispatch alone", fixed_1, work.size()));
    plan.calibration_factor = (*s.single_thread_iteration_s - fixed_1) / rate_terms_1;
  }
  const double kappa = plan.calibration_factor;
  for (const auto& w : work) {
    CpuOp op;
    op.name = w.name;
    op.op_class = std::string(workloads::to_string(w.op_class));
    op.heavy = w.heavy;
    op.deps = w.deps;
    op.threads = static_cast<int>(std::min<double>(k_setting, w.items));
    const double compute_1 = kappa * w.flops / (core_peak * efficiency(w.op_class, o));
    const double serial_share = is_heavy(w.op_class) ? o.serial_fraction : 0.0;
    // Libraries fork and join through a tree (Intel OpenMP's hyper barrier, Eigen's recursive
    // task split): one step per level, log2 of the threads.
    const double levels = std::ceil(std::log2(static_cast<double>(op.threads)));
    // Oversubscription (more runnable threads than cores) is not a constant of the op: it depends on
    // what else runs at the time, so the engine adds it while simulating.
    const double fork_join = o.fork_join_s * levels * (spans_sockets ? o.cross_socket_factor : 1.0);
    op.serial_s = o.dispatch_s + serial_share * compute_1 + fork_join;
    op.parallel_s = (1 - serial_share) * compute_1;
    op.bytes = kappa * w.bytes;
    op.bandwidth_cap_Bps = op.threads * o.core_bandwidth_Bps;
    op.working_set_bytes = std::min(plan.platform.cpu.l2_bytes, op.bytes / op.threads);
    plan.ops.push_back(std::move(op));
  }
  return plan;
}

}  // namespace trainsim::plan
