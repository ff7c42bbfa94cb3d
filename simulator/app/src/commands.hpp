#pragma once
// Each trainsim command lives in its own cmd_*.cpp and registers itself here. A command's
// registration adds a CLI11 subcommand whose callback stores the Action to run; `main` runs it
// inside the one place that maps errors to exit codes (0 success, 1 failed run, 2 bad input).
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace trainsim::app {

/// What a parsed command does; returns the exit code (normally 0). Throws InputError (→ 2) or
/// RunError (→ 1).
using Action = std::function<int()>;

/// Adds one top-level subcommand to `app`; its callback assigns `action`.
using CommandAdder = void (*)(CLI::App& app, Action& action);

/// Validators with short messages ("must be > 0, got -1"); CLI11's own print the whole range of a
/// double, 300 digits long.
CLI::Validator positive_number();
CLI::Validator non_negative_number();

/// Says on stderr that a platform of more than 2,048 nodes takes SimGrid 3.32 minutes to build
/// (simulator/README.md, Troubleshooting and limits), so a long wait is not mistaken for a hang.
void notice_large_platform(int nodes);

/// Adds `calibrate stack` (cmd_calibrate_stack.cpp) under the `calibrate` command.
void add_calibrate_stack(CLI::App& calibrate, Action& action);

/// Registers a command; `order` sorts the commands in --help. Returns true (for static init).
bool register_command(int order, CommandAdder adder);

/// All registered commands, sorted by order.
std::vector<CommandAdder> registered_commands();

}  // namespace trainsim::app
