#include "trainsim/plan/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainsim::plan {

using workloads::OpClass;

void ComputeModelOptions::validate(const JsonNode& where) const {
  const std::pair<const char*, double> fractions[] = {{"conv_efficiency", conv_efficiency},
                                                      {"matmul_efficiency", matmul_efficiency},
                                                      {"attention_efficiency", attention_efficiency},
                                                      {"other_efficiency", other_efficiency},
                                                      {"memory_efficiency", memory_efficiency},
                                                      {"tensor_core_efficiency", tensor_core_efficiency},
                                                      {"half_tensor_core_efficiency", half_tensor_core_efficiency},
                                                      {"cuda_core_efficiency", cuda_core_efficiency}};
  for (const auto& [name, value] : fractions)
    if (!(value > 0 && value <= 1)) throw where.error(std::string(name) + " must be in (0, 1], got " + std::to_string(value));
  if (!(launch_overhead_s >= 0)) throw where.error("launch_overhead_s must be ≥ 0");
  if (!(host_op_s >= 0)) throw where.error("host_op_us must be ≥ 0");
}

ComputeModelOptions ComputeModelOptions::read(const JsonNode& node) {
  node.allow_only({"conv_efficiency", "matmul_efficiency", "attention_efficiency", "other_efficiency",
                   "memory_efficiency", "tensor_core_efficiency", "half_tensor_core_efficiency", "cuda_core_efficiency",
                   "launch_overhead_us", "host_op_us", "graph_capture", "fused_attention"});
  ComputeModelOptions o;
  auto fraction = [&](const char* key, double& target) {
    if (auto v = node.find(key)) target = v->number_in(1e-6, 1.0);
  };
  fraction("conv_efficiency", o.conv_efficiency);
  fraction("matmul_efficiency", o.matmul_efficiency);
  fraction("attention_efficiency", o.attention_efficiency);
  fraction("other_efficiency", o.other_efficiency);
  fraction("memory_efficiency", o.memory_efficiency);
  fraction("tensor_core_efficiency", o.tensor_core_efficiency);
  fraction("half_tensor_core_efficiency", o.half_tensor_core_efficiency);
  fraction("cuda_core_efficiency", o.cuda_core_efficiency);
  if (auto v = node.find("host_op_us")) o.host_op_s = us_to_s(v->number_in(0, 1e6));
  if (auto v = node.find("graph_capture")) o.graph_capture = v->as_bool();
  if (auto v = node.find("fused_attention")) o.fused_attention = v->as_bool();
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

// One GEMM tile shape: rows × columns of C per thread block, and its throughput relative to the
// largest tile (smaller tiles reuse each loaded operand less: CUTLASS's tile-size guidance).
struct Tile {
  double m, n, relative;
};
// Hopper/Ampere tensor-core kernels (cuBLAS/CUTLASS 256×128 down to 64×64) and SIMT fp32 kernels.
constexpr Tile kTensorTiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.9}, {128, 64, 0.75}, {64, 64, 0.5}};
constexpr Tile kSimtTiles[] = {{128, 128, 1.0}, {128, 64, 0.95}, {64, 64, 0.85}, {32, 32, 0.5}};
// The main loop's fill and drain in units of K: a few K-tiles of 32 that a short K cannot hide.
constexpr double kTensorK0 = 32;
constexpr double kSimtK0 = 8;
// Split-K (CUTLASS, cuBLAS) slices a long K over more thread blocks when the output has fewer
// tiles than the GPU has SMs; each slice keeps at least this much K.
constexpr double kMinSliceK = 256;
// Winograd F(2×2, 3×3) does 16 multiplies where the direct 3×3 convolution does 36 (2.25×), but
// its input, filter and output transforms are memory-bound passes and its batched GEMMs are
// small (Lavin and Gray 2016 measure 1.5-2× on whole layers at batch 64 and less at the sizes of
// later layers): 1.35× overall.
constexpr double kWinogradSpeedup = 1.35;
// Data- and weight-gradient GEMMs reach less than the forward's: the weight gradient reduces over
// the whole batch (split-K partial sums added afterwards), the data gradient of a strided layer
// scatters. On the given H100, VGG-16's largest layers take 2.5× their forward time backward
// where the FLOPs are 2×.
constexpr double kBackwardGemmRelative = 0.8;

// Fraction of the engine's throughput a GEMM of this shape reaches on `sms` SMs.
double gemm_utilisation(const workloads::Kernel& g, int sms, bool tensor) {
  const double k0 = tensor ? kTensorK0 : kSimtK0;
  const int processors = std::max(1, sms);
  double best = 0;
  auto consider = [&](const Tile& t) {
    const double rows = std::ceil(g.m / t.m), cols = std::ceil(g.n / t.n);
    const double fill = (g.m / (rows * t.m)) * (g.n / (cols * t.n));
    double tiles = rows * cols * std::max(1.0, g.count);
    double k = g.k;
    if (tiles < processors) {
      const double splits = std::max(1.0, std::min(std::floor(processors / tiles), std::floor(k / kMinSliceK)));
      tiles *= splits;
      k /= splits;
    }
    const double waves = std::ceil(tiles / processors);
    const double wave_fill = tiles / (waves * processors);
    best = std::max(best, t.relative * fill * wave_fill * k / (k + k0));
  };
  if (tensor)
    for (const Tile& t : kTensorTiles) consider(t);
  else
    for (const Tile& t : kSimtTiles) consider(t);
  return best;
}

// Tensor cores serve a precision whose peak exceeds the CUDA cores' fp32 rate.
bool on_tensor_cores(const platforms::GpuSpec& gpu, Precision p) {
  return p != Precision::fp32 && gpu.peak_flops(p) > gpu.fp32_flops * 1.01;
}

// The engine whose throughput bounds a kernel (the launch gap aside, which the memory engine
// carries: it is the same whatever the precision).
Engine engine_of(const workloads::Kernel& k, const platforms::GpuSpec& gpu, Precision precision) {
  if (k.kind == workloads::KernelKind::memory) return Engine::memory;
  const Precision arithmetic = k.fp32_only ? Precision::fp32 : precision;
  if (!on_tensor_cores(gpu, arithmetic)) return Engine::cuda_cores;
  return bytes_per_element(arithmetic) == 2 ? Engine::tensor_16bit : Engine::tensor_tf32;
}

// A kernel's time without its launch gap.
double kernel_body_s(const workloads::Kernel& k, const platforms::GpuSpec& gpu, Precision precision,
                     const ComputeModelOptions& o) {
  const Precision arithmetic = k.fp32_only ? Precision::fp32 : precision;
  const double stream_Bps = gpu.memory_bandwidth_Bps * o.memory_efficiency;
  const double memory_s = k.bytes / stream_Bps;
  switch (k.kind) {
    case workloads::KernelKind::gemm: {
      const bool tensor = on_tensor_cores(gpu, arithmetic);
      double flops = k.flops;
      if (k.winograd && !tensor) flops /= kWinogradSpeedup;
      const double engine =
          gpu.peak_flops(arithmetic) *
          (tensor ? (bytes_per_element(arithmetic) == 2 ? o.half_tensor_core_efficiency : o.tensor_core_efficiency) *
                        (k.backward ? kBackwardGemmRelative : 1.0)
                  : o.cuda_core_efficiency);
      const double util = std::max(1e-3, gemm_utilisation(k, gpu.sm_count, tensor));
      return std::max(flops / (engine * util), memory_s);
    }
    case workloads::KernelKind::attention: {
      const double engine = gpu.peak_flops(arithmetic) * o.attention_efficiency;
      return std::max(k.flops / engine, memory_s);
    }
    case workloads::KernelKind::memory: {
      double occupancy = 1;
      if (k.parallel_blocks > 0 && gpu.sm_count > 0) {
        const double waves = std::ceil(k.parallel_blocks / gpu.sm_count);
        occupancy = k.parallel_blocks / (waves * gpu.sm_count);
      }
      return k.bytes / (stream_Bps * k.memory_efficiency * occupancy);
    }
  }
  return memory_s;
}

using EngineSeconds = std::array<double, kEngineCount>;

// One task's uncalibrated time, engine by engine.
EngineSeconds task_engine_s(const workloads::ComputeTask& task, const platforms::GpuSpec& gpu, Precision precision,
                            const ComputeModelOptions& options) {
  EngineSeconds out{0, 0, 0, 0};
  auto add = [&out](Engine e, double s) { out[static_cast<std::size_t>(e)] += s; };
  if (!task.launches.empty()) {
    for (const auto& k : task.launches) {
      add(engine_of(k, gpu, precision), kernel_body_s(k, gpu, precision, options));
      add(Engine::memory, options.launch_overhead_s);
    }
    return out;
  }
  // A task without a kernel list: Paleo's per-class fraction of peak, on the engine of its
  // arithmetic. The optimizer step runs on fp32 master weights whatever the training precision.
  const Precision arithmetic = task.phase == workloads::TaskPhase::update ? Precision::fp32 : precision;
  const double compute_s = task.flops / (gpu.peak_flops(arithmetic) * flop_efficiency(task.op_class, options));
  const double memory_s = task.bytes / (gpu.memory_bandwidth_Bps * options.memory_efficiency);
  workloads::Kernel as_gemm;
  as_gemm.kind = workloads::KernelKind::gemm;
  add(engine_of(as_gemm, gpu, arithmetic), std::max(compute_s, memory_s));
  add(Engine::memory, task.kernels * options.launch_overhead_s);
  return out;
}

double task_host_s(const workloads::ComputeTask& task, const ComputeModelOptions& options) {
  return options.graph_capture ? 0.0 : task.host_ops * options.host_op_s;
}

double sum(const EngineSeconds& s) {
  return std::accumulate(s.begin(), s.end(), 0.0);
}

double calibrated(const EngineSeconds& s, const ComputeCalibration& c) {
  double t = 0;
  for (std::size_t i = 0; i < kEngineCount; ++i) t += s[i] * c.engine[i];
  return t;
}

}  // namespace

double task_time_s(const workloads::ComputeTask& task, const platforms::GpuSpec& gpu, Precision precision,
                   const ComputeModelOptions& options) {
  return sum(task_engine_s(task, gpu, precision, options));
}

double IterationLoad::gpu_s() const {
  return sum(engine_s);
}

IterationLoad iteration_load(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                             const ComputeModelOptions& options, int steps) {
  IterationLoad load;
  auto add = [&](const workloads::ComputeTask& t, double times) {
    const EngineSeconds s = task_engine_s(t, gpu, graph.precision, options);
    for (std::size_t i = 0; i < kEngineCount; ++i) load.engine_s[i] += times * s[i];
    load.host_s += times * task_host_s(t, options);
  };
  for (const auto& t : graph.forward) add(t, steps);
  for (const auto& t : graph.backward) add(t, steps);
  add(graph.update, 1);
  return load;
}

// One measurement pins one number. The model says which side bounds the measured iteration; that
// side's modelled time is what the measurement contradicts, so it takes the whole correction:
// host-bound (small batches of an eager framework), the per-operator host cost, which then holds
// at any batch and precision; GPU-bound, one factor on every engine the iteration ran, because a
// measurement at one precision says how fast that precision's arithmetic and the memory-bound
// kernels every precision shares ran, and nothing about another precision's tensor cores (TF32 and
// 16-bit GEMMs reach different shares of different peaks, FlashAttention-3's measurements). An
// engine the iteration did not use keeps its modelled speed. The other side is scaled down only
// where it alone would outlast the measurement.
ComputeCalibration fit_calibration(const IterationLoad& load, double measured_s) {
  ComputeCalibration c;
  const double gpu_s = load.gpu_s();
  c.host_bound = load.host_s >= gpu_s;
  const double host = load.host_s > 0 ? measured_s / load.host_s : 1.0;
  const double engines = gpu_s > 0 ? measured_s / gpu_s : 1.0;
  c.host = c.host_bound ? host : std::min(1.0, host);
  const double engine = c.host_bound ? std::min(1.0, engines) : engines;
  for (std::size_t i = 0; i < kEngineCount; ++i)
    if (load.engine_s[i] > 0) c.engine[i] = engine;
  return c;
}

double IterationTimes::forward_total_s() const { return std::accumulate(forward_s.begin(), forward_s.end(), 0.0); }
double IterationTimes::backward_total_s() const { return std::accumulate(backward_s.begin(), backward_s.end(), 0.0); }
double IterationTimes::total_s() const { return forward_total_s() + backward_total_s() + update_s; }

IterationTimes iteration_times(const workloads::IterationGraph& graph, const platforms::GpuSpec& gpu,
                               const ComputeModelOptions& options, const ComputeCalibration& calibration) {
  IterationTimes times;
  auto time = [&](const workloads::ComputeTask& t) {
    times.host_s += calibration.host * task_host_s(t, options);
    return calibrated(task_engine_s(t, gpu, graph.precision, options), calibration);
  };
  for (const auto& t : graph.forward) times.forward_s.push_back(time(t));
  for (const auto& t : graph.backward) times.backward_s.push_back(time(t));
  times.update_s = time(graph.update);
  times.gpu_s = times.total_s();
  // The host runs ahead of the GPU by the queue of launched kernels; when it is the slower of the
  // two over the iteration, the GPU idles between kernels in proportion to its work.
  const double stretch = times.gpu_s > 0 && times.host_s > times.gpu_s ? times.host_s / times.gpu_s : 1.0;
  for (double& t : times.forward_s) t *= stretch;
  for (double& t : times.backward_s) t *= stretch;
  times.update_s *= stretch;
  return times;
}

}  // namespace trainsim::plan
