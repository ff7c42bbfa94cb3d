// trainsim sweep SCENARIO.json --out DIR [--jobs N] [--resume] [--set PATH=VALUE]...
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/output.hpp"
#include "sweep.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::app {
namespace {

struct SweepArgs {
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
  int jobs = 0;
  bool resume = false;
};

void add_sweep(CLI::App& app, Action& action) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Simulate every point of a scenario's sweep; write results.jsonl, results.csv, report.html");
  cmd->add_option("scenario", args->scenario, "Scenario JSON file with a \"sweep\" object")->required();
  cmd->add_option("--out", args->out, "Output directory (created if missing)")->required();
  cmd->add_option("--jobs,-j", args->jobs, "Points simulated at once (default: all cores)")->check(positive_number());
  cmd->add_flag("--resume", args->resume, "Skip points already in DIR/results.jsonl");
  cmd->add_option("--set", args->sets, "Override a scenario field: PATH=VALUE")->take_all();
  cmd->footer(
      fmt::format("Each point runs in its own process; at most {} points per sweep (a value given twice on an axis counts once). ",
                  kMaxSweepPoints) +
      "One sweep at a time per --out (a second exits 2). Results already in --out are never discarded by mistake: another sweep's "
      "results (DIR/sweep.json records whose) make a plain sweep, or a --resume that would drop some, exit 2. Under mpirun "
      "(`mpirun -np N trainsim sweep ...`) the ranks share the points and rank 0 "
      "writes the files.\nExit status: 0 all points simulated; 1 some points failed (recorded with their error) or the sweep "
      "was interrupted (the files hold every point finished so far; --resume continues); 2 bad input.");
  cmd->callback([args, &action] {
    action = [args] {
      {
        std::vector<CommandFile> outputs;
        for (const char* name : {"results.jsonl", "sweep.json", "results.csv", "report.html"})
          outputs.push_back({"--out", (std::filesystem::path(args->out) / name).string()});
        check_outputs_apart({{"the scenario", args->scenario}}, outputs);
      }
      const Json document = plan::load_scenario_document(args->scenario, args->sets);
      const plan::Scenario base = plan::read_scenario(document, args->scenario);
      count_sweep_points(base);  // a sweep over the limit is refused before --out is created
      check_output_directory(args->out);
      SweepOptions options;
      options.out_dir = args->out;
      options.jobs = args->jobs > 0 ? args->jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      options.resume = args->resume;
      options.progress = ::isatty(STDERR_FILENO) != 0;
      const SweepSummary s = run_sweep(base, options);
      if (s.points > 0)  // non-coordinator MPI ranks print nothing
        std::cout << fmt::format("{} points: {} simulated, {} already done, {} failed{} -> {}/results.jsonl, results.csv, report.html\n",
                                 s.points, s.simulated, s.skipped, s.failed, s.interrupted ? ", interrupted" : "", args->out);
      return s.interrupted || s.failed > 0 ? 1 : 0;
    };
  });
}

[[maybe_unused]] const bool registered = register_command(20, &add_sweep);

}  // namespace
}  // namespace trainsim::app
