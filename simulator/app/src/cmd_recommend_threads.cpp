// trainsim recommend-threads SCENARIO.json [--set PATH=VALUE]... [--models a,b,...] [--jobs N] [--json FILE|-]
//
// For a CPU scenario: every threading setting of a grid (inter-op pools × intra-op threads), each
// simulated in a child process like a sweep point, against the settings people start from:
//   guideline   Wang et al. (TACO 2021): pools ≈ the graph's average width, threads = cores ÷ pools
//   tf1-default TensorFlow 1.x with no settings: inter = intra = logical cores
//   tf1-mkl     TensorFlow 1.x performance guide with MKL: inter = sockets, intra = physical cores
//   intel-2019  Intel's 2019 best practices: inter = 2, intra = physical cores
//   pytorch     PyTorch eager: ops one at a time on torch.get_num_threads() = physical cores
//   ort-*       ONNX Runtime: sequential, or parallel with inter_op_num_threads = physical cores
// per `threading.framework`: PyTorch's grid has one pool; TensorFlow's and ONNX Runtime's pools share
// one intra-op pool, where the guideline (pools × threads = cores) does not apply, and says so.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "commands.hpp"
#include "sweep.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::app {
namespace {

struct RecommendArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::optional<std::string> models;  ///< --models as typed: a comma-separated list
  std::string json;
  int jobs = 0;
};

struct Setting {
  std::string name;  ///< "best", "guideline", a default's name, or "" for a grid point
  int pools = 1;
  int threads = 1;
  bool operator<(const Setting& o) const { return std::tie(pools, threads) < std::tie(o.pools, o.threads); }
};

struct Named {
  std::string name;
  std::string description;
  int pools;
  int threads;
};

// The settings people start from, on `platform`, for a graph of average width `width`, under
// `framework`. The guideline comes first.
std::vector<Named> named_settings(const platforms::CpuPlatformSpec& platform, double width, plan::Framework framework) {
  const int physical = platform.physical_cores();
  const int logical = platform.logical_cores();
  const int guideline_pools = std::clamp(static_cast<int>(std::lround(width)), 1, physical);
  const Named guideline{"guideline", "Wang et al.: pools ≈ graph width, threads = cores / pools", guideline_pools,
                        std::max(1, physical / guideline_pools)};
  switch (framework) {
    case plan::Framework::pytorch:
      // Eager runs one op at a time: the guideline's pools do not exist, it is one pool of every core.
      return {{"guideline", "Wang et al. for an eager framework: one pool (ops run one at a time), threads = cores", 1,
               physical},
              {"pytorch", "PyTorch default: torch.get_num_threads() = physical cores", 1, physical}};
    case plan::Framework::onnxruntime:
      return {{guideline.name,
               "Wang et al.: pools ≈ graph width, threads = cores / pools -- does not apply: ONNX Runtime's pools "
               "share one intra-op pool",
               guideline.pools, guideline.threads},
              {"ort-sequential", "ONNX Runtime default: sequential mode, intra_op_num_threads = physical cores", 1,
               physical},
              {"ort-parallel", "ONNX Runtime parallel mode with its defaults: inter = intra = physical cores", physical,
               physical}};
    case plan::Framework::tensorflow:
    case plan::Framework::generic: break;
  }
  Named g = guideline;
  if (framework == plan::Framework::tensorflow)
    g.description += " -- does not apply: TensorFlow's pools share one Eigen intra-op pool";
  return {
      g,
      {"tf1-default", "TensorFlow 1.x unset: inter = intra = logical cores", logical, logical},
      {"tf1-mkl", "TensorFlow 1.x guide with MKL: inter = sockets, intra = cores", platform.sockets, physical},
      {"intel-2019", "Intel 2019 best practices: inter = 2, intra = cores", 2, physical},
      {"pytorch", "PyTorch eager: one op at a time, intra = cores", 1, physical},
  };
}

// The grid: pools and threads from a list of usual counts, using between a quarter of the cores
// and every hardware thread; and one thread alone, the reference of every speedup. PyTorch eager
// has one pool; with a shared intra-op pool the threads are the pool's, whatever the pools.
std::vector<Setting> grid(const platforms::CpuPlatformSpec& platform, plan::Framework framework) {
  const int physical = platform.physical_cores();
  const int logical = platform.logical_cores();
  std::vector<int> counts{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384};
  counts.push_back(physical);
  counts.push_back(logical);
  counts.push_back(platform.cpu.cores);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  std::vector<Setting> out{{"", 1, 1}};
  const bool shared = framework == plan::Framework::tensorflow || framework == plan::Framework::onnxruntime;
  for (int p : counts)
    for (int t : counts) {
      if (framework == plan::Framework::pytorch && p > 1) continue;
      const int started = shared ? t : p * t;
      if (started <= logical && 4 * started >= physical && p <= logical) out.push_back({"", p, t});
    }
  return out;
}

struct ModelReport {
  std::string model;
  plan::Framework framework = plan::Framework::generic;
  double width = 1;
  std::map<Setting, plan::IterationResult> results;  // by (pools, threads)
  std::vector<Named> named;
  Setting best;
};

const plan::IterationResult& result_of(const ModelReport& m, int pools, int threads) { return m.results.at(Setting{"", pools, threads}); }

ModelReport recommend(const Json& document, const std::string& source, const std::string& model, int jobs) {
  Json base_doc = document;
  base_doc.erase("sweep");
  if (!model.empty()) {
    base_doc["workload"].erase("file");
    base_doc["workload"]["model"] = model;
  }
  const plan::Scenario base = plan::read_scenario(base_doc, source);
  if (!base.cpu)
    throw InputError(source, "/platform", "recommend-threads needs a CPU platform (platform.device \"cpu\" or a cpu-* preset)");
  const workloads::Workload workload = plan::load_scenario_workload(base);
  ModelReport report;
  report.model = workload.name;
  const auto [heavy, depth] = plan::heavy_width(workload);
  report.width = depth > 0 ? static_cast<double>(heavy) / depth : 1.0;
  report.framework = base.threading.framework;
  report.named = named_settings(*base.cpu, report.width, report.framework);
  std::vector<Setting> settings = grid(*base.cpu, report.framework);
  for (const auto& n : report.named) settings.push_back({n.name, n.pools, n.threads});
  std::sort(settings.begin(), settings.end());
  settings.erase(std::unique(settings.begin(), settings.end(), [](const Setting& a, const Setting& b) { return !(a < b) && !(b < a); }),
                 settings.end());

  std::vector<SweepPoint> points;
  for (const auto& s : settings) {
    Json doc = base_doc;
    doc["threading"]["inter_op_pools"] = s.pools;
    doc["threading"]["intra_op_threads"] = s.threads;
    if (report.framework == plan::Framework::onnxruntime)
      doc["threading"]["execution_mode"] = s.pools > 1 ? "parallel" : "sequential";
    SweepPoint p;
    p.index = points.size();
    p.point = Json{{"threading.inter_op_pools", s.pools}, {"threading.intra_op_threads", s.threads}};
    p.scenario = plan::read_scenario(std::move(doc), source);
    points.push_back(std::move(p));
  }
  std::vector<std::size_t> todo(points.size());
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  SweepOptions options;
  options.jobs = jobs;
  std::vector<std::string> failures;
  const SweepSummary summary = run_points_locally(points, options, todo, [&](const std::string& line) {
    const plan::ResultRecord record = plan::ResultRecord::from_json(json_root(std::make_shared<const Json>(Json::parse(line)), "child"));
    if (!record.ok()) {
      failures.push_back(record.point.dump() + ": " + record.error);
      return;
    }
    const Setting& s = settings[record.index];
    report.results.emplace(Setting{"", s.pools, s.threads}, *record.result);
  }, {});
  if (summary.interrupted) throw RunError("interrupted");
  if (!failures.empty()) throw RunError("a threading setting failed to simulate: " + failures.front());
  double best_time = 0;
  for (const auto& [s, r] : report.results)
    if (best_time == 0 || r.iteration_time_s < best_time) {
      best_time = r.iteration_time_s;
      report.best = s;
    }
  return report;
}

std::string describe(const ModelReport& m) {
  std::ostringstream out;
  const double one_thread = result_of(m, 1, 1).iteration_time_s;
  const double best = result_of(m, m.best.pools, m.best.threads).iteration_time_s;
  out << fmt::format("{} (graph width {:.2f}, {}): one thread {}\n", m.model, m.width, plan::to_string(m.framework),
                     format_seconds(one_thread));
  out << fmt::format("  {:<14} {:>6} x {:<6} {:>12} {:>10}  {:>14}\n", "setting", "pools", "threads", "iteration",
                     "speedup", "best is faster");
  auto row = [&](const std::string& name, int pools, int threads, const std::string& note) {
    const double t = result_of(m, pools, threads).iteration_time_s;
    out << fmt::format("  {:<14} {:>6} x {:<6} {:>12} {:>9.2f}x  {:>13.2f}x  {}\n", name, pools, threads,
                       format_seconds(t), one_thread / t, t / best, note);
  };
  row("best", m.best.pools, m.best.threads, "");
  for (const auto& n : m.named) row(n.name, n.pools, n.threads, n.description);
  return out.str();
}

Json to_json(const ModelReport& m) {
  const double one_thread = result_of(m, 1, 1).iteration_time_s;
  const double best = result_of(m, m.best.pools, m.best.threads).iteration_time_s;
  auto setting = [&](const std::string& name, int pools, int threads) {
    const double t = result_of(m, pools, threads).iteration_time_s;
    return Json{{"name", name}, {"inter_op_pools", pools}, {"intra_op_threads", threads}, {"iteration_time_s", t},
                {"speedup_over_one_thread", one_thread / t}, {"best_gain", t / best}};
  };
  Json named = Json::array();
  for (const auto& n : m.named) named.push_back(setting(n.name, n.pools, n.threads));
  Json grid_json = Json::array();
  for (const auto& [s, r] : m.results) grid_json.push_back(setting("", s.pools, s.threads));
  return Json{{"model", m.model},
              {"framework", std::string(plan::to_string(m.framework))},
              {"average_width", m.width},
              {"one_thread_s", one_thread},
              {"best", setting("best", m.best.pools, m.best.threads)},
              {"settings", named},
              {"grid", grid_json}};
}

// --models as typed: every comma-separated item a zoo model ("" or ",," names none and is an error,
// not a silent fall-back to the scenario's model). A model named twice (also as an alias,
// "resnet50,ResNet-50") is simulated and counted in the geometric mean once, with a warning: the
// mean is over distinct models.
std::vector<std::string> parse_models(const std::string& text) {
  const std::string expected = "expected a comma-separated list of zoo model names, e.g. resnet50,vgg16 (trainsim workload list)";
  std::vector<std::string> models;
  std::map<std::string, std::string> first_spelling;  // canonical name → as first typed
  std::size_t start = 0;
  for (std::size_t item = 1;; ++item) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string name = text.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty())
      throw InputError("--models", "", fmt::format("{}; item {} of \"{}\" is empty", expected, item, text));
    try {
      workloads::load_workload(name);
    } catch (const InputError& e) {
      throw InputError("--models", name, e.detail());
    }
    const std::string canonical = workloads::zoo_canonical_name(name).value_or(name);
    if (const auto [it, fresh] = first_spelling.emplace(canonical, name); fresh)
      models.push_back(name);
    else
      std::cerr << fmt::format("trainsim: warning: --models: {} names {} again (as {}); it is simulated and counted once\n", name,
                               canonical, it->second);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  return models;
}

void add_recommend_threads(CLI::App& app, Action& action) {
  auto args = std::make_shared<RecommendArgs>();
  auto* cmd = app.add_subcommand("recommend-threads",
                                 "CPU scenarios: the fastest inter-op pools x intra-op threads, Wang et al.'s guideline and the frameworks' defaults");
  cmd->add_option("scenario", args->scenario, "Scenario JSON file on a CPU platform")->required();
  cmd->add_option("--set", args->sets, "Override a scenario field: PATH=VALUE")->take_all();
  cmd->add_option("--models", args->models, "Run the recommendation for each of these zoo models (comma-separated) and average the gains");
  cmd->add_option("--jobs,-j", args->jobs, "Settings simulated at once (default: all cores)")->check(positive_number());
  cmd->add_option("--json", args->json, "Write the recommendation as JSON to FILE ('-' = stdout, nothing else printed)");
  cmd->footer("Every setting runs in its own process, as a sweep point. 'best is faster' is a setting's time over the best one's: "
              "the gain of switching to the best setting.");
  cmd->callback([args, &action] {
    action = [args] {
      check_outputs_apart({{"the scenario", args->scenario}}, {{"--json", args->json}});
      if (!args->json.empty()) check_output_file(args->json);
      const Json document = plan::load_scenario_document(args->scenario, args->sets);
      const plan::Scenario base = plan::read_scenario(document, args->scenario);
      if (!base.cpu)
        throw base.root().at("platform").error("recommend-threads needs a CPU platform (platform.device \"cpu\" or a cpu-* preset)");
      const int jobs = args->jobs > 0 ? args->jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      const std::vector<std::string> models = args->models ? parse_models(*args->models) : std::vector<std::string>{""};
      std::vector<ModelReport> reports;
      for (const auto& m : models) reports.push_back(recommend(document, args->scenario, m, jobs));

      // Mean gains of the best setting over each named one, and of the guideline (geometric means).
      std::map<std::string, double> log_gain, log_guideline_gain;
      for (const auto& r : reports) {
        const double best = result_of(r, r.best.pools, r.best.threads).iteration_time_s;
        const auto& g = r.named.front();
        const double guideline = result_of(r, g.pools, g.threads).iteration_time_s;
        for (const auto& n : r.named) {
          const double t = result_of(r, n.pools, n.threads).iteration_time_s;
          log_gain[n.name] += std::log(t / best) / static_cast<double>(reports.size());
          log_guideline_gain[n.name] += std::log(t / guideline) / static_cast<double>(reports.size());
        }
      }
      if (!args->json.empty()) {
        Json out{{"scenario", base.name}, {"platform", base.cpu->describe()}, {"models", Json::array()}};
        for (const auto& r : reports) out["models"].push_back(to_json(r));
        Json mean = Json::object();
        for (const auto& n : reports.front().named)
          mean[n.name] = Json{{"best_gain", std::exp(log_gain[n.name])}, {"guideline_gain", std::exp(log_guideline_gain[n.name])}};
        out["geometric_mean_gain_over"] = mean;
        write_output(args->json, out.dump(2) + "\n");
      }
      if (!names_stdout(args->json)) {
        std::cout << fmt::format("{} on {}\n", base.name, base.cpu->describe());
        for (const auto& r : reports) std::cout << describe(r);
        if (reports.size() > 1) {
          std::cout << fmt::format("geometric mean over {} models: gain of the best setting | of the guideline, over\n", reports.size());
          for (const auto& n : reports.front().named)
            std::cout << fmt::format("  {:<14} {:.2f}x | {:.2f}x\n", n.name, std::exp(log_gain[n.name]),
                                     std::exp(log_guideline_gain[n.name]));
          std::cout << "  (Wang et al., TACO 2021: their guideline beats Intel's and TensorFlow's recommended settings by 1.30x and 1.38x)\n";
        }
      }
      return 0;
    };
  });
}

[[maybe_unused]] const bool registered = register_command(25, &add_recommend_threads);

}  // namespace
}  // namespace trainsim::app
