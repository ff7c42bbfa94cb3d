#pragma once
// CPU training and inference with framework threading (Wang et al., "Exploiting parallelism
// opportunities with deep learning frameworks", ACM TACO 2021): what one iteration on a CPU node
// runs, decided before SimGrid executes it. Pure data, no SimGrid.
//
//   layer graph ─▶ ops (forward per layer; training adds backward in reverse and an update per
//                  weighted layer), each with its dependencies and, for `intra_op_threads` = k:
//
//     op time = serial part  (dispatch + Amdahl share of the compute + fork-join over log2 k levels)
//             + max(parallel compute / k threads,  bytes / min(k · core bandwidth, socket share))
//
//   `inter_op_pools` pools take ready ops in graph order; the engine runs each pool as an actor on
//   a SimGrid host with the node's physical cores and streams every op's bytes over one memory link
//   of the node's bandwidth (concurrent ops share it). More runnable threads than cores cost what
//   oversubscription costs (engine/src/cpu_training.cpp): a parallel op advances at the pace of its
//   slowest thread, whose core is shared; shared cores reload their L2; past the hardware threads
//   the OS switches contexts at every barrier.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::plan {

struct Scenario;

enum class CpuMode { training, inference };

/// "training" or "inference".
std::string_view to_string(CpuMode mode);
/// The value a JSON string names ("training" or "inference"); one_of's error for anything else.
CpuMode read_cpu_mode(const JsonNode& node);
/// Whose threading runs the ops (`threading.framework`); simulator/README.md, "Frameworks on the CPU".
///   generic      every inter-op pool owns its team of intra-op threads (Caffe2; what Wang et al.'s
///                guideline assumes); the model's constants as documented
///   pytorch      eager: one op at a time (inter-op threads only serve torch.jit.fork), intra-op
///                OpenMP threads; per-op dispatch, plain↔blocked reorders around oneDNN, elementwise
///                ops split by ATen's grain of 32768 elements, GNU OpenMP's centralised barrier
///   tensorflow   inter-op pools run ops concurrently over ONE shared Eigen intra-op pool of
///                intra_op_threads threads (with oneDNN, each op an OpenMP team of those threads)
///   onnxruntime  sequential (one pool) or parallel execution mode (inter_op_pools > 1), one shared
///                intra-op pool
enum class Framework { generic, pytorch, tensorflow, onnxruntime };

/// "generic", "pytorch", "tensorflow", "onnxruntime".
std::string_view to_string(Framework f);

/// The scenario's `threading` object: the framework's settings and the model's constants.
/// Defaults and their sources: simulator/README.md, "CPU training and inference".
struct ThreadingOptions {
  Framework framework = Framework::generic;
  int inter_op_pools = 1;        ///< ops that may run at once (TensorFlow's inter_op_parallelism_threads)
  int intra_op_threads = 0;      ///< threads one op is split over; 0 = physical cores / pools (at least 1)
  CpuMode mode = CpuMode::training;
  double dispatch_s = 5e-6;      ///< per op: the framework schedules it and the library picks a kernel (serial)
  double fork_join_s = 1e-6;     ///< per level of the fork-join tree over an op's threads (log2 of them; serial)
  double serial_fraction = 0.03; ///< of a convolution's or matrix product's compute: packing, reorders (Amdahl)
  double conv_efficiency = 0.7;  ///< fraction of a core's peak reached by convolutions
  double matmul_efficiency = 0.8;  ///< by matrix products and embeddings
  double other_efficiency = 0.1;   ///< FLOP-bound share of elementwise, normalisation, pooling, loss
  double core_bandwidth_Bps = 12e9;  ///< streaming bandwidth one core can draw (line-fill buffers bound it)
  double cross_socket_factor = 2;    ///< fork-join cost multiplier when an op's threads span sockets
  double context_switch_s = 3.8e-6;  ///< direct cost of one OS context switch (Li, Ding, Shen, ExpCS 2007)
  double spin_wait_s = 0.2;          ///< an idle team's threads spin this long before sleeping (KMP_BLOCKTIME)
  /// Per parallel region and thread: a centralised barrier (GNU OpenMP's gomp_barrier_wait: every
  /// thread updates one counter) costs this per thread, serially; 0 for tree barriers.
  double barrier_per_thread_s = 0;
  int regions_per_heavy_op = 1;  ///< parallel regions of a convolution or matrix product (reorders + the kernel)
  /// Output elements per piece a non-heavy op is split into: 16 (one AVX-512 register, MKL-DNN's
  /// blocking) or ATen's GRAIN_SIZE 32768 under PyTorch (at::parallel_for).
  double elementwise_grain = 16;
  /// Whether the inter-op pools share one intra-op pool of intra_op_threads threads (TensorFlow,
  /// ONNX Runtime) instead of each owning its own team (generic, PyTorch).
  /// TensorFlow built with oneDNN (`threading.onednn`): its kernels run OpenMP teams of
  /// intra_op_threads per op (OMP_NUM_THREADS), one per running op, so the pools do not share them.
  bool onednn = false;
  bool shared_intra_pool() const {
    return (framework == Framework::tensorflow && !onednn) || framework == Framework::onnxruntime;
  }
  /// Software threads the setting starts: pools × threads with a team per pool; the shared pool's
  /// threads otherwise (the inter-op threads only hand ops to it).
  int setting_threads(int threads_per_pool) const {
    return shared_intra_pool() ? threads_per_pool : inter_op_pools * threads_per_pool;
  }
  /// Threads of a shared-pool framework that want a core for the whole run: the intra-op pool's,
  /// and under ONNX Runtime's parallel mode its inter-op pool's as well (both spin while waiting
  /// for work by default: session options intra_op.allow_spinning and inter_op.allow_spinning = 1).
  int spinning_threads(int threads_per_pool) const {
    return threads_per_pool + (framework == Framework::onnxruntime && inter_op_pools > 1 ? inter_op_pools : 0);
  }

  /// Threads per pool after resolving 0 against the platform.
  int threads_per_pool(const platforms::CpuPlatformSpec& platform) const;
  /// The framework's defaults (simulator/README.md, "Frameworks on the CPU").
  static ThreadingOptions for_framework(Framework f);
  /// Reads `threading` (keys: framework, execution_mode (onnxruntime), onednn (tensorflow), inter_op_pools,
  /// intra_op_threads, mode, dispatch_us, fork_join_us, serial_fraction, conv_efficiency, matmul_efficiency,
  /// other_efficiency, core_bandwidth_GBps, cross_socket_factor, context_switch_us, spin_wait_ms). Pools and threads
  /// are each ≥ 1 and ≤ 4 × the platform's hardware threads; PyTorch and ONNX Runtime's sequential mode take one pool.
  /// Throws InputError at the offending pointer (an unknown framework with a suggestion).
  static ThreadingOptions read(const JsonNode& node, const platforms::CpuPlatformSpec& platform);
};

/// One op of a CPU iteration.
struct CpuOp {
  std::string name;              ///< "conv1", "conv1 (backward)", "conv1 (update)"
  std::string op_class;          ///< workloads::OpClass name
  bool heavy = false;            ///< a forward convolution, matrix product or embedding (graph width)
  std::vector<int> deps;         ///< ops that must finish first (indices into CpuPlan::ops)
  int threads = 1;               ///< threads it is split over: min(intra_op_threads, parallel items)
  double serial_s = 0;           ///< on one thread before the parallel part
  double parallel_s = 0;         ///< the parallel part's compute on ONE thread (core-seconds); spread over `threads`
  double bytes = 0;              ///< memory traffic, streamed during the parallel part
  double bandwidth_cap_Bps = 0;  ///< threads × core bandwidth: the most it can draw
  /// What one of its threads keeps in its core's L2 between steps: min(L2, bytes / threads). A
  /// thread that shares its core (SMT sibling or time slice) loses it to the other and reloads it.
  double working_set_bytes = 0;

  /// Alone on the machine: serial_s + max(parallel_s / threads, bytes / min(cap, node bandwidth)).
  double alone_s(double node_bandwidth_Bps) const;
};

/// A CPU iteration, ready for the engine. `trainsim simulate --dump-plan` writes it (to_json) and
/// `trainsim simulate --plan` replays it (from_json, then engine::simulate_cpu_plan).
struct CpuPlan {
  std::string name;              ///< the scenario's
  platforms::CpuPlatformSpec platform;
  ThreadingOptions threading;
  Precision precision = Precision::fp32;
  double batch = 0;
  int pools = 1;
  int threads_per_pool = 1;
  std::vector<CpuOp> ops;        ///< in graph order (dependencies point backwards)
  double calibration_factor = 1; ///< κ on compute and memory terms (calibration.single_thread_iteration_s)
  int heavy_ops = 0;             ///< forward convolutions, matrix products, embeddings
  int heavy_depth = 0;           ///< longest chain of heavy ops
  /// What the result reports of the model and the node's memory check reads (from the workload):
  double flops_per_sample = 0;          ///< forward FLOPs of one sample
  double weight_bytes = 0;              ///< the parameters at the plan's precision
  std::int64_t params = 0;
  /// Memory one sample holds: training every activation (kept for backward), inference a layer's
  /// input and output at a time (twice the largest layer output).
  double activation_bytes_per_sample = 0;
  double dataset_samples = 0;           ///< workload.dataset_samples
  bool calibrated = false;              ///< calibration.single_thread_iteration_s was given
  /// heavy_ops / heavy_depth: Wang et al.'s average graph width.
  double average_width() const { return heavy_depth > 0 ? static_cast<double>(heavy_ops) / heavy_depth : 1.0; }
  /// pools × threads per pool.
  int total_threads() const { return pools * threads_per_pool; }
  /// The plan as JSON. The platform, threading options and ops are written in full, as the doubles
  /// they are, so from_json(to_json()) runs the same iteration to the last bit; the summary keys
  /// (cpu, physical_cores, average_width, ...) are for readers and ignored by from_json.
  Json to_json() const;
  /// Reads a plan written by to_json, possibly edited: every value and dependency checked, InputError
  /// at its pointer; unknown keys refused.
  static CpuPlan from_json(const JsonNode& node);
};

/// Builds the CPU iteration of a CPU scenario (`scenario.cpu` set). The calibration factor makes
/// the one-pool, one-thread iteration, run alone op after op, last
/// `calibration.single_thread_iteration_s`. Throws InputError when that time is shorter than the
/// fixed overheads.
CpuPlan build_cpu_plan(const Scenario& scenario, const workloads::Workload& workload);

/// Wang et al.'s graph width of a model: heavy ops (forward convolutions, matrix products,
/// embeddings), each linked to its nearest heavy ancestors; returns {heavy ops, longest chain}.
std::pair<int, int> heavy_width(const workloads::Workload& workload);

}  // namespace trainsim::plan
