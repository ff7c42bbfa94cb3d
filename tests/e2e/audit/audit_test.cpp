// The 2026 new-user audit as a table: every WRONG and WEAK row, read from
// tests/e2e/audit/*.tsv (format in README.md beside this file). Each row is a bash command run in a
// private copy of tests/data/audit with the built trainsim first on PATH; the test checks its exit
// status, fragments of its stderr and, with a second command, what it left behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "trainsim_test/cli.hpp"
#include "trainsim_test/names.hpp"

namespace {

namespace fs = std::filesystem;

struct Row {
  std::string file;  // the .tsv it came from, for messages
  int line = 0;
  std::string id;
  int exit_code = 0;
  std::string command;
  std::vector<std::string> fragments;
  std::string check;
};
void PrintTo(const Row& r, std::ostream* os) { *os << r.id; }

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + separator.size();
  }
}

// Every row of every table, in file-name order; a malformed table fails loudly at start-up.
std::vector<Row> load_rows() {
  const fs::path dir = fs::path(trainsim_test::source_dir()) / "tests" / "e2e" / "audit";
  std::vector<fs::path> tables;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".tsv") tables.push_back(entry.path());
  std::sort(tables.begin(), tables.end());
  std::vector<Row> rows;
  std::set<std::string> ids;
  for (const auto& table : tables) {
    std::ifstream in(table);
    std::string text;
    int line = 0;
    bool header = true;
    while (std::getline(in, text)) {
      ++line;
      if (text.empty() || text[0] == '#') continue;
      if (header) {
        header = false;
        continue;
      }
      const auto columns = split(text, "\t");
      const std::string where = table.string() + ":" + std::to_string(line);
      if (columns.size() != 5) throw std::runtime_error(where + ": expected 5 tab-separated columns");
      Row row{table.filename().string(), line, columns[0], std::stoi(columns[1]), columns[2], {}, columns[4]};
      if (!columns[3].empty()) row.fragments = split(columns[3], " ;; ");
      if (!ids.insert(row.id).second) throw std::runtime_error(where + ": duplicate id " + row.id);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

bool mentions_private_device(const Row& r) {
  for (const char* name : {"dev_full", "dev_null"})
    if (r.command.find(name) != std::string::npos || r.check.find(name) != std::string::npos) return true;
  return false;
}

// A fresh copy of tests/data/audit, with private device nodes when this process may make them.
std::string prepare_directory(bool& have_devices) {
  const std::string dir = trainsim_test::make_temp_dir("audit");
  fs::copy(fs::path(trainsim_test::test_data_dir()) / "audit", dir, fs::copy_options::recursive);
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  have_devices = ::mknod((dir + "/dev_full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0 &&
                 ::mknod((dir + "/dev_null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  return dir;
}

trainsim_test::CliResult run_bash(const std::string& script, const std::string& dir) {
  const std::string bin = fs::path(trainsim_test::trainsim_binary()).parent_path().string();
  // limit_vmem KB: `ulimit -v` for the rows that prove bounded memory, except under AddressSanitizer,
  // whose shadow memory cannot be mapped under such a limit.
  const std::string full = "export PATH='" + bin + "':\"$PATH\"; " +
                           "limit_vmem() { ldd \"$(command -v trainsim)\" | grep -q libasan || ulimit -v \"$1\"; }; " + script;
#if defined(__SANITIZE_ADDRESS__)
  const char* limit = "1200";  // a Debug build under AddressSanitizer runs the large rows 10 to 30 times slower
#else
  const char* limit = "120";
#endif
  return trainsim_test::run_program({"timeout", limit, "bash", "-c", full}, dir);
}

class Audit : public ::testing::TestWithParam<Row> {};

TEST_P(Audit, AnswersAsTheTableSays) {
  const Row& r = GetParam();
  bool have_devices = false;
  const std::string dir = prepare_directory(have_devices);
  if (mentions_private_device(r) && !have_devices) GTEST_SKIP() << "needs mknod (run as root)";
  const auto result = run_bash(r.command, dir);
  const std::string context = r.file + ":" + std::to_string(r.line) + " " + r.id + "\nstderr: " + result.err;
  EXPECT_EQ(result.exit_code, r.exit_code) << context;
  for (const auto& fragment : r.fragments)
    EXPECT_NE(result.err.find(fragment), std::string::npos) << "missing '" << fragment << "'\n" << context;
  if (!r.check.empty()) {
    const auto after = run_bash(r.check, dir);
    EXPECT_EQ(after.exit_code, 0) << "check failed: " << r.check << "\n" << after.out << after.err << context;
  }
  if (!HasFailure()) fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Rows, Audit, ::testing::ValuesIn(load_rows()),
                         [](const ::testing::TestParamInfo<Row>& p) { return trainsim_test::test_name(p.param.id); });

}  // namespace
