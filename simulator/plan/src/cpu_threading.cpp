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
constexpr EnumNames<Framework, 4> kFrameworks{{{{Framework::generic, "generic"},
                                               {Framework::pytorch, "pytorch"},
                                               {Framework::tensorflow, "tensorflow"},
                                               {Framework::onnxruntime, "onnxruntime"}}}};
}  // namespace

std::string_view to_string(CpuMode mode) {
  return kCpuModes.name(mode);
}

CpuMode read_cpu_mode(const JsonNode& node) {
  return kCpuModes.read(node);
}

using workloads::OpClass;

std::string_view to_string(Framework f) { return kFrameworks.name(f); }

int ThreadingOptions::threads_per_pool(const platforms::CpuPlatformSpec& platform) const {
  if (intra_op_threads > 0) return intra_op_threads;
  // A shared intra-op pool defaults to every physical core (ONNX Runtime's and PyTorch's default;
  // TensorFlow's Eigen pool too when told the physical cores, as its guide says to).
  if (shared_intra_pool()) return platform.physical_cores();
  return std::max(1, platform.physical_cores() / std::max(1, inter_op_pools));
}

ThreadingOptions ThreadingOptions::for_framework(Framework f) {
  ThreadingOptions o;
  o.framework = f;
  switch (f) {
    case Framework::generic: break;
    case Framework::pytorch:
      // PyTorch eager (2.x, stock wheels, fp32 NCHW). Each op is a Python call through the
      // dispatcher that allocates its output: 20 µs per op (the eager overhead that motivated
      // TorchScript and torch.compile is of the order of 10 µs per op on a fast core; nn.Module
      // calls with hooks add more). A convolution goes through ideep/oneDNN with plain NCHW
      // tensors: source, weights and result are reordered to and from the blocked layout at
      // every call (IPEX's weight prepacking exists to avoid this), four parallel regions each
      // closed by GNU OpenMP's centralised barrier (libgomp's gomp_barrier_wait: each thread
      // updates one counter, serially; 1 µs per thread on a mesh across a VM's vCPUs), and the
      // reorders' serial parts and the layout changes make 12 % of a convolution's time serial
      // (the development set, ResNet-50 at 1-16 threads, chose 12 % among 8-12 %, see README).
      // Elementwise, normalisation and pooling ops are at::parallel_for loops split into
      // pieces of at least at::internal::GRAIN_SIZE = 32768 elements (ATen/Parallel.h).
      o.dispatch_s = 20e-6;
      o.serial_fraction = 0.12;
      o.barrier_per_thread_s = 1e-6;
      o.regions_per_heavy_op = 4;
      o.elementwise_grain = 32768;
      break;
    case Framework::tensorflow:
      // TensorFlow's executor: inter-op threads take ready ops; every op's parallel work goes to
      // the one Eigen intra-op pool (tensorflow/core/common_runtime/local_device.cc builds one
      // per device), so concurrent ops share its threads rather than each owning a team.
      break;
    case Framework::onnxruntime:
      // ONNX Runtime's executor is C++ with preallocated buffers (2 µs per node is what its
      // sequential executor's bookkeeping costs); MLAS kernels run on the session's one intra-op
      // thread pool, which the parallel executor's inter-op threads share
      // (onnxruntime/core/framework/execution_frame.cc, parallel_executor.cc).
      o.dispatch_s = 2e-6;
      break;
  }
  return o;
}

ThreadingOptions ThreadingOptions::read(const JsonNode& node, const platforms::CpuPlatformSpec& platform) {
  node.allow_only({"framework", "execution_mode", "onednn", "inter_op_pools", "intra_op_threads", "mode", "dispatch_us",
                   "fork_join_us", "serial_fraction", "conv_efficiency", "matmul_efficiency", "other_efficiency",
                   "core_bandwidth_GBps", "cross_socket_factor", "context_switch_us", "spin_wait_ms",
                   "barrier_per_thread_us"});
  Framework framework = Framework::generic;
  if (auto v = node.find("framework")) framework = kFrameworks.read(*v);
  ThreadingOptions o = for_framework(framework);
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
  if (auto v = node.find("execution_mode")) {
    if (framework != Framework::onnxruntime)
      throw v->error(
          "'execution_mode' is ONNX Runtime's (threading.framework \"onnxruntime\"); other frameworks set "
          "inter_op_pools");
    const bool sequential = v->one_of({"sequential", "parallel"}) == "sequential";
    if (sequential && o.inter_op_pools > 1)
      throw v->error(
          fmt::format("the sequential mode runs one op at a time, but inter_op_pools is {}", o.inter_op_pools));
    if (!sequential && !node.find("inter_op_pools"))
      throw v->error("the parallel mode needs inter_op_pools (ONNX Runtime's inter_op_num_threads)");
  }
  if (auto v = node.find("onednn")) {
    if (framework != Framework::tensorflow)
      throw v->error("'onednn' says how TensorFlow runs its kernels (threading.framework \"tensorflow\")");
    o.onednn = v->as_bool();
  }
  if (framework == Framework::pytorch && o.inter_op_pools > 1)
    throw node.at("inter_op_pools")
        .error(fmt::format("PyTorch eager runs one op at a time (its inter-op threads only serve torch.jit.fork), so "
                           "it takes 1, got {}",
                           o.inter_op_pools));
  if (auto v = node.find("dispatch_us")) o.dispatch_s = v->number_in(0, 1e6) * 1e-6;
  if (auto v = node.find("fork_join_us")) o.fork_join_s = v->number_in(0, 1e6) * 1e-6;
  if (auto v = node.find("barrier_per_thread_us")) o.barrier_per_thread_s = v->number_in(0, 1e6) * 1e-6;
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
    // Heavy ops split into MKL-DNN's blocks of 16 outputs; the rest by the framework's grain.
    const double items = is_heavy(w.op_class) ? w.items : std::max(1.0, std::ceil(w.items * 16 / o.elementwise_grain));
    op.threads = static_cast<int>(std::min<double>(k_setting, items));
    const double compute_1 = kappa * w.flops / (core_peak * efficiency(w.op_class, o));
    const double serial_share = is_heavy(w.op_class) ? o.serial_fraction : 0.0;
    // Libraries fork and join through a tree (Intel OpenMP's hyper barrier, Eigen's recursive
    // task split): one step per level, log2 of the threads.
    const double levels = std::ceil(std::log2(static_cast<double>(op.threads)));
    // Oversubscription (more runnable threads than cores) is not a constant of the op: it depends on
    // what else runs at the time, so the engine adds it while simulating.
    // A centralised barrier (barrier_per_thread_s) costs each region one serial step per thread.
    const double barrier = op.threads > 1 ? o.barrier_per_thread_s * op.threads : 0.0;
    const int regions = is_heavy(w.op_class) ? o.regions_per_heavy_op : 1;
    const double fork_join =
        regions * (o.fork_join_s * levels + barrier) * (spans_sockets ? o.cross_socket_factor : 1.0);
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
