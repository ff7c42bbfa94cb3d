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
  chart.series.push_back({"a", {1, 2, 4, 8}, {1, 2, 3, 4}, "#000000", false, true, {}, {}});
  chart.series.push_back({"b", {1, 2, 4}, {1, 1.5, std::nan("")}, "#ff0000", true, false, {}, {}});
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

// Error bars: one capped bar per point with both ends finite, and the y axis reaches both ends.
TEST(Svg, ErrorBarsSpanTheirEndsAndWidenTheAxis) {
  LineChart chart;
  chart.y_from_zero = false;
  Series s{"a", {1, 2, 3}, {10, 20, 30}, "#000000", false, true, {}, {}};
  s.y_low = {9, std::nan(""), 25};
  s.y_high = {12, 21, 90};
  chart.series.push_back(s);
  const std::string svg = render(chart);
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(count(svg, "class=\"error-bar\""), 2u);  // the middle point's low end is NaN: no bar
  // The ticks reach past the high end (90), beyond every y (30).
  EXPECT_NE(svg.find(">100<"), std::string::npos) << svg;
  chart.series.front().y_high = {12, 21, 31};
  EXPECT_EQ(render(chart).find(">100<"), std::string::npos);
  Series plain = s;
  plain.y_low.clear();
  plain.y_high.clear();
  chart.series = {plain};
  EXPECT_EQ(count(render(chart), "error-bar"), 0u);
}

// A marker at the last x (a divergence at the largest GPU count) puts its label left of the line,
// inside the plot, not over the legend.
TEST(Svg, MarkerLabelStaysInsideThePlot) {
  LineChart chart;
  chart.series.push_back({"a", {1, 2, 4, 8}, {1, 2, 3, 4}, "#000000", false, true, {}, {}});
  chart.marker_label = "> 10% from here";
  chart.vertical_markers = {1};
  EXPECT_EQ(render(chart).find("text-anchor=\"end\">&gt; 10% from here"), std::string::npos);
  chart.vertical_markers = {8};
  EXPECT_NE(render(chart).find("text-anchor=\"end\">&gt; 10% from here"), std::string::npos);
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

namespace {

double svg_width(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*width="([0-9.]+)")re")));
  return m.empty() ? 0 : std::stod(m[1]);
}

double svg_height(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*height="([0-9.]+)")re")));
  return m.empty() ? 0 : std::stod(m[1]);
}

// The right end of every legend line, by text_width: x of its <tspan> plus the line's width.
double legend_right_edge(const std::string& svg) {
  double right = 0;
  const std::regex tspan(R"re(<tspan x="([0-9.]+)"[^>]*>([^<]*)</tspan>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tspan); it != std::sregex_iterator(); ++it)
    right = std::max(right, std::stod((*it)[1]) + text_width((*it)[2].str()));
  return right;
}

}  // namespace

TEST(Svg, TextWidthBoundsDejaVuSans) {
  EXPECT_EQ(text_width(""), 0);
  EXPECT_GE(text_width("m", 100), 97.4);  // DejaVu Sans Book, measured in Chromium
  EXPECT_GE(text_width("W", 100), 98.9);
  EXPECT_GE(text_width("cluster-10gbe", 12), 80);
  EXPECT_LT(text_width("·"), text_width("m"));  // a known narrow character is not counted as 1 em
  EXPECT_DOUBLE_EQ(text_width("∉", 10), 10);    // an unknown one is
  EXPECT_DOUBLE_EQ(text_width("ab", 24), 2 * text_width("ab", 12));
}

TEST(Svg, WrapTextBreaksAtSpacesWithinTheWidth) {
  const std::string name = "cluster-100gbe · hierarchical_allreduce · nodes=16";
  const auto lines = wrap_text(name, 160);
  ASSERT_GE(lines.size(), 2u);
  std::string joined;
  for (const auto& line : lines) {
    EXPECT_LE(text_width(line), 160) << line;
    joined += (joined.empty() ? "" : " ") + line;
  }
  EXPECT_EQ(joined, name);
  EXPECT_EQ(wrap_text(name, 1000), std::vector<std::string>{name});
  EXPECT_EQ(wrap_text("hierarchical_allreduce", 10), std::vector<std::string>{"hierarchical_allreduce"});  // whole
  EXPECT_EQ(wrap_text("", 10), std::vector<std::string>{""});
}

TEST(Svg, LineChartWidensToHoldItsLegend) {
  LineChart chart;
  chart.series.push_back({"a", {1, 2}, {1, 2}, "#000000", false, true, {}, {}});
  const double narrow = svg_width(render(chart));
  chart.series.push_back({"cluster-100gbe · hierarchical_allreduce", {1, 2}, {2, 3}, "#ff0000", false, true, {}, {}});
  const std::string svg = render(chart);
  EXPECT_GT(svg_width(svg), narrow);
  EXPECT_LE(legend_right_edge(svg), svg_width(svg));
  // A name too long for one line wraps onto several instead of widening the chart without bound.
  chart.series.push_back({std::string(30, 'x') + " " + std::string(30, 'y') + " " + std::string(30, 'z'),
                          {1},
                          {1},
                          "#00ff00",
                          false,
                          true,
                          {},
                          {}});
  const std::string wrapped = render(chart);
  EXPECT_TRUE(balanced(wrapped)) << wrapped;
  EXPECT_EQ(count(wrapped, "<tspan"), 2u + 3u);
  EXPECT_LE(legend_right_edge(wrapped), svg_width(wrapped));
  EXPECT_LT(svg_width(wrapped), chart.width + 400);
}

TEST(Svg, StackedBarChartWidensToHoldItsLegend) {
  StackedBarChart chart;
  chart.segment_names = {"compute", "idle (waiting for slower GPUs)"};
  chart.groups.push_back({"1 GPU", {""}, {{1, 2}}});
  const std::string svg = render(chart);
  EXPECT_LE(legend_right_edge(svg), svg_width(svg));
}

TEST(Svg, HorizontalBarsGrowOneRowPerCategoryWithWholeLabels) {
  auto chart_of = [](int rows) {
    HorizontalBarChart chart;
    chart.title = "Where an iteration goes";
    chart.x_label = "time per iteration (ms)";
    chart.segment_names = {"compute", "exposed communication", "idle (waiting for slower GPUs)"};
    for (int r = 0; r < rows; ++r)
      chart.rows.push_back({"#" + std::to_string(r) + " cluster-100gbe · hierarchical_allreduce · nodes=16", {268, r * 10.0, -1}});
    return chart;
  };
  const std::string few = render(chart_of(20)), many = render(chart_of(120));
  EXPECT_TRUE(balanced(many)) << many;
  EXPECT_EQ(count(many, "class=\"row\""), 120u);
  EXPECT_DOUBLE_EQ(svg_height(many) - svg_height(few), 100 * 20);
  // Labels end 8 px before the plot, right-aligned: the label column holds the longest one from x = 10.
  const std::regex label(R"re(<g class="row"[^>]*>\n<text x="([0-9.]+)" y="[0-9.]+" text-anchor="end">([^<]*)</text>)re");
  std::size_t labels = 0;
  for (auto it = std::sregex_iterator(many.begin(), many.end(), label); it != std::sregex_iterator(); ++it, ++labels)
    EXPECT_GE(std::stod((*it)[1]) - text_width((*it)[2].str()), 10 - 1e-9) << (*it)[2];
  EXPECT_EQ(labels, 120u);
  // Two rows still make a readable plot: taller bars.
  EXPECT_GE(svg_height(render(chart_of(2))) - svg_height(render(chart_of(1))), 36 - 1e-9);
  EXPECT_EQ(count(render(chart_of(0)), "class=\"row\""), 0u);  // no rows: an empty frame, no crash
}

TEST(Svg, TickLabelsStayShort) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(7500), "7500");
  EXPECT_EQ(tick_label(20000), "20k");
  EXPECT_EQ(tick_label(450000), "450k");
  EXPECT_EQ(tick_label(1500000), "1.5M");
}
