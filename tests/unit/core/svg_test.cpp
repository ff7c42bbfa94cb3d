#include <cmath>
#include <regex>
#include <vector>

#include <gtest/gtest.h>

#include "trainsim/core/svg.hpp"

using namespace trainsim::svg;

namespace {

// A minimal well-formedness check: every element opened is closed in order (self-closing allowed).
bool balanced(const std::string& xml) {
  std::vector<std::string> stack;
  const std::regex tag(R"(<(/?)([a-zA-Z]+)[^>]*?(/?)>)");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tag); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    if (m[3] == "/") continue;
    if (m[1] == "/") {
      if (stack.empty() || stack.back() != m[2]) return false;
      stack.pop_back();
    } else {
      stack.push_back(m[2]);
    }
  }
  return stack.empty();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(Svg, EscapesMarkup) { EXPECT_EQ(escape_xml("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"); }

TEST(Svg, NiceTicksCoverTheRange) {
  const auto unit = nice_ticks(0, 1, 5);
  const std::vector<double> expected = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
  ASSERT_EQ(unit.size(), expected.size());
  for (std::size_t i = 0; i < unit.size(); ++i) EXPECT_NEAR(unit[i], expected[i], 1e-12);
  const auto t = nice_ticks(0.3, 1.18, 5);
  EXPECT_LE(t.front(), 0.3);
  EXPECT_GE(t.back(), 1.18);
  EXPECT_EQ(nice_ticks(0, 1000, 4), (std::vector<double>{0, 250, 500, 750, 1000}));
}

TEST(Svg, AxisMapsLinearlyAndByLog2) {
  const Axis linear(0, 10, 100, 200);
  EXPECT_DOUBLE_EQ(linear(0), 100);
  EXPECT_DOUBLE_EQ(linear(5), 150);
  const Axis log(1, 64, 0, 600, true);
  EXPECT_DOUBLE_EQ(log(8), 300);  // log2(8)=3 of 6
  const Axis flipped(0, 1, 300, 50);  // SVG y grows downward
  EXPECT_DOUBLE_EQ(flipped(1), 50);
}

TEST(Svg, LineChartHasOnePolylineAndAMarkerPerPoint) {
  LineChart chart;
  chart.title = "t <&>";
  chart.log2_x = true;
  chart.series.push_back({"a", {1, 2, 4, 8}, {1, 2, 3, 4}, "#000000", false, true});
  chart.series.push_back({"b", {1, 2, 4}, {1, 1.5, std::nan("")}, "#ff0000", true, false});
  chart.vertical_markers = {4};
  chart.marker_label = "here";
  const std::string svg = render(chart);
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 4u);  // series b draws no markers; its NaN point is skipped
  EXPECT_EQ(count(svg, "class=\"marker\""), 1u);
  EXPECT_NE(svg.find("t &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray=\"6,4\""), std::string::npos);
  EXPECT_EQ(render(chart), svg);  // deterministic
}

TEST(Svg, StackedBarsDrawPositiveSegmentsOnly) {
  StackedBarChart chart;
  chart.title = "shares";
  chart.segment_names = {"x", "y", "z"};
  chart.groups.push_back({"1 GPU", {"M", "S"}, {{0.5, 0.5, 0.0}, {0.7, -0.1, 0.4}}});
  chart.groups.push_back({"2 GPUs", {"M", "S"}, {{1, 0, 0}, {0.2, 0.3, 0.5}}});
  const std::string svg = render(chart);
  EXPECT_TRUE(balanced(svg)) << svg;
  // 2 + 2 + 1 + 3 non-zero positive segments, plus 3 legend boxes and the background.
  EXPECT_EQ(count(svg, "<rect"), 8u + 3u + 1u);
}
