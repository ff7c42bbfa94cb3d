// `trainsim fit DATA.csv --y COLUMN [--expression EXPR | --model NAME] ...`: fits the generic
// expression (Kavarakuntla et al.) to measured or simulated times; see fitting/README.md
// "Fitting and divergence".
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/fitting/analysis.hpp"
#include "trainsim/fitting/models.hpp"

namespace trainsim::app {
namespace {

struct FitCliOptions {
  std::string data;
  fitting::FitRequest request;
  std::optional<double> lambda;
  std::string json_output;  // empty: human report on stdout
  bool verbose = false;
};

std::string model_list() {
  std::string out;
  for (const auto& model : fitting::named_models()) out += "\n    " + model.name + ": " + model.description;
  return out;
}

// --bootstrap N: a whole number from 0 to the maximum, checked on the text so "-1" reads "must be ≥ 0"
// rather than CLI11's "Could not convert", and 10^8 is refused at once instead of running for hours.
CLI::Validator bootstrap_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const unsigned max = fitting::FitOptions::kMaxBootstrapSamples;
        const std::string range = fmt::format("a whole number of resamples from 0 (no intervals) to {}", max);
        const std::string negative = "must be ≥ 0 (0 = no confidence intervals), got " + text;
        const std::string too_many =
            fmt::format("must be ≤ {}, got {}: each resample re-fits every row, so the time grows with resamples × rows "
                        "(fitting/README.md, Fitting and divergence), and percentile intervals settle within a few thousand resamples",
                        max, text);
        long long value = 0;
        std::size_t used = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::out_of_range&) {
          return text.find('-') == std::string::npos ? too_many : negative;
        } catch (const std::exception&) {
          return "expected " + range + ", got '" + text + "'";
        }
        if (used != text.size()) return "expected " + range + ", got '" + text + "'";
        if (value < 0) return negative;
        if (value > max) return too_many;
        return {};
      },
      "0..MAX");
}

int run_fit_command(const FitCliOptions& options) {
  check_outputs_apart({{"the data file", options.data}}, {{"--json", options.json_output}});
  if (!options.json_output.empty()) check_output_file(options.json_output);
  fitting::FitRequest request = options.request;
  request.options.lambda = options.lambda;
  const CsvTable table = CsvTable::read(options.data);
  const fitting::FitReport report = fitting::run_fit(table, request);
  if (!options.json_output.empty()) {
    write_output(options.json_output, fitting::fit_report_json(report).dump(2) + "\n");
    if (names_stdout(options.json_output)) return 0;
  }
  std::cout << fitting::fit_report_text(report, options.verbose);
  return 0;
}

void add_fit(CLI::App& app, Action& action) {
  auto options = std::make_shared<FitCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fit", "Fit a generic expression (constants c0…ck by differential evolution) to measured or simulated times");
  cmd->footer(
      "The CSV has a header row; its columns are the variables the expression may use, plus the fitted "
      "quantity named by --y. Every row is one observation.\nBuilt-in models (--model):" +
      model_list());
  cmd->add_option("data", options->data, "CSV file: one row per observation")->required();
  cmd->add_option("--y", options->request.y_column, "Column to fit (must be non-zero)")->required();
  auto* expression = cmd->add_option("--expression", options->request.expression,
                                     "muParser expression over CSV columns and constants c0, c1, …");
  cmd->add_option("--model", options->request.model, "A built-in model (see below)")->excludes(expression);
  cmd->add_option("--bounds", options->request.bounds,
                  "Search bounds, e.g. c0=0:1,c1=0:10 (repeatable; overrides a model's defaults)")
      ->allow_extra_args(false);
  cmd->add_option("--holdout", options->request.holdout,
                  "Rule over columns, e.g. 'gpus>16': matching rows are left out of the fit and predicted");
  cmd->add_option("--seed", options->request.options.seed, "Seed of every random choice (default 1)");
  cmd->add_option("--lambda", options->lambda, "Regularisation weight λ ≥ 0 (default: chosen by cross-validation)");
  cmd->add_option("--regularization", options->request.options.regularization, "l1 (default), l2 or none")
      ->transform(CLI::CheckedTransformer(std::map<std::string, fitting::Regularization>{
          {"l1", fitting::Regularization::l1}, {"l2", fitting::Regularization::l2}, {"none", fitting::Regularization::none}}))
      ->option_text("l1|l2|none");
  cmd->add_option("--restarts", options->request.options.restarts, "Independent DE runs (default 3)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--generations", options->request.options.generations, "DE generations per run (default 150)")
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--bootstrap", options->request.options.bootstrap_samples,
                  fmt::format("Bootstrap resamples for confidence intervals (default 200; 0 = none; at most {})",
                              fitting::FitOptions::kMaxBootstrapSamples))
      ->check(bootstrap_count());
  cmd->add_option("--features", options->request.features,
                  "Columns for the regression baseline (default: the expression's variables)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag_callback("--no-baseline", [options] { options->request.baseline = false; },
                         "Skip the linear-regression baseline");
  cmd->add_option("--json", options->json_output, "Write the result as JSON to FILE ('-' = stdout, nothing else)");
  cmd->add_flag("--verbose", options->verbose, "Also print the solver's full report");
  cmd->callback([options, &action] { action = [options] { return run_fit_command(*options); }; });
}

[[maybe_unused]] const bool registered = register_command(70, &add_fit);

}  // namespace
}  // namespace trainsim::app
