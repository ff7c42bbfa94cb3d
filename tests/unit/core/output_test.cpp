#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim_test/files.hpp"

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

namespace {
std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}
}  // namespace

TEST(Output, FollowsASymbolicLinkAndKeepsIt) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output-link"));
  std::filesystem::create_directory(dir / "real");
  std::filesystem::create_symlink("real/target.json", dir / "link.json");  // dangling: the target is new
  trainsim::check_output_file((dir / "link.json").string());
  trainsim::write_file_atomically(dir / "link.json", "first");
  trainsim::write_file_atomically(dir / "link.json", "second");  // now over a regular target
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.json"));
  EXPECT_EQ(read_all(dir / "real" / "target.json"), "second");
}

TEST(Output, KeepsTheModeOfTheFileItReplaces) {
  const auto file = std::filesystem::path(trainsim_test::make_temp_dir("output-mode")) / "x.json";
  trainsim::write_file_atomically(file, "first");
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  trainsim::write_file_atomically(file, "second");
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(Output, WritesIntoAFifoWithoutReplacingIt) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output-fifo"));
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  trainsim::check_output_file(fifo.string());  // checks without opening: a reader would see an end of file
  std::string got;
  std::thread reader([&] { got = read_all(fifo); });
  trainsim::write_file_atomically(fifo, "through the fifo");
  reader.join();
  EXPECT_EQ(got, "through the fifo");
  EXPECT_EQ(std::filesystem::status(fifo).type(), std::filesystem::file_type::fifo);
  int entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1) << "nothing is created beside a FIFO";
}

TEST(Output, WritesThroughAnOpenDescriptorPath) {
  int channel[2];
  ASSERT_EQ(::pipe(channel), 0);
  const std::string path = "/dev/fd/" + std::to_string(channel[1]);
  trainsim::check_output_file(path);
  trainsim::write_file_atomically(path, "piped");
  ::close(channel[1]);
  char buffer[16] = {};
  EXPECT_EQ(::read(channel[0], buffer, sizeof buffer - 1), 5);
  EXPECT_STREQ(buffer, "piped");
  ::close(channel[0]);
}
