// The sweep report of every scenario in scenarios/ opened in a real browser (Debian's headless Chromium), and
// those of a 108-point sweep and of a sweep with failed points: the page loads without console errors, its plots render (the screenshot holds
// many non-white pixels in several colours), and its layout holds (a script measures every SVG text in the
// browser: none is clipped by its SVG, none overlaps another, no SVG is scaled down, the page fits a
// 1400 px window, and no legend repeats an entry; browser_check.hpp).
//
// The report has no script of its own. The test adds one to a copy of it, before </body>, that writes its
// findings into a hidden <pre>, and reads them from Chromium's --dump-dom; the same launch takes the
// screenshot, so each report costs one browser start (about 3 s).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

#include "browser_check.hpp"
#include "png.hpp"
#include "trainsim_test/cli.hpp"
#include "trainsim_test/names.hpp"

namespace {

using trainsim_test::read_file;

struct ReportCase {
  std::string name;
  std::string scenario;           // path
  std::vector<std::string> sets;  // --set assignments
  int exit_code = 0;              // of the sweep
};
void PrintTo(const ReportCase& c, std::ostream* os) { *os << c.name; }

// Every scenario file (a new one is picked up when the tests are next built), strategies_by_network widened
// to 108 points for the breakdown chart at 100+ rows, and a sweep with failed points (their errors in the table).
std::vector<ReportCase> report_cases() {
  std::vector<ReportCase> cases;
  for (const auto& entry : std::filesystem::directory_iterator(trainsim_test::source_dir() + "/scenarios"))
    if (entry.path().extension() == ".json") cases.push_back({entry.path().stem().string(), entry.path().string(), {}, 0});
  std::sort(cases.begin(), cases.end(), [](const ReportCase& a, const ReportCase& b) { return a.name < b.name; });
  cases.push_back({"strategies_by_network_108_points",
                   trainsim_test::source_dir() + "/scenarios/strategies_by_network.json",
                   {R"(sweep={"platform.preset": ["cluster-10gbe", "cluster-25gbe", "cluster-100gbe"],)"
                    R"( "strategy.kind": ["ring_allreduce", "hierarchical_allreduce", "parameter_server"],)"
                    R"( "platform.nodes": [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32]})"},
                   0});
  cases.push_back({"with_failed_points", trainsim_test::test_data_dir() + "/good/scenarios/sweep_with_failure.json", {}, 1});
  return cases;
}

class SweepReport : public ::testing::TestWithParam<ReportCase> {};

TEST_P(SweepReport, RendersInHeadlessChromiumWithNothingClipped) {
  const ReportCase& c = GetParam();
  const std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const std::string dir = trainsim_test::make_temp_dir("report-" + c.name);
  std::vector<std::string> args{"sweep", c.scenario, "--out", dir, "--jobs", "2"};
  for (const auto& s : c.sets) args.insert(args.end(), {"--set", s});
  const auto sweep = trainsim_test::run_trainsim(args);
  ASSERT_EQ(sweep.exit_code, c.exit_code) << sweep.err;

  ASSERT_EQ(read_file(dir + "/report.html").find("<script"), std::string::npos) << "the report itself must have no script";
  const auto check = trainsim_test::check_report_in_browser(browser, dir + "/report.html", dir);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.err.find("CONSOLE"), std::string::npos) << "console output:\n" << check.err;
  ASSERT_FALSE(check.counts.empty()) << "the layout check did not run";
  EXPECT_TRUE(check.counts.rfind("svgs=3 ", 0) == 0 || check.counts.rfind("svgs=2 ", 0) == 0) << check.counts;
  EXPECT_EQ(check.problems, "") << "layout problems in " << dir << "/report.html";
  const std::string& png = check.png;

  ASSERT_TRUE(std::filesystem::exists(png)) << check.err;
  const auto image = trainsim_test::read_png(png);
  ASSERT_GE(image.width, 1000);
  std::size_t ink = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 2 < image.pixels.size(); i += image.channels) {
    const auto red = image.pixels[i], green = image.pixels[i + 1], blue = image.pixels[i + 2];
    if (red < 240 || green < 240 || blue < 240) ++ink;
    // Saturated pixels are the plot's series colours, not black text or grey grid lines.
    if (std::max({red, green, blue}) - std::min({red, green, blue}) > 60) colours.insert((red >> 4) << 8 | (green >> 4) << 4 | (blue >> 4));
  }
  const double ink_fraction = static_cast<double>(ink) / (image.width * image.height);
  EXPECT_GT(ink_fraction, 0.01) << "the page is almost blank";
  EXPECT_GE(colours.size(), 3u) << "fewer than three plot colours rendered";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SweepReport, ::testing::ValuesIn(report_cases()),
                         [](const ::testing::TestParamInfo<ReportCase>& p) { return trainsim_test::test_name(p.param.name); });

}  // namespace
