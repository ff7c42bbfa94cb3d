// trainsim validate MEASURED.csv... --systems SYSTEMS.json --out DIR [--jobs N]
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <thread>

#include "commands.hpp"
#include "trainsim/study/validate.hpp"

namespace trainsim::app {
namespace {

void add_validate(CLI::App& app, Action& action) {
  auto options = std::make_shared<study::ValidateOptions>();
  options->jobs = 0;  // all cores unless --jobs
  auto* cmd = app.add_subcommand(
      "validate", "Calibrate on each group's one-GPU measurement, simulate every measured point, report the errors and "
                  "where measured and simulated scaling diverge");
  cmd->add_option("measured", options->measured, "Measured CSV files (columns as in tests/data/validation)")->required();
  cmd->add_option("--systems", options->systems, "JSON mapping each dataset and system to a scenario template")->required();
  cmd->add_option("--out", options->out_dir, "Output directory (created if missing)")->required();
  cmd->add_option("--jobs,-j", options->jobs, "Simulations at once (default: all cores)")->check(positive_number());
  cmd->add_option("--threshold", options->threshold, "Relative gap counted as divergence by the comparisons (default 0.10)")
      ->check(positive_number());
  cmd->add_option("--bootstrap", options->bootstrap, "Bootstrap resamples per fit of the comparisons (default 200)");
  cmd->footer(
      "Writes DIR/simulated.csv (the measured columns, value simulated, plus the simulated variables), errors.csv, "
      "mape.csv, accuracy.md (the Markdown tables), skipped.csv, report.html and compare/<dataset>-<family>/ (trainsim compare's files). A group without a "
      "one-GPU row, with an unmapped system or strategy, or with a model outside the zoo is reported and skipped; so is a row "
      "trainsim cannot simulate (a warning names its line). Two rows of one point with different values are an error.\n"
      "Exit status: 0 done; 1 some simulations failed or the run was interrupted; 2 bad input.");
  cmd->callback([options, &action] {
    action = [options] {
      study::ValidateOptions o = *options;
      if (o.jobs <= 0) o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      o.progress = ::isatty(STDERR_FILENO) != 0;
      const study::ValidateSummary s = study::run_validate(o, std::cout);
      return s.failed > 0 || s.interrupted ? 1 : 0;
    };
  });
}

[[maybe_unused]] const bool registered = register_command(72, &add_validate);

}  // namespace
}  // namespace trainsim::app
