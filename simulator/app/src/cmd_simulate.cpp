// trainsim simulate SCENARIO.json [--set PATH=VALUE]... [--json FILE|-] [--trace FILE] [--dump-plan FILE|-] [--csv FILE|-]
// trainsim simulate --plan PLAN.json [same outputs]: replays a plan written by --dump-plan, possibly edited
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim/plan/result.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim/study/band.hpp"

namespace trainsim::app {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::string plan;
  std::vector<std::string> sets;
  std::string json;
  std::string trace;
  std::string dump_plan;
  std::string csv;
  std::size_t links = 5;
  bool reproducible = false;
  bool no_band = false;
};

/// Terminal columns of UTF-8 text (link names hold arrows): code points, not bytes.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The summary of a GPU run, from the plan it ran (a scenario's or a replayed one: the same lines).
std::string summary(const plan::TrainingPlan& plan, const engine::IterationResult& r) {
  std::ostringstream out;
  out << plan.name << "\n";
  // Transport and representation only when not the defaults, so the common summary stays as it was.
  const std::string strategy = r.strategy + (r.transport != "gpu" ? ", transport " + r.transport : std::string()) +
                               (r.representation != "auto" ? ", representation " + r.representation : std::string());
  out << fmt::format("  {} GPUs ({} node{} x {} {}), {}, {} buckets, overlap {}, network model {}\n", r.gpus, r.nodes,
                     r.nodes == 1 ? "" : "s", plan.gpus_per_node, plan.platform.gpu.name, strategy,
                     plan.bucket_bytes > 0 ? format_bytes(plan.bucket_bytes) : std::string("per-layer"),
                     plan.overlap ? "on" : "off", r.network_model);
  out << fmt::format("  global batch {:g} ({} scaling), {}\n", r.global_batch, plan.scaling, plan.variables.precision);
  if (plan.accumulation_steps > 1 || plan.zero_stage > 0 || plan.checkpoint_every_layers > 0) {
    std::vector<std::string> parts;
    if (plan.accumulation_steps > 1)
      parts.push_back(
          fmt::format("{} micro-batches of {:g} per step", plan.accumulation_steps, plan.profiles.front().batch));
    if (plan.zero_stage > 0)
      parts.push_back(fmt::format("ZeRO stage {} over {} GPUs{}", plan.zero_stage, plan.shard_group,
                                  plan.hybrid_sharding ? " (each node; replicated across nodes)" : ""));
    if (plan.checkpoint_every_layers > 0)
      parts.push_back(fmt::format("activations checkpointed every {} layers", plan.checkpoint_every_layers));
    out << "  data parallelism      " << fmt::format("{}", fmt::join(parts, ", ")) << "\n";
  }
  out << fmt::format("  iteration time        {}\n", format_seconds(r.iteration_time_s));
  out << fmt::format("  throughput            {:.1f} samples/s\n", r.samples_per_s);
  if (const auto range = r.samples_per_s_range())
    out << fmt::format("  band                  {:.1f}–{:.1f} samples/s over the software stack's ranges: {}\n",
                       range->first, range->second, r.band->sentence);
  out << fmt::format("  scaling efficiency    {:.1f} %  (one GPU: {:.1f} samples/s{})\n", 100 * r.scaling_efficiency,
                     r.single_gpu_samples_per_s, plan.calibrated ? ", calibrated" : "");
  out << fmt::format("  breakdown             compute {} | communication {} (exposed {}) | idle {}\n",
                     format_seconds(r.breakdown.compute_s), format_seconds(r.breakdown.communication_s),
                     format_seconds(r.breakdown.exposed_communication_s), format_seconds(r.breakdown.idle_s));
  if (r.breakdown.comm_kernel_slowdown_s > 0)
    out << fmt::format("  compute slowed        {} by collective kernels holding SMs while they overlap it\n",
                       format_seconds(r.breakdown.comm_kernel_slowdown_s));
  const auto& m = r.memory;
  if (m.largest_batch_per_gpu >= 0)
    out << fmt::format("  largest batch per GPU {} (the most samples whose memory fits in {}){}\n",
                       m.largest_batch_per_gpu, format_bytes(m.available),
                       r.largest_batch
                           ? fmt::format("; {} without checkpointing, {} checkpointing every {} layers",
                                         r.largest_batch->without_checkpointing, r.largest_batch->with_checkpointing,
                                         r.largest_batch->checkpoint_every_layers)
                           : std::string());
  out << fmt::format("  memory per GPU        {} of {}{} (weights {}, gradients {}, optimizer {}, activations {}, framework {})\n",
                     format_bytes(m.total), format_bytes(m.available), m.fits() ? "" : "  ** DOES NOT FIT **",
                     format_bytes(m.weights), format_bytes(m.gradients), format_bytes(m.optimizer_state),
                     format_bytes(m.activations), format_bytes(m.framework));
  if (m.fits() && m.total > m.available)
    out << fmt::format("                        fits once PyTorch's allocator frees its cached blocks: needs {}\n",
                       format_bytes(m.required));
  if (m.gathered_parameters > 0 || m.recompute_activations > 0)
    out << fmt::format("                        + gathered parameters {}, recomputed activations {}\n",
                       format_bytes(m.gathered_parameters), format_bytes(m.recompute_activations));
  out << fmt::format("  network traffic       {} in {} bucket{}\n", format_bytes(r.network_bytes), r.buckets.size(),
                     r.buckets.size() == 1 ? "" : "s");
  if (const auto* top = r.most_loaded_server()) {
    // Per-server bytes: what each server receives from all workers (it sends as much back).
    double total = 0, least = top->bytes;
    for (const auto& sv : r.servers) {
      total += sv.bytes;
      least = std::min(least, sv.bytes);
    }
    out << fmt::format("  parameter servers     {} ({} placement): most loaded server {} receives {} ({:.1f} % of {}), least loaded {}\n",
                       r.servers.size(), r.variable_placement, top->id, format_bytes(top->bytes),
                       total > 0 ? 100 * top->bytes / total : 0.0, format_bytes(total), format_bytes(least));
  }
  if (!r.busiest_links.empty()) {
    // busy: the link's busy time over the iteration; limits: the part of the iteration in which
    // every GPU waited for communication while the link was busy.
    std::size_t width = 0;
    for (const auto& l : r.busiest_links) width = std::max(width, display_width(l.name));
    width = std::max<std::size_t>(width, 11);
    out << fmt::format("  busiest links{}  {:<8} {:>11}  {:>7}  {:>7}\n", std::string(width - 11, ' '), "class",
                       "bytes", "busy", "limits");
    for (const auto& l : r.busiest_links)
      out << fmt::format("    {}{}  {:<8} {:>11}  {:5.1f} %  {:5.1f} %\n", l.name,
                         std::string(width - display_width(l.name), ' '), l.link_class, format_bytes(l.bytes),
                         100 * l.busy_fraction, 100 * l.limit_share);
  }
  if (!r.bound.sentence.empty()) out << "  " << r.bound.sentence << "\n";
  if (const auto& in = r.input_pipeline)
    out << fmt::format("  input pipeline        {} loader thread{} per GPU ({:g} cores each) load a batch in {}; {}\n", in->loader_threads,
                       in->loader_threads == 1 ? "" : "s", in->cores_per_gpu, format_seconds(in->load_s),
                       in->bound() ? "the GPUs wait " + format_seconds(in->wait_s) + " per iteration for data" : std::string("hidden behind the iteration"));
  out << fmt::format("  simulated in {:.3f} s\n", r.sim_wall_s);
  return out.str();
}

// A CPU scenario: the node, the threading, and how the ops used the cores (from the plan it ran).
std::string cpu_summary(const plan::CpuPlan& plan, const engine::IterationResult& r, std::size_t top_ops) {
  const plan::CpuReport& c = *r.cpu;
  std::ostringstream out;
  out << plan.name << "\n";
  out << fmt::format("  {} ({} mode), {} inter-op pool{} x {} intra-op thread{}\n", plan.platform.describe(), c.mode, c.inter_op_pools,
                     c.inter_op_pools == 1 ? "" : "s", c.intra_op_threads, c.intra_op_threads == 1 ? "" : "s");
  out << fmt::format("  batch {:g}, {}, graph width {:.2f}\n", r.global_batch, to_string(plan.precision), c.average_width);
  out << fmt::format("  iteration time        {}\n", format_seconds(r.iteration_time_s));
  out << fmt::format("  throughput            {:.1f} samples/s{}\n", r.samples_per_s, plan.calibrated ? " (calibrated)" : "");
  out << fmt::format("  core utilisation      {:.1f} % of {} physical cores\n", 100 * c.core_utilisation, c.physical_cores);
  out << fmt::format("  ops at once           {:.2f} on average, {:.1f} threads each\n", c.mean_concurrent_ops, c.mean_threads_per_op);
  out << fmt::format("  memory bandwidth      {:.1f} % busy\n", 100 * c.memory_busy_fraction);
  std::vector<const plan::CpuOpUse*> ops;
  for (const auto& op : c.ops) ops.push_back(&op);
  std::stable_sort(ops.begin(), ops.end(), [](const auto* a, const auto* b) { return a->end_s - a->start_s > b->end_s - b->start_s; });
  if (ops.size() > top_ops) ops.resize(top_ops);
  if (!ops.empty()) out << "  longest ops (threads, time)\n";
  for (const auto* op : ops) out << fmt::format("    {:<40} {:>3}  {}\n", op->name, op->threads, format_seconds(op->end_s - op->start_s));
  out << "  " << r.bound.sentence << "\n";
  out << fmt::format("  simulated in {:.3f} s\n", r.sim_wall_s);
  return out.str();
}

/// The command line's own checks: at most one output on stdout, outputs apart from the scenario and
/// writable, a scenario or a plan (not both, and no --set with a plan). Returns how many outputs
/// write to stdout.
int check_simulate_args(const SimulateArgs& args) {
  const int to_stdout = names_stdout(args.json) + names_stdout(args.dump_plan) + names_stdout(args.csv);
  if (to_stdout > 1)
    throw InputError("command line", "", "only one of --json, --dump-plan and --csv can write to stdout ('-')");
  check_outputs_apart(
      {{"the scenario", args.scenario}},
      {{"--json", args.json}, {"--trace", args.trace}, {"--dump-plan", args.dump_plan}, {"--csv", args.csv}});
  for (const std::string* out : {&args.json, &args.trace, &args.dump_plan, &args.csv})
    if (!out->empty()) check_output_file(*out);
  // A plan replaces the scenario and its overrides: it is what they would have been planned into.
  if (!args.plan.empty() && !args.scenario.empty())
    throw InputError("command line", "",
                     "give a scenario or --plan " + args.plan + ", not both (a plan is a planned scenario)");
  if (!args.plan.empty() && !args.sets.empty())
    throw InputError("command line", "", "--set overrides a scenario; with --plan, edit the plan file instead");
  if (args.plan.empty() && args.scenario.empty())
    throw InputError("command line", "", "give a scenario file, or --plan PLAN.json (written by --dump-plan)");
  return to_stdout;
}

/// Replays the plan file at `path`: a CPU scenario's plan (a thread schedule of one node) or a GPU
/// training plan.
engine::IterationResult replay_plan(const std::string& path, engine::SimulateOptions& options) {
  const JsonNode document = read_json_file(path);
  if (document.is_object() && document.has("physical_cores") && !document.has("gpu_plans"))
    return engine::simulate_cpu_plan(plan::CpuPlan::from_json(document), options);
  const plan::TrainingPlan replayed = plan::TrainingPlan::from_json(document);
  options.before_build = [&replayed] { notice_large_platform(replayed.nodes); };
  return engine::simulate_plan(replayed, options, path);
}

/// Plans and simulates the scenario file with its --set overrides, with the band over the software
/// stack's ranges (study::simulate_with_band) unless --no-band.
engine::IterationResult simulate_scenario(const SimulateArgs& args, engine::SimulateOptions& options) {
  const Json document = plan::load_scenario_document(args.scenario, args.sets);
  const plan::Scenario scenario = plan::read_scenario(document, args.scenario);
  if (scenario.cpu) notice_large_platform(scenario.platform.nodes);
  // After the size limits, so that a refused scenario gets one message.
  options.before_build = [&scenario] { notice_large_platform(scenario.platform.nodes); };
  return args.no_band ? engine::simulate_iteration(scenario, options) : study::simulate_with_band(scenario, options);
}

/// --json and --csv: the result object, and the result as one row of a sweep's results.csv.
void write_result_files(const SimulateArgs& args, const engine::IterationResult& result) {
  if (!args.json.empty()) write_output(args.json, result.to_json().dump(2) + "\n");
  if (!args.csv.empty()) {
    plan::ResultRecord record;
    record.name = result.name;
    record.result = result;
    write_output(args.csv, plan::result_csv_header({}) + "\n" + plan::result_csv_row(record, {}) + "\n");
  }
}

/// The simulate command: a scenario planned and simulated, or a plan replayed; its output files, and
/// on stdout (unless an output took it) the summary, with the warnings on stderr.
int run_simulate(const SimulateArgs& args) {
  const int to_stdout = check_simulate_args(args);
  engine::SimulateOptions options;
  options.trace_path = args.trace;
  options.busiest_links = args.links;
  std::optional<plan::TrainingPlan> ran;  // the plan the summary describes
  options.on_plan = [&args, &ran](const plan::TrainingPlan& plan) {
    if (!args.dump_plan.empty()) write_output(args.dump_plan, plan.to_json().dump(2) + "\n");
    ran = plan;
  };
  std::optional<plan::CpuPlan> ran_cpu;
  options.on_cpu_plan = [&args, &ran_cpu](const plan::CpuPlan& plan) {
    if (!args.dump_plan.empty()) write_output(args.dump_plan, plan.to_json().dump(2) + "\n");
    ran_cpu = plan;
  };
  engine::IterationResult result =
      args.plan.empty() ? simulate_scenario(args, options) : replay_plan(args.plan, options);
  if (args.reproducible) result.sim_wall_s = 0;
  write_result_files(args, result);
  if (to_stdout > 0) return 0;
  std::cout << (result.cpu ? cpu_summary(*ran_cpu, result, args.links) : summary(*ran, result));
  // Every warning (out of memory first) is in the result's warnings[]; stderr repeats them for
  // the human summary only, so --json - leaves stderr clean for scripts.
  for (const auto& w : result.warnings) std::cerr << "trainsim: warning: " << w.message << "\n";
  return 0;
}

void add_simulate(CLI::App& app, Action& action) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "Simulate one training iteration of a scenario: time, throughput, breakdown");
  cmd->add_option("scenario", args->scenario, "Scenario JSON file (or --plan)");
  cmd->add_option("--set", args->sets, "Override a scenario field: PATH=VALUE (dotted path, JSON value)")->take_all();
  cmd->add_option("--plan", args->plan,
                  "Replay a training plan written by --dump-plan (possibly edited) instead of planning a scenario: the same "
                  "outputs, nothing decided anew");
  cmd->add_option("--json", args->json, "Write the result object to FILE ('-' = stdout, nothing else printed)");
  cmd->add_option("--trace", args->trace, "Write a Chrome trace (Perfetto, chrome://tracing) to FILE");
  cmd->add_option("--dump-plan", args->dump_plan,
                  "Write the training plan (per-GPU task times, buckets, communication operations, servers) as JSON to FILE ('-' = stdout, nothing else printed)");
  cmd->add_option("--csv", args->csv,
                  "Write the result as a one-row CSV in the schema of a sweep's results.csv (what fit and compare read) to FILE ('-' = stdout)");
  cmd->add_option("--links", args->links, "How many of the busiest links (CPU scenarios: longest ops) to report")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_flag("--reproducible", args->reproducible, "Write sim_wall_s as 0 so the JSON is byte-identical across runs");
  cmd->add_flag("--no-band", args->no_band,
                "Skip the band over the software stack's ranges (it simulates the scenario 2 + k more times)");
  cmd->callback([args, &action] { action = [args] { return run_simulate(*args); }; });
}

[[maybe_unused]] const bool registered = register_command(10, &add_simulate);

}  // namespace
}  // namespace trainsim::app
