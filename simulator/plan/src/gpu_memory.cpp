#include "trainsim/plan/gpu_memory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace trainsim::plan {

namespace {

using workloads::LayerCost;
using workloads::OpClass;

constexpr double kF32 = 4;
// The caching allocator rounds every block of more than 1 MiB up to a multiple of 2 MiB and keeps
// freed blocks for reuse; PyTorch's CUDA memory-management notes. The slack this leaves between
// reserved and allocated memory is a few percent on models without convolutions.
constexpr double kAllocatorSlack = 0.05;
// Recomputation allocates each segment's activations again inside the backward pass, between
// gradients that live on, and frees them: the freed blocks split the allocator's segments that
// live tensors still hold. Reserved memory exceeded the allocation by 17-24 % with Hugging Face's
// per-block checkpointing on the given H100 (GPT-2 small and medium, every batch), 4-12 % without:
// 19-30 % of the activations' memory (the weights and optimizer state, allocated once, do not
// fragment). Set from those rows: this share of the activations (saved, recomputed and the
// backward's working set), on top of the slack above, and
// kept when the allocator frees its cache (MemoryEstimate::required).
constexpr double kRecomputeFragmentation = 0.15;
// With cudnn.benchmark, cuDNN's algorithm search tries every convolution algorithm with the
// workspace it asks for, and the caching allocator keeps the largest blocks reserved afterwards.
// The largest workspaces scale with the largest convolution's output: on the given H100 the
// reserve exceeded the allocation by 4-6× that tensor for ResNet-50 and VGG-16 in every precision.
constexpr double kBenchmarkWorkspaceOutputs = 4.5;

bool saves_input(const LayerCost& l) {
  static const std::set<std::string, std::less<>> types{"conv2d", "linear",      "batchnorm",  "layernorm",
                                                        "gelu",   "silu",        "leaky_relu", "maxpool2d",
                                                        "matmul", "transformer", "attention"};
  return types.count(l.type) > 0;
}
bool saves_output(const LayerCost& l) {
  return l.type == "relu" || l.type == "softmax" || l.type == "sigmoid" || l.type == "tanh";
}
// Layers whose output shares its input's storage: views, and ReLU (torchvision's inplace=True).
bool aliases_input(const LayerCost& l) {
  return l.type == "flatten" || l.type == "reshape" || l.type == "slice" || l.type == "relu";
}
bool gemm_like(const LayerCost& l) {
  return l.type == "conv2d" || l.type == "linear" || l.type == "matmul" || l.type == "attention";
}

// Bytes per element of a layer's output: under autocast GEMMs write the low precision, the fp32
// list (norms, softmax, loss) and embeddings fp32, the rest their inputs' type (adds promote).
double output_element(const LayerCost& l, const std::map<std::string, double>& element, Precision p) {
  if (bytes_per_element(p) != 2) return kF32;
  if (l.op_class == OpClass::data) return kF32;
  if (gemm_like(l)) return 2;
  if (l.type == "layernorm" || l.type == "softmax" || l.type == "loss" || l.op_class == OpClass::embedding ||
      l.type == "transformer")
    return kF32;
  double e = 0;
  for (const auto& parent : l.parents) e = std::max(e, element.at(parent));
  return e > 0 ? e : kF32;
}

// Tensors a transformer block keeps inside itself, per sample (its input and output excluded):
// norm outputs (the low-precision casts under autocast), Q, K, V, the context, the first residual
// sum (fp32), the feed-forward's hidden activation before and after GELU, two dropout masks, and
// attention's T×T probabilities, dropout mask and dropped copy (eager) or its log-sum-exp (fused).
double block_saved(const LayerCost& l, Precision p, bool fused) {
  if (l.output_shape.size() != 2) return l.saved_elements * bytes_per_element(p);
  const double e = bytes_per_element(p) == 2 ? 2 : kF32;
  const double t = static_cast<double>(l.output_shape[0]), d = static_cast<double>(l.output_shape[1]);
  const double params = static_cast<double>(l.params);
  const double f = std::max(1.0, (params - 4 * d * d - 9 * d) / (2 * d + 1));
  const double heads = std::max<double>(1, static_cast<double>(l.heads));
  // Fused: the kernel keeps its output and log-sum-exp; eager: probabilities, mask, dropped copy.
  const double attention = fused ? t * d * e + heads * t * kF32 : heads * t * t * (kF32 + 1 + e);
  // The feed-forward's hidden tensors: its input and GELU's output; gelu_new keeps x, 0.5·x,
  // tanh(…) and 1 + tanh(…) (the tanh terms in fp32 under autocast) and its output.
  const double hidden = l.activation == "gelu_new" ? (e == 2 ? 2 + kF32 + 2 + kF32 + 2 : 5 * kF32) : 2 * e;
  return t * d * (7 * e + kF32 + 2) + hidden * t * f + attention;
}

}  // namespace

double MemoryEstimate::peak_allocated() const {
  return weights + optimizer_state + gathered_parameters +
         std::max(activations + recompute_activations + working, gradients + optimizer_temporaries);
}
double MemoryEstimate::peak_reserved() const {
  return peak_allocated() + allocator_slack + fragmentation + workspace;
}
double MemoryEstimate::on_device() const {
  return peak_reserved() + cuda_context;
}
double MemoryEstimate::required() const {
  return peak_allocated() + fragmentation + cuda_context;
}

MemoryEstimate estimate_gpu_memory(const workloads::Workload& workload, const workloads::IterationOptions& options,
                                   const DataParallelMemory& dp) {
  const Precision p = options.precision;
  const bool half = bytes_per_element(p) == 2;
  const double b = options.batch;
  const double params = static_cast<double>(workload.params());
  MemoryEstimate m;
  m.weights = params * kF32;
  m.gradients = params * kF32;
  switch (options.optimizer) {
    case workloads::Optimizer::sgd: break;
    case workloads::Optimizer::momentum: m.optimizer_state = params * kF32; break;
    case workloads::Optimizer::adam:
      m.optimizer_state = 2 * params * kF32;
      m.optimizer_temporaries = params * kF32;  // _foreach_sqrt's list of denominators
      break;
  }
  if (dp.zero_stage >= 1) {
    m.optimizer_state /= dp.shard_group;
    m.optimizer_temporaries /= dp.shard_group;  // the step runs over the shard
  }
  if (dp.zero_stage >= 2 && !dp.whole_gradients) m.gradients /= dp.shard_group;
  if (dp.zero_stage >= 3) m.weights /= dp.shard_group;
  m.gathered_parameters = dp.gathered_parameters;

  // Storages: a layer's output gets its own unless it aliases its parent's.
  std::map<std::string, double> element;        // layer → bytes per element of its output
  std::map<std::string, std::string> storage;   // layer → the layer whose output storage it shares
  std::map<std::string, double> storage_bytes;  // storage owner → bytes per sample
  std::set<std::string> kept;                   // storage owners autograd keeps
  double extra = 0;                             // per sample: masks, indices, casts, block internals
  double largest = 0, largest_conv = 0;         // per sample: the largest storage, convolution output
  double gemm_weights = 0;
  double loss_inputs = 0;  // per sample: elements of the largest loss input
  for (const LayerCost& l : workload.layers) {
    element[l.name] = output_element(l, element, p);
    if (aliases_input(l) && !l.parents.empty()) {
      storage[l.name] = storage.at(l.parents.front());
    } else {
      storage[l.name] = l.name;
      storage_bytes[l.name] = l.output_elements * element[l.name];
      largest = std::max(largest, storage_bytes[l.name]);
      if (l.type == "conv2d") largest_conv = std::max(largest_conv, storage_bytes[l.name]);
    }
    if (saves_input(l))
      for (const auto& parent : l.parents) {
        const LayerCost* pl = workload.find_layer(parent);
        if (half && gemm_like(l) && element.at(parent) == kF32 && pl != nullptr)
          extra += pl->output_elements * 2;  // autocast's cast copy is what the GEMM keeps
        else
          kept.insert(storage.at(parent));
      }
    if (saves_output(l)) kept.insert(storage[l.name]);
    if (l.type == "dropout") extra += l.output_elements;        // the mask, a byte per element
    if (l.type == "maxpool2d") extra += l.output_elements * 8;  // int64 argmax indices
    if (l.type == "loss") {
      loss_inputs = std::max(loss_inputs, l.input_elements);
      extra += l.input_elements * kF32;                                    // fp32 log-probabilities
      if (!l.parents.empty()) kept.insert(storage.at(l.parents.front()));  // the logits, returned to the caller
    }
    if (l.type == "transformer") extra += block_saved(l, p, options.kernels.fused_attention);
    if (l.type == "attention") extra += l.saved_elements * (half ? 2 : kF32);
    if (gemm_like(l) || l.type == "transformer") gemm_weights += static_cast<double>(l.params);
  }
  double saved = extra;
  for (const auto& owner : kept) saved += storage_bytes[owner];
  // + autocast's cached weight casts (stage 3 gathers the low-precision weights instead)
  m.activations = b * saved * dp.stored_share + (half && dp.zero_stage < 3 ? gemm_weights * 2 : 0);
  m.recompute_activations = b * saved * dp.recompute_share;
  // The backward starts with the loss's gradient and the largest layer's input and output
  // gradients alive at once.
  // The loss's backward holds its fp32 gradient and input gradient (and, under autocast, the
  // gradient cast back to the logits' type).
  m.working = b * std::max(2 * largest, loss_inputs * (2 * kF32 + (half ? 2 : 0)));
  m.allocator_slack = kAllocatorSlack * m.peak_allocated();
  if (m.recompute_activations > 0)
    m.fragmentation = kRecomputeFragmentation * (m.activations + m.recompute_activations + m.working);
  m.workspace = kBenchmarkWorkspaceOutputs * b * largest_conv;
  m.cuda_context = kCudaContextBytes;
  return m;
}

MemoryUsage memory_usage(const MemoryEstimate& e, double device_bytes) {
  MemoryUsage m;
  m.weights = e.weights;
  m.gradients = e.gradients;
  m.optimizer_state = e.optimizer_state;
  m.activations = e.activations + e.working;
  m.framework = e.optimizer_temporaries + e.allocator_slack + e.fragmentation + e.workspace + e.cuda_context;
  m.gathered_parameters = e.gathered_parameters;
  m.recompute_activations = e.recompute_activations;
  m.total = e.on_device();
  m.required = e.required();
  m.available = device_bytes * kUsableMemoryFraction;
  return m;
}

std::int64_t largest_fitting_batch(const workloads::Workload& workload, workloads::IterationOptions options,
                                   double device_bytes, const DataParallelMemory& dp, std::int64_t limit) {
  auto fits = [&](std::int64_t batch) {
    options.batch = static_cast<double>(batch);
    return estimate_gpu_memory(workload, options, dp).required() <= device_bytes * kUsableMemoryFraction;
  };
  if (!fits(1)) return 0;
  std::int64_t lo = 1, hi = 2;  // fits(lo); grow hi until it does not fit
  while (hi <= limit && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = std::min(hi, limit + 1);
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace trainsim::plan
