// Input limits (the 2026 new-user audit): every reader's text comes through read_input_text (bounded size, safe on
// files that never end) and check_json_depth (bounded nesting, checked before any recursive parse).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim_test/errors.hpp"

namespace {

namespace fs = std::filesystem;
using trainsim::InputError;

// A fresh temporary directory, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "trainsim-input-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

using trainsim_test::error_of;

TEST(JsonDepth, HundredThousandLevelsAreAnErrorAtTheFirstLevelTooDeep) {
  const std::string arrays(100000, '[');
  const InputError e = error_of([&] { (void)trainsim::parse_json_text(arrays, "deep.json"); });
  EXPECT_EQ(e.source(), "deep.json");
  EXPECT_EQ(e.location(), "line 1, column 257");
  EXPECT_NE(e.detail().find("nested deeper than 256"), std::string::npos);

  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_EQ(error_of([&] { (void)trainsim::parse_json_text(objects, "deep.json"); }).location(), "line 1, column 1281");
}

TEST(JsonDepth, TheLimitItselfIsRead) {
  const std::size_t n = trainsim::kMaxJsonDepth;
  const std::string text = std::string(n, '[') + std::string(n, ']');
  const trainsim::JsonNode root = trainsim::parse_json_text(text, "ok.json");
  EXPECT_TRUE(root.is_array());
  const std::string one_more = "\n  " + std::string(n + 1, '[') + std::string(n + 1, ']');
  EXPECT_EQ(error_of([&] { (void)trainsim::parse_json_text(one_more, "x.json"); }).location(), "line 2, column 259");
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  const std::string text = "{\"name\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  EXPECT_NO_THROW((void)trainsim::parse_json_text(text, "strings.json"));
}

TEST(InputFile, LargerThanTheLimitIsRefusedWithTheLimit) {
  TempDir dir;
  const fs::path big = dir.path / "big.json";
  { std::ofstream(big) << ""; }
  fs::resize_file(big, trainsim::kMaxInputBytes + 1);  // sparse: nothing is written
  const InputError e = error_of([&] { (void)trainsim::read_json_file(big); });
  EXPECT_EQ(e.source(), big.string());
  EXPECT_NE(e.detail().find("larger than 32 MiB"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)trainsim::CsvTable::read(big); }).detail().find("larger than 32 MiB"), std::string::npos);
}

TEST(InputFile, AtTheLimitIsRead) {
  TempDir dir;
  const fs::path file = dir.path / "limit.txt";
  { std::ofstream(file) << "x"; }
  fs::resize_file(file, trainsim::kMaxInputBytes);
  EXPECT_EQ(trainsim::read_input_text(file, "file").size(), trainsim::kMaxInputBytes);
}

TEST(InputFile, AFifoThatNeverEndsStopsAtTheLimit) {
  TempDir dir;
  const fs::path fifo = dir.path / "endless";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::FILE* out = std::fopen(fifo.c_str(), "wb");
    if (!out) return;
    const std::string chunk(1 << 16, '[');
    while (std::fwrite(chunk.data(), 1, chunk.size(), out) == chunk.size()) {
    }
    std::fclose(out);
  });
  const InputError e = error_of([&] { (void)trainsim::read_json_file(fifo); });
  writer.join();  // the reader closed its end: the writer's next write fails (SIGPIPE ignored below)
  EXPECT_NE(e.detail().find("larger than 32 MiB"), std::string::npos);
}

TEST(InputFile, DirectoryAndMissingFileNameThePath) {
  TempDir dir;
  EXPECT_NE(error_of([&] { (void)trainsim::read_json_file(dir.path); }).detail().find("is a directory"), std::string::npos);
  const InputError missing = error_of([&] { (void)trainsim::read_json_file(dir.path / "none.json"); });
  EXPECT_EQ(missing.source(), (dir.path / "none.json").string());
  EXPECT_NE(missing.detail().find("cannot open file"), std::string::npos);
}

TEST(JsonNumbers, AnUnsignedBeyondInt64IsNotReadAsNegative) {
  const trainsim::JsonNode root = trainsim::parse_json_text("{\"n\": 18446744073709551615}", "n.json");
  const InputError e = error_of([&] { (void)root.at("n").int_at_least(1); });
  EXPECT_EQ(e.location(), "/n");
  EXPECT_NE(e.detail().find("too large: got 18446744073709551615"), std::string::npos);
}

// The FIFO writer must not be killed by SIGPIPE when the reader stops.
const bool sigpipe_ignored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

}  // namespace
