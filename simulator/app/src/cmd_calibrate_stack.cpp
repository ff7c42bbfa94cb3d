// trainsim calibrate stack SCENARIO.json --measured-iteration-s T (or --measured-samples-per-s S) --out CALIBRATED.json
// Fits one software-stack constant (simulator/README.md, Software stack constants and bands) to an
// iteration the user measured on a small run of the scenario (say 2 nodes), and writes the
// scenario with that constant set, to predict larger runs. The constant is the one whose published
// range moves the iteration most on that run, or the one --constant names. Each trial value is one
// simulation in a child process; the iteration is monotone in every constant, so a bisection over
// the constant's published range finds it. A measurement that no value in the range explains is
// refused: the stack cannot identify it.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/software_stack.hpp"
#include "trainsim/study/band.hpp"

namespace trainsim::app {
namespace {

struct CalibrateStackOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::optional<double> measured_iteration_s;
  std::optional<double> measured_samples_per_s;
  std::string constant;
  std::string out;
  std::string json_output;
};

// Bisection steps: the range's width shrinks 2^-kSteps times, far below any measurement's noise.
constexpr int kSteps = 24;

// The scenario with `key` fixed at `value` (base units): its band collapses to the value.
plan::Scenario with_constant(const plan::Scenario& scenario, plan::StackKey key, double value) {
  plan::Scenario s = scenario;
  s.stack.constants.at(static_cast<std::size_t>(key)) = {value, value, value};
  return s;
}

// The iteration times of `variants`, each simulated in a child process.
std::vector<double> simulate_all(const std::vector<plan::Scenario>& variants) {
  std::vector<double> out;
  for (const std::optional<double>& t : study::iterations_in_children(variants)) {
    if (!t) throw RunError("a calibration simulation failed; run `trainsim simulate` on the scenario to see why");
    out.push_back(*t);
  }
  return out;
}

double simulated(const plan::Scenario& scenario) {
  return simulate_all({scenario}).front();
}

// The acting constant whose range alone moves this run's iteration most.
plan::StackKey widest_constant(const plan::Scenario& scenario, const std::vector<plan::StackKey>& keys) {
  std::vector<plan::Scenario> variants;
  for (plan::StackKey key : keys) {
    const plan::StackConstant& c = scenario.stack.constants.at(static_cast<std::size_t>(key));
    variants.push_back(with_constant(scenario, key, c.low));
    variants.push_back(with_constant(scenario, key, c.high));
  }
  const std::vector<double> times = simulate_all(variants);
  plan::StackKey best = keys.front();
  double best_span = -1;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const double span = std::abs(times[2 * k + 1] - times[2 * k]);
    if (span > best_span) {
      best_span = span;
      best = keys[k];
    }
  }
  return best;
}

int run_calibrate_stack(const CalibrateStackOptions& o) {
  check_output_file(o.out);
  if (!o.json_output.empty()) check_output_file(o.json_output);
  if (o.measured_iteration_s.has_value() == o.measured_samples_per_s.has_value())
    throw InputError("command line", "", "give exactly one of --measured-iteration-s and --measured-samples-per-s");
  Json document = plan::load_scenario_document(o.scenario, o.sets);
  const plan::Scenario scenario = plan::read_scenario(document, o.scenario);
  if (scenario.cpu || scenario.gpus() < 2)
    throw InputError(o.scenario, "/platform", "the stack's constants act between GPUs: the scenario needs two or more");
  const double measured_s =
      o.measured_iteration_s ? *o.measured_iteration_s : scenario.global_batch() / *o.measured_samples_per_s;
  const std::string strategy = study::stack_strategy(scenario);
  std::vector<plan::StackKey> keys;
  for (plan::StackKey key : scenario.stack.acting_on(strategy)) {
    const plan::StackConstant& c = scenario.stack.constants.at(static_cast<std::size_t>(key));
    if (c.high > c.low) keys.push_back(key);
  }
  if (keys.empty())
    throw InputError(
        o.scenario, "/stack",
        "no software-stack constant with a range acts on this scenario's strategy (" + strategy +
            (scenario.stack.modelled ? "" : "; its stack model is \"ideal\": give stack.model \"published\"") + ")");
  plan::StackKey key = keys.front();
  if (!o.constant.empty()) {
    const auto named = plan::stack_key_named(o.constant);
    if (!named) throw InputError("command line", "--constant", "unknown constant '" + o.constant + "'");
    if (std::find(keys.begin(), keys.end(), *named) == keys.end())
      throw InputError("command line", "--constant",
                       "'" + o.constant + "' does not act on strategy " + strategy + " (or has no range to fit in)");
    key = *named;
  } else if (keys.size() > 1) {
    key = widest_constant(scenario, keys);
  }
  const std::string name = plan::stack_key_name(key);
  const double unit = plan::stack_key_unit(key);
  const plan::StackConstant range = scenario.stack.constants.at(static_cast<std::size_t>(key));
  // The iteration at both ends of the range: the measurement must lie between them.
  const std::vector<double> ends =
      simulate_all({with_constant(scenario, key, range.low), with_constant(scenario, key, range.high)});
  const double t_low = ends[0], t_high = ends[1];
  if (measured_s < std::min(t_low, t_high) || measured_s > std::max(t_low, t_high))
    throw InputError(
        "command line", o.measured_iteration_s ? "--measured-iteration-s" : "--measured-samples-per-s",
        fmt::format("the measured iteration ({:.6g} s) lies outside what {} can explain on its published "
                    "range {:g}–{:g}: {:.6g}–{:.6g} s; the stack's constants cannot identify it (check the "
                    "calibration of one GPU, the platform, or fit another --constant)",
                    measured_s, name, range.low / unit, range.high / unit, std::min(t_low, t_high),
                    std::max(t_low, t_high)));
  // Bisection: t(low) and t(high) bracket the measurement.
  double a = range.low, b = range.high, ta = t_low;
  for (int i = 0; i < kSteps; ++i) {
    const double mid = 0.5 * (a + b);
    const double t = simulated(with_constant(scenario, key, mid));
    if ((t - measured_s) * (ta - measured_s) > 0) {
      a = mid;
      ta = t;
    } else {
      b = mid;
    }
  }
  const double value = 0.5 * (a + b);
  const double fitted_s = simulated(with_constant(scenario, key, value));
  const double residual = (fitted_s - measured_s) / measured_s;

  Json& stack = document["stack"];
  if (!stack.is_object()) stack = Json::object();
  stack[name] = value / unit;
  if (!stack.contains("model")) stack["model"] = "published";
  document.erase("sweep");  // the calibrated run, not the small run's sweep space
  write_output(o.out, document.dump(2) + "\n");

  // The default this scenario's platform gets (the K80's clock spread for iteration_cv).
  const double published_default =
      plan::read_software_stack(std::nullopt, scenario.cpu ? 0.0 : scenario.platform.gpu.clock_spread)
          .constants.at(static_cast<std::size_t>(key))
          .value;
  const std::string summary = fmt::format(
      "fitted {} = {:.6g} (published default {:g}, range {:g}–{:g}) to the measured iteration {:.6g} s on {} GPUs\n"
      "simulated with it: {:.6g} s ({:+.2f} %); every other constant stays at its default\n"
      "scenario written to {}: change platform.nodes there to predict a larger run\n",
      name, value / unit, published_default / unit, range.low / unit, range.high / unit, measured_s, scenario.gpus(),
      fitted_s, 100 * residual, o.out);
  if (!o.json_output.empty()) {
    const Json j{{"constant", name},
                 {"value", value / unit},
                 {"measured_iteration_s", measured_s},
                 {"simulated_iteration_s", fitted_s},
                 {"residual", residual},
                 {"scenario", o.out}};
    write_output(o.json_output, j.dump(2) + "\n");
    if (o.json_output == "-") return 0;
  }
  std::cout << summary;
  return 0;
}

}  // namespace

void add_calibrate_stack(CLI::App& calibrate, Action& action) {
  auto o = std::make_shared<CalibrateStackOptions>();
  CLI::App* cmd = calibrate.add_subcommand(
      "stack",
      "Fit one software-stack constant (gRPC, MPI over TCP, stragglers) to an iteration measured on a small run");
  cmd->add_option("scenario", o->scenario, "Scenario JSON of the measured run (e.g. 2 nodes)")->required();
  cmd->add_option("--set", o->sets, "Override a scenario field: PATH=VALUE")->take_all();
  cmd->add_option("--measured-iteration-s", o->measured_iteration_s, "Measured seconds per iteration")
      ->check(positive_number());
  cmd->add_option("--measured-samples-per-s", o->measured_samples_per_s, "Measured throughput of the whole job")
      ->check(positive_number());
  cmd->add_option("--constant", o->constant,
                  "Constant to fit (default: the one whose range moves this run most): " +
                      fmt::format("{}", fmt::join(plan::stack_key_names(), ", ")));
  cmd->add_option("--out", o->out, "Write the calibrated scenario JSON to FILE")->required();
  cmd->add_option("--json", o->json_output, "Write the fitted constant and residual as JSON to FILE (- = stdout)");
  cmd->callback([&action, o] { action = [o] { return run_calibrate_stack(*o); }; });
}

}  // namespace trainsim::app
