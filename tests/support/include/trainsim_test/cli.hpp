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

/// Path of the built trainsim binary (compile definition).
std::string trainsim_binary();
/// tests/data in the source tree.
std::string test_data_dir();
/// The repository root (for scenarios/).
std::string source_dir();
/// A fresh empty directory under the build tree's temporary area, unique per call.
std::string make_temp_dir(const std::string& prefix);

}  // namespace trainsim_test
