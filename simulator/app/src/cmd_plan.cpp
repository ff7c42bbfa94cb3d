// trainsim plan SCENARIO.json (--target-samples-per-s X | --epochs E --dataset-size N --deadline-hours H)
// Capacity planning: simulate the scenario's sweep space and rank the configurations that meet the
// target by cost (price per GPU-hour from the platform).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "commands.hpp"
#include "sweep.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"

namespace trainsim::app {
namespace {

struct PlanArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::optional<double> target_samples_per_s;
  std::optional<double> epochs;
  std::optional<double> dataset_size;
  std::optional<double> deadline_hours;
  std::optional<double> price;
  std::string out;
  std::string json;
  int jobs = 0;
  std::size_t top = 10;
  bool pessimistic = false;
};

struct Candidate {
  const plan::ResultRecord* record;
  double price_per_gpu_hour;
  double hours_to_train;  // NaN without --epochs/--dataset-size
  double cost;            // USD per hour (throughput target) or USD in total (deadline target)
};

std::string describe_point(const Json& point) {
  std::string s;
  for (const auto& [path, value] : point.items()) s += (s.empty() ? "" : ", ") + path + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return s.empty() ? "(the scenario as given)" : s;
}

/// The command line's checks: outputs apart from the scenario and writable, and one target: a
/// throughput, or a deadline with the epochs and dataset size it needs.
void check_plan_args(const PlanArgs& a) {
  {
    std::vector<CommandFile> outputs{{"--json", a.json}};
    if (!a.out.empty())
      for (const char* name : {"results.jsonl", "sweep.json"}) outputs.push_back({"--out", (std::filesystem::path(a.out) / name).string()});
    check_outputs_apart({{"the scenario", a.scenario}}, outputs);
  }
  if (!a.json.empty()) check_output_file(a.json);
  if (!a.out.empty()) check_output_directory(a.out);
  const bool throughput_target = a.target_samples_per_s.has_value();
  const bool deadline_target = a.deadline_hours.has_value();
  if (throughput_target == deadline_target)
    throw InputError("command line", "", "give either --target-samples-per-s, or --epochs, --dataset-size and --deadline-hours");
  if (deadline_target && (!a.epochs || !a.dataset_size))
    throw InputError("command line", "", "--deadline-hours needs --epochs and --dataset-size");
}

/// The price per GPU-hour of each point: --price-per-gpu-hour, else its platform's (one of them is
/// needed).
std::vector<double> point_prices(const PlanArgs& a, const std::vector<study::SweepPoint>& points) {
  std::vector<double> prices;
  for (const auto& p : points) {
    const plan::Scenario& s = p.scenario;
    const auto price = a.price ? a.price : s.platform.price_per_gpu_hour;
    if (!price)
      throw InputError(a.scenario, "/platform",
                       "no price per GPU-hour for platform '" + s.platform.name + "' (point " + describe_point(p.point) +
                           "); give platform.price_per_gpu_hour or --price-per-gpu-hour");
    prices.push_back(*price);
  }
  return prices;
}

/// The human answer: the target, then the ranked configurations that meet it, or the best
/// reachable one when none does. `planned`: the throughput a configuration is planned by.
void print_plan(const PlanArgs& a, const std::string& target_text, std::size_t simulated,
                const std::vector<Candidate>& feasible, const plan::ResultRecord* best_reachable,
                const std::function<double(const plan::ResultRecord&)>& planned) {
  const bool know_training = a.epochs && a.dataset_size;
  std::cout << fmt::format(
      "Target: {} ({} configurations simulated{})\n", target_text, simulated,
      a.pessimistic ? "; planned by the slow end of each band over the software stack's ranges" : "");
  if (feasible.empty()) {
    if (!best_reachable) {
      std::cout << "No configuration could be simulated or fits in GPU memory.\n";
      return;
    }
    const double sps = planned(*best_reachable);
    std::cout << fmt::format("No configuration meets the target. Best reachable: {} with {} GPUs: {:.1f} samples/s",
                             describe_point(best_reachable->point), best_reachable->result->gpus, sps);
    if (know_training) std::cout << fmt::format(", {:.2f} h to train", *a.epochs * *a.dataset_size / sps / 3600.0);
    std::cout << ".\n";
    return;
  }
  std::cout << fmt::format("{:>4}  {:>6}  {:>12}  {:>10}  {:>10}  {:>12}  {}\n", "rank", "GPUs", "samples/s",
                           "efficiency", "USD/hour", know_training ? "train (h, $)" : "", "configuration");
  for (std::size_t i = 0; i < feasible.size() && i < a.top; ++i) {
    const Candidate& c = feasible[i];
    const plan::IterationResult& r = *c.record->result;
    const double per_hour = r.gpus * c.price_per_gpu_hour;
    std::cout << fmt::format(
        "{:>4}  {:>6}  {:>12.1f}  {:>9.1f}%  {:>10.2f}  {:>12}  {}\n", i + 1, r.gpus, planned(*c.record),
        100 * r.scaling_efficiency, per_hour,
        know_training ? fmt::format("{:.2f}, {:.0f}", c.hours_to_train, c.hours_to_train * per_hour) : std::string(),
        describe_point(c.record->point));
  }
}

int run_plan(const PlanArgs& a) {
  check_plan_args(a);
  const bool throughput_target = a.target_samples_per_s.has_value();
  const bool know_training = a.epochs && a.dataset_size;

  const Json document = plan::load_scenario_document(a.scenario, a.sets);
  const plan::Scenario base = plan::read_scenario(document, a.scenario);
  const auto points = expand_sweep(base);
  const std::vector<double> prices = point_prices(a, points);

  SweepOptions options;
  // Without --out the points go to a private temporary directory, removed however we leave.
  struct Scratch {
    std::string path;
    ~Scratch() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove_all(path, ignored);
    }
  } scratch;
  if (a.out.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "trainsim-plan-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw RunError("cannot create a temporary directory for the plan's points");
    scratch.path = pattern;
    options.out_dir = pattern;
  } else {
    options.out_dir = a.out;
    options.resume = true;  // a plan directory is a cache of simulated points
  }
  options.jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.progress = ::isatty(STDERR_FILENO) != 0;
  const SweepSummary summary = run_sweep(base, options);
  if (summary.interrupted) return 1;
  if (summary.points == 0) return 0;  // an MPI rank other than 0: rank 0 answers
  const std::string results_path = (std::filesystem::path(options.out_dir) / "results.jsonl").string();
  std::vector<std::size_t> line_numbers;
  const std::vector<Json> lines = read_results(results_path, &line_numbers);
  const std::vector<plan::ResultRecord> results = current_results(points, lines, results_path, &line_numbers);

  // The throughput a configuration is planned by: the prediction, or with --pessimistic the slow
  // end of its band over the software stack's ranges (the prediction where it has none).
  auto planned = [&a](const plan::ResultRecord& record) {
    const plan::IterationResult& r = *record.result;
    const auto range = r.samples_per_s_range();
    return a.pessimistic && range ? range->first : r.samples_per_s;
  };
  std::vector<Candidate> feasible;
  const plan::ResultRecord* best_reachable = nullptr;
  for (const plan::ResultRecord& record : results) {
    if (!record.ok() || !record.result->memory.fits()) continue;
    const double sps = planned(record);
    const double price = prices.at(record.index);
    const double gpus = record.result->gpus;
    const double hours = know_training ? *a.epochs * *a.dataset_size / sps / 3600.0 : std::nan("");
    if (!best_reachable || sps > planned(*best_reachable)) best_reachable = &record;
    const bool meets = throughput_target ? sps >= *a.target_samples_per_s : hours <= *a.deadline_hours;
    if (!meets) continue;
    const double cost = throughput_target ? gpus * price : hours * gpus * price;
    feasible.push_back(Candidate{&record, price, hours, cost});
  }
  std::stable_sort(feasible.begin(), feasible.end(), [&planned](const Candidate& x, const Candidate& y) {
    if (x.cost != y.cost) return x.cost < y.cost;
    return planned(*x.record) > planned(*y.record);
  });

  const std::string target_text = throughput_target ? fmt::format("{:g} samples/s", *a.target_samples_per_s)
                                                    : fmt::format("{:g} epochs of {:g} samples within {:g} h", *a.epochs, *a.dataset_size, *a.deadline_hours);
  Json out;
  out["target"] = target_text;
  out["by"] = a.pessimistic ? "pessimistic" : "prediction";
  out["points"] = results.size();
  Json ranked = Json::array();
  for (std::size_t i = 0; i < feasible.size() && i < a.top; ++i) {
    const Candidate& c = feasible[i];
    const plan::IterationResult& r = *c.record->result;
    const auto range = r.samples_per_s_range();
    const double gpus = r.gpus;
    ranked.push_back(Json{
        {"rank", i + 1},
        {"point", c.record->point},
        {"gpus", r.gpus},
        {"samples_per_s", r.samples_per_s},
        {"planned_samples_per_s", planned(*c.record)},
        {"samples_per_s_range", range ? Json::array({range->first, range->second}) : Json(nullptr)},
        {"scaling_efficiency", r.scaling_efficiency},
        {"price_per_gpu_hour", c.price_per_gpu_hour},
        {"cost_per_hour_usd", gpus * c.price_per_gpu_hour},
        {"hours_to_train", know_training ? Json(c.hours_to_train) : Json(nullptr)},
        {"cost_to_train_usd", know_training ? Json(c.hours_to_train * gpus * c.price_per_gpu_hour) : Json(nullptr)}});
  }
  out["feasible"] = ranked;
  if (best_reachable)
    out["best_reachable"] = Json{{"point", best_reachable->point},
                                 {"gpus", best_reachable->result->gpus},
                                 {"samples_per_s", best_reachable->result->samples_per_s},
                                 {"planned_samples_per_s", planned(*best_reachable)}};
  if (!a.json.empty()) write_output(a.json, out.dump(2) + "\n");
  if (names_stdout(a.json)) return 0;

  print_plan(a, target_text, results.size(), feasible, best_reachable, planned);
  return 0;
}

void add_plan(CLI::App& app, Action& action) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Capacity planning: the cheapest configurations of a scenario's sweep that meet a target");
  cmd->add_option("scenario", args->scenario, "Scenario JSON file; its \"sweep\" is the search space")->required();
  cmd->add_option("--target-samples-per-s", args->target_samples_per_s, "Throughput to reach")->check(positive_number());
  cmd->add_option("--epochs", args->epochs, "Epochs to train")->check(positive_number());
  cmd->add_option("--dataset-size", args->dataset_size, "Samples per epoch")->check(positive_number());
  cmd->add_option("--deadline-hours", args->deadline_hours, "Training must finish within this many hours")->check(positive_number());
  cmd->add_option("--price-per-gpu-hour", args->price, "USD per GPU-hour for every platform (default: the platform's price)")
      ->check(positive_number());
  cmd->add_option("--out", args->out, "Keep the simulated points in DIR (reused by later runs)");
  cmd->add_option("--jobs,-j", args->jobs, "Points simulated at once (default: all cores)")->check(positive_number());
  cmd->add_option("--top", args->top, "How many configurations to list")->capture_default_str();
  cmd->add_flag("--pessimistic", args->pessimistic,
                "Plan by the slow end of each configuration's band over the software stack's ranges");
  cmd->add_option("--json", args->json, "Write the ranking as JSON to FILE ('-' = stdout)");
  cmd->add_option("--set", args->sets, "Override a scenario field: PATH=VALUE")->take_all();
  cmd->callback([args, &action] { action = [args] { return run_plan(*args); }; });
}

[[maybe_unused]] const bool registered = register_command(25, &add_plan);

}  // namespace
}  // namespace trainsim::app
