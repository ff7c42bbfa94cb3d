#pragma once
// Test support: run the real trainsim executable and capture what it does.
#include <string>
#include <vector>

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
/// tests/data in the source tree.
std::string test_data_dir();
/// The repository root (for scenarios/).
std::string source_dir();
/// A fresh empty directory under the build tree's temporary area, unique per call.
std::string make_temp_dir(const std::string& prefix);
/// The whole content of a file; empty when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace trainsim_test
