#pragma once
// Test support without the trainsim executable: where the test data and the source tree are, fresh
// temporary directories, whole files. Unit and simulation tests use only this part (and fork.hpp),
// so they build without waiting for the app; cli.hpp adds running the built trainsim.
#include <string>

namespace trainsim_test {

/// tests/data in the source tree.
std::string test_data_dir();
/// The repository root (for scenarios/).
std::string source_dir();
/// A fresh empty directory under the build tree's temporary area, unique per call.
std::string make_temp_dir(const std::string& prefix);
/// The whole content of a file; empty when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace trainsim_test
