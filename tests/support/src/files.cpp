#include "trainsim_test/files.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trainsim_test {

std::string test_data_dir() {
  return TRAINSIM_TEST_DATA_DIR;
}
std::string source_dir() {
  return TRAINSIM_SOURCE_DIR;
}

std::string make_temp_dir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const auto base = std::filesystem::path(TRAINSIM_TEST_TMP_DIR);
  std::filesystem::create_directories(base);
  const auto dir = base / (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace trainsim_test
