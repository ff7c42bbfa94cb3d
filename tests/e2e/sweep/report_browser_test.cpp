// The sweep report opened in a real browser (Debian's headless Chromium): the page loads without
// console errors and its plots render (the screenshot holds many non-white pixels in several colours).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "png.hpp"
#include "trainsim_test/cli.hpp"

TEST(SweepReport, RendersInHeadlessChromium) {
  std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const std::string dir = trainsim_test::make_temp_dir("report");
  ASSERT_EQ(trainsim_test::run_trainsim({"sweep", trainsim_test::test_data_dir() + "/good/scenarios/small_sweep.json", "--out", dir}).exit_code, 0);
  const std::string png = dir + "/report.png";
  const auto r = trainsim_test::run_program({browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                             "--user-data-dir=" + dir + "/profile", "--enable-logging=stderr", "--v=0",
                                             "--window-size=1400,1800", "--screenshot=" + png, "file://" + dir + "/report.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("CONSOLE"), std::string::npos) << "console output:\n" << r.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << r.err;

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
