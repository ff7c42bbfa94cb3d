#include "trainsim/study/validate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/core/svg.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/fitting/divergence.hpp"
#include "trainsim/fitting/paleo.hpp"
#include "trainsim/plan/software_stack.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/study/sweep.hpp"
#include "trainsim/workloads/layer_graph.hpp"

namespace trainsim::study {
namespace {

// The columns every measured CSV must have; `gpu`, `framework` and `data` join the group key when present.
const std::vector<std::string> kRequiredColumns = {"dataset", "system",        "gpus",      "nodes",  "strategy",
                                                   "model",   "batch_per_gpu", "precision", "metric", "value"};
const std::vector<std::string> kGroupColumns = {"dataset", "system",        "gpu",       "framework", "strategy",
                                                "model",   "batch_per_gpu", "precision", "data",      "metric"};

std::string join(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? separator : "") + names[i];
  return out;
}

// ---------------------------------------------------------------------------------------------
// SYSTEMS.json

// A server count the source states for particular runs (model, optionally batch, node count), and
// the variable update those runs used where it differs from the strategy's (stack.ps_variable_update).
struct ServerCount {
  std::string model;
  std::optional<std::int64_t> batch_per_gpu;
  int nodes = 0;
  int servers = 0;
  std::optional<std::string> ps_variable_update;
};

struct StrategyMapping {
  std::string label;
  Json strategy;                        // a scenario's strategy object
  int servers_per_node = 0;             // > 0: strategy.servers = this × nodes
  std::vector<ServerCount> servers_at;  // the source's exceptions to servers_per_node; the first match wins
  Json stack;                           // a scenario's stack object (null: the defaults)
  Json workload = Json::object();       // the run's settings beside the CSV's columns (accumulation_steps, …)
};

struct SystemTemplate {
  std::string dataset;
  std::string system;
  std::optional<std::string> gpu;  // matches only rows of this `gpu` column when given
  std::string label;
  std::string pointer;  // /systems/i
  Json platform;
  Json workload = Json::object();
  Json compute;  // null when absent
  std::map<std::string, StrategyMapping> strategies;
  std::map<std::string, std::string> precisions;                        // measured precision → scenario precision
  std::vector<std::pair<std::string, std::string>> precision_pointers;  // scenario precision, its pointer
};

// The scenario document of one measured configuration under a system template.
Json scenario_document(const SystemTemplate& system, const StrategyMapping& mapping, const std::string& name,
                       const std::string& model, std::int64_t batch, const std::string& precision, int nodes,
                       int gpus_per_node) {
  Json workload = system.workload.is_object() ? system.workload : Json::object();
  for (const auto& [key, value] : mapping.workload.items()) workload[key] = value;
  workload["model"] = model;
  workload["batch_per_gpu"] = batch;
  workload["precision"] = precision;
  Json platform = system.platform;
  platform["nodes"] = nodes;
  platform["gpus_per_node"] = gpus_per_node;
  Json strategy = mapping.strategy;
  if (mapping.servers_per_node > 0) strategy["servers"] = mapping.servers_per_node * nodes;
  Json stack = mapping.stack;
  for (const ServerCount& c : mapping.servers_at)
    if (c.model == model && c.nodes == nodes && (!c.batch_per_gpu || *c.batch_per_gpu == batch)) {
      strategy["servers"] = c.servers;
      if (c.ps_variable_update) {
        if (stack.is_null()) stack = Json::object();
        stack["ps_variable_update"] = *c.ps_variable_update;
      }
      break;
    }
  Json doc{{"name", name}, {"workload", workload}, {"platform", platform}, {"strategy", strategy}};
  if (!system.compute.is_null()) doc["compute"] = system.compute;
  if (!stack.is_null()) doc["stack"] = stack;
  return doc;
}

// A template is checked as a one-GPU scenario when read, so a bad preset or strategy stops the
// command (exit 2) at its pointer in SYSTEMS.json before anything is simulated.
void check_template(const SystemTemplate& system, const std::string& name, const StrategyMapping& mapping,
                    const std::string& source, const std::string& precision = "fp32") {
  const Json doc = scenario_document(system, mapping, "check", "resnet50", 1, precision, 1, 1);
  try {
    plan::read_scenario(doc, source);
  } catch (const InputError& e) {
    if (e.source() != source) throw;
    const std::string& where = e.location();
    std::string pointer = system.pointer;
    for (const char* part : {"/platform", "/workload", "/compute"})
      if (where.rfind(part, 0) == 0) pointer = system.pointer + where;
    if (where.rfind("/strategy", 0) == 0 || where.rfind("/stack", 0) == 0)  // the mapping's strategy and stack
      pointer = json_pointer_append(system.pointer + "/strategies", name) + where;
    throw InputError(source, pointer, e.detail());
  }
}

// One entry of `strategies`: the scenario strategy that simulates a measured strategy.
StrategyMapping read_mapping(const std::string& name, const JsonNode& m) {
  m.require_object();
  m.allow_only({"label", "strategy", "servers_per_node", "servers_at", "stack", "workload"});
  StrategyMapping mapping;
  mapping.label = m.find("label") ? m.at("label").as_string() : name;
  // How the measured run trained beyond the CSV's columns, as the source states it (NVIDIA's
  // BERT recipes: the accumulation steps of each precision and phase).
  if (auto w = m.find("workload")) {
    w->require_object();
    for (const char* key : {"model", "file", "batch_per_gpu", "global_batch", "precision", "scaling"})
      if (w->has(key)) throw w->at(key).error("comes from the measured CSV (model, batch_per_gpu, precision columns)");
    mapping.workload = w->raw();
  }
  const JsonNode strategy = m.at("strategy");
  strategy.require_object();
  mapping.strategy = strategy.raw();
  if (auto st = m.find("stack")) mapping.stack = st->raw();
  // Server counts set a parameter server's 'servers'; on another kind the scenario reader would
  // complain about 'servers', which the user did not write: name their key instead.
  if (const auto kind = strategy.find("kind");
      kind && kind->is_string() && kind->raw().get<std::string>() != "parameter_server")
    for (const char* key : {"servers_per_node", "servers_at"})
      if (auto k = m.find(key))
        throw k->error(fmt::format("sets the servers of kind \"parameter_server\" only, and this strategy's kind is {}",
                                   kind->raw().dump()));
  if (auto spn = m.find("servers_per_node")) mapping.servers_per_node = spn->int_in(1, platforms::kMaxGpusPerNode);
  if (auto at = m.find("servers_at")) {
    at->require_array();
    for (const JsonNode& e : at->elements()) {
      e.require_object();
      e.allow_only({"model", "batch_per_gpu", "nodes", "servers", "ps_variable_update"});
      ServerCount c;
      c.model = e.at("model").as_string();
      if (auto b = e.find("batch_per_gpu")) c.batch_per_gpu = b->int_at_least(1);
      c.nodes = e.at("nodes").int_in(1, static_cast<int>(platforms::kMaxGpus));
      c.servers = e.at("servers").int_in(1, static_cast<int>(platforms::kMaxGpus));
      if (auto u = e.find("ps_variable_update")) c.ps_variable_update = u->one_of(plan::ps_variable_updates());
      mapping.servers_at.push_back(std::move(c));
    }
  }
  return mapping;
}

// validate predicts how a measurement scales over GPUs from its one-GPU row; a CPU platform
// simulates one node without data parallelism, so it has nothing to scale (and no gpus_per_node
// for the CSV's gpus column to set). Said here, at the key the user wrote, instead of as an
// unknown 'gpus_per_node' the user never wrote.
void refuse_cpu_platform(const JsonNode& platform) {
  if (!platforms::is_cpu_platform(platform)) return;
  const auto preset = platform.find("preset");
  const auto device = platform.find("device");
  const JsonNode at = device && device->is_string() && device->raw().get<std::string>() == "cpu" ? *device
                      : preset                                                                   ? *preset
                                                                                                 : platform;
  throw at.error(
      "a CPU platform (" + at.raw().dump() +
      ") simulates one node without data parallelism; validate "
      "predicts how measurements scale over GPUs, so a system needs a GPU platform (trainsim platform list)");
}

// One entry of `systems` (its strategies are checked by check_templates).
SystemTemplate read_system(const JsonNode& s) {
  s.require_object();
  s.allow_only({"dataset", "system", "gpu", "label", "platform", "workload", "compute", "strategies", "precisions"});
  SystemTemplate t;
  t.pointer = s.pointer();
  t.dataset = s.at("dataset").as_string();
  t.system = s.at("system").as_string();
  if (auto gpu = s.find("gpu")) t.gpu = gpu->as_string();
  t.label = s.find("label") ? s.at("label").as_string() : t.system;
  const JsonNode platform = s.at("platform");
  platform.require_object();
  refuse_cpu_platform(platform);
  t.platform = platform.raw();
  for (const char* key : {"nodes", "gpus_per_node"})
    if (platform.has(key))
      throw platform.at(key).error(std::string("comes from the measured CSV's nodes and gpus columns; remove '") + key +
                                   "'");
  if (auto w = s.find("workload")) {
    w->require_object();
    for (const char* key : {"model", "file", "batch_per_gpu", "global_batch", "precision", "scaling"})
      if (w->has(key))
        throw w->at(key).error(
            "comes from the measured CSV (model, batch_per_gpu, precision columns); a system sets "
            "only framework defaults such as optimizer");
    t.workload = w->raw();
  }
  if (auto c = s.find("compute")) t.compute = c->raw();
  const JsonNode strategies = s.at("strategies");
  strategies.require_object();
  for (const auto& [name, m] : strategies.members()) t.strategies.emplace(name, read_mapping(name, m));
  if (auto p = s.find("precisions")) {
    p->require_object();
    for (const auto& [measured, scenario] : p->members()) {
      t.precisions[measured] = scenario.as_string();
      t.precision_pointers.emplace_back(t.precisions[measured], scenario.pointer());
    }
  }
  return t;
}

// Every strategy of a system read as a one-GPU scenario, with each precision it maps to.
void check_templates(const SystemTemplate& t, const std::string& path) {
  for (const auto& [name, mapping] : t.strategies) {
    check_template(t, name, mapping, path);
    // Each precision the entry maps to is read with each strategy, so that a bad one ("fp64")
    // stops here at its key rather than skipping every group that uses it.
    for (const auto& [precision, pointer] : t.precision_pointers) try {
        check_template(t, name, mapping, path, precision);
      } catch (const InputError& e) {
        if (e.source() != path || e.location().find("/workload/precision") == std::string::npos) throw;
        throw InputError(path, pointer, e.detail());
      }
  }
}

std::vector<SystemTemplate> read_systems(const std::string& path) {
  const JsonNode root = read_json_file(path);
  root.require_object();
  root.allow_only({"description", "systems"});
  const JsonNode list = root.at("systems");
  list.require_array();
  // Every group would be skipped as unmapped: a run that validates nothing is a mistake, not a result.
  if (list.size() == 0)
    throw list.error("no systems: expected at least one entry mapping a measured dataset and system to a platform");
  std::vector<SystemTemplate> systems;
  std::map<std::tuple<std::string, std::string, std::string>, std::string> seen;
  for (const JsonNode& s : list.elements()) {
    SystemTemplate t = read_system(s);
    const auto [it, fresh] = seen.emplace(std::make_tuple(t.dataset, t.system, t.gpu.value_or("")), t.pointer);
    if (!fresh)
      throw s.error(fmt::format("dataset '{}', system '{}'{} is already mapped at {}", t.dataset, t.system,
                                t.gpu ? ", gpu '" + *t.gpu + "'" : "", it->second));
    check_templates(t, path);
    systems.push_back(std::move(t));
  }
  return systems;
}

// ---------------------------------------------------------------------------------------------
// Measured rows and groups

enum class Metric { samples_per_s, seconds_per_iteration };

struct MeasuredRow {
  const CsvTable* table = nullptr;
  std::size_t row = 0;
  int gpus = 0;
  int nodes = 0;
  double value = 0;
  std::optional<std::size_t> point;  // index of its simulation
};

struct Group {
  std::string dataset, system, gpu, strategy, model, precision, metric_name;
  std::int64_t batch = 0;
  std::string label;
  const SystemTemplate* system_template = nullptr;
  const StrategyMapping* mapping = nullptr;
  Metric metric = Metric::samples_per_s;
  std::vector<MeasuredRow> rows;
  std::string skip_reason;
  std::vector<std::string> skipped_rows;  // rows of a validated group that cannot be simulated, and why
  double one_gpu_time_s = 0;              // the measured one-GPU iteration, the calibration
};

std::int64_t integer_cell(const CsvTable& table, std::size_t row, const std::string& column, std::int64_t min) {
  const double v = table.number(row, table.column(column));
  if (!(v >= static_cast<double>(min)) || v != std::floor(v) || v > 1e9)
    throw InputError(table.source(), table.location_of(row),
                     fmt::format("column '{}': expected an integer ≥ {}, got '{}'", column, min,
                                 table.cell(row, table.column(column))));
  return static_cast<std::int64_t>(v);
}

void require_columns(const CsvTable& table) {
  for (const auto& column : kRequiredColumns)
    if (!table.find_column(column)) {
      const auto near = nearest_name(column, table.columns());
      throw InputError(table.source(), "line 1",
                       fmt::format("missing required column '{}'{}; a measured CSV needs the columns {}", column,
                                   near ? " (the header has '" + *near + "')" : "", join(kRequiredColumns)));
    }
}

// The largest measurement a metric may hold. They are sanity ceilings, far above anything measured,
// that catch a unit slip or a corrupt cell (1e308) before it reaches the errors: such a value would
// give an error of "n/a" and drop out of the MAPE without a word. No benchmark times an iteration
// longer than a day, and no cluster trains a zoo model at a billion samples a second (the largest
// published runs reach about 10^6).
constexpr double kMaxSecondsPerIteration = 86400;
constexpr double kMaxSamplesPerSecond = 1e9;

// "line 3" in the same file, "b.csv: line 3" in another.
std::string line_name(const CsvTable& table, std::size_t row, const CsvTable& from) {
  return (&table == &from ? "" : table.source() + ": ") + table.location_of(row);
}

// Groups in order of first appearance (files in the order given, rows in file order). Two rows of
// one point (the same group, GPUs and nodes) are one measurement given twice when their values are
// equal (a warning; counted once) and a contradiction otherwise (InputError naming both lines,
// whichever comes first: the result must not depend on which of them a reader keeps).
// One measured row, its cells checked: GPUs that divide over the nodes and fit in them, a
// plausible value for its metric.
MeasuredRow read_row(const CsvTable& table, std::size_t r) {
  MeasuredRow row;
  row.table = &table;
  row.row = r;
  row.gpus = static_cast<int>(integer_cell(table, r, "gpus", 1));
  row.nodes = static_cast<int>(integer_cell(table, r, "nodes", 1));
  if (row.gpus % row.nodes != 0)
    throw InputError(table.source(), table.location_of(row.row),
                     fmt::format("{} GPUs do not divide evenly over {} nodes", row.gpus, row.nodes));
  // gpus_per_node (optional) is what a node holds, as in tests/data/validation, where one GPU of an
  // 8-GPU DGX-1 reads gpus 1, nodes 1, gpus_per_node 8; what is simulated is gpus / nodes per
  // node. Using more GPUs than the nodes hold is a contradiction in the row.
  if (table.find_column("gpus_per_node")) {
    const auto per_node = integer_cell(table, r, "gpus_per_node", 1);
    if (row.gpus > per_node * row.nodes)
      throw InputError(table.source(), table.location_of(r),
                       fmt::format("gpus {} contradicts nodes {} × gpus_per_node {} = {} GPUs in all; expected gpus ≤ "
                                   "nodes × gpus_per_node",
                                   row.gpus, row.nodes, per_node, per_node * row.nodes));
  }
  row.value = table.number(r, table.column("value"));
  if (!(row.value > 0))
    throw InputError(
        table.source(), table.location_of(r),
        fmt::format("column 'value': expected a measurement > 0, got '{}'", table.cell(r, table.column("value"))));
  const std::string& metric = table.cell(r, table.column("metric"));
  const bool seconds = metric.rfind("seconds_per_iteration", 0) == 0;
  if ((seconds || metric == "samples_per_s") && row.value > (seconds ? kMaxSecondsPerIteration : kMaxSamplesPerSecond))
    throw InputError(table.source(), table.location_of(r),
                     fmt::format("column 'value': {} {} is not a plausible measurement; expected at most {} ({})",
                                 table.cell(r, table.column("value")), metric,
                                 seconds ? kMaxSecondsPerIteration : kMaxSamplesPerSecond,
                                 seconds ? "a day per iteration" : "a billion samples per second"));
  return row;
}

std::vector<Group> group_rows(const std::vector<CsvTable>& tables) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  struct Seen {
    const CsvTable* table;
    std::size_t row;
    double value;
  };
  std::map<std::string, Seen> points;
  for (const CsvTable& table : tables) {
    for (std::size_t r = 0; r < table.row_count(); ++r) {
      std::string key;
      for (const auto& column : kGroupColumns)
        if (auto c = table.find_column(column))
          key += table.cell(r, *c) + '\x1f';
        else
          key += '\x1e';
      const MeasuredRow row = read_row(table, r);
      const auto batch = integer_cell(table, r, "batch_per_gpu", 1);
      const std::string point_key = fmt::format("{}{}\x1f{}", key, row.gpus, row.nodes);
      if (auto [seen, fresh] = points.emplace(point_key, Seen{&table, r, row.value}); !fresh) {
        const std::string first = line_name(*seen->second.table, seen->second.row, table);
        const std::string what = fmt::format("{} GPU{} on {} node{}", row.gpus, row.gpus == 1 ? "" : "s", row.nodes,
                                             row.nodes == 1 ? "" : "s");
        if (seen->second.value != row.value)
          throw InputError(
              table.source(), table.location_of(r),
              fmt::format("measures the same point as {} ({}, same group) with a different value: {} here, {} there; "
                          "keep one row per point (or average them)",
                          first, what, table.cell(r, table.column("value")),
                          seen->second.table->cell(seen->second.row, seen->second.table->column("value"))));
        std::cerr << fmt::format("trainsim: warning: {}: {}: repeats {} ({}, value {}); counted once\n", table.source(),
                                 table.location_of(r), first, what, table.cell(r, table.column("value")));
        continue;
      }
      auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh) {
        Group g;
        g.dataset = table.cell(r, table.column("dataset"));
        g.system = table.cell(r, table.column("system"));
        if (auto gpu = table.find_column("gpu")) g.gpu = table.cell(r, *gpu);
        g.strategy = table.cell(r, table.column("strategy"));
        g.model = table.cell(r, table.column("model"));
        g.precision = table.cell(r, table.column("precision"));
        g.metric_name = table.cell(r, table.column("metric"));
        g.batch = batch;
        groups.push_back(std::move(g));
      }
      groups[it->second].rows.push_back(row);
    }
  }
  return groups;
}

// nccl-tests measurements (tests/data/validation/nccl_allreduce.csv and
// nccl_allreduce_multinode.csv) time one collective of a size, not a training iteration: `trainsim
// collective` is their validation (simulator/README.md, Accuracy against nccl-tests).
bool is_collective_benchmark(const CsvTable& table) {
  for (const char* column : {"collective", "size_bytes"})
    if (!table.find_column(column)) return false;
  return true;
}

// One skipped group per dataset and system of a collective benchmark, so that it is reported.
void add_collective_groups(const CsvTable& table, std::vector<Group>& groups) {
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < table.row_count(); ++r) {
    const auto dataset = table.find_column("dataset"), system = table.find_column("system");
    const std::string d = dataset ? table.cell(r, *dataset) : table.source(), s = system ? table.cell(r, *system) : "";
    auto [it, fresh] = index.emplace(d + '\x1f' + s, groups.size());
    if (fresh) {
      Group g;
      g.dataset = d;
      g.system = s;
      g.label = fmt::format("{} / {} ({})", d, s, table.cell(r, table.column("collective")));
      g.skip_reason = fmt::format(
          "{} holds collective timings (nccl-tests), not training iterations; "
          "`trainsim collective` validates those",
          table.source());
      groups.push_back(std::move(g));
    }
    MeasuredRow row;
    row.table = &table;
    row.row = r;
    groups[it->second].rows.push_back(row);
  }
}

const SystemTemplate* find_system(const std::vector<SystemTemplate>& systems, const Group& g) {
  // An entry for this very GPU wins over one for the whole system.
  const SystemTemplate* any_gpu = nullptr;
  for (const auto& s : systems)
    if (s.dataset == g.dataset && s.system == g.system) {
      if (s.gpu && *s.gpu == g.gpu) return &s;
      if (!s.gpu && !any_gpu) any_gpu = &s;
    }
  return any_gpu;
}

std::string precision_suffix(const std::string& precision) {
  return precision == "fp32" ? "" : ", " + precision;
}

// Decides whether a group can be validated; sets its label, mapping and metric, or its skip reason.
void resolve(Group& g, const std::vector<SystemTemplate>& systems, const std::string& systems_path) {
  g.label = fmt::format("{} / {}, {}, {}, batch {}{}", g.dataset, g.system, g.strategy, g.model, g.batch,
                        precision_suffix(g.precision));
  g.system_template = find_system(systems, g);
  if (!g.system_template) {
    g.skip_reason = fmt::format("no system mapping for dataset '{}', system '{}'{} in {}", g.dataset, g.system,
                                g.gpu.empty() ? "" : ", gpu '" + g.gpu + "'", systems_path);
    return;
  }
  const auto m = g.system_template->strategies.find(g.strategy);
  if (m == g.system_template->strategies.end()) {
    std::vector<std::string> mapped;
    for (const auto& [name, mapping] : g.system_template->strategies) mapped.push_back("'" + name + "'");
    g.skip_reason = fmt::format("{} at {} maps no strategy '{}' (it maps {})", systems_path, g.system_template->pointer,
                                g.strategy, join(mapped));
    return;
  }
  g.mapping = &m->second;
  g.label = fmt::format("{}, {}, {}, batch {}{}", g.mapping->label, g.system_template->label, g.model, g.batch,
                        precision_suffix(g.precision));
  if (!workloads::zoo_canonical_name(g.model)) {
    g.skip_reason = fmt::format("model '{}' is not in the zoo (trainsim workload list)", g.model);
    return;
  }
  if (g.metric_name == "samples_per_s")
    g.metric = Metric::samples_per_s;
  else if (g.metric_name.rfind("seconds_per_iteration", 0) == 0)
    g.metric = Metric::seconds_per_iteration;
  else {
    g.skip_reason = fmt::format("metric '{}' is neither samples_per_s nor seconds_per_iteration…", g.metric_name);
    return;
  }
  const auto one = std::find_if(g.rows.begin(), g.rows.end(), [](const MeasuredRow& r) { return r.gpus == 1; });
  if (one == g.rows.end()) {
    g.skip_reason = "no one-GPU row to calibrate on";
    return;
  }
  if (std::none_of(g.rows.begin(), g.rows.end(), [](const MeasuredRow& r) { return r.gpus > 1; })) {
    g.skip_reason = "only a one-GPU row: nothing to predict";
    return;
  }
  g.one_gpu_time_s = g.metric == Metric::samples_per_s ? static_cast<double>(g.batch) / one->value : one->value;
}

double in_metric(const Group& g, double iteration_time_s, int gpus) {
  return g.metric == Metric::samples_per_s ? static_cast<double>(g.batch) * gpus / iteration_time_s : iteration_time_s;
}

// The iteration time of a value in the group's metric at `gpus` GPUs (the inverse of in_metric).
double iteration_time_of(const Group& g, double value, int gpus) {
  return g.metric == Metric::samples_per_s ? static_cast<double>(g.batch) * gpus / value : value;
}

double simulated_value(const Group& g, const plan::IterationResult& r) {
  return g.metric == Metric::samples_per_s ? r.samples_per_s : r.iteration_time_s;
}

// Paleo's prediction for a row, on the links the simulated platform uses: across nodes one node's
// NICs, inside a node one GPU's fabric link.
double paleo_value(const Group& g, const plan::IterationResult& r) {
  const auto& v = r.variables;
  const double bandwidth = r.nodes > 1 ? v.network_bandwidth_Gbps * 1e9 / 8 * std::max(1, v.nics_per_node)
                                       : v.intra_node_bandwidth_GBps * 1e9;
  if (r.gpus > 1 && !(bandwidth > 0)) return std::nan("");
  const double t = fitting::paleo_iteration_time_s(fitting::paleo_scheme_for(r.strategy), g.one_gpu_time_s,
                                                   v.model_bytes, r.gpus, bandwidth > 0 ? bandwidth : 1);
  return in_metric(g, t, r.gpus);
}

double ape(double predicted, double measured) {
  return 100.0 * std::fabs(predicted - measured) / measured;
}

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : "";
}
std::string percent(double v) {
  return std::isfinite(v) ? fmt::format("{:.1f} %", v) : "n/a";
}

// Why a row's scenario does not read, said in the CSV's terms: its file and line, the columns that
// set the failing value, and the reader's reason. The scenario is built from the row and the
// system's template, so a pointer into it (/platform/intra_node/kind) names nothing the user wrote.
std::string row_problem(const Group& g, const MeasuredRow& row, const InputError& e) {
  const std::string& at = e.location();
  const CsvTable& t = *row.table;
  std::string columns;
  for (const char* column : {"precision", "batch_per_gpu", "model"})
    if (at == std::string("/workload/") + column)
      columns = fmt::format("column '{}' ('{}')", column, t.cell(row.row, t.column(column)));
  if (columns.empty() && at.rfind("/platform", 0) == 0)
    columns = fmt::format("{} GPU{} on {} node{} (columns 'gpus', 'nodes') on {}", row.gpus, row.gpus == 1 ? "" : "s",
                          row.nodes, row.nodes == 1 ? "" : "s", g.system_template->label);
  if (columns.empty())
    columns = fmt::format("the scenario of {} at {}", g.system_template->pointer, at.empty() ? "/" : at);
  // A precision name trainsim lacks may be the framework's own ("amp"): the system can map it.
  const std::string hint = at == "/workload/precision"
                               ? fmt::format("; map the precision to one it simulates under \"precisions\" at {} in {}",
                                             g.system_template->pointer, e.source())
                               : "";
  return fmt::format("{}: {}: {}: {} (trainsim cannot simulate this row{})", t.source(), t.location_of(row.row),
                     columns, e.detail(), hint);
}

// ---------------------------------------------------------------------------------------------
// Accuracy

struct PointError {
  const Group* group = nullptr;
  const MeasuredRow* row = nullptr;
  double simulated = std::nan("");
  double paleo = std::nan("");
  double error = std::nan("");        // %
  double paleo_error = std::nan("");  // %
};

struct Mape {
  std::size_t points = 0;
  double simulated = 0, paleo = 0;
  std::size_t paleo_points = 0;
  void add(const PointError& p) {
    if (std::isfinite(p.error)) simulated += p.error, ++points;
    if (std::isfinite(p.paleo_error)) paleo += p.paleo_error, ++paleo_points;
  }
  double simulated_mape() const { return points ? simulated / points : std::nan(""); }
  double paleo_mape() const { return paleo_points ? paleo / paleo_points : std::nan(""); }
};

// A folder name: letters, digits, '.', '-' and '_' kept, anything else '_'.
std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  return out;
}

// The columns the comparison's fits read, beside the measured CSV's own.
const std::vector<std::string> kCompareColumns = {"iteration_time_s", "samples_per_s", "single_gpu_time_s",
                                                  "flops_per_sample", "model_bytes",   "params"};

struct ComparisonSet {
  std::string name;    // dataset · family
  std::string folder;  // compare/<dataset>-<family>
  std::string family;  // allreduce or parameter_server
  std::string model;   // the fitting model
  std::vector<const PointError*> points;
  std::optional<fitting::DivergenceReport> report;
  std::string skip_reason;
};

// Everything one run of the command holds, from the inputs to the comparisons.
struct Validation {
  explicit Validation(const ValidateOptions& o) : options(o), dir(o.out_dir) {}

  const ValidateOptions& options;
  std::filesystem::path dir;
  std::vector<CsvTable> tables;       // training measurements; the groups' rows point into them
  std::vector<CsvTable> collectives;  // nccl-tests timings: reported, not simulated
  std::vector<Group> groups;
  std::vector<std::optional<plan::ResultRecord>> records;  // per sweep point
  std::vector<PointError> errors;                          // the multi-GPU points of the validated groups
  std::map<std::string, Mape> by_dataset;
  std::map<const Group*, Mape> by_group;
  Mape overall;
  std::vector<ComparisonSet> sets;
  std::vector<PointError> compared_rows;  // every row with a simulation; the sets point into it

  const plan::IterationResult* result_of(const MeasuredRow& row) const {
    if (!row.point || !records[*row.point] || !records[*row.point]->result) return nullptr;
    return &*records[*row.point]->result;
  }
};

// simulated.csv: the measured columns, value simulated, then the result's columns not already there.
void write_simulated_csv(const Validation& v) {
  const auto& groups = v.groups;
  const auto& tables = v.tables;
  const auto& records = v.records;
  const std::filesystem::path& dir = v.dir;
  std::vector<std::string> columns;
  for (const CsvTable& t : tables)
    for (const auto& c : t.columns())
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  const std::vector<std::string> measured_columns = columns;
  for (const auto& c : plan::result_csv_columns())
    if (c != "sim_wall_s" && std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  std::string csv;
  for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + csv_escape(columns[i]);
  csv += '\n';
  const std::string result_header = plan::result_csv_header({});
  for (const Group& g : groups) {
    if (!g.skip_reason.empty()) continue;
    for (const MeasuredRow& row : g.rows) {
      if (!row.point || !records[*row.point]) continue;
      const plan::ResultRecord& record = *records[*row.point];
      const CsvTable result_cells =
          CsvTable::parse(result_header + "\n" + plan::result_csv_row(record, {}) + "\n", "result");
      std::vector<std::string> cells;
      for (const auto& c : columns) {
        if (c == "value")
          cells.push_back(record.result ? fmt::format("{}", simulated_value(g, *record.result)) : "");
        else if (std::find(measured_columns.begin(), measured_columns.end(), c) != measured_columns.end()) {
          const auto column = row.table->find_column(c);
          cells.push_back(column ? row.table->cell(row.row, *column) : "");
        } else {
          cells.push_back(result_cells.cell(0, result_cells.column(c)));
        }
      }
      for (std::size_t i = 0; i < cells.size(); ++i) csv += (i ? "," : "") + csv_escape(cells[i]);
      csv += '\n';
    }
  }
  write_file_atomically(dir / "simulated.csv", csv);
}

// errors.csv and mape.csv.
void write_error_tables(const Validation& v) {
  const auto& groups = v.groups;
  const auto& errors = v.errors;
  const std::filesystem::path& dir = v.dir;
  const auto& by_group = v.by_group;
  const auto& by_dataset = v.by_dataset;
  const Mape& overall = v.overall;
  // The excess is what scaling costs per iteration: the point's iteration time less the group's
  // measured one-GPU iteration (the calibration, which the simulated one-GPU iteration reproduces).
  // Under weak scaling every GPU computes the one-GPU batch, so the excess is communication,
  // synchronisation and whatever else slows a GPU that has company; comparing the measured and the
  // simulated excess shows where a miss sits (scenarios/README.md, Accuracy).
  std::string csv =
      "dataset,system,group,gpus,metric,measured,simulated,error_percent,paleo,paleo_error_percent,"
      "measured_excess_s,simulated_excess_s\n";
  for (const PointError& p : errors) {
    const Group& g = *p.group;
    const double measured_excess = iteration_time_of(g, p.row->value, p.row->gpus) - g.one_gpu_time_s;
    const double simulated_excess = iteration_time_of(g, p.simulated, p.row->gpus) - g.one_gpu_time_s;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_escape(g.dataset), csv_escape(g.system),
                       csv_escape(g.label), p.row->gpus, csv_escape(g.metric_name), number(p.row->value),
                       number(p.simulated), number(p.error), number(p.paleo), number(p.paleo_error),
                       number(measured_excess), number(simulated_excess));
  }
  write_file_atomically(dir / "errors.csv", csv);
  std::string mape = "level,dataset,group,points,mape_percent,paleo_mape_percent\n";
  for (const Group& g : groups)
    if (const auto m = by_group.find(&g); m != by_group.end())
      mape += fmt::format("group,{},{},{},{},{}\n", csv_escape(g.dataset), csv_escape(g.label), m->second.points,
                          number(m->second.simulated_mape()), number(m->second.paleo_mape()));
  for (const auto& [dataset, m] : by_dataset)
    mape += fmt::format("dataset,{},,{},{},{}\n", csv_escape(dataset), m.points, number(m.simulated_mape()),
                        number(m.paleo_mape()));
  mape +=
      fmt::format("all,,,{},{},{}\n", overall.points, number(overall.simulated_mape()), number(overall.paleo_mape()));
  write_file_atomically(dir / "mape.csv", mape);
  std::string skipped = "dataset,system,group,rows,reason\n";
  for (const Group& g : groups) {
    if (!g.skip_reason.empty())
      skipped += fmt::format("{},{},{},{},{}\n", csv_escape(g.dataset), csv_escape(g.system), csv_escape(g.label),
                             g.rows.size(), csv_escape(g.skip_reason));
    for (const std::string& reason : g.skipped_rows)
      skipped += fmt::format("{},{},{},1,{}\n", csv_escape(g.dataset), csv_escape(g.system), csv_escape(g.label),
                             csv_escape(reason));
  }
  write_file_atomically(dir / "skipped.csv", skipped);
}

// Comparisons: per dataset and strategy family, the same expression fitted to measured and simulated.
// The dataset's sets by strategy family (all-reduce or parameter server), each with its rows.
void make_comparison_sets(Validation& v) {
  auto& sets = v.sets;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  auto family_of = [](const Group& g) {
    return g.mapping->strategy.value("kind", std::string("ring_allreduce")) == "parameter_server" ? "parameter_server"
                                                                                                  : "allreduce";
  };
  for (const Group& g : v.groups) {
    if (!g.skip_reason.empty()) continue;
    const std::string family = family_of(g);
    auto [it, fresh] = index.emplace(std::make_pair(g.dataset, family), sets.size());
    if (fresh) {
      ComparisonSet set;
      set.name = g.dataset + " · " + family;
      set.folder = slug(g.dataset) + "-" + family;
      set.family = family;
      set.model = family == "parameter_server" ? "ssgd_ps_iteration_calibrated" : "ssgd_ring_iteration_calibrated";
      sets.push_back(std::move(set));
    }
  }
  // The one-GPU rows too: they anchor the curves.
  for (const Group& g : v.groups)
    if (g.skip_reason.empty())
      for (const MeasuredRow& row : g.rows)
        if (v.result_of(row)) v.compared_rows.push_back(PointError{&g, &row});
  for (const PointError& p : v.compared_rows)
    sets[index.at({p.group->dataset, family_of(*p.group)})].points.push_back(&p);
}

// compare/<set>/measured.csv and simulated.csv: the measured CSV's columns and the fits' columns,
// one row per point, measured and simulated. Returns their texts.
std::pair<std::string, std::string> write_comparison_csvs(const Validation& v, const ComparisonSet& set,
                                                          const std::filesystem::path& set_dir) {
  std::filesystem::create_directories(set_dir);
  std::vector<std::string> columns = set.points.front()->row->table->columns();
  for (const auto& c : kCompareColumns)
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  std::string header;
  for (std::size_t i = 0; i < columns.size(); ++i) header += (i ? "," : "") + csv_escape(columns[i]);
  std::string measured = header + "\n", simulated = header + "\n";
  for (const PointError* p : set.points) {
    const plan::IterationResult& r = *v.result_of(*p->row);
    const Group& g = *p->group;
    const double measured_time =
        g.metric == Metric::samples_per_s ? static_cast<double>(g.batch) * p->row->gpus / p->row->value : p->row->value;
    const std::map<std::string, double> m_values{
        {"iteration_time_s", measured_time},
        {"samples_per_s", static_cast<double>(g.batch) * p->row->gpus / measured_time},
        {"single_gpu_time_s", g.one_gpu_time_s},
        {"flops_per_sample", r.variables.flops_per_sample},
        {"model_bytes", r.variables.model_bytes},
        {"params", static_cast<double>(r.variables.params)}};
    const std::map<std::string, double> s_values{{"iteration_time_s", r.iteration_time_s},
                                                 {"samples_per_s", r.samples_per_s},
                                                 {"single_gpu_time_s", r.variables.single_gpu_time_s},
                                                 {"flops_per_sample", r.variables.flops_per_sample},
                                                 {"model_bytes", r.variables.model_bytes},
                                                 {"params", static_cast<double>(r.variables.params)}};
    for (auto [values, text] : {std::pair{&m_values, &measured}, std::pair{&s_values, &simulated}}) {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        std::string cell;
        if (auto known = values->find(columns[i]); known != values->end())
          cell = fmt::format("{}", known->second);
        else if (columns[i] == "value")
          cell = fmt::format("{}", values == &m_values ? p->row->value : simulated_value(g, r));
        else if (auto c = p->row->table->find_column(columns[i]))
          cell = p->row->table->cell(p->row->row, *c);
        if (i) *text += ',';  // (not "," + …: GCC 12 misreports that as -Wrestrict once inlined here)
        *text += csv_escape(cell);
      }
      *text += '\n';
    }
  }
  write_file_atomically(set_dir / "measured.csv", measured);
  write_file_atomically(set_dir / "simulated.csv", simulated);
  return {measured, simulated};
}

void run_comparisons(Validation& v) {
  make_comparison_sets(v);
  for (ComparisonSet& set : v.sets) {
    if (set.points.empty()) {
      set.skip_reason = "no row was simulated";
      continue;
    }
    const std::filesystem::path set_dir = v.dir / "compare" / set.folder;
    const auto [measured, simulated] = write_comparison_csvs(v, set, set_dir);
    // Named relative to DIR in the reports, so that they do not depend on where DIR is.
    const std::string relative = "compare/" + set.folder + "/";
    fitting::CompareRequest request;
    request.fit.model = set.model;
    request.fit.options.bootstrap_samples = v.options.bootstrap;
    request.threshold = v.options.threshold;
    try {
      set.report = fitting::compare_measured_simulated(CsvTable::parse(measured, relative + "measured.csv"),
                                                       CsvTable::parse(simulated, relative + "simulated.csv"), request);
      write_file_atomically(set_dir / "divergence.json", fitting::divergence_json(*set.report).dump(2) + "\n");
      write_file_atomically(set_dir / "report.html", fitting::divergence_html(*set.report));
    } catch (const InputError& e) {
      set.skip_reason = e.detail();
    } catch (const RunError& e) {
      set.skip_reason = e.what();
    }
  }
}

// report.html: accuracy, the verdicts, curves and points per dataset, skipped groups, every comparison.
std::string report_html(const Validation& v) {
  const auto& groups = v.groups;
  const ValidateOptions& options = v.options;
  const auto& errors = v.errors;
  const auto& by_dataset = v.by_dataset;
  const Mape& overall = v.overall;
  const auto& sets = v.sets;
  using svg::escape_xml;
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>trainsim validation report</title>\n<style>\n"
       << fitting::divergence_css() << "</style>\n</head>\n<body>\n<h1>Measured vs simulated: validation</h1>\n";
  html << "<p>Measured: ";
  for (std::size_t i = 0; i < options.measured.size(); ++i)
    html << (i ? ", " : "") << "<code>" << escape_xml(options.measured[i]) << "</code>";
  html << "; systems: <code>" << escape_xml(options.systems) << "</code>. Each group is calibrated on its one-GPU row "
       << "only; every other row is predicted. Paleo: the measured one-GPU time plus Paleo's exchange "
       << "(no overlap) on the simulated platform's links.</p>\n";
  html << "<h2>Accuracy</h2>\n<table>\n<tr><th class=\"l\">dataset</th><th>points</th><th>MAPE trainsim</th>"
          "<th>MAPE Paleo</th></tr>\n";
  for (const auto& [dataset, m] : by_dataset)
    html << "<tr><td class=\"l\">" << escape_xml(dataset) << "</td><td>" << m.points << "</td><td>"
         << percent(m.simulated_mape()) << "</td><td>" << percent(m.paleo_mape()) << "</td></tr>\n";
  html << "<tr><th class=\"l\">all</th><th>" << overall.points << "</th><th>" << percent(overall.simulated_mape())
       << "</th><th>" << percent(overall.paleo_mape()) << "</th></tr>\n</table>\n";
  if (!sets.empty()) {
    html << "<h2>Verdicts</h2>\n<ul>\n";
    for (const ComparisonSet& set : sets)
      html << "<li><strong>" << escape_xml(set.name) << "</strong>: "
           << (set.report ? "<span class=\"verdict\">" + escape_xml(set.report->verdict) + "</span>"
                          : "not compared: " + escape_xml(set.skip_reason))
           << "</li>\n";
    html << "</ul>\n";
  }
  for (const auto& [dataset, m] : by_dataset) {
    html << "<h3>" << escape_xml(dataset) << "</h3>\n";
    svg::LineChart chart;
    chart.title = "Speed-up over one GPU: " + dataset;
    chart.x_label = "GPUs";
    chart.y_label = "speed-up (×)";
    chart.log2_x = true;
    std::size_t colour = 0;
    for (const Group& g : groups) {
      if (g.dataset != dataset || !g.skip_reason.empty()) continue;
      const MeasuredRow* one = nullptr;
      for (const MeasuredRow& row : g.rows)
        if (row.gpus == 1 && !one) one = &row;
      const plan::IterationResult* one_sim = one ? v.result_of(*one) : nullptr;
      // The group's whole label: a dataset may hold the same model and batch on several systems.
      svg::Series measured{g.label + " measured", {}, {}, svg::palette(colour), false, true, {}, {}};
      svg::Series simulated{g.label + " simulated", {}, {}, svg::palette(colour), true, true, {}, {}};
      ++colour;
      for (const MeasuredRow& row : g.rows) {
        const double t_measured = g.metric == Metric::samples_per_s ? g.batch * row.gpus / row.value : row.value;
        measured.x.push_back(row.gpus);
        measured.y.push_back(row.gpus * g.one_gpu_time_s / t_measured);
        if (const auto* r = v.result_of(row); r && one_sim) {
          simulated.x.push_back(row.gpus);
          simulated.y.push_back(row.gpus * one_sim->iteration_time_s / r->iteration_time_s);
        }
      }
      chart.series.push_back(measured);
      chart.series.push_back(simulated);
    }
    html << svg::render(chart);
    html << "<table>\n<tr><th class=\"l\">group</th><th>GPUs</th><th>measured</th><th>simulated</th><th>error</th>"
            "<th>Paleo</th><th>Paleo error</th></tr>\n";
    for (const PointError& p : errors) {
      if (p.group->dataset != dataset) continue;
      html << "<tr><td class=\"l\">" << escape_xml(p.group->label) << "</td><td>" << p.row->gpus << "</td><td>"
           << number(p.row->value) << "</td><td>" << number(p.simulated) << "</td><td>" << percent(p.error)
           << "</td><td>" << number(p.paleo) << "</td><td>" << percent(p.paleo_error) << "</td></tr>\n";
    }
    html << "<tr><th class=\"l\">MAPE</th><th></th><th></th><th></th><th>" << percent(m.simulated_mape())
         << "</th><th></th><th>" << percent(m.paleo_mape()) << "</th></tr>\n</table>\n";
  }
  html << "<h2>Skipped groups</h2>\n";
  if (std::all_of(groups.begin(), groups.end(),
                  [](const Group& g) { return g.skip_reason.empty() && g.skipped_rows.empty(); }))
    html << "<p>None.</p>\n";
  else {
    html << "<table>\n<tr><th class=\"l\">group</th><th>rows</th><th class=\"l\">reason</th></tr>\n";
    for (const Group& g : groups) {
      if (!g.skip_reason.empty())
        html << "<tr><td class=\"l\">" << escape_xml(g.label) << "</td><td>" << g.rows.size() << "</td><td class=\"l\">"
             << escape_xml(g.skip_reason) << "</td></tr>\n";
      for (const std::string& reason : g.skipped_rows)
        html << "<tr><td class=\"l\">" << escape_xml(g.label) << "</td><td>1</td><td class=\"l\">" << escape_xml(reason)
             << "</td></tr>\n";
    }
    html << "</table>\n";
  }
  html << "<h2>Where measured and simulated scaling diverge</h2>\n";
  for (const ComparisonSet& set : sets) {
    html << "<h3>" << escape_xml(set.name) << " (model <code>" << escape_xml(set.model) << "</code>)</h3>\n";
    if (set.report)
      html << fitting::divergence_html_section(*set.report, 4);
    else
      html << "<p>Not compared: " << escape_xml(set.skip_reason) << "</p>\n";
  }
  html << "<p>Generated by trainsim validate.</p>\n</body>\n</html>\n";
  return html.str();
}

// accuracy.md: the per-point table and the MAPE per dataset, in Markdown (scenarios/README.md's tables).
std::string accuracy_markdown(const Validation& v) {
  const auto& by_dataset = v.by_dataset;
  const auto& errors = v.errors;
  const Mape& overall = v.overall;
  std::string markdown =
      "| group | GPUs | measured | simulated | error | Paleo | Paleo error |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [dataset, m] : by_dataset)
    for (const PointError& p : errors)
      if (p.group->dataset == dataset)
        markdown +=
            fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", p.group->label, p.row->gpus, number(p.row->value),
                        number(p.simulated), percent(p.error), number(p.paleo), percent(p.paleo_error));
  markdown += "\n| dataset | points | MAPE trainsim | MAPE Paleo |\n|---|---:|---:|---:|\n";
  for (const auto& [dataset, m] : by_dataset)
    markdown +=
        fmt::format("| {} | {} | {} | {} |\n", dataset, m.points, percent(m.simulated_mape()), percent(m.paleo_mape()));
  markdown += fmt::format("| **all** | {} | **{}** | **{}** |\n", overall.points, percent(overall.simulated_mape()),
                          percent(overall.paleo_mape()));
  return markdown;
}

}  // namespace

namespace {

// run_validate in its steps: the inputs read and checked, one sweep point per measured row, the
// simulations, the errors, the outputs.

// Reads SYSTEMS.json and the measured CSVs into `v` (InputError before anything is simulated).
std::vector<SystemTemplate> read_inputs(const ValidateOptions& options, Validation& v) {
  std::vector<CommandFile> inputs{{"--systems", options.systems}};
  for (const std::string& m : options.measured) inputs.push_back({"the measured CSV", m});
  std::vector<CommandFile> outputs;
  for (const char* name : {"simulated.csv", "errors.csv", "mape.csv", "skipped.csv", "report.html", "accuracy.md"})
    outputs.push_back({"--out", (std::filesystem::path(options.out_dir) / name).string()});
  check_outputs_apart(inputs, outputs);
  check_output_directory(options.out_dir);
  std::vector<SystemTemplate> systems = read_systems(options.systems);
  std::vector<CsvTable>& tables = v.tables;  // the groups' rows point into them: reserved, never reallocated
  std::vector<CsvTable>& collectives = v.collectives;
  tables.reserve(options.measured.size());
  collectives.reserve(options.measured.size());
  // The same file twice (a glob that matches it twice, a copy-paste slip) would count every row
  // twice; refused rather than quietly de-duplicated, since the user most likely meant another file.
  for (std::size_t i = 0; i < options.measured.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(options.measured[j], options.measured[i], ec) && !ec)
        throw InputError(options.measured[i], "",
                         fmt::format("given twice on the command line (measured files {} and {}, the same file); "
                                     "give each measured file once",
                                     j + 1, i + 1));
    }
  for (const auto& file : options.measured) {
    CsvTable table = CsvTable::read(file);
    if (table.row_count() == 0)
      throw InputError(file, "",
                       "no data rows: the file holds only its header; expected one measurement per row below it");
    if (is_collective_benchmark(table)) {
      collectives.push_back(std::move(table));
      continue;
    }
    require_columns(table);
    tables.push_back(std::move(table));
  }
  return systems;
}

// One sweep point per measured row of a group kept. A row whose scenario does not read (a
// precision the simulator lacks, more GPUs than the system's node holds or than trainsim
// simulates) is valid data trainsim cannot simulate: it is skipped, and the terminal names its
// line and why. Without its one-GPU row, or without a multi-GPU row left, the group is skipped.
void add_group_points(Group& g, const std::string& systems_path, std::vector<SweepPoint>& points) {
  std::vector<SweepPoint> mine;
  std::vector<MeasuredRow> kept;
  for (const MeasuredRow& row : g.rows) {
    const auto precision = g.system_template->precisions.find(g.precision);
    Json doc = scenario_document(*g.system_template, *g.mapping, g.label, g.model, g.batch,
                                 precision == g.system_template->precisions.end() ? g.precision : precision->second,
                                 row.nodes, row.gpus / row.nodes);
    doc["calibration"] = Json{{"single_gpu_samples_per_s", static_cast<double>(g.batch) / g.one_gpu_time_s}};
    SweepPoint p;
    p.index = points.size() + mine.size();
    p.point = Json{{"group", g.label}, {"gpus", row.gpus}};
    try {
      p.scenario = plan::read_scenario(doc, systems_path);
    } catch (const InputError& e) {
      const std::string reason = row_problem(g, row, e);
      if (row.gpus == 1) {
        g.skip_reason = reason;
        break;
      }
      g.skipped_rows.push_back(reason);
      continue;
    }
    kept.push_back(row);
    kept.back().point = p.index;
    mine.push_back(std::move(p));
  }
  if (g.skip_reason.empty() && std::none_of(kept.begin(), kept.end(), [](const MeasuredRow& r) { return r.gpus > 1; }))
    g.skip_reason = "no multi-GPU row left to predict: " + join(g.skipped_rows, "; ");
  if (!g.skip_reason.empty()) {
    g.skipped_rows.clear();
    std::cerr << "trainsim: warning: skipped " << g.label << ": " << g.skip_reason << "\n";
    return;
  }
  for (const std::string& reason : g.skipped_rows) std::cerr << "trainsim: warning: skipped row " << reason << "\n";
  g.rows = std::move(kept);
  for (auto& p : mine) points.push_back(std::move(p));
}

// Simulates every point in forked children (options.jobs at a time) into v.records.
void simulate_points(const std::vector<SweepPoint>& points, const ValidateOptions& options, Validation& v,
                     ValidateSummary& summary) {
  auto& records = v.records;
  records.resize(points.size());
  if (points.empty()) return;
  SweepOptions sweep;
  sweep.out_dir = options.out_dir;
  sweep.jobs = options.jobs;
  sweep.progress = options.progress;
  std::vector<std::size_t> todo(points.size());
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  const SweepSummary s = run_points_locally(
      points, sweep, todo,
      [&](const std::string& line) {
        auto record = plan::ResultRecord::from_json(parse_json_text(line, "a validation point's simulation"));
        if (record.result) record.result->sim_wall_s = 0;  // the outputs are deterministic
        const std::size_t index = record.index;
        records.at(index) = std::move(record);
      },
      {});
  summary.points = s.simulated;
  summary.failed = s.failed;
  summary.interrupted = s.interrupted;
}

// A point that needs more GPU memory than the GPU has is simulated all the same (as `simulate`
// does), but its measurement cannot have been taken as described: say so at its line.
void warn_memory(const Validation& v) {
  for (const Group& g : v.groups)
    if (g.skip_reason.empty())
      for (const MeasuredRow& row : g.rows)
        if (const auto* r = v.result_of(row); r && !r->memory.fits())
          std::cerr << fmt::format(
              "trainsim: warning: {}: {}: {} at {} GPU{} does not fit in GPU memory: needs {} per GPU, "
              "the GPU has {}; simulated anyway (fits_in_memory is false in simulated.csv)\n",
              row.table->source(), row.table->location_of(row.row), g.label, row.gpus, row.gpus == 1 ? "" : "s",
              format_bytes(r->memory.required), format_bytes(r->memory.available));
}

// Errors per multi-GPU point, MAPE per group, dataset and overall.
void collect_errors(Validation& v, ValidateSummary& summary) {
  for (const Group& g : v.groups) {
    if (!g.skip_reason.empty()) {
      ++summary.skipped;
      continue;
    }
    ++summary.groups;
    for (const MeasuredRow& row : g.rows) {
      if (row.gpus == 1) continue;
      PointError p;
      p.group = &g;
      p.row = &row;
      if (const auto* r = v.result_of(row)) {
        p.simulated = simulated_value(g, *r);
        p.paleo = paleo_value(g, *r);
        p.error = ape(p.simulated, row.value);
        p.paleo_error = ape(p.paleo, row.value);
      }
      v.errors.push_back(p);
      v.by_group[&g].add(p);
      v.by_dataset[g.dataset].add(p);
      v.overall.add(p);
    }
  }
}

// stdout: the accuracy tables, what was skipped, every comparison's verdict.
void print_outcome(const Validation& v, const std::string& markdown, const ValidateSummary& summary,
                   std::ostream& out) {
  out << markdown << "\n";
  std::size_t rows_skipped = 0;
  for (const Group& g : v.groups) {
    if (!g.skip_reason.empty()) out << "skipped " << g.label << ": " << g.skip_reason << "\n";
    for (const std::string& reason : g.skipped_rows) out << "skipped row " << reason << "\n";
    rows_skipped += g.skipped_rows.size();
  }
  for (const ComparisonSet& set : v.sets) {
    if (!set.report) {
      out << set.name << ": not compared: " << set.skip_reason << "\n";
      continue;
    }
    out << set.name << ": " << set.report->verdict << "\n";
  }
  if (summary.failed)
    out << summary.failed << " simulations failed; their rows are in simulated.csv with their error\n";
  out << fmt::format(
      "{} groups validated, {} skipped{} -> {}/simulated.csv, errors.csv, mape.csv, accuracy.md, skipped.csv, "
      "report.html, compare/\n",
      summary.groups, summary.skipped,
      rows_skipped ? fmt::format(" ({} more row{} skipped)", rows_skipped, rows_skipped == 1 ? "" : "s")
                   : std::string(),
      v.options.out_dir);
}

}  // namespace

ValidateSummary run_validate(const ValidateOptions& options, std::ostream& out) {
  // Inputs first: every error of the files comes before anything is simulated.
  Validation v(options);
  const std::vector<SystemTemplate> systems = read_inputs(options, v);
  v.groups = group_rows(v.tables);
  for (Group& g : v.groups) resolve(g, systems, options.systems);
  for (const CsvTable& table : v.collectives) add_collective_groups(table, v.groups);

  std::vector<SweepPoint> points;
  for (Group& g : v.groups)
    if (g.skip_reason.empty()) add_group_points(g, options.systems, points);
  ValidateSummary summary;
  simulate_points(points, options, v, summary);
  warn_memory(v);
  collect_errors(v, summary);

  write_simulated_csv(v);
  write_error_tables(v);
  run_comparisons(v);
  write_file_atomically(v.dir / "report.html", report_html(v));
  const std::string markdown = accuracy_markdown(v);
  write_file_atomically(v.dir / "accuracy.md", markdown);
  print_outcome(v, markdown, summary, out);
  return summary;
}

}  // namespace trainsim::study
