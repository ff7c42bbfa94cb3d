#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim_test/cli.hpp"

TEST(Output, WritesAtomicallyAndLeavesNoTemporary) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output"));
  const auto file = dir / "result.json";
  trainsim::write_file_atomically(file, "first");
  trainsim::write_file_atomically(file, "second");
  std::ifstream in(file);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), "second");
  int entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(Output, UnwritableDirectoryIsARunError) {
  EXPECT_THROW(trainsim::write_file_atomically("/nonexistent-dir/x.json", "x"), trainsim::RunError);
}
