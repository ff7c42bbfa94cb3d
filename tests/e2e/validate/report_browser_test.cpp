// The divergence verdict as a reader sees it: compare's and validate's reports opened in headless
// Chromium (tests/e2e/sweep/browser_check.hpp): the verdict is displayed near the top, inside the
// window and not cut off, it is the sentence of divergence.json, and nothing in the charts is
// clipped or overlapping.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "browser_check.hpp"
#include "trainsim_test/cli.hpp"

namespace {

using trainsim_test::read_file;

// The verdict as Chromium's DOM dump writes it (it escapes only &, < and >).
std::string as_dumped(std::string text) {
  std::string out;
  for (char c : text) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

}  // namespace

TEST(VerdictInBrowser, CompareReportShowsTheVerdictFirst) {
  const std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const auto dir = trainsim_test::make_temp_dir("verdict-compare");
  const std::string data = trainsim_test::test_data_dir() + "/good/fitting/";
  const auto r = trainsim_test::run_trainsim({"compare", "--measured", data + "compare_measured.csv", "--simulated",
                                              data + "compare_simulated.csv", "--out", dir, "--bootstrap", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string verdict = nlohmann::json::parse(read_file(dir + "/divergence.json"))["verdict"];
  EXPECT_EQ(verdict.rfind("The linear term is ", 0), 0u) << verdict;
  EXPECT_NE(r.out.find("verdict: " + verdict), std::string::npos) << r.out;

  const auto check = trainsim_test::check_report_in_browser(browser, dir + "/report.html", dir);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.err.find("CONSOLE"), std::string::npos) << check.err;
  ASSERT_FALSE(check.counts.empty()) << "the layout check did not run";
  EXPECT_EQ(trainsim_test::count_of(check.counts, "svgs"), 2) << check.counts;
  EXPECT_EQ(trainsim_test::count_of(check.counts, "verdicts"), 1) << check.counts;
  EXPECT_LT(trainsim_test::count_of(check.counts, "verdict_top"), 300) << "the verdict should be read before the charts";
  EXPECT_EQ(check.verdict, as_dumped(verdict));
  EXPECT_EQ(check.problems, "") << "layout problems in " << dir << "/report.html";
  EXPECT_TRUE(std::filesystem::exists(check.png));
}

TEST(VerdictInBrowser, ValidateReportListsEveryComparisonsVerdict) {
  const std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const auto dir = trainsim_test::make_temp_dir("verdict-validate");
  const std::string data = trainsim_test::test_data_dir() + "/good/validate/";
  const auto r = trainsim_test::run_trainsim({"validate", data + "measured.csv", "--systems", data + "systems.json", "--out",
                                              dir, "--jobs", "2", "--bootstrap", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string verdict =
      nlohmann::json::parse(read_file(dir + "/compare/pytorch_ddp_benchmark-allreduce/divergence.json"))["verdict"];
  EXPECT_NE(r.out.find("pytorch_ddp_benchmark · allreduce: " + verdict), std::string::npos) << r.out;

  const auto check = trainsim_test::check_report_in_browser(browser, dir + "/report.html", dir);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.err.find("CONSOLE"), std::string::npos) << check.err;
  ASSERT_FALSE(check.counts.empty()) << "the layout check did not run";
  EXPECT_EQ(trainsim_test::count_of(check.counts, "svgs"), 3) << check.counts;  // speed-up, and compare's two
  EXPECT_EQ(trainsim_test::count_of(check.counts, "verdicts"), 2) << check.counts;  // the list, the comparison
  EXPECT_LT(trainsim_test::count_of(check.counts, "verdict_top"), 600) << "the verdicts come right after the accuracy";
  EXPECT_EQ(check.verdict, as_dumped(verdict));
  EXPECT_EQ(check.problems, "") << "layout problems in " << dir << "/report.html";
}
