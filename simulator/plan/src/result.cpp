#include "trainsim/plan/result.hpp"

#include "trainsim/core/csv.hpp"
#include "trainsim/core/enum_names.hpp"

namespace trainsim::plan {

namespace {

// A CSV cell from a JSON value: strings as they are, numbers and booleans as JSON writes them.
std::string cell(const Json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump(); }

double optional_number(const JsonNode& node, std::string_view key, double fallback) {
  const auto v = node.find(key);
  return v ? v->as_number() : fallback;
}

}  // namespace

namespace {
constexpr EnumNames<BoundKind, 7> kBoundKinds{{{{BoundKind::unknown, "unknown"},
                                                {BoundKind::compute, "compute"},
                                                {BoundKind::stragglers, "stragglers"},
                                                {BoundKind::latency, "latency"},
                                                {BoundKind::link, "link"},
                                                {BoundKind::incast, "incast"},
                                                {BoundKind::input, "input"}}}};
}  // namespace

std::string_view to_string(BoundKind kind) {
  return kBoundKinds.name(kind);
}

namespace {

BoundKind read_bound_kind(const JsonNode& node) {
  return kBoundKinds.read(node);
}

}  // namespace

Json MemoryUsage::to_json() const {
  Json j{{"weights", weights},         {"gradients", gradients}, {"optimizer_state", optimizer_state},
         {"activations", activations}, {"framework", framework}, {"total", total},
         {"required", required},       {"available", available}};
  if (gathered_parameters != 0) j["gathered_parameters"] = gathered_parameters;
  if (recompute_activations != 0) j["recompute_activations"] = recompute_activations;
  if (largest_batch_per_gpu >= 0) j["largest_batch_per_gpu"] = largest_batch_per_gpu;
  return j;
}

Json LargestBatch::to_json() const {
  return Json{{"without_checkpointing", without_checkpointing},
              {"with_checkpointing", with_checkpointing},
              {"checkpoint_every_layers", checkpoint_every_layers}};
}

LargestBatch LargestBatch::from_json(const JsonNode& node) {
  node.require_object();
  node.allow_only({"without_checkpointing", "with_checkpointing", "checkpoint_every_layers"});
  LargestBatch b;
  b.without_checkpointing = node.at("without_checkpointing").int_at_least(0);
  b.with_checkpointing = node.at("with_checkpointing").int_at_least(0);
  b.checkpoint_every_layers = node.at("checkpoint_every_layers").int_in(1, 1'000'000);
  return b;
}

Json ModelVariables::to_json() const {
  Json j{{"gpus_per_node", gpus_per_node},
         {"batch_per_gpu", batch_per_gpu},
         {"flops_per_sample", flops_per_sample},
         {"model_bytes", model_bytes},
         {"params", params},
         {"precision", precision},
         {"intra_node_bandwidth_GBps", intra_node_bandwidth_GBps},
         {"intra_node_latency_us", intra_node_latency_us},
         {"network_bandwidth_Gbps", network_bandwidth_Gbps},
         {"network_latency_us", network_latency_us},
         {"nics_per_node", nics_per_node},
         {"servers", servers},
         {"single_gpu_time_s", single_gpu_time_s},
         {"dataset_samples", dataset_samples}};
  if (accumulation_steps > 1) j["accumulation_steps"] = accumulation_steps;
  return j;
}

ModelVariables ModelVariables::from_json(const JsonNode& node) {
  node.require_object();
  ModelVariables v;
  v.gpus_per_node = node.at("gpus_per_node").int_in(0, std::numeric_limits<int>::max());
  v.batch_per_gpu = node.at("batch_per_gpu").as_number();
  v.flops_per_sample = node.at("flops_per_sample").as_number();
  v.model_bytes = node.at("model_bytes").as_number();
  v.params = node.at("params").int_at_least(0);
  v.precision = node.at("precision").as_string();
  v.intra_node_bandwidth_GBps = node.at("intra_node_bandwidth_GBps").as_number();
  v.intra_node_latency_us = node.at("intra_node_latency_us").as_number();
  v.network_bandwidth_Gbps = node.at("network_bandwidth_Gbps").as_number();
  v.network_latency_us = node.at("network_latency_us").as_number();
  v.nics_per_node = node.at("nics_per_node").int_in(0, std::numeric_limits<int>::max());
  v.servers = node.at("servers").int_in(0, std::numeric_limits<int>::max());
  v.single_gpu_time_s = node.at("single_gpu_time_s").as_number();
  v.dataset_samples = node.at("dataset_samples").as_number();
  if (auto a = node.find("accumulation_steps")) v.accumulation_steps = a->int_in(1, 1'000'000);
  return v;
}

const ServerLoad* IterationResult::most_loaded_server() const {
  const ServerLoad* top = nullptr;
  for (const auto& sv : servers)
    if (!top || sv.bytes > top->bytes) top = &sv;
  return top;
}

Json CpuReport::to_json() const {
  Json op_list = Json::array();
  for (const auto& op : ops)
    op_list.push_back(Json{{"name", op.name}, {"threads", op.threads}, {"start_s", op.start_s}, {"end_s", op.end_s}});
  Json j;
  j["cpu"] = cpu;
  j["sockets"] = sockets;
  j["physical_cores"] = physical_cores;
  j["logical_cores"] = logical_cores;
  j["inter_op_pools"] = inter_op_pools;
  j["intra_op_threads"] = intra_op_threads;
  j["mode"] = mode;
  j["average_width"] = average_width;
  j["core_utilisation"] = core_utilisation;
  j["mean_concurrent_ops"] = mean_concurrent_ops;
  j["mean_threads_per_op"] = mean_threads_per_op;
  j["memory_busy_fraction"] = memory_busy_fraction;
  j["ops"] = op_list;
  return j;
}

CpuReport CpuReport::from_json(const JsonNode& node) {
  node.allow_only({"cpu", "sockets", "physical_cores", "logical_cores", "inter_op_pools", "intra_op_threads", "mode", "average_width",
                   "core_utilisation", "mean_concurrent_ops", "mean_threads_per_op", "memory_busy_fraction", "ops"});
  CpuReport r;
  r.cpu = node.at("cpu").as_string();
  r.sockets = node.at("sockets").int_in(1, std::numeric_limits<int>::max());
  r.physical_cores = node.at("physical_cores").int_in(1, std::numeric_limits<int>::max());
  r.logical_cores = node.at("logical_cores").int_in(1, std::numeric_limits<int>::max());
  r.inter_op_pools = node.at("inter_op_pools").int_in(1, std::numeric_limits<int>::max());
  r.intra_op_threads = node.at("intra_op_threads").int_in(1, std::numeric_limits<int>::max());
  r.mode = node.at("mode").one_of({"training", "inference"});
  r.average_width = node.at("average_width").as_number();
  r.core_utilisation = node.at("core_utilisation").as_number();
  r.mean_concurrent_ops = node.at("mean_concurrent_ops").as_number();
  r.mean_threads_per_op = node.at("mean_threads_per_op").as_number();
  r.memory_busy_fraction = node.at("memory_busy_fraction").as_number();
  for (const auto& op : node.at("ops").elements()) {
    op.allow_only({"name", "threads", "start_s", "end_s"});
    r.ops.push_back(CpuOpUse{op.at("name").as_string(), op.at("threads").int_in(1, std::numeric_limits<int>::max()), op.at("start_s").as_number(),
                             op.at("end_s").as_number()});
  }
  return r;
}

Json IterationResult::to_json() const {
  Json j;
  j["name"] = name;
  j["point"] = point;
  j["gpus"] = gpus;
  j["nodes"] = nodes;
  j["global_batch"] = global_batch;
  j["iteration_time_s"] = iteration_time_s;
  j["samples_per_s"] = samples_per_s;
  j["scaling_efficiency"] = scaling_efficiency;
  j["single_gpu_samples_per_s"] = single_gpu_samples_per_s;
  j["breakdown_s"] = Json{{"compute", breakdown.compute_s},
                          {"communication", breakdown.communication_s},
                          {"exposed_communication", breakdown.exposed_communication_s},
                          {"idle", breakdown.idle_s},
                          {"comm_kernel_slowdown", breakdown.comm_kernel_slowdown_s}};
  j["network_bytes"] = network_bytes;
  Json links = Json::array();
  for (const auto& l : busiest_links)
    links.push_back(Json{{"name", l.name},
                         {"class", l.link_class},
                         {"bytes", l.bytes},
                         {"busy_fraction", l.busy_fraction},
                         {"limit_share", l.limit_share}});
  j["busiest_links"] = links;
  j["bound"] = Json{{"kind", to_string(bound.kind)},    {"resource", bound.resource}, {"class", bound.link_class},
                    {"connections", bound.connections}, {"share", bound.share},       {"sentence", bound.sentence}};
  Json w = Json::array();
  for (const auto& x : warnings) w.push_back(Json{{"kind", x.kind}, {"message", x.message}});
  j["warnings"] = w;
  j["memory_per_gpu_bytes"] = memory.to_json();
  j["fits_in_memory"] = memory.fits();
  if (largest_batch) j["largest_batch"] = largest_batch->to_json();
  j["strategy"] = strategy;
  if (transport != "gpu") j["transport"] = transport;
  if (representation != "auto") j["representation"] = representation;
  j["network_model"] = network_model;
  j["calibration_factor"] = calibration_factor;
  Json b = Json::array();
  for (const auto& t : buckets) {
    Json one{{"bytes", t.bytes}, {"ready_s", t.ready_s}, {"start_s", t.start_s}, {"end_s", t.end_s}};
    if (t.has_read()) {
      one["read_start_s"] = t.read_start_s;
      one["read_end_s"] = t.read_end_s;
    }
    b.push_back(std::move(one));
  }
  j["buckets"] = b;
  if (!servers.empty()) {  // all-reduce results keep their keys
    double total = 0;
    Json list = Json::array();
    for (const auto& sv : servers) {
      Json one{{"id", sv.id}, {"host", sv.host}};
      one["node"] = sv.node >= 0 ? Json(sv.node) : Json(nullptr);
      one["bytes"] = sv.bytes;
      list.push_back(one);
      total += sv.bytes;
    }
    j["placement"] = variable_placement;
    j["servers"] = list;
    const ServerLoad* top = most_loaded_server();
    j["most_loaded_server"] = Json{{"id", top->id}, {"bytes", top->bytes}, {"share", total > 0 ? top->bytes / total : 0.0}};
  }
  j["variables"] = variables.to_json();
  j["epoch_time_s"] = epoch_time_s();
  if (cpu) j["cpu"] = cpu->to_json();
  if (input_pipeline) j["input_pipeline"] = input_pipeline->to_json();
  if (const auto range = samples_per_s_range()) {
    j["samples_per_s_range"] = Json::array({range->first, range->second});
    j["iteration_time_s_range"] = Json::array({band->iteration_time_low_s, band->iteration_time_high_s});
    j["band"] = Json{{"widest", band->widest}, {"sentence", band->sentence}};
  }
  j["sim_wall_s"] = sim_wall_s;
  return j;
}

IterationResult IterationResult::from_json(const JsonNode& node) {
  node.require_object();
  IterationResult r;
  if (auto v = node.find("name")) r.name = v->as_string();
  if (auto v = node.find("point")) {
    v->require_object();
    r.point = v->raw();
  }
  r.gpus = node.at("gpus").int_in(1, std::numeric_limits<int>::max());
  r.nodes = node.find("nodes") ? node.at("nodes").int_in(1, std::numeric_limits<int>::max()) : 0;
  r.global_batch = node.at("global_batch").as_number();
  r.iteration_time_s = node.at("iteration_time_s").as_number();
  r.samples_per_s = node.at("samples_per_s").as_number();
  r.scaling_efficiency = node.at("scaling_efficiency").as_number();
  r.single_gpu_samples_per_s = optional_number(node, "single_gpu_samples_per_s", 0);
  const JsonNode b = node.at("breakdown_s");
  r.breakdown.compute_s = b.at("compute").as_number();
  r.breakdown.communication_s = b.at("communication").as_number();
  r.breakdown.exposed_communication_s = b.at("exposed_communication").as_number();
  r.breakdown.idle_s = b.at("idle").as_number();
  r.breakdown.comm_kernel_slowdown_s = optional_number(b, "comm_kernel_slowdown", 0);
  r.network_bytes = node.at("network_bytes").as_number();
  if (auto links = node.find("busiest_links"))
    for (const auto& l : links->elements()) {
      l.allow_only({"name", "class", "bytes", "busy_fraction", "limit_share"});
      LinkLoad load;
      load.name = l.at("name").as_string();
      if (auto c = l.find("class")) load.link_class = c->as_string();
      load.bytes = l.at("bytes").as_number();
      load.busy_fraction = l.at("busy_fraction").as_number();
      load.limit_share = optional_number(l, "limit_share", 0);
      r.busiest_links.push_back(std::move(load));
    }
  if (auto bound = node.find("bound")) {
    bound->allow_only({"kind", "resource", "class", "connections", "share", "sentence"});
    r.bound.kind = read_bound_kind(bound->at("kind"));
    r.bound.resource = bound->at("resource").as_string();
    r.bound.link_class = bound->at("class").as_string();
    r.bound.connections = bound->at("connections").int_in(0, std::numeric_limits<int>::max());
    r.bound.share = bound->at("share").as_number();
    r.bound.sentence = bound->at("sentence").as_string();
  }
  if (auto w = node.find("warnings"))
    for (const auto& x : w->elements()) {
      x.allow_only({"kind", "message"});
      r.warnings.push_back(Warning{x.at("kind").as_string(), x.at("message").as_string()});
    }
  const JsonNode m = node.at("memory_per_gpu_bytes");
  r.memory.total = m.at("total").as_number();
  r.memory.required = optional_number(m, "required", r.memory.total);  // older lines: what fits was the total
  r.memory.weights = optional_number(m, "weights", 0);
  r.memory.gradients = optional_number(m, "gradients", 0);
  r.memory.optimizer_state = optional_number(m, "optimizer_state", 0);
  r.memory.activations = optional_number(m, "activations", 0);
  r.memory.framework = optional_number(m, "framework", 0);
  r.memory.gathered_parameters = optional_number(m, "gathered_parameters", 0);
  r.memory.recompute_activations = optional_number(m, "recompute_activations", 0);
  if (auto v = m.find("largest_batch_per_gpu")) r.memory.largest_batch_per_gpu = v->int_at_least(0);
  // Older lines carry fits_in_memory without the GPU's memory: keep their verdict.
  r.memory.available = m.find("available") ? m.at("available").as_number() : (node.at("fits_in_memory").as_bool() ? r.memory.total : 0);
  if (node.at("fits_in_memory").as_bool() != r.memory.fits())
    throw node.at("fits_in_memory").error("disagrees with memory_per_gpu_bytes (required vs available)");
  if (auto v = node.find("largest_batch")) r.largest_batch = LargestBatch::from_json(*v);
  if (auto v = node.find("strategy")) r.strategy = v->as_string();
  if (auto v = node.find("transport")) r.transport = v->one_of({"gpu", "host"});
  if (auto v = node.find("representation")) r.representation = v->as_string();
  if (auto v = node.find("network_model")) r.network_model = v->as_string();
  r.calibration_factor = optional_number(node, "calibration_factor", 1);
  if (auto buckets = node.find("buckets"))
    for (const auto& t : buckets->elements()) {
      BucketTiming timing{t.at("bytes").as_number(), t.at("ready_s").as_number(), t.at("start_s").as_number(),
                          t.at("end_s").as_number()};
      timing.read_start_s = optional_number(t, "read_start_s", 0);
      timing.read_end_s = optional_number(t, "read_end_s", 0);
      r.buckets.push_back(timing);
    }
  if (auto v = node.find("placement")) r.variable_placement = v->as_string();
  if (auto list = node.find("servers"))
    for (const auto& x : list->elements()) {
      x.allow_only({"id", "host", "node", "bytes"});
      ServerLoad sv;
      sv.id = x.at("id").int_in(0, std::numeric_limits<int>::max());
      sv.host = x.at("host").as_string();
      sv.node = x.at("node").is_null() ? -1 : x.at("node").int_in(0, std::numeric_limits<int>::max());
      sv.bytes = x.at("bytes").as_number();
      r.servers.push_back(sv);
    }
  // Lines written before the model's variables were recorded read back without them.
  if (auto v = node.find("variables")) r.variables = ModelVariables::from_json(*v);
  if (auto v = node.find("cpu")) r.cpu = CpuReport::from_json(*v);
  if (auto v = node.find("input_pipeline")) r.input_pipeline = InputPipelineTiming::from_json(*v);
  if (auto v = node.find("iteration_time_s_range")) {
    v->require_array();
    if (v->size() != 2) throw v->error("must be [low, high]");
    ResultBand band;
    band.iteration_time_low_s = v->element(0).positive_number();
    band.iteration_time_high_s = v->element(1).positive_number();
    if (auto band_node = node.find("band")) {
      band_node->allow_only({"widest", "sentence"});
      band.widest = band_node->at("widest").as_string();
      band.sentence = band_node->at("sentence").as_string();
    }
    r.band = band;
  }
  r.sim_wall_s = node.at("sim_wall_s").as_number();
  return r;
}

Json ResultRecord::to_json() const {
  Json line = Json{{"index", index}, {"scenario_key", scenario_key}};
  if (!result) {
    line["name"] = name;
    line["point"] = point;
    line["error"] = error;
    return line;
  }
  Json body = result->to_json();
  body["point"] = point;
  for (auto it = body.begin(); it != body.end(); ++it) line[it.key()] = it.value();
  return line;
}

ResultRecord ResultRecord::from_json(const JsonNode& node) {
  node.require_object();
  ResultRecord r;
  r.index = static_cast<std::size_t>(node.at("index").int_at_least(0));
  r.scenario_key = node.at("scenario_key").as_string();
  if (auto v = node.find("name")) r.name = v->as_string();
  const JsonNode point = node.at("point");
  point.require_object();
  r.point = point.raw();
  if (auto e = node.find("error")) {
    r.error = e->as_string();
    return r;
  }
  r.result = IterationResult::from_json(node);
  return r;
}

const std::vector<std::string>& result_csv_columns() {
  static const std::vector<std::string> columns{
      "gpus", "nodes", "global_batch", "iteration_time_s", "samples_per_s", "scaling_efficiency", "network_bytes",
      "strategy", "network_model", "fits_in_memory", "compute_s", "communication_s", "exposed_communication_s",
      "idle_s", "memory_per_gpu_bytes",
      // Kavarakuntla et al.'s variables (what the built-in fitting models read), then the epoch.
      "gpus_per_node", "batch_per_gpu", "flops_per_sample", "model_bytes", "params", "precision",
      "intra_node_bandwidth_GBps", "intra_node_latency_us", "network_bandwidth_Gbps", "network_latency_us",
      "nics_per_node", "servers", "single_gpu_time_s", "dataset_samples", "epoch_time_s",
      // The band over the software stack's ranges (empty without one).
      "samples_per_s_low", "samples_per_s_high", "sim_wall_s", "error"};
  return columns;
}

namespace {
void append_cell(std::string& row, const std::string& text) {
  row += ',';
  row += csv_escape(text);
}
}  // namespace

std::string result_csv_header(const std::vector<std::string>& axes) {
  std::string out = "index";
  for (const auto& a : axes) append_cell(out, a);
  for (const auto& c : result_csv_columns()) append_cell(out, c);
  return out;
}

std::string result_csv_row(const ResultRecord& record, const std::vector<std::string>& axes) {
  std::string out = std::to_string(record.index);
  for (const auto& a : axes) append_cell(out, record.point.contains(a) ? cell(record.point[a]) : "");
  if (!record.result) {
    out += std::string(result_csv_columns().size(), ',');
    out += csv_escape(record.error);
    return out;
  }
  const IterationResult& r = *record.result;
  const auto range = r.samples_per_s_range();
  const Json cells[] = {r.gpus,
                        r.nodes,
                        r.global_batch,
                        r.iteration_time_s,
                        r.samples_per_s,
                        r.scaling_efficiency,
                        r.network_bytes,
                        r.strategy,
                        r.network_model,
                        r.memory.fits(),
                        r.breakdown.compute_s,
                        r.breakdown.communication_s,
                        r.breakdown.exposed_communication_s,
                        r.breakdown.idle_s,
                        r.memory.total,
                        r.variables.gpus_per_node,
                        r.variables.batch_per_gpu,
                        r.variables.flops_per_sample,
                        r.variables.model_bytes,
                        r.variables.params,
                        r.variables.precision,
                        r.variables.intra_node_bandwidth_GBps,
                        r.variables.intra_node_latency_us,
                        r.variables.network_bandwidth_Gbps,
                        r.variables.network_latency_us,
                        r.variables.nics_per_node,
                        r.variables.servers,
                        r.variables.single_gpu_time_s,
                        r.variables.dataset_samples,
                        r.epoch_time_s(),
                        range ? Json(range->first) : Json(""),
                        range ? Json(range->second) : Json(""),
                        r.sim_wall_s,
                        ""};
  for (const Json& c : cells) append_cell(out, cell(c));
  return out;
}

}  // namespace trainsim::plan
