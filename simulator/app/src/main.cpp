// The trainsim executable: parses the command line, runs the chosen command and is the only place
// that turns errors into exit codes (only main chooses exit codes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/suggest.hpp"

int main(int argc, char** argv) {
  using namespace trainsim;
  install_stdout_buffer();
  CLI::App cli{"trainsim: what-if simulator for distributed deep-learning training"};
  cli.set_version_flag("--version", std::string("trainsim 0.1.0"));
  cli.require_subcommand(1);
  app::Action action;
  for (auto adder : app::registered_commands()) adder(cli, action);

  // A mistyped command gets a suggestion, not CLI11's "arguments were not expected".
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : cli.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "trainsim: error: " << unknown_name_message("command", argv[1], names) << " (trainsim --help lists them)\n";
      return 2;
    }
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = cli.exit(e);  // prints help, version, or the usage error
    try {
      flush_stdout();  // help or version lost to a full disk is a failed run
    } catch (const RunError& lost) {
      std::cerr << "trainsim: run failed: " << lost.what() << "\n";
      return 1;
    }
    return code == 0 ? 0 : 2;
  }
  if (!action) {
    std::cerr << "trainsim: no command given; see trainsim --help\n";
    return 2;
  }
  try {
    const int code = action();
    // Output lost to a full disk or a closed descriptor is a failed run, not a success: every
    // command's stdout is flushed and checked here, once, before the exit status is chosen.
    flush_stdout();
    return code;
  } catch (const InputError& e) {
    std::cerr << "trainsim: error: " << e.what() << "\n";
    return 2;
  } catch (const RunError& e) {
    std::cerr << "trainsim: run failed: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "trainsim: run failed: " << e.what() << "\n";
    return 1;
  }
}
