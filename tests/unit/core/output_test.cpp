#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

namespace {
std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

// `--json /dev/fd/N >> log`: the descriptor is written through, at its offset and with its
// O_APPEND; the file is never reopened with O_TRUNC (review finding 1).
TEST(Output, DescriptorPathOnAnAppendedFileAppends) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output_fd_append"));
  const auto log = dir / "log.txt";
  { std::ofstream(log) << "earlier\n"; }
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    const std::string path = prefix + std::to_string(fd);
    trainsim::check_output_file(path);
    EXPECT_FALSE(trainsim::names_stdout(path));
    trainsim::write_file_atomically(path, "json\n");
    ::close(fd);
  }
  EXPECT_EQ(slurp(log), "earlier\njson\njson\n");
}

// `--json /dev/fd/N > out`: what follows on the same descriptor comes after, not over it.
TEST(Output, DescriptorPathOnATruncatedFileKeepsTheOffset) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output_fd_offset"));
  const auto out = dir / "out.txt";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "head\n", 5), 5);
  trainsim::write_file_atomically("/dev/fd/" + std::to_string(fd), "json\n");
  ASSERT_EQ(::write(fd, "summary\n", 8), 8);
  ::close(fd);
  EXPECT_EQ(slurp(out), "head\njson\nsummary\n");
}

TEST(Output, DescriptorOneIsStandardOutput) {
  EXPECT_TRUE(trainsim::names_stdout("-"));
  EXPECT_TRUE(trainsim::names_stdout("/dev/stdout"));
  EXPECT_TRUE(trainsim::names_stdout("/dev/fd/1"));
  EXPECT_TRUE(trainsim::names_stdout("/proc/self/fd/1"));
  EXPECT_TRUE(trainsim::names_stdout("/proc/" + std::to_string(::getpid()) + "/fd/1"));
  EXPECT_FALSE(trainsim::names_stdout("/dev/stderr"));
  EXPECT_FALSE(trainsim::names_stdout("out.json"));
}

// New outputs get 0666 less the umask; a replaced file keeps its mode (review finding 4).
TEST(Output, NewFilesFollowTheUmaskReplacedFilesKeepTheirMode) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output_umask"));
  const mode_t saved = ::umask(027);
  trainsim::write_file_atomically(dir / "new.json", "x");
  ::umask(077);
  trainsim::write_file_atomically(dir / "other.json", "x");
  ::umask(saved);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(::stat((dir / "other.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::chmod((dir / "new.json").c_str(), 0604), 0);
  trainsim::write_file_atomically(dir / "new.json", "y");
  ASSERT_EQ(::stat((dir / "new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0604u);
}

// An output is never an input of the command nor another output (review finding 3).
TEST(Output, RefusesAnOutputThatIsAnInputOrAnotherOutput) {
  const auto dir = std::filesystem::path(trainsim_test::make_temp_dir("output_apart"));
  const auto scenario = dir / "s.json";
  { std::ofstream(scenario) << "{}"; }
  std::filesystem::create_symlink(scenario, dir / "link.json");
  auto message = [](const std::vector<trainsim::CommandFile>& in, const std::vector<trainsim::CommandFile>& out) -> std::string {
    try {
      trainsim::check_outputs_apart(in, out);
    } catch (const trainsim::InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string s = scenario.string();
  EXPECT_NE(message({{"the scenario", s}}, {{"--json", s}}).find("--json: '" + s + "' is the scenario"), std::string::npos);
  EXPECT_NE(message({{"the scenario", s}}, {{"--trace", (dir / "link.json").string()}}).find("--trace:"), std::string::npos)
      << "a link to the input is the input";
  EXPECT_NE(message({{"the scenario", s}}, {{"--csv", (dir / "." / "s.json").string()}}).find("--csv:"), std::string::npos);
  const std::string fresh = (dir / "a.json").string();
  const std::string both = message({{"the scenario", s}}, {{"--json", fresh}, {"--csv", (dir / "sub" / ".." / "a.json").string()}});
  EXPECT_NE(both.find("--csv:"), std::string::npos) << both;
  EXPECT_NE(both.find("also the file of --json"), std::string::npos) << both;
  // Apart, stdout, devices and preset names are fine.
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message({{"the scenario", s}, {"--platform", "dgx-h100"}}, {{"--json", fresh}, {"--csv", "-"}, {"--trace", "-"}, {"--dump-plan", fifo}}), "");
  EXPECT_EQ(message({{"--platform", "dgx-h100"}}, {{"--json", "dgx-h100"}}), "") << "a preset name is no file";
  EXPECT_EQ(message({}, {{"--json", fifo}, {"--csv", fifo}}), "") << "a FIFO or a device is never compared";
}
