#include "trainsim/workloads/iteration_graph.hpp"

#include <algorithm>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::workloads {

namespace {
constexpr EnumNames<TaskPhase, 3> kTaskPhases{
    {{{TaskPhase::forward, "forward"}, {TaskPhase::backward, "backward"}, {TaskPhase::update, "update"}}}};
constexpr EnumNames<Optimizer, 3> kOptimizers{
    {{{Optimizer::sgd, "sgd"}, {Optimizer::momentum, "momentum"}, {Optimizer::adam, "adam"}}}};
}  // namespace

std::string_view to_string(TaskPhase phase) {
  return kTaskPhases.name(phase);
}

std::string_view to_string(Optimizer optimizer) {
  return kOptimizers.name(optimizer);
}

std::vector<std::string> optimizer_names() {
  return kOptimizers.names();
}

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  return kOptimizers.parse(name);
}

namespace {

// Optimizer state words per parameter and elementwise FLOPs per parameter of one step.
//   sgd:      w -= lr·g                               reads w, g; writes w          → 3 words, 2 FLOPs
//   momentum: v = μv + g; w -= lr·v                   reads w, g, v; writes w, v    → 5 words, 4 FLOPs
//   adam:     m, v moments, bias correction, sqrt     reads w, g, m, v; writes w, m, v → 7 words, ~12 FLOPs
struct OptimizerCost {
  double words_moved;
  double flops;
};
OptimizerCost optimizer_cost(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd: return {3, 2};
    case Optimizer::momentum: return {5, 4};
    case Optimizer::adam: return {7, 12};
  }
  return {5, 4};
}

}  // namespace

// Under autocast every operator passes the Autocast dispatch key as well (a cast-policy lookup
// on each call): its dispatch costs about a tenth more.
constexpr double kAutocastDispatch = 1.1;

IterationGraph expand_iteration(const Workload& workload, const IterationOptions& options) {
  TRAINSIM_CHECK(options.batch > 0, "batch must be positive");
  TRAINSIM_CHECK(options.bucket_bytes >= 0 && options.first_bucket_bytes >= 0, "bucket sizes must be ≥ 0");
  const double b = options.batch;
  const double element = bytes_per_element(options.precision);

  IterationGraph graph;
  graph.model = workload.name;
  graph.batch = b;
  graph.precision = options.precision;
  graph.params = workload.params();

  for (const LayerCost& layer : workload.layers) {
    ComputeTask task;
    task.layer = layer.name;
    task.phase = TaskPhase::forward;
    task.op_class = layer.op_class;
    task.flops = layer.flops_fwd * b;
    task.bytes = (layer.input_elements + layer.output_elements) * b * element + layer.params * element;
    task.kernels = layer.op_class == OpClass::data ? 0 : 1;
    LayerKernels launched = forward_kernels(workload, layer, b, options.precision, options.kernels);
    task.launches = std::move(launched.kernels);
    task.host_ops = launched.host_ops * (element == 2 ? kAutocastDispatch : 1.0);
    graph.forward.push_back(task);
  }

  // Backward in reverse order. Input gradient: reads the output gradient and the saved input,
  // writes the input gradient. Weight gradient: reads the output gradient and the saved input,
  // writes the weight gradient. The two are separate kernels when both exist.
  std::vector<const LayerCost*> backward_layers;  // parallel to graph.backward
  for (auto it = workload.layers.rbegin(); it != workload.layers.rend(); ++it) {
    const LayerCost& layer = *it;
    if (layer.op_class == OpClass::data) continue;
    backward_layers.push_back(&layer);
    ComputeTask task;
    task.layer = layer.name;
    task.phase = TaskPhase::backward;
    task.op_class = layer.op_class;
    task.flops = (layer.flops_bwd_input + layer.flops_bwd_weight) * b;
    const bool input_gradient = layer.flops_bwd_input > 0 || (layer.params == 0 && layer.input_elements > 0);
    const bool weight_gradient = layer.params > 0;
    double bytes = 0;
    if (input_gradient) bytes += (layer.output_elements + layer.saved_elements + layer.input_elements) * b * element + layer.params * element;
    if (weight_gradient) bytes += (layer.output_elements + layer.input_elements) * b * element + 2.0 * layer.params * element;
    task.bytes = bytes;
    task.kernels = (input_gradient ? 1 : 0) + (weight_gradient ? 1 : 0);
    LayerKernels launched = backward_kernels(workload, layer, b, options.precision, input_gradient, options.kernels);
    for (Kernel& k : launched.kernels) k.backward = k.kind == KernelKind::gemm;
    task.launches = std::move(launched.kernels);
    task.host_ops = launched.host_ops * (element == 2 ? kAutocastDispatch : 1.0);
    graph.backward.push_back(task);
  }

  // Buckets in backward order, PyTorch-DDP style: gradients are appended to the open bucket until
  // the next one would overflow its capacity; a gradient larger than the capacity gets a bucket of
  // its own. Capacity 0 means one bucket per layer with parameters.
  GradientBucket open;
  auto capacity = [&]() {
    const bool first = graph.buckets.empty();
    return (first && options.first_bucket_bytes > 0) ? options.first_bucket_bytes : options.bucket_bytes;
  };
  for (std::size_t i = 0; i < graph.backward.size(); ++i) {
    const LayerCost* layer = backward_layers[i];
    if (layer->params == 0) continue;
    const double gradient = layer->weight_bytes(options.precision);
    if (!open.layers.empty() && (capacity() == 0 || open.bytes + gradient > capacity())) {
      graph.buckets.push_back(open);
      open = GradientBucket{};
    }
    open.bytes += gradient;
    open.ready_after = i;
    open.layers.push_back(layer->name);
    graph.gradient_bytes += gradient;
  }
  if (!open.layers.empty()) graph.buckets.push_back(open);

  const OptimizerCost opt = optimizer_cost(options.optimizer);
  graph.update.layer = "optimizer";
  graph.update.phase = TaskPhase::update;
  graph.update.op_class = OpClass::elementwise;
  graph.update.flops = opt.flops * static_cast<double>(graph.params);
  // Optimizer state and master weights are kept in fp32 whatever the compute precision.
  graph.update.bytes = opt.words_moved * 4.0 * static_cast<double>(graph.params);
  graph.update.kernels = graph.params > 0 ? 1 : 0;
  if (graph.params > 0) {
    // PyTorch's default optimizer implementation on CUDA is "foreach" (torch.optim's
    // _default_to_fused_or_foreach): one multi-tensor kernel per arithmetic step over every
    // parameter, each step reading and writing whole tensors. Words moved per parameter, from
    // torch/optim/sgd.py and adamw.py (_multi_tensor_*): SGD add_ 3; momentum mul_ 2 + add_ 3 +
    // add_ 3; AdamW weight-decay mul_ 2, lerp_ 3, mul_ 2, addcmul_ 3, sqrt 2, div_ 2, add_ 2,
    // addcdiv_ 4.
    const double words = options.optimizer == Optimizer::sgd ? 3 : options.optimizer == Optimizer::momentum ? 8 : 20;
    const int steps = options.optimizer == Optimizer::sgd ? 1 : options.optimizer == Optimizer::momentum ? 3 : 8;
    Kernel step;
    step.bytes = words * 4.0 * static_cast<double>(graph.params);
    graph.update.launches.push_back(step);
    // Each foreach step is one operator; Python builds the per-tensor lists (about 1/20 of an
    // operator per tensor: two tensors per layer with weights).
    int tensors = 0;
    for (const LayerCost& layer : workload.layers) tensors += layer.params > 0 ? 2 : 0;
    graph.update.host_ops = steps + 2 + tensors / 20.0;
  }
  return graph;
}

namespace {
Json task_json(const ComputeTask& t) {
  return Json{{"layer", t.layer}, {"phase", std::string(to_string(t.phase))}, {"op_class", std::string(to_string(t.op_class))},
              {"flops", t.flops},  {"bytes", t.bytes},                       {"kernels", t.kernels}};
}
}  // namespace

Json IterationGraph::to_json() const {
  Json out;
  out["model"] = model;
  out["batch"] = batch;
  out["precision"] = std::string(trainsim::to_string(precision));
  out["params"] = params;
  out["gradient_bytes"] = gradient_bytes;
  Json fwd = Json::array(), bwd = Json::array(), bkt = Json::array();
  for (const auto& t : forward) fwd.push_back(task_json(t));
  for (const auto& t : backward) bwd.push_back(task_json(t));
  for (const auto& bucket : buckets)
    bkt.push_back(Json{{"bytes", bucket.bytes}, {"ready_after", backward.at(bucket.ready_after).layer}, {"layers", bucket.layers}});
  out["forward"] = fwd;
  out["backward"] = bwd;
  out["update"] = task_json(update);
  out["buckets"] = bkt;
  return out;
}

}  // namespace trainsim::workloads
