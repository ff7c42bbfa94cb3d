#pragma once
// Test support: run the real trainsim executable and capture what it does. Linking it (the
// trainsim::test_cli target) makes a test wait for the app to build; files.hpp is the plain part.
#include <string>
#include <vector>

#include "trainsim_test/files.hpp"

namespace trainsim_test {

struct CliResult {
  int exit_code = -1;  ///< the process's exit status; 128+signal when it was killed by a signal
  std::string out;     ///< everything written to stdout
  std::string err;     ///< everything written to stderr
};

/// Runs the built trainsim binary with `args` (no shell), in `working_directory` when not empty.
CliResult run_trainsim(const std::vector<std::string>& args, const std::string& working_directory = "");

/// Runs any program: argv[0] is a path or a name looked up in PATH.
CliResult run_program(const std::vector<std::string>& argv, const std::string& working_directory = "");

/// Starts trainsim in the background in a process group of its own (stdout/stderr to /dev/null);
/// returns its pid. Kill the whole group with kill_group.
int start_trainsim(const std::vector<std::string>& args);
/// Sends `signal` to the process group of `pid` and reaps `pid`; returns its wait status.
int kill_group(int pid, int signal);
/// Full path of a program found in PATH; empty when absent.
std::string find_program(const std::string& name);

/// Path of the built trainsim binary (compile definition).
std::string trainsim_binary();

}  // namespace trainsim_test
