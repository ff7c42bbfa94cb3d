#include "trainsim/plan/scenario.hpp"

#include <limits>
#include <algorithm>
#include <filesystem>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/workloads/onnx_import.hpp"

namespace trainsim::plan {

namespace {
// One name table per enum of the scenario format, in the order error messages list the names.
constexpr EnumNames<StrategyKind, 6> kStrategyKinds{{{{StrategyKind::ring_allreduce, "ring_allreduce"},
                                                      {StrategyKind::hierarchical_allreduce, "hierarchical_allreduce"},
                                                      {StrategyKind::tree_allreduce, "tree_allreduce"},
                                                      {StrategyKind::halving_doubling, "halving_doubling"},
                                                      {StrategyKind::parameter_server, "parameter_server"},
                                                      {StrategyKind::nccl_allreduce, "nccl_allreduce"}}}};
constexpr EnumNames<WorkerAggregation, 2> kWorkerAggregations{
    {{{WorkerAggregation::host, "host"}, {WorkerAggregation::none, "none"}}}};
constexpr EnumNames<Transport, 2> kTransports{{{{Transport::gpu, "gpu"}, {Transport::host, "host"}}}};
constexpr EnumNames<Scaling, 2> kScalings{{{{Scaling::weak, "weak"}, {Scaling::strong, "strong"}}}};
constexpr EnumNames<ServerPlacement, 2> kServerPlacements{
    {{{ServerPlacement::colocated, "colocated"}, {ServerPlacement::dedicated, "dedicated"}}}};
constexpr EnumNames<Aggregation, 2> kAggregations{{{{Aggregation::cpu, "cpu"}, {Aggregation::gpu, "gpu"}}}};
}  // namespace

std::string_view to_string(StrategyKind kind) {
  return kStrategyKinds.name(kind);
}

std::string_view to_string(WorkerAggregation aggregation) {
  return kWorkerAggregations.name(aggregation);
}

std::string_view to_string(Transport transport) {
  return kTransports.name(transport);
}

std::vector<std::string> strategy_kind_names() {
  return kStrategyKinds.names();
}

namespace {

StrategyKind parse_kind(const std::string& name) {
  return kStrategyKinds.parse(name).value_or(StrategyKind::ring_allreduce);
}

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : dotted) {
    if (c == '.') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

std::string resolve_relative(const std::string& path, const std::string& source) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  const std::filesystem::path base = std::filesystem::path(source).parent_path();
  const auto candidate = base / p;
  // Paths are relative to the scenario file; fall back to the working directory for paths that
  // exist only there (users running from the repository root with scenario-relative habits).
  if (std::filesystem::exists(candidate) || !std::filesystem::exists(p)) return candidate.lexically_normal().string();
  return path;
}

WorkloadConfig read_workload(const JsonNode& node, const std::string& source) {
  node.allow_only({"model", "file", "onnx", "onnx_dims", "batch_per_gpu", "global_batch", "precision", "scaling",
                   "optimizer", "sequence_length", "image_size", "dataset_samples", "input_pipeline",
                   "accumulation_steps", "activation_checkpointing"});
  WorkloadConfig w;
  const auto model = node.find("model");
  const auto file = node.find("file");
  const auto onnx = node.find("onnx");
  if (model && file) throw file->error("give either 'model' or 'file', not both");
  if (onnx && (model || file)) throw onnx->error("give one of 'model', 'file' and 'onnx'");
  if (!model && !file && !onnx)
    throw node.error(
        "missing required key 'model' (a zoo name), 'file' (a layer-graph file) or 'onnx' (an ONNX model)");
  w.onnx = onnx.has_value();
  w.model_or_file = model ? model->as_string() : resolve_relative((file ? file : onnx)->as_string(), source);
  if (auto dims = node.find("onnx_dims")) {
    if (!onnx) throw dims->error("'onnx_dims' applies to an ONNX model ('onnx')");
    for (const auto& [name, value] : dims->members()) {
      if (value.as_int() > 1'000'000) throw value.error("must be ≤ 1000000, got " + value.raw().dump());
      w.onnx_dims[name] = value.int_at_least(1);
    }
  }
  if (auto s = node.find("scaling")) w.scaling = kScalings.read(*s);
  if (w.scaling == Scaling::weak) {
    w.batch_per_gpu = node.at("batch_per_gpu").int_at_least(1);
    if (auto g = node.find("global_batch")) throw g->error("'global_batch' applies to scaling \"strong\"; weak scaling uses batch_per_gpu");
  } else {
    w.global_batch = node.at("global_batch").int_at_least(1);
    if (auto b = node.find("batch_per_gpu")) throw b->error("'batch_per_gpu' applies to scaling \"weak\"; strong scaling splits global_batch");
  }
  if (auto p = node.find("precision")) w.precision = *parse_precision(p->one_of(precision_names()));
  if (auto v = node.find("dataset_samples")) w.dataset_samples = static_cast<double>(v->int_at_least(1));
  if (auto v = node.find("sequence_length")) w.input.sequence_length = v->int_at_least(1);
  if (auto v = node.find("image_size")) w.input.image_size = v->int_at_least(1);
  for (const char* key : {"sequence_length", "image_size"})
    if (auto v = node.find(key); v && v->as_int() > 1'000'000) throw v->error("must be ≤ 1000000, got " + v->raw().dump());
  if (auto v = node.find("input_pipeline")) w.input_pipeline = InputPipelineConfig::read(*v);
  if (auto v = node.find("accumulation_steps")) w.accumulation_steps = v->int_in(1, 1'000'000);
  if (auto v = node.find("activation_checkpointing")) w.checkpointing = read_checkpointing(*v);
  if (auto o = node.find("optimizer"))
    w.optimizer = *workloads::parse_optimizer(o->one_of(workloads::optimizer_names()));
  return w;
}

// Kinds a scenario can take: its own and those its sweep gives strategy.kind.
std::vector<StrategyKind> possible_kinds(StrategyKind own, const JsonNode& root) {
  std::vector<StrategyKind> kinds{own};
  if (auto sweep = root.find("sweep"); sweep && sweep->is_object())
    if (auto values = sweep->find("strategy.kind"); values && values->is_array())
      for (const auto& v : values->elements())
        if (v.is_string()) kinds.push_back(parse_kind(v.as_string()));
  return kinds;
}

StrategyConfig read_strategy(const JsonNode& node, const JsonNode& root) {
  node.allow_only({"kind", "bucket_MB", "first_bucket_MB", "overlap", "servers", "server_placement", "aggregation",
                   "placement", "partition_MB", "server_throughput_GBps", "representation", "worker_aggregation",
                   "transport", "hd_order", "zero_stage", "fsdp"});
  StrategyConfig s;
  s.kind = kStrategyKinds.read(node.at("kind"));
  const auto kinds = possible_kinds(s.kind, root);
  const bool may_be_ps = std::find(kinds.begin(), kinds.end(), StrategyKind::parameter_server) != kinds.end();
  const bool may_be_collective = std::any_of(kinds.begin(), kinds.end(), [](StrategyKind k) { return k != StrategyKind::parameter_server; });
  auto only_for_ps = [&](const char* key) {
    auto v = node.find(key);
    if (v && !may_be_ps)
      throw v->error(std::string("'") + key + "' applies to kind \"parameter_server\" only, and this scenario uses \"" +
                     std::string(to_string(s.kind)) + "\"");
    return v;
  };
  // A parameter server pushes each layer's gradient as it appears (TensorFlow pushes every
  // variable); all-reduce strategies fuse them into 25 MiB buckets (PyTorch DDP). bucket_MB wins.
  if (s.kind == StrategyKind::parameter_server) s.bucket_bytes = 0;
  if (auto v = node.find("bucket_MB")) s.bucket_bytes = bucket_mb_to_bytes(v->non_negative_number());
  if (auto v = node.find("first_bucket_MB")) s.first_bucket_bytes = bucket_mb_to_bytes(v->non_negative_number());
  if (auto v = node.find("overlap")) s.overlap = v->as_bool();
  if (auto v = only_for_ps("servers")) s.servers = v->int_in(1, std::numeric_limits<int>::max());  // more than the platform holds: refused below
  if (auto v = only_for_ps("server_placement")) s.placement = kServerPlacements.read(*v);
  if (auto v = only_for_ps("aggregation")) {
    s.aggregation = kAggregations.read(*v);
    if (s.aggregation == Aggregation::gpu && s.placement == ServerPlacement::dedicated)
      throw v->error("dedicated parameter servers are CPU nodes: aggregation \"gpu\" needs server_placement \"colocated\"");
  }
  if (auto v = only_for_ps("placement"))
    s.variable_placement = *parse_variable_placement(v->one_of(variable_placement_names()));
  if (auto v = only_for_ps("partition_MB")) {
    // A lower bound here (the per-model partition count is checked when the model is known, see
    // kMaxVariablePartitions): 1e-9 MB asked for billions of partitions and ran out of memory.
    const double mb = v->positive_number();
    if (mb < kMinPartitionMB)
      throw v->error("must be ≥ 1/1024 MB (1 KiB; no parameter-server framework partitions variables finer), got " +
                     v->raw().dump());
    s.partition_bytes = bucket_mb_to_bytes(mb);
  }
  if (auto v = only_for_ps("server_throughput_GBps")) s.server_throughput_Bps = gBps_to_bytes_per_s(v->positive_number());
  if (auto v = node.find("representation")) {
    // All-reduce strategies name a ring representation, a parameter server its pushes' and pulls'
    // (auto, coarse or flow); a sweep over both kinds takes the names both accept.
    std::vector<std::string> names = may_be_collective ? representation_names() : server_representation_names();
    if (may_be_ps && may_be_collective)
      std::erase_if(names, [](const std::string& n) { return !parse_server_representation(n).has_value(); });
    s.representation = v->one_of(names);
  }
  if (auto v = only_for_ps("worker_aggregation")) s.worker_aggregation = kWorkerAggregations.read(*v);
  if (auto v = node.find("transport")) {
    const bool may_be_ring = std::find(kinds.begin(), kinds.end(), StrategyKind::ring_allreduce) != kinds.end();
    s.transport = kTransports.read(*v);
    if (s.transport == Transport::host && !may_be_ring)
      throw v->error("transport \"host\" (host-staged MPI all-reduce) is modelled for kind \"ring_allreduce\" only, and this "
                     "scenario uses \"" + std::string(to_string(s.kind)) + "\"");
    // The host-staged ring (engine: host_ring_all_reduce) is simulated one way whatever the
    // representation; one given would be silently ignored, like other options that do not apply.
    if (auto r = node.find("representation");
        r && s.representation != "auto" && s.transport == Transport::host && s.kind == StrategyKind::ring_allreduce)
      throw r->error("does not apply with transport \"host\": the host-staged ring is simulated one way whatever the "
                     "representation; remove it or use transport \"gpu\"");
  }
  if (auto v = node.find("hd_order")) {
    // Only halving-doubling has partners to order; elsewhere the key would be silently ignored.
    const bool may_be_hd = std::find(kinds.begin(), kinds.end(), StrategyKind::halving_doubling) != kinds.end();
    s.hd_order = parse_hd_order(v->one_of(hd_order_names())).value_or(HdOrder::near);
    if (!may_be_hd)
      throw v->error("'hd_order' orders the exchanges of kind \"halving_doubling\" only, and this scenario uses \"" +
                     std::string(to_string(s.kind)) + "\"");
  }
  s.sharding = read_sharding(node);
  if (s.sharding.stage > 0 || s.sharding.hybrid) {
    // Sharding splits what an all-reduce group holds; parameter servers already keep the state on
    // the servers, and the host-staged MPI ring is Horovod's, which shards nothing.
    const JsonNode at = node.at(s.sharding.key);
    if (may_be_ps)
      throw at.error(
          "sharded training state (ZeRO / FSDP) applies to the all-reduce kinds; kind \"parameter_server\" keeps "
          "the variables on its servers already: remove '" +
          s.sharding.key + "' or use an all-reduce kind");
    if (s.transport == Transport::host)
      throw at.error(
          "sharded training state needs GPU collectives (reduce-scatter, all-gather): use transport \"gpu\"");
  }
  return s;
}

std::vector<std::pair<int, double>> read_speed_map(const JsonNode& node, const char* what) {
  node.require_object();
  std::vector<std::pair<int, double>> out;
  for (const auto& [key, value] : node.members()) {
    // Canonical decimal indices only ("3", not "03" or " 3"), so no index can be given twice.
    const bool canonical = !key.empty() && key.size() <= 9 && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                           (key == "0" || key[0] != '0');
    if (!canonical) throw value.error(std::string("keys of '") + what + "' must be " + what + " indices (\"0\", \"1\", …)");
    // A factor of 1e-300 made SimGrid's solver round the GPU's speed to 0 and deadlock.
    const double factor = value.positive_number();
    if (factor < platforms::kMinSpeedFactor || factor > platforms::kMaxSpeedFactor)
      throw value.error("must be in [1e-06, 1e+06] (a speed relative to the calibrated one; the physical range trainsim simulates), got " +
                        value.raw().dump());
    out.emplace_back(std::stoi(key), factor);
  }
  return out;
}

HeterogeneityConfig read_heterogeneity(const JsonNode& node) {
  node.allow_only({"gpu_speed", "node_speed", "jitter_sigma", "straggler_probability", "straggler_slowdown", "seed"});
  HeterogeneityConfig h;
  if (auto v = node.find("gpu_speed")) h.gpu_speed = read_speed_map(*v, "GPU");
  if (auto v = node.find("node_speed")) h.node_speed = read_speed_map(*v, "node");
  if (auto v = node.find("jitter_sigma")) h.jitter_sigma = v->number_in(0, 2);
  if (auto v = node.find("straggler_probability")) h.straggler_probability = v->number_in(0, 1);
  if (auto v = node.find("straggler_slowdown")) h.straggler_slowdown = v->number_in(1, 1e6);
  if (auto v = node.find("seed")) h.seed = static_cast<std::uint64_t>(v->int_at_least(0));
  return h;
}

// A CPU node: the platform, the precisions its cores have, the threading settings.
void read_cpu_parts(Scenario& s, const JsonNode& root) {
  s.cpu = platforms::read_cpu_platform(root.at("platform"));
  if (auto p = root.at("workload").find("input_pipeline"))
    throw p->error("'input_pipeline' feeds GPUs from the host CPU; a CPU scenario's loaders are not modelled");
  if (!s.cpu->cpu.supports(s.workload.precision))
    throw root.at("workload").at("precision").error("precision \"" + std::string(to_string(s.workload.precision)) + "\" is a GPU format: " +
                                                    s.cpu->cpu.name + " computes in " + s.cpu->cpu.supported_precisions());
  if (auto t = root.find("threading")) s.threading = ThreadingOptions::read(*t, *s.cpu);
}

}  // namespace

double Scenario::global_batch() const {
  return workload.scaling == Scaling::weak
             ? static_cast<double>(workload.batch_per_gpu) * gpus() * workload.accumulation_steps
             : static_cast<double>(workload.global_batch);
}

double Scenario::batch_of(int rank) const {
  if (workload.scaling == Scaling::weak) return static_cast<double>(workload.batch_per_gpu);
  const std::int64_t n = gpus();
  const double share = static_cast<double>(workload.global_batch / n + (rank < workload.global_batch % n ? 1 : 0));
  return share / workload.accumulation_steps;
}

double Scenario::reference_batch() const {
  return workload.scaling == Scaling::weak ? static_cast<double>(workload.batch_per_gpu) * workload.accumulation_steps
                                           : static_cast<double>(workload.global_batch);
}

workloads::IterationOptions Scenario::iteration_options(double batch) const {
  workloads::IterationOptions o;
  o.batch = batch;
  o.precision = workload.precision;
  o.bucket_bytes = strategy.bucket_bytes;
  o.first_bucket_bytes = strategy.first_bucket_bytes;
  o.optimizer = workload.optimizer;
  o.kernels.fused_attention = compute.fused_attention;
  return o;
}

JsonNode Scenario::root() const { return json_root(document, source); }

void set_path(Json& document, const std::string& dotted_path, const Json& value, const std::string& source) {
  const auto parts = split_path(dotted_path);
  Json* cursor = &document;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw InputError(source, dotted_path, "empty component in the path");
    if (!cursor->is_object())
      throw InputError(source, dotted_path, "'" + walked + "' is " + describe_json(*cursor) + ", not an object");
    walked += (walked.empty() ? "" : ".") + parts[i];
    if (i + 1 == parts.size()) {
      (*cursor)[parts[i]] = value;
    } else {
      if (!cursor->contains(parts[i])) (*cursor)[parts[i]] = Json::object();
      cursor = &(*cursor)[parts[i]];
    }
  }
}

void apply_set(Json& document, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", assignment, "expected PATH=VALUE, e.g. platform.nodes=16");
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  Json value;
  // The value is user input like a file's: the same depth limit, and a number beyond double's range
  // (1e400) is an error at the assignment rather than nlohmann's exception escaping as exit 1.
  check_json_depth(text, "--set " + path);
  try {
    value = Json::parse(text);
  } catch (const Json::parse_error&) {
    value = text;  // SPEC: values are parsed as JSON, falling back to a string
  } catch (const Json::out_of_range&) {
    throw InputError("--set", assignment, "number out of range: the largest finite number is about 1.8e308");
  }
  set_path(document, path, value, "--set");
}

Json load_scenario_document(const std::string& path, const std::vector<std::string>& sets) {
  Json document = read_json_file(path).raw();
  for (const auto& s : sets) apply_set(document, s);
  return document;
}

namespace {
void check_against_platform(const Scenario& s, const JsonNode& root);

// The `calibration` object: a GPU scenario's measured throughput and where and how it was measured
// (calibration.gpu, .precision, .batch_per_gpu), or a CPU scenario's single-thread time. Needs the
// platform and workload already read.
void read_calibration(Scenario& s, const JsonNode& c) {
  c.allow_only({"single_gpu_samples_per_s", "single_thread_iteration_s", "gpu", "precision", "batch_per_gpu"});
  if (auto v = c.find("single_gpu_samples_per_s")) {
    if (s.cpu) throw v->error("a CPU scenario is calibrated with 'single_thread_iteration_s' (one pool, one thread)");
    s.single_gpu_samples_per_s = v->positive_number();
  }
  if (auto v = c.find("single_thread_iteration_s")) {
    if (!s.cpu)
      throw v->error(
          "'single_thread_iteration_s' calibrates CPU scenarios; GPU scenarios use 'single_gpu_samples_per_s'");
    s.single_thread_iteration_s = v->positive_number();
  }
  if (auto v = c.find("gpu")) {
    if (s.cpu)
      throw v->error("'gpu' names the GPU a single_gpu_samples_per_s was measured on; a CPU scenario has none");
    if (!s.single_gpu_samples_per_s)
      throw v->error(
          "names the GPU a measurement was taken on: give that measurement as 'single_gpu_samples_per_s' too");
    s.calibration_gpu = platforms::read_gpu(*v);
  }
  // The measured run's settings, when they differ from the scenario's; GPU scenarios only.
  for (const char* key : {"precision", "batch_per_gpu"})
    if (auto v = c.find(key)) {
      if (s.cpu)
        throw v->error(std::string("'") + key +
                       "' describes a single_gpu_samples_per_s measurement; a CPU scenario has none");
      if (!s.single_gpu_samples_per_s)
        throw v->error(std::string("'") + key +
                       "' describes a measurement: give that measurement as 'single_gpu_samples_per_s' too");
    }
  if (auto v = c.find("precision")) s.calibration_precision = *parse_precision(v->one_of(precision_names()));
  if (auto v = c.find("batch_per_gpu")) s.calibration_batch = static_cast<double>(v->int_at_least(1));
  const Precision measured = s.calibration_precision.value_or(s.workload.precision);
  if (s.calibration_gpu && !s.calibration_gpu->supports(measured))
    throw c.at("gpu").error("the GPU '" + s.calibration_gpu->name + "' lacks precision \"" +
                            std::string(to_string(measured)) + "\" (it computes in " +
                            s.calibration_gpu->supported_precisions() + "), so nothing measured on it ran " +
                            (s.calibration_precision ? "calibration.precision" : "the scenario's precision"));
  if (s.calibration_precision && !s.calibration_gpu && !s.cpu && !s.platform.gpu.supports(measured))
    throw c.at("precision")
        .error("the GPU '" + s.platform.gpu.name + "' lacks precision \"" + std::string(to_string(measured)) +
               "\" (it computes in " + s.platform.gpu.supported_precisions() +
               "): name the GPU the measurement ran on as calibration.gpu");
}

}  // namespace

Scenario read_scenario(Json document, const std::string& source) {
  Scenario s;
  s.source = source;
  s.document = std::make_shared<const Json>(std::move(document));
  const JsonNode root = s.root();
  root.require_object();
  root.allow_only({"name", "description", "workload", "platform", "strategy", "calibration", "compute", "heterogeneity",
                   "threading", "sweep", "plan", "stack"});
  s.name = root.find("name") ? root.at("name").as_string() : std::filesystem::path(source).stem().string();
  if (auto d = root.find("description")) s.description = d->as_string();
  s.workload = read_workload(root.at("workload"), source);
  if (platforms::is_cpu_platform(root.at("platform"))) {
    read_cpu_parts(s, root);
  } else {
    s.platform = platforms::read_platform_spec(root.at("platform"));
    if (auto t = root.find("threading")) throw t->error("'threading' applies to CPU platforms (platform.device \"cpu\" or a cpu-* preset)");
  }
  // A CPU node trains alone: no strategy applies, and one given is an error like every other option
  // that does not apply (a parameter-server strategy was silently ignored).
  if (s.cpu) {
    if (auto st = root.find("strategy"))
      throw st->error("'strategy' applies to GPU platforms: a CPU platform simulates one node training alone (data parallelism "
                      "across CPU nodes is not modelled); remove it");
  } else {
    s.strategy = read_strategy(root.at("strategy"), root);
  }
  // Host staging needs the nodes' CPUs, which a SimGrid XML platform does not describe.
  if (s.platform.simgrid_xml) {
    const JsonNode strategy = root.at("strategy");
    if (s.strategy.worker_aggregation == WorkerAggregation::host)
      throw strategy.at("worker_aggregation").error("a SimGrid XML platform has no node CPUs to aggregate on: use \"none\"");
    if (s.strategy.transport == Transport::host)
      throw strategy.at("transport").error("a SimGrid XML platform has no node CPUs to stage through: use \"gpu\"");
  }
  if (auto c = root.find("calibration")) read_calibration(s, *c);
  // A GPU given as an object lists the precisions it has; the workload's must be one of them.
  if (!s.cpu && !s.platform.gpu.supports(s.workload.precision)) {
    const JsonNode workload = root.at("workload");
    throw(workload.find("precision") ? workload.at("precision") : workload)
        .error("precision \"" + std::string(to_string(s.workload.precision)) + "\": the GPU '" + s.platform.gpu.name +
               "' lacks it (it computes in " + s.platform.gpu.supported_precisions() + ")");
  }
  if (auto c = root.find("compute")) s.compute = ComputeModelOptions::read(*c);
  if (auto h = root.find("heterogeneity")) s.heterogeneity = read_heterogeneity(*h);
  // Stragglers: where the catalog knows the GPU's clock range, the GPUs of one job run anywhere in
  // it, so the spread of their iteration times defaults to the clock's (simulator/README.md,
  // Stragglers).
  s.stack = read_software_stack(root.find("stack"), s.cpu ? 0.0 : s.platform.gpu.clock_spread);
  // Without a `stack.model`, the published stack runs where its software dominates: parameter
  // servers (gRPC) and host-staged MPI all-reduces; GPU collectives keep the hardware-level NCCL
  // model, which nccl-tests runs calibrate (simulator/README.md, Software stack constants and bands).
  if (!s.stack.model_set)
    s.stack.modelled = s.strategy.kind == StrategyKind::parameter_server || s.strategy.transport == Transport::host;
  // A SimGrid XML platform's size is known once it is built; simulate_iteration checks it then.
  if (!s.platform.simgrid_xml && !s.cpu) check_against_platform(s, root);
  if (auto sweep = root.find("sweep")) {
    for (const auto& [path, values] : sweep->members()) {
      values.require_array();
      if (values.size() == 0) throw values.error("a sweep axis needs at least one value");
      s.sweep.emplace_back(path, std::vector<Json>(values.raw().begin(), values.raw().end()));
    }
  }
  return s;
}

namespace {
void check_against_platform(const Scenario& s, const JsonNode& root) {
  // A colocated server runs beside a worker GPU; more of them than GPUs would stack servers on
  // one GPU's share of a node, which no framework launches.
  if (s.strategy.kind == StrategyKind::parameter_server && s.strategy.placement == ServerPlacement::colocated &&
      s.strategy.servers > s.gpus()) {
    const auto servers = root.at("strategy").find("servers");
    throw (servers ? *servers : root.at("strategy"))
        .error(std::to_string(s.strategy.servers) + " colocated parameter servers on " + std::to_string(s.gpus()) +
               " GPUs (" + std::to_string(s.platform.nodes) + " nodes × " + std::to_string(s.platform.gpus_per_node) +
               "): at most one server per GPU; use fewer servers or server_placement \"dedicated\"");
  }
  // A dedicated server is a CPU-only node, one host, but a leaf of the topology like a worker node:
  // it counts toward the hosts SimGrid builds (kMaxGpus), not as a GPU.
  if (s.strategy.kind == StrategyKind::parameter_server && s.strategy.placement == ServerPlacement::dedicated &&
      std::int64_t(s.gpus()) + s.strategy.servers > platforms::kMaxGpus) {
    const auto servers = root.at("strategy").find("servers");
    throw (servers ? *servers : root.at("strategy"))
        .error(std::to_string(s.strategy.servers) + " dedicated server nodes beside " + std::to_string(s.gpus()) +
               " worker GPUs: " + std::to_string(std::int64_t(s.gpus()) + s.strategy.servers) + " hosts, more than the " +
               std::to_string(platforms::kMaxGpus) + " (GPUs and server nodes) trainsim builds: SimGrid 3.32 builds larger "
               "platforms too slowly (simulator/README.md, Troubleshooting and limits)");
  }
  if ((s.strategy.sharding.stage > 0 || s.strategy.sharding.hybrid) &&
      s.strategy.sharding.group_size(s.gpus(), s.platform.gpus_per_node) < 2)
    throw root.at("strategy")
        .at(s.strategy.sharding.key)
        .error(s.strategy.sharding.hybrid ? "hybrid sharding shards inside a node, and a node here has one GPU: "
                                            "nothing to shard; use a platform with several "
                                            "GPUs per node or a non-hybrid stage"
                                          : "sharding over " + std::to_string(s.gpus()) +
                                                " GPU shards nothing: every GPU would hold the whole state; use ≥ 2 "
                                                "GPUs or zero_stage 0");
  if (s.strategy.sharding.stage == 3 && s.workload.accumulation_steps > 1)
    throw root.at("workload")
        .at("accumulation_steps")
        .error(
            "accumulation with parameters sharded (zero_stage 3, FULL_SHARD) is not modelled: every micro-batch would "
            "gather the "
            "parameters again (simulator/README.md, Accumulation, sharding and recomputation); use stage 2 or one "
            "step");
  if (s.workload.scaling == Scaling::strong && s.workload.accumulation_steps > 1 &&
      s.workload.global_batch < std::int64_t(s.gpus()) * s.workload.accumulation_steps)
    throw root.at("workload")
        .at("global_batch")
        .error("global batch " + std::to_string(s.workload.global_batch) + " is smaller than " +
               std::to_string(s.gpus()) + " GPUs × " + std::to_string(s.workload.accumulation_steps) +
               " micro-batches: every micro-batch needs at least one sample");
  if (s.workload.scaling == Scaling::strong && s.workload.global_batch < s.gpus())
    throw root.at("workload").at("global_batch").error("global batch " + std::to_string(s.workload.global_batch) +
                                                       " is smaller than the " + std::to_string(s.gpus()) + " GPUs it is split across");
  for (const auto& [rank, speed] : s.heterogeneity.gpu_speed)
    if (rank >= s.gpus())
      throw root.at("heterogeneity").at("gpu_speed").error("GPU " + std::to_string(rank) + " does not exist: the platform has " +
                                                           std::to_string(s.gpus()) + " GPUs");
  for (const auto& [node, speed] : s.heterogeneity.node_speed)
    if (node >= s.platform.nodes)
      throw root.at("heterogeneity").at("node_speed").error("node " + std::to_string(node) + " does not exist: the platform has " +
                                                            std::to_string(s.platform.nodes) + " nodes");
}
}  // namespace

void check_against_platform(const Scenario& s) { check_against_platform(s, s.root()); }

namespace {

// An ONNX model, its dynamic batch bound to the largest per-GPU batch (costs are per sample, so
// only shapes that depend on it could differ), its sequence and image axes to the scenario's sizes.
workloads::Workload load_scenario_onnx(const Scenario& scenario) {
  const WorkloadConfig& config = scenario.workload;
  const JsonNode workload = scenario.root().at("workload");
  if (!std::filesystem::exists(config.model_or_file))
    throw workload.at("onnx").error("cannot open ONNX model '" + config.model_or_file + "'");
  workloads::OnnxBindings bindings;
  bindings.batch = static_cast<std::int64_t>(scenario.batch_of(0));
  bindings.sequence_length = config.input.sequence_length;
  bindings.image_size = config.input.image_size;
  bindings.dims = config.onnx_dims;
  try {
    return workloads::load_onnx_workload(config.model_or_file, bindings);
  } catch (const InputError& e) {
    if (e.source() != "model") throw;  // inside the file: names the file and the node
    const auto key = config.input.image_size && !config.input.sequence_length ? workload.at("image_size")
                     : config.input.sequence_length                           ? workload.at("sequence_length")
                                                                              : workload.at("onnx");
    throw key.error(e.detail());
  }
}

}  // namespace

workloads::Workload load_scenario_workload(const Scenario& scenario) {
  if (scenario.workload.onnx) return load_scenario_onnx(scenario);
  const std::string& what = scenario.workload.model_or_file;
  workloads::Workload plain;
  try {
    plain = workloads::load_workload(what);
  } catch (const InputError& e) {
    // Errors inside an existing layer-graph file already name it; a bad name or path is the
    // scenario's fault and is reported there.
    if (std::filesystem::exists(what)) throw;
    const JsonNode workload = scenario.root().at("workload");
    const auto key = workload.find("model") ? workload.at("model") : workload.at("file");
    throw key.error(workload.find("file") ? "cannot open layer-graph file '" + what + "'" : e.detail());
  }
  const workloads::InputSize& input = scenario.workload.input;
  if (!input.any()) return plain;
  try {
    return workloads::load_workload(what, input);
  } catch (const InputError& e) {
    // The model loads as it is: what fails is the new size, reported where the scenario gives it.
    const JsonNode workload = scenario.root().at("workload");
    const auto key = input.image_size && !input.sequence_length ? workload.at("image_size")
                     : input.sequence_length && !input.image_size ? workload.at("sequence_length")
                                                                  : workload;
    throw key.error(e.source() == "model" ? e.detail() : "the model cannot take this size: " + std::string(e.what()));
  }
}

}  // namespace trainsim::plan
