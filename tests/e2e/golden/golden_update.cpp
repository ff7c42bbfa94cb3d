// trainsim_golden_update: regenerates tests/data/golden/expected from the built trainsim.
//
// Runs every case of cases.json and compares it with its expectation as the golden test does
// (trainsim_test::Tolerance). Prints the largest change per field (JSON pointer with array indices
// as *) over all cases, within tolerance or not. When every case is within tolerance it rewrites
// nothing. Otherwise it needs a one-line reason in TRAINSIM_GOLDEN_REASON (refused without one,
// before anything is written), rewrites only the cases outside tolerance (and writes new ones), and
// appends a dated entry to tests/data/golden/CHANGELOG.md: the reason, the cases rewritten and the
// largest change per field over them. Exit status: 0 done, 1 a case failed to run, 2 refused.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "golden_cases.hpp"
#include "trainsim_test/golden_compare.hpp"

namespace {

using trainsim_golden::GoldenCase;

struct Outcome {
  GoldenCase golden_case;
  std::string output;  // what trainsim printed: the new expectation when rewritten
  bool is_new = false;
  std::vector<trainsim_test::JsonDifference> differences;
  bool rewrite() const { return is_new || !trainsim_test::all_within_tolerance(differences); }
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", &tm);
  return buffer;
}

// The reason on one line: newlines would break the changelog's layout.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  const auto first = text.find_first_not_of(' ');
  const auto last = text.find_last_not_of(' ');
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

int main() {
  const trainsim_test::Tolerance tolerance;
  const auto cases = trainsim_golden::load_cases();
  std::vector<Outcome> outcomes;
  bool failed = false;
  for (const auto& c : cases) {
    const auto r = trainsim_golden::run_case(c);
    if (r.exit_code != 0) {
      std::cerr << "golden_update: case " << c.name << " exited " << r.exit_code << ":\n" << r.err;
      failed = true;
      continue;
    }
    Outcome o{c, r.out, false, {}};
    const std::string path = trainsim_golden::expected_path(c);
    if (!std::filesystem::exists(path))
      o.is_new = true;
    else
      o.differences = trainsim_test::compare_json(nlohmann::json::parse(trainsim_test::read_file(path)),
                                                  nlohmann::json::parse(r.out), tolerance);
    outcomes.push_back(std::move(o));
  }
  if (failed) {
    std::cerr << "golden_update: nothing rewritten (a case failed to run)\n";
    return 1;
  }

  trainsim_test::ChangeSummary all;
  trainsim_test::ChangeSummary rewritten;
  std::vector<std::string> rewritten_names;
  for (const auto& o : outcomes) {
    all.add(o.golden_case.name, o.differences);
    if (!o.rewrite()) continue;
    rewritten.add(o.golden_case.name, o.differences);
    rewritten_names.push_back(o.golden_case.name + (o.is_new ? " (new)" : ""));
  }
  std::cout << "golden_update: " << cases.size() << " cases, tolerance " << tolerance.describe() << "\n";
  if (all.empty())
    std::cout << "no value changed\n";
  else
    std::cout << "largest change per field over all cases:\n" << all.describe();
  if (rewritten_names.empty()) {
    std::cout << "every case is within tolerance: nothing rewritten\n";
    return 0;
  }

  const char* reason_env = std::getenv("TRAINSIM_GOLDEN_REASON");
  const std::string reason = one_line(reason_env ? reason_env : "");
  if (reason.empty()) {
    std::cerr << "golden_update: " << rewritten_names.size()
              << " cases are outside tolerance; refusing to rewrite them without a reason: set "
                 "TRAINSIM_GOLDEN_REASON to one line saying why the results change\n";
    return 2;
  }
  for (const auto& o : outcomes) {
    if (!o.rewrite()) continue;
    const std::string path = trainsim_golden::expected_path(o.golden_case);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << o.output;
  }
  const std::string changelog = trainsim_golden::golden_dir() + "/CHANGELOG.md";
  std::ofstream(changelog, std::ios::app)
      << "\n"
      << trainsim_test::golden_changelog_entry(utc_now(), reason, rewritten_names, cases.size(), rewritten);
  std::cout << "rewrote " << rewritten_names.size() << " of " << cases.size() << " cases; entry appended to "
            << changelog << "\n";
  return 0;
}
