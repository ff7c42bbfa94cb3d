// The training plan as JSON and back: TrainingPlan::to_json (`simulate --dump-plan`) and
// TrainingPlan::from_json (`simulate --plan`).
//
// A dumped plan must replay on its own and to the last bit, so the plan carries its platform in
// an exact form of its own ("platform" below): every field of the PlatformSpec in base units
// (bytes/s, seconds, FLOP/s), written as the doubles they are. The scenario format's platform
// (platforms::to_json, GB/s, Gbit/s and µs rounded to 12 digits, the GPU by catalog name) would
// not give back the same doubles, nor a GPU whose figures a scenario overrode.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/training_plan.hpp"

namespace trainsim::plan {
namespace {

using platforms::PlatformSpec;

// One enum value by its name (to_string of each of `values`); the error suggests the nearest.
template <class E>
E read_enum(const JsonNode& node, std::initializer_list<E> values) {
  std::vector<std::string> names;
  for (E v : values) names.emplace_back(to_string(v));
  const std::string name = node.one_of(names);
  for (E v : values)
    if (std::string(to_string(v)) == name) return v;
  return *values.begin();
}

int read_int(const JsonNode& node, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = node.as_int();
  if (v < lo || v > hi) throw node.error(fmt::format("must be in {} .. {}, got {}", lo, hi, v));
  return static_cast<int>(v);
}

double fraction(const JsonNode& node) {
  const double v = node.positive_number();
  if (v > 1) throw node.error(fmt::format("must be in (0, 1], got {}", v));
  return v;
}

double bandwidth(const JsonNode& node) { return node.number_in(platforms::kMinBandwidth_Bps, platforms::kMaxBandwidth_Bps); }
double latency(const JsonNode& node) { return node.number_in(0, platforms::kMaxLatency_s); }

Json device_json(const platforms::GpuSpec& d) {
  return Json{{"name", d.name},
              {"fp32_flops", d.fp32_flops},
              {"tf32_flops", d.tf32_flops},
              {"fp16_flops", d.fp16_flops},
              {"bf16_flops", d.bf16_flops},
              {"memory_bytes", d.memory_bytes},
              {"memory_bandwidth_Bps", d.memory_bandwidth_Bps},
              {"sm_count", d.sm_count},
              {"is_cpu", d.is_cpu},
              {"source", d.source}};
}

platforms::GpuSpec read_device(const JsonNode& node) {
  node.require_object();
  node.allow_only({"name", "fp32_flops", "tf32_flops", "fp16_flops", "bf16_flops", "memory_bytes", "memory_bandwidth_Bps", "sm_count",
                   "is_cpu", "source"});
  platforms::GpuSpec d;
  d.name = node.at("name").as_string();
  d.fp32_flops = node.at("fp32_flops").number_in(platforms::kMinSpeed_flops, platforms::kMaxSpeed_flops);
  d.tf32_flops = node.at("tf32_flops").number_in(0, platforms::kMaxSpeed_flops);
  d.fp16_flops = node.at("fp16_flops").number_in(0, platforms::kMaxSpeed_flops);
  d.bf16_flops = node.at("bf16_flops").number_in(0, platforms::kMaxSpeed_flops);
  d.memory_bytes = node.at("memory_bytes").non_negative_number();
  d.memory_bandwidth_Bps = node.at("memory_bandwidth_Bps").non_negative_number();
  d.sm_count = read_int(node.at("sm_count"), 0, 1'000'000);
  d.is_cpu = node.at("is_cpu").as_bool();
  d.source = node.at("source").as_string();
  return d;
}

// An XML platform's path as a reader elsewhere can resolve it: absolute.
std::string portable_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

Json platform_json(const PlatformSpec& p) {
  Json j;
  j["name"] = p.name;
  j["source"] = p.source;
  if (p.simgrid_xml) j["simgrid_xml"] = portable_path(*p.simgrid_xml);
  j["gpu"] = device_json(p.gpu);
  j["cpu"] = device_json(p.cpu);
  j["nodes"] = p.nodes;
  j["gpus_per_node"] = p.gpus_per_node;
  const auto& in = p.intra_node;
  j["intra_node"] = Json{{"kind", platforms::to_string(in.kind)}, {"bandwidth_Bps", in.bandwidth_Bps}, {"latency_s", in.latency_s},
                         {"efficiency", in.efficiency}, {"pcie_bandwidth_Bps", in.pcie_bandwidth_Bps}, {"pcie_switches", in.pcie_switches}};
  j["gpu_board"] = Json{{"gpus", p.gpu_board.gpus}, {"shared_speed", p.gpu_board.shared_speed}};
  const auto& n = p.network;
  Json net{{"topology", platforms::to_string(n.topology)}, {"bandwidth_Bps", n.bandwidth_Bps}, {"latency_s", n.latency_s},
           {"nics_per_node", n.nics_per_node}, {"nics_on_gpus", n.nics_on_gpus}, {"sharp", n.sharp},
           {"model", platforms::to_string(n.model)}};
  if (n.model == platforms::NetworkModel::factors)
    net["factors"] = Json{{"latency_factor", n.factors.latency_factor}, {"bandwidth_factor", n.factors.bandwidth_factor},
                          {"tcp_gamma_bytes", n.factors.tcp_gamma_bytes}, {"crosstraffic", n.factors.crosstraffic}};
  if (n.topology == platforms::TopologyKind::fat_tree)
    net["fat_tree"] = Json{{"down", n.fat_tree.down}, {"oversubscription", n.fat_tree.oversubscription}};
  if (n.topology == platforms::TopologyKind::torus) net["torus_dimensions"] = n.torus_dimensions;
  if (n.topology == platforms::TopologyKind::dragonfly) {
    const auto& d = n.dragonfly;
    net["dragonfly"] = Json{{"groups", d.groups},   {"group_links", d.group_links},   {"chassis", d.chassis},
                            {"chassis_links", d.chassis_links}, {"routers", d.routers}, {"router_links", d.router_links},
                            {"nodes_per_router", d.nodes_per_router}};
  }
  j["network"] = net;
  if (p.price_per_gpu_hour) j["price_per_gpu_hour"] = *p.price_per_gpu_hour;
  return j;
}

std::vector<unsigned> read_counts(const JsonNode& node) {
  node.require_array();
  std::vector<unsigned> out;
  for (const auto& e : node.elements()) out.push_back(static_cast<unsigned>(read_int(e, 1, platforms::kMaxGpus)));
  return out;
}

// The product of a topology shape must be the node count: the builder lays the nodes out in it.
void check_shape(const JsonNode& node, std::int64_t product, int nodes) {
  if (product != nodes)
    throw node.error(fmt::format("describes {} nodes, but the platform has {} (/platform/nodes)", product, nodes));
}

platforms::NetworkSpec read_network(const JsonNode& node, int nodes) {
  using platforms::TopologyKind;
  node.require_object();
  node.allow_only({"topology", "bandwidth_Bps", "latency_s", "nics_per_node", "nics_on_gpus", "sharp", "model", "factors", "fat_tree",
                   "torus_dimensions", "dragonfly"});
  platforms::NetworkSpec n;
  n.topology = read_enum(node.at("topology"), {TopologyKind::single_switch, TopologyKind::fat_tree, TopologyKind::torus, TopologyKind::dragonfly});
  n.bandwidth_Bps = bandwidth(node.at("bandwidth_Bps"));
  n.latency_s = latency(node.at("latency_s"));
  n.nics_per_node = read_int(node.at("nics_per_node"), 1, 1024);
  n.nics_on_gpus = node.at("nics_on_gpus").as_bool();
  n.sharp = node.at("sharp").as_bool();
  using platforms::NetworkModel;
  n.model = read_enum(node.at("model"), {NetworkModel::ideal, NetworkModel::tcp, NetworkModel::factors});
  const auto factors = node.find("factors");
  if (n.model == NetworkModel::factors) {
    const JsonNode f = node.at("factors");
    f.require_object();
    f.allow_only({"latency_factor", "bandwidth_factor", "tcp_gamma_bytes", "crosstraffic"});
    n.factors.latency_factor = f.at("latency_factor").positive_number();
    n.factors.bandwidth_factor = fraction(f.at("bandwidth_factor"));
    n.factors.tcp_gamma_bytes = f.at("tcp_gamma_bytes").non_negative_number();
    n.factors.crosstraffic = f.at("crosstraffic").as_bool();
  } else if (factors) {
    throw factors->error("applies to model \"factors\" only");
  }
  auto only_for = [&node](const char* key, TopologyKind kind, TopologyKind actual) {
    if (actual != kind && node.find(key)) throw node.at(key).error("applies to topology \"" + platforms::to_string(kind) + "\" only");
  };
  only_for("fat_tree", TopologyKind::fat_tree, n.topology);
  only_for("torus_dimensions", TopologyKind::torus, n.topology);
  only_for("dragonfly", TopologyKind::dragonfly, n.topology);
  if (n.topology == TopologyKind::fat_tree) {
    const JsonNode f = node.at("fat_tree");
    f.require_object();
    f.allow_only({"down", "oversubscription"});
    n.fat_tree.down = read_counts(f.at("down"));
    n.fat_tree.oversubscription = static_cast<unsigned>(read_int(f.at("oversubscription"), 1, 1024));
    std::int64_t product = 1;
    for (unsigned d : n.fat_tree.down) product = std::min<std::int64_t>(product * d, platforms::kMaxGpus + 1);
    check_shape(f.at("down"), product, nodes);
    if (n.fat_tree.down.empty() || n.fat_tree.down.front() % n.fat_tree.oversubscription != 0)
      throw f.at("oversubscription").error("must divide the first level's down count");
  }
  if (n.topology == TopologyKind::torus) {
    n.torus_dimensions = read_counts(node.at("torus_dimensions"));
    std::int64_t product = 1;
    for (unsigned d : n.torus_dimensions) product = std::min<std::int64_t>(product * d, platforms::kMaxGpus + 1);
    check_shape(node.at("torus_dimensions"), product, nodes);
  }
  if (n.topology == TopologyKind::dragonfly) {
    const JsonNode d = node.at("dragonfly");
    d.require_object();
    d.allow_only({"groups", "group_links", "chassis", "chassis_links", "routers", "router_links", "nodes_per_router"});
    auto count = [&d](const char* key) { return static_cast<unsigned>(read_int(d.at(key), 1, platforms::kMaxGpus)); };
    auto& s = n.dragonfly;
    s.groups = count("groups");
    s.group_links = count("group_links");
    s.chassis = count("chassis");
    s.chassis_links = count("chassis_links");
    s.routers = count("routers");
    s.router_links = count("router_links");
    s.nodes_per_router = count("nodes_per_router");
    check_shape(d, std::int64_t(s.groups) * s.chassis * s.routers * s.nodes_per_router, nodes);
  }
  return n;
}

// The plan's platform: the exact form platform_json writes. A relative simgrid_xml path is
// resolved against the plan file's directory, as a scenario's `file` is against the scenario's.
PlatformSpec read_platform(const JsonNode& node) {
  node.require_object();
  node.allow_only({"name", "source", "simgrid_xml", "gpu", "cpu", "nodes", "gpus_per_node", "intra_node", "gpu_board", "network",
                   "price_per_gpu_hour"});
  PlatformSpec p;
  p.name = node.at("name").as_string();
  p.source = node.at("source").as_string();
  if (const auto xml = node.find("simgrid_xml")) {
    std::filesystem::path path = xml->as_string();
    if (path.is_relative()) path = std::filesystem::path(node.source()).parent_path() / path;
    if (!std::filesystem::is_regular_file(path)) throw xml->error("no such SimGrid XML platform file: " + path.string());
    p.simgrid_xml = path.string();
  }
  p.gpu = read_device(node.at("gpu"));
  p.cpu = read_device(node.at("cpu"));
  p.nodes = read_int(node.at("nodes"), 1, platforms::kMaxGpus);
  p.gpus_per_node = read_int(node.at("gpus_per_node"), 1, platforms::kMaxGpusPerNode);
  if (std::int64_t(p.nodes) * p.gpus_per_node > platforms::kMaxGpus)
    throw node.at("nodes").error(fmt::format("{} nodes × {} GPUs is past the {} GPUs trainsim builds", p.nodes, p.gpus_per_node,
                                             platforms::kMaxGpus));
  const JsonNode in = node.at("intra_node");
  in.require_object();
  in.allow_only({"kind", "bandwidth_Bps", "latency_s", "efficiency", "pcie_bandwidth_Bps", "pcie_switches"});
  using platforms::IntraNodeKind;
  p.intra_node.kind = read_enum(in.at("kind"), {IntraNodeKind::pcie, IntraNodeKind::nvlink, IntraNodeKind::nvswitch});
  // A PCIe-only node has no fabric link: the scenario reader leaves its bandwidth 0.
  p.intra_node.bandwidth_Bps = p.intra_node.kind == IntraNodeKind::pcie ? in.at("bandwidth_Bps").non_negative_number()
                                                                        : bandwidth(in.at("bandwidth_Bps"));
  p.intra_node.latency_s = latency(in.at("latency_s"));
  p.intra_node.efficiency = fraction(in.at("efficiency"));
  p.intra_node.pcie_bandwidth_Bps = bandwidth(in.at("pcie_bandwidth_Bps"));
  p.intra_node.pcie_switches = read_int(in.at("pcie_switches"), 0, p.gpus_per_node);
  const JsonNode board = node.at("gpu_board");
  board.require_object();
  board.allow_only({"gpus", "shared_speed"});
  p.gpu_board.gpus = read_int(board.at("gpus"), 1, platforms::kMaxGpusPerNode);
  p.gpu_board.shared_speed = fraction(board.at("shared_speed"));
  p.network = read_network(node.at("network"), p.nodes);
  if (const auto price = node.find("price_per_gpu_hour")) p.price_per_gpu_hour = price->non_negative_number();
  return p;
}

Json task_json(const PlannedTask& t) { return Json{{"layer", t.layer}, {"seconds", t.seconds}}; }

PlannedTask read_task(const JsonNode& node) {
  node.require_object();
  node.allow_only({"layer", "seconds"});
  return PlannedTask{node.at("layer").as_string(), node.at("seconds").non_negative_number()};
}

std::vector<PlannedTask> read_tasks(const JsonNode& node) {
  node.require_array();
  std::vector<PlannedTask> out;
  for (const auto& e : node.elements()) out.push_back(read_task(e));
  return out;
}

std::vector<double> read_numbers(const JsonNode& node) {
  node.require_array();
  std::vector<double> out;
  for (const auto& e : node.elements()) out.push_back(e.non_negative_number());
  return out;
}

// The engine runs segments_s; the tasks only draw the trace. An edit of one without the other
// would run one iteration and draw another, so they must agree (to rounding).
void check_segments(const ComputeProfile& p, const std::vector<PlannedBucket>& buckets, const JsonNode& node) {
  const JsonNode segments = node.at("segments_s");
  if (p.segments_s.size() != buckets.size() + 2)
    throw segments.error(fmt::format("has {} entries; a plan of {} buckets has {} (forward, one per bucket, the rest of backward)",
                                     p.segments_s.size(), buckets.size(), buckets.size() + 2));
  std::vector<double> sums(p.segments_s.size(), 0.0);
  sums[0] = p.accumulation_s;
  for (const auto& t : p.forward) sums[0] += t.seconds;
  std::size_t segment = 1;
  for (std::size_t i = 0; i < p.backward.size(); ++i) {
    sums[segment] += p.backward[i].seconds;
    while (segment <= buckets.size() && buckets[segment - 1].ready_after == i) ++segment;
  }
  for (std::size_t i = 0; i < sums.size(); ++i)
    if (std::abs(sums[i] - p.segments_s[i]) > 1e-9 * std::max({std::abs(sums[i]), std::abs(p.segments_s[i]), 1e-12}))
      throw segments.element(i).error(fmt::format("is {:.17g} s but its tasks sum to {:.17g} s: edit the tasks and segments_s together",
                                                  p.segments_s[i], sums[i]));
  if (const auto groups = node.find("forward_groups_s")) {
    double forward = 0, total = 0;
    for (const auto& t : p.forward) forward += t.seconds;
    for (double g : p.forward_groups_s) total += g;
    if (p.forward_groups_s.size() != buckets.size())
      throw groups->error(fmt::format("has {} entries; a plan of {} buckets has one layer group per bucket",
                                      p.forward_groups_s.size(), buckets.size()));
    if (std::abs(total - forward) > 1e-9 * std::max({forward, total, 1e-12}))
      throw groups->error(
          fmt::format("sums to {:.17g} s but the forward tasks to {:.17g} s: edit them together", total, forward));
  }
}

// ---- TrainingPlan::to_json, one writer per list of the plan ----

Json profile_json(const ComputeProfile& p) {
  Json fwd = Json::array(), bwd = Json::array();
  for (const auto& t : p.forward) fwd.push_back(task_json(t));
  for (const auto& t : p.backward) bwd.push_back(task_json(t));
  Json one{{"batch", p.batch},
           {"segments_s", p.segments_s},
           {"forward", fwd},
           {"backward", bwd},
           {"update", task_json(p.update)}};
  if (p.accumulation_s > 0) one["accumulation_s"] = p.accumulation_s;
  if (!p.forward_groups_s.empty()) one["forward_groups_s"] = p.forward_groups_s;
  return one;
}

// The buckets, each with the layer of the backward task it is ready after (of the first profile).
Json buckets_json(const TrainingPlan& plan) {
  Json out = Json::array();
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    const auto& bucket = plan.buckets[b];
    const std::string after =
        plan.profiles.empty() ? std::string() : plan.profiles.front().backward.at(bucket.ready_after).layer;
    out.push_back(Json{{"index", b},
                       {"bytes", bucket.bytes},
                       {"ready_after", bucket.ready_after},
                       {"ready_after_layer", after},
                       {"layers", bucket.layers}});
  }
  return out;
}

// The servers, each with what one worker pushes to it, what it receives and the variables it holds.
Json servers_json(const TrainingPlan& plan) {
  Json out = Json::array();
  const std::vector<double> received = plan.server_bytes();
  for (const auto& s : plan.servers) {
    double per_worker = 0;
    for (const auto& op : plan.ops)
      if (op.kind == CommKind::push) per_worker += op.bytes_per_server.at(static_cast<std::size_t>(s.id));
    Json one{{"id", s.id}, {"host", std::string(to_string(s.host))}, {"index", s.index}};
    one["node"] = s.node >= 0 ? Json(s.node) : Json(nullptr);
    one["push_bytes_per_worker"] = per_worker;
    one["bytes"] = received[static_cast<std::size_t>(s.id)];
    Json owned = Json::array();
    for (const auto& v : plan.placed_variables)
      if (v.server == s.id)
        owned.push_back(v.parts > 1 ? v.layer + " [" + std::to_string(v.part) + "/" + std::to_string(v.parts) + "]"
                                    : v.layer);
    one["variables"] = owned;
    out.push_back(one);
  }
  return out;
}

// The fields of an operation's kind (the ones from_json reads for it).
void write_op_fields(const CommOp& op, Json& o) {
  if (op.kind == CommKind::all_reduce) {
    o["algorithm"] = to_string(op.algorithm);
    if (op.transport == Transport::host) o["transport"] = "host";
    o["launch_s"] = op.launch_s;
    if (op.protocol) {
      o["protocol"] = to_string(*op.protocol);
      o["channels"] = op.channels;
      o["step_overhead_s"] = op.step_overhead_s;
      o["wire_factor"] = op.wire_factor;
      o["kernel_sms"] = op.kernel_sms;
      o["compute_share"] = op.compute_share;
    }
    if (op.stream_Bps > 0) o["stream_Bps"] = op.stream_Bps;
    if (op.reduce_Bps > 0) o["reduce_Bps"] = op.reduce_Bps;
    if (op.software_s > 0) o["software_s"] = op.software_s;
  } else if (op.kind == CommKind::push || op.kind == CommKind::pull) {
    o["bytes_per_server"] = op.bytes_per_server;
    if (!op.server_software_s.empty()) o["server_software_s"] = op.server_software_s;
    if (op.worker_software_s > 0) o["worker_software_s"] = op.worker_software_s;
    if (op.after_all_pushes) o["after_all_pushes"] = true;
    if (op.variable_barrier_s > 0) o["variable_barrier_s"] = op.variable_barrier_s;
  } else if (op.kind == CommKind::host_sum) {
    o["host_seconds"] = op.host_seconds;
  } else if (op.kind == CommKind::reduce_scatter || op.kind == CommKind::all_gather) {
    o["launch_s"] = op.launch_s;
    if (op.kernel_sms > 0) {
      o["kernel_sms"] = op.kernel_sms;
      o["compute_share"] = op.compute_share;
    }
    if (op.node_local) o["node_local"] = true;
    if (op.opens_gate >= 0) o["opens_gate"] = op.opens_gate;
  }
}

// One operation, with the bytes it moves per link class (null where there is no closed form).
Json op_json(const TrainingPlan& plan, const CommOp& op) {
  Json o{{"id", op.id},
         {"kind", std::string(to_string(op.kind))},
         {"bucket", op.bucket},
         {"trigger", std::string(to_string(op.trigger))}};
  o["after_op"] = op.after_op >= 0 ? Json(op.after_op) : Json(nullptr);
  if (op.endpoints == CommEndpoints::node_hosts)
    o["participants"] = Json{{"endpoints", "node_hosts"}, {"first_node", op.first_rank}, {"nodes", op.ranks}};
  else
    o["participants"] = Json{{"first_rank", op.first_rank}, {"ranks", op.ranks}};
  o["bytes"] = op.bytes;
  write_op_fields(op, o);
  if (op.trigger == CommTrigger::gate_passed) o["trigger_gate"] = op.trigger_gate;
  if (const auto bytes = plan.link_class_bytes(op))
    o["link_class_bytes"] = Json{{"intra_node", bytes->intra_node}, {"inter_node", bytes->inter_node}};
  else
    o["link_class_bytes"] = nullptr;
  return o;
}

// ---- TrainingPlan::from_json, one reader per section of the plan ----

// A document that is a training plan of this trainsim: not a CPU plan, not one without its
// platform, no unknown key.
void check_plan_document(const JsonNode& node) {
  node.require_object();
  // A CPU scenario's plan (cpu_threading.hpp, CpuPlan::from_json) is another document: say so rather than list its keys.
  if (node.has("physical_cores") && !node.has("gpu_plans")) throw node.error("is the plan of a CPU scenario, not a GPU training plan");
  if (node.has("gpu_plans") && !node.has("platform"))
    throw node.error("has no 'platform': it was dumped by a trainsim whose plans did not carry their platform; dump it again "
                     "(trainsim simulate SCENARIO --dump-plan FILE)");
  node.allow_only({"name",
                   "strategy",
                   "network_model",
                   "gpus",
                   "nodes",
                   "gpus_per_node",
                   "global_batch",
                   "overlap",
                   "representation",
                   "hd_order",
                   "reference_batch",
                   "single_gpu_iteration_s",
                   "calibration_factor",
                   "calibrated",
                   "scaling",
                   "bucket_bytes",
                   "gpu_sm_count",
                   "aggregate_flops_per_byte",
                   "memory_per_gpu_bytes",
                   "variables",
                   "platform",
                   "input_pipeline",
                   "nccl_intra_node_latency_s",
                   "profiles",
                   "gpu_plans",
                   "buckets",
                   "placement",
                   "server_throughput_Bps",
                   "worker_aggregation",
                   "transport",
                   "host_memory_bandwidth_Bps",
                   "straggler_s",
                   "barrier_s",
                   "servers",
                   "ops",
                   "largest_batch",
                   "accumulation_steps",
                   "zero_stage",
                   "hybrid_sharding",
                   "shard_group",
                   "checkpoint_every_layers"});
}

// The job: its name and strategy, the platform, and the GPUs, which are all of the platform's.
void read_job(const JsonNode& node, TrainingPlan& plan) {
  plan.name = node.at("name").as_string();
  plan.strategy = node.at("strategy").one_of({"ring_allreduce", "hierarchical_allreduce", "tree_allreduce", "halving_doubling",
                                              "parameter_server", "nccl_allreduce"});
  plan.platform = read_platform(node.at("platform"));
  const PlatformSpec& platform = plan.platform;
  plan.network_model = node.at("network_model").as_string();
  if (plan.network_model != platforms::to_string(platform.network.model))
    throw node.at("network_model").error("must be the platform's (/platform/network/model: \"" +
                                         platforms::to_string(platform.network.model) + "\")");
  plan.gpus = read_int(node.at("gpus"), 1, platforms::kMaxGpus);
  plan.nodes = read_int(node.at("nodes"), 1, platforms::kMaxGpus);
  plan.gpus_per_node = read_int(node.at("gpus_per_node"), 1, platforms::kMaxGpusPerNode);
  // The engine runs every GPU of the platform it builds (the scenario's job fills its platform).
  if (plan.nodes != platform.nodes) throw node.at("nodes").error(fmt::format("must be the platform's {} (/platform/nodes)", platform.nodes));
  if (plan.gpus_per_node != platform.gpus_per_node)
    throw node.at("gpus_per_node").error(fmt::format("must be the platform's {} (/platform/gpus_per_node)", platform.gpus_per_node));
  if (plan.gpus != platform.total_gpus())
    throw node.at("gpus").error(fmt::format("must be nodes × gpus_per_node = {}", platform.total_gpus()));
}

// The iteration's settings and the single-GPU figures the plan was made from.
void read_settings(const JsonNode& node, TrainingPlan& plan) {
  plan.global_batch = node.at("global_batch").positive_number();
  plan.overlap = node.at("overlap").as_bool();
  plan.representation = node.at("representation").as_string();
  const bool servers_plan = plan.strategy == "parameter_server";
  if (servers_plan ? !parse_server_representation(plan.representation) : !parse_representation(plan.representation))
    (void)node.at("representation").one_of(servers_plan ? server_representation_names() : representation_names());
  if (const auto order = node.find("hd_order")) plan.hd_order = read_enum(*order, {HdOrder::near, HdOrder::far});
  plan.reference_batch = node.at("reference_batch").positive_number();
  plan.single_gpu_iteration_s = node.at("single_gpu_iteration_s").positive_number();
  plan.calibration_factor = node.at("calibration_factor").positive_number();
  plan.calibrated = node.at("calibrated").as_bool();
  plan.scaling = node.at("scaling").one_of({"weak", "strong"});
  plan.bucket_bytes = node.at("bucket_bytes").non_negative_number();
  plan.gpu_sm_count = read_int(node.at("gpu_sm_count"), 0, 1'000'000);
  plan.aggregate_flops_per_byte = node.at("aggregate_flops_per_byte").non_negative_number();
}

// `memory_per_gpu_bytes`.
MemoryUsage read_memory(const JsonNode& m) {
  m.require_object();
  m.allow_only({"weights", "gradients", "optimizer_state", "activations", "framework", "total", "required", "available",
                "gathered_parameters", "recompute_activations", "largest_batch_per_gpu"});
  MemoryUsage memory;
  if (const auto g = m.find("gathered_parameters")) memory.gathered_parameters = g->non_negative_number();
  if (const auto g = m.find("recompute_activations")) memory.recompute_activations = g->non_negative_number();
  memory.weights = m.at("weights").non_negative_number();
  memory.gradients = m.at("gradients").non_negative_number();
  memory.optimizer_state = m.at("optimizer_state").non_negative_number();
  memory.activations = m.at("activations").non_negative_number();
  memory.framework = m.at("framework").non_negative_number();
  memory.total = m.at("total").non_negative_number();
  memory.required = m.find("required") ? m.at("required").non_negative_number() : memory.total;
  memory.available = m.at("available").non_negative_number();
  if (auto v = m.find("largest_batch_per_gpu")) memory.largest_batch_per_gpu = v->int_at_least(0);
  return memory;
}

// `variables`: the model variables the plan's closed forms take.
ModelVariables read_variables(const JsonNode& v) {
  v.require_object();
  v.allow_only({"gpus_per_node", "batch_per_gpu", "flops_per_sample", "model_bytes", "params", "precision",
                "intra_node_bandwidth_GBps", "intra_node_latency_us", "network_bandwidth_Gbps", "network_latency_us",
                "nics_per_node", "servers", "single_gpu_time_s", "dataset_samples", "accumulation_steps"});
  return ModelVariables::from_json(v);
}

// `input_pipeline`: the loaders that feed each GPU.
InputPipelineConfig read_input_pipeline(const JsonNode& in) {
  in.require_object();
  in.allow_only({"decode_s_per_sample", "loader_threads", "host_cores"});
  InputPipelineConfig c;
  c.decode_s_per_sample = in.at("decode_s_per_sample").non_negative_number();
  c.loader_threads = read_int(in.at("loader_threads"), 1, 1'000'000);
  c.host_cores = read_int(in.at("host_cores"), 1, 1'000'000);
  return c;
}

// Data parallelism where it departs from plain DDP (data_parallel.hpp): accumulation, ZeRO
// sharding (its hybrid sharding and shard group with zero_stage only), checkpointing.
void read_data_parallel(const JsonNode& node, TrainingPlan& plan) {
  if (const auto v = node.find("accumulation_steps")) plan.accumulation_steps = read_int(*v, 1, 1'000'000);
  if (const auto v = node.find("zero_stage")) {
    plan.zero_stage = read_int(*v, 0, 3);
    plan.hybrid_sharding = node.at("hybrid_sharding").as_bool();
    plan.shard_group = read_int(node.at("shard_group"), 1, plan.gpus);
  } else {
    for (const char* key : {"hybrid_sharding", "shard_group"})
      if (const auto k = node.find(key)) throw k->error("applies with zero_stage only");
  }
  if (const auto v = node.find("checkpoint_every_layers")) plan.checkpoint_every_layers = read_int(*v, 1, 1'000'000);
}

// `buckets`, each at its index, ready in backward order.
std::vector<PlannedBucket> read_buckets(const JsonNode& buckets) {
  buckets.require_array();
  std::vector<PlannedBucket> out;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const JsonNode e = buckets.element(b);
    e.require_object();
    e.allow_only({"index", "bytes", "ready_after", "ready_after_layer", "layers"});
    if (const auto index = e.find("index"); index && index->as_int() != static_cast<std::int64_t>(b))
      throw index->error(fmt::format("must be the bucket's position, {}", b));
    PlannedBucket bucket;
    bucket.bytes = e.at("bytes").non_negative_number();
    bucket.ready_after = static_cast<std::size_t>(e.at("ready_after").int_at_least(0));
    if (b > 0 && bucket.ready_after < out.back().ready_after)
      throw e.at("ready_after").error("buckets become ready in backward order: must be ≥ the previous bucket's ready_after");
    const JsonNode layers = e.at("layers");
    layers.require_array();
    for (const auto& l : layers.elements()) bucket.layers.push_back(l.as_string());
    out.push_back(std::move(bucket));
  }
  return out;
}

// One compute profile (the plan's `index`-th), its segments cut at the buckets' boundaries.
ComputeProfile read_profile(const JsonNode& e, std::size_t index, const TrainingPlan& plan, const JsonNode& buckets) {
  e.require_object();
  e.allow_only({"batch", "segments_s", "forward", "backward", "update", "accumulation_s", "forward_groups_s"});
  ComputeProfile p;
  p.batch = e.at("batch").positive_number();
  p.forward = read_tasks(e.at("forward"));
  p.backward = read_tasks(e.at("backward"));
  p.update = read_task(e.at("update"));
  p.segments_s = read_numbers(e.at("segments_s"));
  if (const auto a = e.find("accumulation_s")) p.accumulation_s = a->non_negative_number();
  if (const auto g = e.find("forward_groups_s")) {
    if (plan.zero_stage != 3 && plan.strategy != "parameter_server")
      throw g->error("applies to plans of zero_stage 3 or parameter servers only");
    p.forward_groups_s = read_numbers(*g);
  }
  for (std::size_t b = 0; b < plan.buckets.size(); ++b)
    if (plan.buckets[b].ready_after >= p.backward.size())
      throw buckets.element(b)
          .at("ready_after")
          .error(fmt::format("names backward task {}, but profile {} has {}", plan.buckets[b].ready_after, index,
                             p.backward.size()));
  check_segments(p, plan.buckets, e);
  return p;
}

// `gpu_plans`: one per rank, in rank order, on the rank's node.
std::vector<GpuPlan> read_gpu_plans(const JsonNode& gpu_plans, const TrainingPlan& plan) {
  gpu_plans.require_array();
  if (gpu_plans.size() != static_cast<std::size_t>(plan.gpus))
    throw gpu_plans.error(fmt::format("has {} entries; the plan has {} GPUs (one entry per rank)", gpu_plans.size(), plan.gpus));
  std::vector<GpuPlan> out;
  for (std::size_t r = 0; r < gpu_plans.size(); ++r) {
    const JsonNode e = gpu_plans.element(r);
    e.require_object();
    e.allow_only({"rank", "node", "profile", "slowdown", "compute_s"});
    GpuPlan g;
    g.rank = read_int(e.at("rank"), static_cast<std::int64_t>(r), static_cast<std::int64_t>(r));
    g.node = read_int(e.at("node"), g.rank / plan.gpus_per_node, g.rank / plan.gpus_per_node);
    g.profile = static_cast<std::size_t>(read_int(e.at("profile"), 0, static_cast<std::int64_t>(plan.profiles.size()) - 1));
    g.slowdown = e.at("slowdown").number_in(platforms::kMinSpeedFactor, platforms::kMaxSpeedFactor);
    out.push_back(g);
  }
  return out;
}

// The parameter-server settings (placement, throughput, aggregation: of parameter_server plans
// only) and the host side of every plan (transport, host memory, straggler and barrier waits).
void read_server_settings(const JsonNode& node, bool servers_plan, TrainingPlan& plan) {
  if (servers_plan) {
    plan.variable_placement = node.at("placement").one_of({"round_robin", "greedy", "sharded"});
    plan.server_throughput_Bps = node.at("server_throughput_Bps").non_negative_number();
    plan.worker_aggregation = node.at("worker_aggregation").one_of({"host", "none"});
  } else {
    for (const char* key : {"placement", "server_throughput_Bps", "worker_aggregation"})
      if (const auto k = node.find(key)) throw k->error("applies to parameter_server plans only");
  }
  if (const auto t = node.find("transport")) plan.transport = t->one_of({"gpu", "host"});
  plan.host_memory_bandwidth_Bps = node.at("host_memory_bandwidth_Bps").non_negative_number();
  if (auto v = node.find("straggler_s")) plan.straggler_s = v->number_in(0, 1e6);
  if (auto v = node.find("barrier_s")) plan.barrier_s = v->number_in(0, 1e6);
}

// Server i on its host: a node's CPU, a GPU or one of the `dedicated` server nodes, with the node
// whose NIC it shares (none for a dedicated node).
PlannedServer read_server(const JsonNode& e, std::size_t i, const TrainingPlan& plan, int dedicated) {
  e.require_object();
  e.allow_only({"id", "host", "index", "node", "push_bytes_per_worker", "bytes", "variables"});
  PlannedServer s;
  s.id = read_int(e.at("id"), static_cast<std::int64_t>(i), static_cast<std::int64_t>(i));
  s.host = read_enum(e.at("host"), {ServerHost::node_cpu, ServerHost::gpu, ServerHost::server_node});
  if (plan.platform.simgrid_xml && s.host != ServerHost::gpu)
    throw e.at("host").error("a SimGrid XML platform has no node CPUs or server nodes: use \"gpu\"");
  const int hosts = s.host == ServerHost::node_cpu ? plan.nodes : s.host == ServerHost::gpu ? plan.gpus : dedicated;
  s.index = read_int(e.at("index"), 0, hosts - 1);
  const JsonNode n = e.at("node");
  const int expected = s.host == ServerHost::node_cpu ? s.index
                       : s.host == ServerHost::gpu    ? s.index / plan.gpus_per_node
                                                      : -1;
  s.node = n.is_null() ? -1 : static_cast<int>(n.as_int());
  if (s.node != expected)
    throw n.error(expected < 0 ? std::string("must be null: a dedicated server node shares no worker's NIC")
                               : fmt::format("must be {}, the node of its host", expected));
  return s;
}

// `servers`: at least one in a parameter_server plan, none in another.
std::vector<PlannedServer> read_servers(const JsonNode& servers, bool servers_plan, const TrainingPlan& plan) {
  servers.require_array();
  if (!servers_plan && servers.size() > 0) throw servers.error("a " + plan.strategy + " plan has no parameter servers");
  if (servers_plan && servers.size() == 0) throw servers.error("a parameter_server plan needs at least one server");
  const std::vector<JsonNode> server_nodes = servers.elements();
  const int dedicated = static_cast<int>(std::count_if(server_nodes.begin(), server_nodes.end(), [](const JsonNode& s) {
    return s.is_object() && s.has("host") && s.at("host").raw() == "server_node";
  }));
  std::vector<PlannedServer> out;
  for (std::size_t i = 0; i < servers.size(); ++i) out.push_back(read_server(servers.element(i), i, plan, dedicated));
  return out;
}

// What reading one operation needs to know of the plan and of the operations before it.
struct OpContext {
  const TrainingPlan& plan;          // its buckets, servers and the operations read so far
  bool servers_plan;                 // a parameter_server plan
  std::set<std::size_t>& triggered;  // buckets whose parameter-server chain has begun
};

bool is_sharded_kind(CommKind k) {
  return k == CommKind::reduce_scatter || k == CommKind::all_gather;
}

// The keys of another kind of operation (or setting) than `op`'s: none may appear.
void reject_keys(const JsonNode& e, const CommOp& op, std::initializer_list<const char*> keys, const char* what) {
  for (const char* key : keys)
    if (const auto k = e.find(key)) throw k->error(fmt::format("applies to {} only, not {}", what, to_string(op.kind)));
}

// The kind (one the plan's strategy and sharding use) and the bucket.
void read_op_kind(const JsonNode& e, const OpContext& ctx, CommOp& op) {
  op.kind = read_enum(
      e.at("kind"), {CommKind::all_reduce, CommKind::push, CommKind::pull, CommKind::device_to_host, CommKind::host_sum,
                     CommKind::host_to_device, CommKind::reduce_scatter, CommKind::all_gather});
  if (is_sharded_kind(op.kind) && ctx.plan.zero_stage == 0)
    throw e.at("kind").error("applies to plans of zero_stage 1–3 only");
  const bool server_kind = op.kind == CommKind::push || op.kind == CommKind::pull || op.kind == CommKind::host_sum;
  if (ctx.servers_plan ? op.kind == CommKind::all_reduce : server_kind)
    throw e.at("kind").error(ctx.servers_plan
                                 ? "a parameter_server plan moves gradients with push and pull, not all_reduce"
                                 : "an all-reduce plan's operations are all_reduce and host copies");
  if (ctx.plan.buckets.empty()) throw e.error("an operation needs a bucket: the plan has none");
  op.bucket =
      static_cast<std::size_t>(read_int(e.at("bucket"), 0, static_cast<std::int64_t>(ctx.plan.buckets.size()) - 1));
}

// The trigger, and the gate of a gate_passed trigger: one an earlier operation opens.
void read_op_trigger(const JsonNode& e, const TrainingPlan& plan, CommOp& op) {
  op.trigger =
      read_enum(e.at("trigger"), {CommTrigger::bucket_ready, CommTrigger::backward_done, CommTrigger::previous_op,
                                  CommTrigger::update_done, CommTrigger::gate_passed});
  if ((op.trigger == CommTrigger::update_done || op.trigger == CommTrigger::gate_passed) && plan.zero_stage == 0)
    throw e.at("trigger").error("applies to plans of zero_stage 1–3 only");
  if (op.trigger == CommTrigger::gate_passed) {
    // A gate must have been opened by an earlier operation, or the GPUs would wait for ever.
    op.trigger_gate = read_int(e.at("trigger_gate"), 0, std::max(0, plan.gates() - 1));
    const bool opened = std::any_of(plan.ops.begin(), plan.ops.end(),
                                    [&op](const CommOp& o) { return o.opens_gate == op.trigger_gate; });
    if (!opened) throw e.at("trigger_gate").error("names a gate no earlier operation opens");
  } else if (const auto t = e.find("trigger_gate")) {
    throw t->error("applies to trigger gate_passed only");
  }
}

// `after_op` and the chains: what the engine's executors can run. All-reduce plans run one
// operation at a time in order; a parameter-server bucket runs as one chain, started by its
// trigger, each operation after the previous.
void read_op_order(const JsonNode& e, std::size_t i, const OpContext& ctx, CommOp& op) {
  const JsonNode after = e.at("after_op");
  op.after_op = after.is_null() ? -1 : static_cast<int>(after.as_int());
  const bool chained = !ctx.servers_plan || op.trigger == CommTrigger::previous_op;
  if (chained && op.after_op != op.id - 1)
    throw after.error(op.id == 0 ? std::string("must be null: the first operation waits for none")
                                 : fmt::format("must be {}: {}", op.id - 1,
                                               ctx.servers_plan ? "a chained operation follows the one before it"
                                                                : "operations run one at a time, in order"));
  if (!chained && op.after_op != -1)
    throw after.error("must be null: a parameter-server chain starts with its trigger only");
  if (ctx.servers_plan && op.trigger == CommTrigger::previous_op && (i == 0 || ctx.plan.ops.back().bucket != op.bucket))
    throw e.at("trigger").error(
        "a parameter-server chain starts with bucket_ready or backward_done, and continues on its own bucket");
  if (ctx.servers_plan && op.trigger != CommTrigger::previous_op && !ctx.triggered.insert(op.bucket).second)
    throw e.at("trigger").error(fmt::format("bucket {} already has its chain", op.bucket));
}

// `participants`: GPU ranks (first_rank, ranks) or node hosts (endpoints, first_node, nodes), as the
// kind and trigger allow.
void read_participants(const JsonNode& e, const OpContext& ctx, CommOp& op) {
  const TrainingPlan& plan = ctx.plan;
  const JsonNode who = e.at("participants");
  who.require_object();
  if (who.has("endpoints")) {
    who.allow_only({"endpoints", "first_node", "nodes"});
    op.endpoints = read_enum(who.at("endpoints"), {CommEndpoints::gpus, CommEndpoints::node_hosts});
    if (op.endpoints != CommEndpoints::node_hosts)
      throw who.at("endpoints").error("only \"node_hosts\" names its participants as nodes");
    if (plan.platform.simgrid_xml) throw who.at("endpoints").error("a SimGrid XML platform has no node CPUs");
    op.first_rank = read_int(who.at("first_node"), 0, plan.nodes - 1);
    op.ranks = read_int(who.at("nodes"), 1, plan.nodes - op.first_rank);
  } else {
    who.allow_only({"first_rank", "ranks"});
    op.first_rank = read_int(who.at("first_rank"), 0, plan.gpus - 1);
    op.ranks = read_int(who.at("ranks"), 1, plan.gpus - op.first_rank);
  }
  const bool on_nodes = op.endpoints == CommEndpoints::node_hosts;
  if (op.kind == CommKind::host_sum && !on_nodes) throw who.error("a host_sum runs on node_hosts");
  if ((op.kind == CommKind::all_reduce || op.kind == CommKind::device_to_host || op.kind == CommKind::host_to_device) &&
      on_nodes)
    throw who.error("a " + std::string(to_string(op.kind)) + " runs on GPU ranks (first_rank, ranks)");
  if ((op.kind == CommKind::device_to_host || op.kind == CommKind::host_to_device) && plan.platform.simgrid_xml)
    throw e.at("kind").error("a SimGrid XML platform has no node CPUs to copy to");
  // Every participating GPU reports its bucket ready once; the engine waits for all of them.
  if (op.trigger == CommTrigger::bucket_ready && !ctx.servers_plan && (op.first_rank != 0 || op.ranks != plan.gpus))
    throw who.error("an operation triggered by bucket_ready involves every GPU (first_rank 0, ranks = gpus)");
}

// An all_reduce's algorithm, transport and launch, its NCCL protocol fields (with a protocol
// only) and its host-transport costs (with transport host only).
void read_all_reduce_fields(const JsonNode& e, const TrainingPlan& plan, CommOp& op) {
  op.transport = e.find("transport") ? read_enum(e.at("transport"), {Transport::gpu, Transport::host}) : Transport::gpu;
  op.algorithm = read_enum(
      e.at("algorithm"), {Algorithm::ring, Algorithm::hierarchical, Algorithm::halving_doubling, Algorithm::tree,
                          Algorithm::nvls, Algorithm::nvls_tree, Algorithm::collnet_direct, Algorithm::collnet_chain});
  if (op.transport == Transport::host && plan.platform.simgrid_xml)
    throw e.at("transport").error("a SimGrid XML platform has no node CPUs");
  op.launch_s = e.at("launch_s").number_in(0, platforms::kMaxLatency_s);
  if (const auto protocol = e.find("protocol")) {
    op.protocol = read_enum(*protocol, {Protocol::ll, Protocol::ll128, Protocol::simple});
    op.channels = read_int(e.at("channels"), 0, 1024);
    op.step_overhead_s = e.at("step_overhead_s").number_in(0, platforms::kMaxLatency_s);
    op.wire_factor = e.at("wire_factor").number_in(1, 16);
    op.kernel_sms = read_int(e.at("kernel_sms"), 0, std::max(0, plan.gpu_sm_count - 1));
    op.compute_share = fraction(e.at("compute_share"));
  } else {
    reject_keys(e, op, {"channels", "step_overhead_s", "wire_factor", "kernel_sms", "compute_share"},
                "an all_reduce with a protocol");
  }
  reject_keys(e, op,
              {"bytes_per_server", "host_seconds", "server_software_s", "worker_software_s", "after_all_pushes",
               "variable_barrier_s"},
              "other kinds");
  if (op.transport == Transport::host) {
    if (auto v = e.find("stream_Bps")) op.stream_Bps = v->positive_number();
    if (auto v = e.find("reduce_Bps")) op.reduce_Bps = v->positive_number();
    if (auto v = e.find("software_s")) op.software_s = v->number_in(0, 1e6);
  } else {
    reject_keys(e, op, {"stream_Bps", "reduce_Bps", "software_s"}, "an all_reduce with transport host");
  }
}

// A reduce_scatter's or all_gather's launch, node-local flag (hybrid sharding only), the gate it
// opens (an all_gather of zero_stage 3, each gate once) and its kernel's SMs.
void read_sharded_fields(const JsonNode& e, const TrainingPlan& plan, CommOp& op) {
  if (op.endpoints == CommEndpoints::node_hosts)
    throw e.at("participants").error("a " + std::string(to_string(op.kind)) + " runs on GPU ranks (first_rank, ranks)");
  op.launch_s = e.at("launch_s").number_in(0, platforms::kMaxLatency_s);
  if (const auto v = e.find("node_local")) op.node_local = v->as_bool();
  if (op.node_local && !plan.hybrid_sharding)
    throw e.at("node_local").error("applies to plans of hybrid sharding only");
  if (const auto v = e.find("opens_gate")) {
    if (op.kind != CommKind::all_gather || plan.zero_stage != 3)
      throw v->error("applies to all_gather of zero_stage 3 only");
    op.opens_gate = read_int(*v, 0, std::max(0, plan.gates() - 1));
    for (const CommOp& o : plan.ops)
      if (o.opens_gate == op.opens_gate)
        throw v->error(fmt::format("gate {} is opened by operation {} already", op.opens_gate, o.id));
  }
  if (const auto v = e.find("kernel_sms")) {
    op.kernel_sms = read_int(*v, 0, std::max(0, plan.gpu_sm_count - 1));
    op.compute_share = fraction(e.at("compute_share"));
  }
  reject_keys(e, op,
              {"algorithm", "transport", "protocol", "channels", "step_overhead_s", "wire_factor", "bytes_per_server",
               "host_seconds", "server_software_s", "worker_software_s", "after_all_pushes", "variable_barrier_s",
               "stream_Bps", "reduce_Bps", "software_s"},
              "other kinds");
}

// A list of one number per server.
std::vector<double> read_per_server(const JsonNode& node, const TrainingPlan& plan) {
  std::vector<double> values = read_numbers(node);
  if (values.size() != plan.servers.size())
    throw node.error(fmt::format("has {} entries; the plan has {} servers", values.size(), plan.servers.size()));
  return values;
}

// A push's or pull's bytes per server and software costs (after_all_pushes and variable_barrier_s:
// a pull's only).
void read_push_pull_fields(const JsonNode& e, const TrainingPlan& plan, CommOp& op) {
  op.bytes_per_server = read_per_server(e.at("bytes_per_server"), plan);
  if (auto v = e.find("server_software_s")) op.server_software_s = read_per_server(*v, plan);
  if (auto v = e.find("worker_software_s")) op.worker_software_s = v->number_in(0, 1e6);
  if (auto v = e.find("after_all_pushes")) {
    if (op.kind != CommKind::pull) throw v->error("applies to pull only");
    op.after_all_pushes = v->as_bool();
  }
  if (auto v = e.find("variable_barrier_s")) {
    if (op.kind != CommKind::pull) throw v->error("applies to pull only");
    op.variable_barrier_s = v->number_in(0, 1e6);
  }
}

// The fields of the other kinds: push and pull (read_push_pull_fields), host_sum's seconds, and
// the host copies, which have none of their own.
void read_host_op_fields(const JsonNode& e, const TrainingPlan& plan, CommOp& op) {
  reject_keys(e, op, {"stream_Bps", "reduce_Bps", "software_s"}, "an all_reduce with transport host");
  reject_keys(e, op,
              {"algorithm", "transport", "launch_s", "protocol", "channels", "step_overhead_s", "wire_factor",
               "kernel_sms", "compute_share", "node_local", "opens_gate"},
              "all_reduce");
  if (op.kind == CommKind::push || op.kind == CommKind::pull)
    read_push_pull_fields(e, plan, op);
  else
    reject_keys(
        e, op, {"bytes_per_server", "server_software_s", "worker_software_s", "after_all_pushes", "variable_barrier_s"},
        "push and pull");
  if (op.kind == CommKind::host_sum)
    op.host_seconds = e.at("host_seconds").number_in(0, 1e6);
  else
    reject_keys(e, op, {"host_seconds"}, "host_sum");
}

// Operation i: what, on which bucket, when, after what, among whom, how many bytes, and the fields
// of its kind.
CommOp read_op(const JsonNode& e, std::size_t i, const OpContext& ctx) {
  e.require_object();
  e.allow_only({"id",
                "kind",
                "bucket",
                "trigger",
                "after_op",
                "participants",
                "bytes",
                "algorithm",
                "transport",
                "launch_s",
                "protocol",
                "channels",
                "step_overhead_s",
                "wire_factor",
                "kernel_sms",
                "compute_share",
                "bytes_per_server",
                "host_seconds",
                "link_class_bytes",
                "server_software_s",
                "worker_software_s",
                "stream_Bps",
                "reduce_Bps",
                "software_s",
                "after_all_pushes",
                "variable_barrier_s",
                "node_local",
                "opens_gate",
                "trigger_gate"});
  CommOp op;
  op.id = read_int(e.at("id"), static_cast<std::int64_t>(i), static_cast<std::int64_t>(i));
  read_op_kind(e, ctx, op);
  read_op_trigger(e, ctx.plan, op);
  read_op_order(e, i, ctx, op);
  read_participants(e, ctx, op);
  op.bytes = e.at("bytes").non_negative_number();
  if (op.kind == CommKind::all_reduce)
    read_all_reduce_fields(e, ctx.plan, op);
  else if (is_sharded_kind(op.kind))
    read_sharded_fields(e, ctx.plan, op);
  else
    read_host_op_fields(e, ctx.plan, op);
  return op;
}

// `ops`, in order (each reads the ones before it), and every gate of a zero_stage 3 plan opened.
void read_ops(const JsonNode& ops, bool servers_plan, TrainingPlan& plan) {
  ops.require_array();
  std::set<std::size_t> triggered;
  const OpContext ctx{plan, servers_plan, triggered};
  for (std::size_t i = 0; i < ops.size(); ++i) plan.ops.push_back(read_op(ops.element(i), i, ctx));
  for (int g = 0; g < plan.gates(); ++g)
    if (std::none_of(plan.ops.begin(), plan.ops.end(), [g](const CommOp& o) { return o.opens_gate == g; }))
      throw ops.error(fmt::format("no all_gather opens gate {}: a zero_stage 3 plan opens every one of its {} gates", g,
                                  plan.gates()));
}

}  // namespace

Json TrainingPlan::to_json() const {
  Json j;
  j["name"] = name;
  j["strategy"] = strategy;
  j["network_model"] = network_model;
  j["gpus"] = gpus;
  j["nodes"] = nodes;
  j["gpus_per_node"] = gpus_per_node;
  j["global_batch"] = global_batch;
  j["overlap"] = overlap;
  j["representation"] = representation;
  if (strategy == "halving_doubling") j["hd_order"] = to_string(hd_order);
  j["reference_batch"] = reference_batch;
  j["single_gpu_iteration_s"] = single_gpu_iteration_s;
  j["calibration_factor"] = calibration_factor;
  j["calibrated"] = calibrated;
  j["scaling"] = scaling;
  j["bucket_bytes"] = bucket_bytes;
  j["gpu_sm_count"] = gpu_sm_count;
  j["aggregate_flops_per_byte"] = aggregate_flops_per_byte;
  j["memory_per_gpu_bytes"] = memory.to_json();
  if (largest_batch) j["largest_batch"] = largest_batch->to_json();
  // Data parallelism (data_parallel.hpp), written where it departs from plain DDP.
  if (accumulation_steps > 1) j["accumulation_steps"] = accumulation_steps;
  if (zero_stage > 0) {
    j["zero_stage"] = zero_stage;
    j["hybrid_sharding"] = hybrid_sharding;
    j["shard_group"] = shard_group;
  }
  if (checkpoint_every_layers > 0) j["checkpoint_every_layers"] = checkpoint_every_layers;
  j["variables"] = variables.to_json();
  j["platform"] = platform_json(platform);
  if (input_pipeline)
    j["input_pipeline"] = Json{{"decode_s_per_sample", input_pipeline->decode_s_per_sample},
                               {"loader_threads", input_pipeline->loader_threads},
                               {"host_cores", input_pipeline->host_cores}};
  if (nccl_intra_node_latency_s) j["nccl_intra_node_latency_s"] = *nccl_intra_node_latency_s;
  Json profiles_json = Json::array();
  for (const auto& p : profiles) profiles_json.push_back(profile_json(p));
  j["profiles"] = profiles_json;
  Json gpus_json = Json::array();
  for (const auto& g : gpu_plans)
    gpus_json.push_back(Json{{"rank", g.rank},
                             {"node", g.node},
                             {"profile", g.profile},
                             {"slowdown", g.slowdown},
                             {"compute_s", compute_s(g.rank)}});
  j["gpu_plans"] = gpus_json;
  j["buckets"] = buckets_json(*this);
  if (!servers.empty()) {
    j["placement"] = variable_placement;
    j["server_throughput_Bps"] = server_throughput_Bps;
    j["worker_aggregation"] = worker_aggregation;
  }
  if (transport != "gpu") j["transport"] = transport;
  j["host_memory_bandwidth_Bps"] = host_memory_bandwidth_Bps;
  if (straggler_s > 0) j["straggler_s"] = straggler_s;
  if (barrier_s > 0) j["barrier_s"] = barrier_s;
  j["servers"] = servers_json(*this);
  Json ops_json = Json::array();
  for (const auto& op : ops) ops_json.push_back(op_json(*this, op));
  j["ops"] = ops_json;
  return j;
}

TrainingPlan TrainingPlan::from_json(const JsonNode& node) {
  check_plan_document(node);
  TrainingPlan plan;
  read_job(node, plan);
  read_settings(node, plan);
  const bool servers_plan = plan.strategy == "parameter_server";
  plan.memory = read_memory(node.at("memory_per_gpu_bytes"));
  plan.variables = read_variables(node.at("variables"));
  if (const auto in = node.find("input_pipeline")) plan.input_pipeline = read_input_pipeline(*in);
  if (const auto l = node.find("nccl_intra_node_latency_s")) plan.nccl_intra_node_latency_s = latency(*l);
  if (const auto v = node.find("largest_batch")) plan.largest_batch = LargestBatch::from_json(*v);
  read_data_parallel(node, plan);
  // Buckets first: the profiles' segments are cut at their boundaries.
  const JsonNode buckets = node.at("buckets");
  plan.buckets = read_buckets(buckets);
  const JsonNode profiles = node.at("profiles");
  profiles.require_array();
  if (profiles.size() == 0) throw profiles.error("must hold at least one compute profile");
  for (const auto& e : profiles.elements())
    plan.profiles.push_back(read_profile(e, plan.profiles.size(), plan, buckets));
  plan.gpu_plans = read_gpu_plans(node.at("gpu_plans"), plan);
  read_server_settings(node, servers_plan, plan);
  plan.servers = read_servers(node.at("servers"), servers_plan, plan);
  read_ops(node.at("ops"), servers_plan, plan);
  plan.all_reduce_bytes_per_byte = plan::all_reduce_bytes_per_byte(plan);
  if (!plan.servers.empty()) plan.server_representation = resolve_server_representation(plan);
  return plan;
}

Json CpuPlan::to_json() const {
  Json ops_json = Json::array();
  for (const auto& op : ops)
    ops_json.push_back({{"name", op.name}, {"class", op.op_class}, {"heavy", op.heavy}, {"deps", op.deps}, {"threads", op.threads},
                        {"serial_s", op.serial_s}, {"parallel_s", op.parallel_s}, {"bytes", op.bytes},
                        {"bandwidth_cap_Bps", op.bandwidth_cap_Bps}, {"working_set_bytes", op.working_set_bytes}});
  const auto& c = platform.cpu;
  const Json cpu_json{{"name", c.name},
                      {"cores", c.cores},
                      {"smt", c.smt},
                      {"clock_Hz", c.clock_Hz},
                      {"vector_bits", c.vector_bits},
                      {"fma_units", c.fma_units},
                      {"bf16", c.bf16},
                      {"memory_channels", c.memory_channels},
                      {"memory_MTps", c.memory_MTps},
                      {"memory_bandwidth_Bps", c.memory_bandwidth_Bps},
                      {"l2_bytes", c.l2_bytes},
                      {"fp32_flops_per_cycle", c.fp32_per_cycle},
                      {"bf16_flops_per_cycle", c.bf16_per_cycle},
                      {"memory_bytes", c.memory_bytes},
                      {"described", c.described},
                      {"source", c.source}};
  const auto& t = threading;
  const Json threading_json{{"framework", std::string(to_string(t.framework))},
                            {"barrier_per_thread_s", t.barrier_per_thread_s},
                            {"regions_per_heavy_op", t.regions_per_heavy_op},
                            {"elementwise_grain", t.elementwise_grain},
                            {"onednn", t.onednn},
                            {"inter_op_pools", t.inter_op_pools},
                            {"intra_op_threads", t.intra_op_threads},
                            {"mode", to_string(t.mode)},
                            {"dispatch_s", t.dispatch_s},
                            {"fork_join_s", t.fork_join_s},
                            {"serial_fraction", t.serial_fraction},
                            {"conv_efficiency", t.conv_efficiency},
                            {"matmul_efficiency", t.matmul_efficiency},
                            {"other_efficiency", t.other_efficiency},
                            {"core_bandwidth_Bps", t.core_bandwidth_Bps},
                            {"cross_socket_factor", t.cross_socket_factor},
                            {"context_switch_s", t.context_switch_s},
                            {"spin_wait_s", t.spin_wait_s}};
  return Json{
      {"name", name},
      {"cpu", platform.cpu.name},
      {"sockets", platform.sockets},
      {"physical_cores", platform.physical_cores()},
      {"logical_cores", platform.logical_cores()},
      {"inter_op_pools", pools},
      {"intra_op_threads", threads_per_pool},
      {"mode", to_string(threading.mode)},
      {"batch", batch},
      {"precision", std::string(to_string(precision))},
      {"calibration_factor", calibration_factor},
      {"calibrated", calibrated},
      {"heavy_ops", heavy_ops},
      {"heavy_depth", heavy_depth},
      {"average_width", average_width()},
      {"flops_per_sample", flops_per_sample},
      {"weight_bytes", weight_bytes},
      {"params", params},
      {"activation_bytes_per_sample", activation_bytes_per_sample},
      {"dataset_samples", dataset_samples},
      {"platform",
       Json{{"preset", platform.preset}, {"cpu", cpu_json}, {"sockets", platform.sockets}, {"nodes", platform.nodes}}},
      {"threading", threading_json},
      {"ops", ops_json}};
}

CpuPlan CpuPlan::from_json(const JsonNode& node) {
  node.require_object();
  if (node.has("gpu_plans")) throw node.error("is a GPU training plan, not a CPU one");
  node.allow_only({"name", "cpu", "sockets", "physical_cores", "logical_cores", "inter_op_pools", "intra_op_threads", "mode", "batch",
                   "precision", "calibration_factor", "calibrated", "heavy_ops", "heavy_depth", "average_width", "flops_per_sample",
                   "weight_bytes", "params", "activation_bytes_per_sample", "dataset_samples", "platform", "threading", "ops"});
  if (!node.has("platform"))
    throw node.error("has no 'platform': it was dumped by a trainsim whose plans did not carry their platform; dump it again "
                     "(trainsim simulate SCENARIO --dump-plan FILE)");
  CpuPlan plan;
  plan.name = node.at("name").as_string();
  {
    const JsonNode p = node.at("platform");
    p.require_object();
    p.allow_only({"preset", "cpu", "sockets", "nodes"});
    plan.platform.preset = p.at("preset").as_string();
    const JsonNode c = p.at("cpu");
    c.require_object();
    c.allow_only({"name", "cores", "smt", "clock_Hz", "vector_bits", "fma_units", "bf16", "memory_channels",
                  "memory_MTps", "memory_bandwidth_Bps", "l2_bytes", "fp32_flops_per_cycle", "bf16_flops_per_cycle",
                  "memory_bytes", "described", "source"});
    auto& cpu = plan.platform.cpu;
    cpu.name = c.at("name").as_string();
    cpu.cores = read_int(c.at("cores"), 1, 4096);
    cpu.smt = read_int(c.at("smt"), 1, 8);
    cpu.clock_Hz = c.at("clock_Hz").number_in(1e6, 1e12);
    // A described CPU (platform.cpu object) has no vector width, FMA count or channels: 0.
    cpu.described = c.find("described") && c.at("described").as_bool();
    const int least = cpu.described ? 0 : 1;
    cpu.vector_bits = read_int(c.at("vector_bits"), cpu.described ? 0 : 64, 4096);
    cpu.fma_units = read_int(c.at("fma_units"), least, 64);
    cpu.bf16 = c.at("bf16").as_bool();
    cpu.memory_channels = read_int(c.at("memory_channels"), least, 1024);
    cpu.memory_MTps = cpu.described ? c.at("memory_MTps").non_negative_number() : c.at("memory_MTps").positive_number();
    if (auto v = c.find("fp32_flops_per_cycle")) cpu.fp32_per_cycle = v->number_in(0, 16384);
    if (auto v = c.find("bf16_flops_per_cycle")) cpu.bf16_per_cycle = v->number_in(0, 16384);
    if (auto v = c.find("memory_bytes")) cpu.memory_bytes = v->non_negative_number();
    if (cpu.fp32_flops_per_cycle() <= 0) throw c.error("has neither vector_bits × fma_units nor fp32_flops_per_cycle");
    cpu.memory_bandwidth_Bps = bandwidth(c.at("memory_bandwidth_Bps"));
    cpu.l2_bytes = c.at("l2_bytes").non_negative_number();
    cpu.source = c.at("source").as_string();
    plan.platform.sockets = read_int(p.at("sockets"), 1, 64);
    plan.platform.nodes = read_int(p.at("nodes"), 1, 1);
  }
  {
    const JsonNode t = node.at("threading");
    t.require_object();
    t.allow_only({"framework", "onednn", "barrier_per_thread_s", "regions_per_heavy_op", "elementwise_grain",
                  "inter_op_pools", "intra_op_threads", "mode", "dispatch_s", "fork_join_s", "serial_fraction",
                  "conv_efficiency", "matmul_efficiency", "other_efficiency", "core_bandwidth_Bps",
                  "cross_socket_factor", "context_switch_s", "spin_wait_s"});
    auto& o = plan.threading;
    // Plans dumped before frameworks existed are the generic model.
    if (auto f = t.find("framework")) {
      const std::string name = f->one_of({"generic", "pytorch", "tensorflow", "onnxruntime"});
      o.framework = name == "pytorch"       ? Framework::pytorch
                    : name == "tensorflow"  ? Framework::tensorflow
                    : name == "onnxruntime" ? Framework::onnxruntime
                                            : Framework::generic;
    }
    if (auto v = t.find("barrier_per_thread_s")) o.barrier_per_thread_s = v->number_in(0, 1);
    if (auto v = t.find("regions_per_heavy_op")) o.regions_per_heavy_op = read_int(*v, 1, 64);
    if (auto v = t.find("elementwise_grain")) o.elementwise_grain = v->number_in(1, 1e12);
    if (auto v = t.find("onednn")) o.onednn = v->as_bool();
    const int most = 4 * plan.platform.logical_cores();
    o.inter_op_pools = read_int(t.at("inter_op_pools"), 1, most);
    o.intra_op_threads = read_int(t.at("intra_op_threads"), 0, most);
    o.mode = read_cpu_mode(t.at("mode"));
    o.dispatch_s = t.at("dispatch_s").number_in(0, 1);
    o.fork_join_s = t.at("fork_join_s").number_in(0, 1);
    o.serial_fraction = t.at("serial_fraction").number_in(0, 1);
    o.conv_efficiency = fraction(t.at("conv_efficiency"));
    o.matmul_efficiency = fraction(t.at("matmul_efficiency"));
    o.other_efficiency = fraction(t.at("other_efficiency"));
    o.core_bandwidth_Bps = bandwidth(t.at("core_bandwidth_Bps"));
    o.cross_socket_factor = t.at("cross_socket_factor").number_in(1, 1000);
    o.context_switch_s = t.at("context_switch_s").number_in(0, 1);
    o.spin_wait_s = t.at("spin_wait_s").number_in(0, 1000);
  }
  const auto precision = parse_precision(node.at("precision").one_of({"fp32", "tf32", "fp16", "bf16"}));
  plan.precision = precision.value_or(Precision::fp32);
  plan.batch = node.at("batch").positive_number();
  const int most = 4 * plan.platform.logical_cores();
  plan.pools = read_int(node.at("inter_op_pools"), 1, most);
  plan.threads_per_pool = read_int(node.at("intra_op_threads"), 1, most);
  if (plan.pools != plan.threading.inter_op_pools)
    throw node.at("inter_op_pools").error(fmt::format("must be threading.inter_op_pools, {}", plan.threading.inter_op_pools));
  plan.calibration_factor = node.at("calibration_factor").positive_number();
  plan.calibrated = node.at("calibrated").as_bool();
  plan.heavy_ops = read_int(node.at("heavy_ops"), 0, std::numeric_limits<int>::max());
  plan.heavy_depth = read_int(node.at("heavy_depth"), 0, std::numeric_limits<int>::max());
  plan.flops_per_sample = node.at("flops_per_sample").non_negative_number();
  plan.weight_bytes = node.at("weight_bytes").non_negative_number();
  plan.params = node.at("params").int_at_least(0);
  plan.activation_bytes_per_sample = node.at("activation_bytes_per_sample").non_negative_number();
  plan.dataset_samples = node.at("dataset_samples").non_negative_number();
  const JsonNode ops = node.at("ops");
  ops.require_array();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const JsonNode e = ops.element(i);
    e.require_object();
    e.allow_only({"name", "class", "heavy", "deps", "threads", "serial_s", "parallel_s", "bytes", "bandwidth_cap_Bps", "working_set_bytes"});
    CpuOp op;
    op.name = e.at("name").as_string();
    op.op_class = e.at("class").as_string();
    op.heavy = e.at("heavy").as_bool();
    const JsonNode deps = e.at("deps");
    deps.require_array();
    // Dependencies point backwards (graph order): no cycle can be written.
    for (const auto& d : deps.elements()) {
      const std::int64_t dep = d.int_at_least(0);
      if (dep >= static_cast<std::int64_t>(i))
        throw d.error(fmt::format("must name an earlier op (dependencies point backwards in graph order), got {} in op {}", dep, i));
      op.deps.push_back(static_cast<int>(dep));
    }
    op.threads = read_int(e.at("threads"), 1, most);
    op.serial_s = e.at("serial_s").non_negative_number();
    op.parallel_s = e.at("parallel_s").non_negative_number();
    op.bytes = e.at("bytes").non_negative_number();
    op.bandwidth_cap_Bps = bandwidth(e.at("bandwidth_cap_Bps"));
    op.working_set_bytes = e.at("working_set_bytes").non_negative_number();
    plan.ops.push_back(std::move(op));
  }
  return plan;
}

}  // namespace trainsim::plan
