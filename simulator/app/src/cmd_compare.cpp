// `trainsim compare --measured A.csv --simulated B.csv --out DIR`: fits the same expression to
// both and writes DIR/divergence.json and DIR/report.html (see fitting/divergence.hpp).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "commands.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/fitting/divergence.hpp"

namespace trainsim::app {
namespace {

struct CompareCliOptions {
  std::string measured;
  std::string simulated;
  std::string out;
  fitting::CompareRequest request;
  std::optional<double> lambda;
};

int run_compare_command(const CompareCliOptions& options) {
  const std::filesystem::path out(options.out);
  check_outputs_apart({{"--measured", options.measured}, {"--simulated", options.simulated}},
                      {{"--out", (out / "divergence.json").string()}, {"--out", (out / "report.html").string()}});
  check_output_directory(options.out);
  fitting::CompareRequest request = options.request;
  request.fit.options.lambda = options.lambda;
  const CsvTable measured = CsvTable::read(options.measured);
  const CsvTable simulated = CsvTable::read(options.simulated);
  const fitting::DivergenceReport report = fitting::compare_measured_simulated(measured, simulated, request);
  const std::filesystem::path dir(options.out);
  write_file_atomically(dir / "divergence.json", fitting::divergence_json(report).dump(2) + "\n");
  write_file_atomically(dir / "report.html", fitting::divergence_html(report));
  std::cout << fitting::divergence_text(report);
  std::cout << "wrote " << (dir / "divergence.json").string() << " and " << (dir / "report.html").string() << "\n";
  return 0;
}

void add_compare(CLI::App& app, Action& action) {
  auto options = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Fit the same expression to measured and simulated times and report where their scaling diverges");
  cmd->footer(
      "Both CSVs need a 'gpus' column and the --y column (default iteration_time_s), plus any column the "
      "expression uses; the default model 'scaling' uses gpus only, so `trainsim sweep`'s results.csv works as is.");
  cmd->add_option("--measured", options->measured, "CSV of measured times")->required();
  cmd->add_option("--simulated", options->simulated, "CSV of simulated times")->required();
  cmd->add_option("--out", options->out, "Directory for divergence.json and report.html")->required();
  cmd->add_option("--y", options->request.fit.y_column, "Column to fit (default iteration_time_s)");
  auto* expression = cmd->add_option("--expression", options->request.fit.expression,
                                     "muParser expression over CSV columns and constants c0, c1, …");
  cmd->add_option("--model", options->request.fit.model, "A built-in model (default: scaling)")->excludes(expression);
  cmd->add_option("--bounds", options->request.fit.bounds, "Search bounds, e.g. c0=0:1,c1=0:10 (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--threshold", options->request.threshold,
                  "Relative difference of the curves counted as divergence (default 0.10)");
  cmd->add_option("--seed", options->request.fit.options.seed, "Seed of every random choice (default 1)");
  cmd->add_option("--lambda", options->lambda, "Regularisation weight λ ≥ 0 (default: cross-validation)");
  cmd->add_option("--bootstrap", options->request.fit.options.bootstrap_samples,
                  "Bootstrap resamples per fit (default 200; 0 = none)");
  cmd->callback([options, &action] { action = [options] { return run_compare_command(*options); }; });
}

[[maybe_unused]] const bool registered = register_command(71, &add_compare);

}  // namespace
}  // namespace trainsim::app
