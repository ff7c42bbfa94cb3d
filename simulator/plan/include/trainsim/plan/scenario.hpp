#pragma once
// The scenario file (scenarios/README.md): workload, platform, strategy, calibration, sweep. Pure data, read
// through checked JSON so every error names the file and the JSON pointer.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/compute_model.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/data_parallel.hpp"
#include "trainsim/plan/input_pipeline.hpp"
#include "trainsim/plan/server_placement.hpp"
#include "trainsim/plan/software_stack.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/workloads/iteration_graph.hpp"
#include "trainsim/workloads/layer_graph.hpp"

namespace trainsim::plan {

enum class Scaling { weak, strong };
/// nccl_allreduce: every bucket's all-reduce as NCCL runs it, with the algorithm (ring, tree, NVLS),
/// protocol (LL, LL128, Simple) and channels its tuner picks for that size (nccl_tuner.hpp).
enum class StrategyKind { ring_allreduce, hierarchical_allreduce, tree_allreduce, halving_doubling, parameter_server, nccl_allreduce };
enum class ServerPlacement { colocated, dedicated };
enum class Aggregation { cpu, gpu };
/// Where a node's GPUs' gradients are summed before a parameter-server push (`worker_aggregation`).
enum class WorkerAggregation {
  none,  ///< every GPU pushes and pulls on its own
  host   ///< tf_cnn_benchmarks' distributed parameter server: GPUs copy to the host, which sums, pushes and pulls once
};
/// Where an all-reduce's buffers live (`transport`).
enum class Transport {
  gpu,  ///< GPU memory, GPU-to-GPU transfers (NCCL, CUDA-aware MPI)
  host  ///< host memory: copy to the host, an MPI ring among the GPUs' processes on the CPUs, copy back (Horovod without GPU ops)
};
std::string_view to_string(WorkerAggregation aggregation);
std::string_view to_string(Transport transport);

std::string_view to_string(StrategyKind kind);
std::vector<std::string> strategy_kind_names();

struct WorkloadConfig {
  std::string
      model_or_file;  ///< zoo name, or a layer-graph / Paleo / ONNX file (resolved against the scenario's folder)
  bool onnx = false;  ///< `onnx`: model_or_file is an ONNX model
  std::map<std::string, std::int64_t> onnx_dims;  ///< `onnx_dims`: values of the ONNX model's named dynamic dimensions
  Scaling scaling = Scaling::weak;
  std::int64_t batch_per_gpu = 0;  ///< weak scaling: samples per GPU
  std::int64_t global_batch = 0;   ///< strong scaling: samples per iteration, split across GPUs
  Precision precision = Precision::fp32;
  workloads::Optimizer optimizer = workloads::Optimizer::momentum;
  workloads::InputSize input;  ///< `sequence_length` / `image_size`: the model's inputs resized
  /// `dataset_samples`: samples in one epoch (default ImageNet-1k's 1,281,167 training images).
  double dataset_samples = 1'281'167;
  /// `input_pipeline`: loader threads decoding samples on the host CPU (GPU scenarios).
  std::optional<InputPipelineConfig> input_pipeline;
  /// `accumulation_steps`: micro-batches per optimizer step (≥ 1). batch_per_gpu is one
  /// micro-batch; global_batch (strong scaling) is one optimizer step's samples.
  int accumulation_steps = 1;
  /// `activation_checkpointing`: recompute forward in backward (data_parallel.hpp).
  CheckpointingConfig checkpointing;
};

struct StrategyConfig {
  StrategyKind kind = StrategyKind::ring_allreduce;
  double bucket_bytes = 25.0 * kMiB;   ///< `bucket_MB` (MiB, as PyTorch's bucket_cap_mb); 0 = per layer (the parameter server's default)
  double first_bucket_bytes = 0;       ///< `first_bucket_MB`; 0 = same as bucket_MB
  bool overlap = true;                 ///< start a bucket's collective as soon as it is ready
  int servers = 1;                     ///< parameter server: shards
  ServerPlacement placement = ServerPlacement::colocated;
  Aggregation aggregation = Aggregation::cpu;  ///< where servers add gradients
  /// `placement`: which server owns which variable (round_robin, TensorFlow's default).
  VariablePlacement variable_placement = VariablePlacement::round_robin;
  double partition_bytes = 0;          ///< `partition_MB` (MiB): split variables above it; 0 = never
  /// `server_throughput_GBps`: bytes per second one server receives, processes and serves (RPC,
  /// deserialisation, accumulation), shared by all its connections; 0 = no limit beyond links and CPU.
  double server_throughput_Bps = 0;
  std::string representation = "auto";  ///< collectives: auto, coarse, lockstep or step
  /// `worker_aggregation` as given; unset = the default the plan resolves (host when a node has
  /// several GPUs, CPU aggregation and node CPUs; else none).
  std::optional<WorkerAggregation> worker_aggregation;
  Transport transport = Transport::gpu;  ///< `transport`: ring_allreduce only
  /// `hd_order`: halving_doubling's exchange order, "near" (default) or "far" (HdOrder)
  HdOrder hd_order = HdOrder::near;
  /// `zero_stage` / `fsdp`: sharded optimizer state, gradients, parameters (data_parallel.hpp).
  ShardingConfig sharding;
};

/// Per-GPU speed differences and random slowdowns; synchronous SGD waits for the slowest GPU.
struct HeterogeneityConfig {
  std::vector<std::pair<int, double>> gpu_speed;   ///< GPU rank → relative speed (1 = nominal)
  std::vector<std::pair<int, double>> node_speed;  ///< node → relative speed of all its GPUs
  double jitter_sigma = 0;          ///< lognormal per-GPU slowdown, σ of its logarithm
  double straggler_probability = 0; ///< chance that a GPU is a straggler in the iteration
  double straggler_slowdown = 1;    ///< a straggler's time multiplier (≥ 1)
  std::uint64_t seed = 1;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;   ///< file the scenario came from
  std::shared_ptr<const Json> document;  ///< the scenario JSON after --set overrides, as read
  WorkloadConfig workload;
  platforms::PlatformSpec platform;   ///< GPU platforms (empty for a CPU scenario)
  /// Set when the platform is a CPU node (`platform.device: "cpu"` or a CPU preset): the
  /// iteration runs on its cores under `threading` instead of on GPUs.
  std::optional<platforms::CpuPlatformSpec> cpu;
  ThreadingOptions threading;         ///< CPU scenarios: the `threading` object
  std::optional<double> single_thread_iteration_s;  ///< CPU calibration: one pool, one thread
  StrategyConfig strategy;
  std::optional<double> single_gpu_samples_per_s;  ///< calibration
  /// `calibration.gpu`: the GPU single_gpu_samples_per_s was measured on, when not the platform's:
  /// the model is calibrated there and predicts the platform's GPU.
  std::optional<platforms::GpuSpec> calibration_gpu;
  /// `calibration.precision` and `calibration.batch_per_gpu`: the precision and micro-batch the
  /// measurement ran, when not the scenario's (its accumulation steps and checkpointing are the
  /// scenario's): the model is calibrated there and predicts the scenario's settings.
  std::optional<Precision> calibration_precision;
  std::optional<double> calibration_batch;
  ComputeModelOptions compute;
  HeterogeneityConfig heterogeneity;
  SoftwareStack stack;  ///< the `stack` object: software costs and their bands (software_stack.hpp)
  std::vector<std::pair<std::string, std::vector<Json>>> sweep;  ///< dotted path → values, in file order

  /// GPUs of the platform; a CPU scenario counts as one device.
  int gpus() const { return cpu ? 1 : platform.total_gpus(); }
  /// Samples per iteration (one optimizer step: every micro-batch of every GPU).
  double global_batch() const;
  /// Samples GPU `rank` computes at once: one micro-batch (strong scaling spreads the remainder
  /// over the first ranks, then splits a GPU's share into accumulation_steps micro-batches).
  double batch_of(int rank) const;
  /// The samples one GPU runs per optimizer step when the scenario is scaled down to one GPU, which
  /// calibration and scaling efficiency refer to: batch_per_gpu × accumulation_steps (weak
  /// scaling) or the whole global_batch (strong), in accumulation_steps micro-batches.
  double reference_batch() const;
  /// How one GPU's iteration is expanded for a local batch of `batch` samples: precision,
  /// optimizer and the strategy's bucketing.
  workloads::IterationOptions iteration_options(double batch) const;
  /// The document as a checked-JSON view (no re-parsing): errors name `source`.
  JsonNode root() const;
};

/// Applies one `--set PATH=VALUE` to a scenario document: PATH is dotted ("platform.nodes"),
/// VALUE parsed as JSON, else taken as a string. Missing objects on the path are created.
/// Throws InputError (source "--set") when the assignment is malformed or walks through a non-object.
void apply_set(Json& document, const std::string& assignment);
/// Sets a dotted path to a value (used by sweeps).
void set_path(Json& document, const std::string& dotted_path, const Json& value, const std::string& source);

/// Reads a scenario file and applies the overrides in order.
Json load_scenario_document(const std::string& path, const std::vector<std::string>& sets);

/// Validates and reads a scenario document. `source` names it in errors; relative file paths inside
/// are resolved against `source`'s directory. Throws InputError.
Scenario read_scenario(Json document, const std::string& source);

/// Checks what depends on the platform's size: the strong-scaling global batch covers every GPU,
/// heterogeneity names existing GPUs and nodes. read_scenario calls it, except for SimGrid XML
/// platforms, whose size simulate_iteration learns from SimGrid. Throws InputError.
void check_against_platform(const Scenario& scenario);

/// The scenario's workload. An unknown zoo name or a missing file is reported at the scenario's
/// /workload/model or /workload/file; errors inside a layer-graph file name that file.
workloads::Workload load_scenario_workload(const Scenario& scenario);

}  // namespace trainsim::plan
