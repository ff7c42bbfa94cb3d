#include "trainsim/core/svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"

namespace trainsim::svg {
namespace {

// Plot margins, px. The left margin is computed from the y tick labels; the right one leaves room for half
// of the last x tick label; legends are placed beyond it.
constexpr double kTop = 36, kBottom = 50, kPlotRight = 24;
constexpr double kFontSize = 12, kTitleSize = 14, kLineHeight = 15;
constexpr double kSwatch = 14, kSwatchGap = 6, kLegendGap = 20, kLegendMaxText = 320;

// DejaVu Sans Bold advance widths of ASCII 32..126 in hundredths of an em, rounded up (measured in Chromium
// with getComputedTextLength at 100 px). Bold is at least as wide as Book for every glyph, so one table
// bounds both.
constexpr unsigned char kAsciiWidth[95] = {
    35, 46, 53, 84, 70, 101, 88, 31, 46, 46, 53, 84, 38, 42, 38, 37,
    70, 70, 70, 70, 70, 70, 70, 70, 70, 70, 40, 40, 84, 84, 84, 58,
    100, 78, 77, 74, 83, 69, 69, 83, 84, 38, 38, 78, 64, 100, 84, 85,
    74, 85, 77, 72, 69, 82, 78, 111, 78, 73, 73, 46, 37, 46, 84, 50,
    50, 68, 72, 60, 72, 68, 44, 72, 72, 35, 35, 67, 35, 105, 72, 69,
    72, 72, 50, 60, 48, 72, 66, 93, 65, 66, 59, 72, 37, 72, 84,
};

// Fixed-point coordinates keep the output byte-identical across runs and short.
std::string px(double v) { return fmt::format("{:.1f}", v); }

// Decimals that give the largest of a set of values four significant digits (none from 1000 on), so that a
// column of totals reads with one precision.
int decimals_for(double largest) {
  if (!(largest > 0)) return 0;
  return std::clamp(3 - static_cast<int>(std::floor(std::log10(largest))), 0, 6);
}

// The title is centred over the plot (from plot_left to plot_right) when it fits there within the SVG, else
// over the whole SVG.
std::string header(double width, double height, const std::string& title, double plot_left, double plot_right) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n",
      std::ceil(width), std::ceil(height));
  out += "<title>" + escape_xml(title) + "</title>\n";
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", std::ceil(width),
                     std::ceil(height));
  const double half = text_width(title, 14) / 2, centre = (plot_left + plot_right) / 2;
  const double x = centre - half >= 10 && centre + half <= std::ceil(width) - 10 ? centre : std::ceil(width) / 2.0;
  out += fmt::format("<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                     px(x), escape_xml(title));
  return out;
}

// The width a chart needs for its title: the text and 10 px either side.
double title_width(const std::string& title) { return text_width(title, kTitleSize) + 20; }

// A legend entry: its swatch (a box for bars, a line for series) and its name, wrapped.
struct LegendEntry {
  std::string color;
  bool dashed = false;
  bool box = false;
  std::vector<std::string> lines;
};

struct Legend {
  std::vector<LegendEntry> entries;
  double text_width = 0;  ///< the widest line
  double height = 0;      ///< stacked vertically
};

Legend make_legend(std::vector<LegendEntry> entries, const std::vector<std::string>& names) {
  Legend legend;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].lines = wrap_text(names[i], kLegendMaxText);
    for (const auto& line : entries[i].lines) legend.text_width = std::max(legend.text_width, text_width(line));
    legend.height += static_cast<double>(entries[i].lines.size()) * kLineHeight + 3;
  }
  legend.entries = std::move(entries);
  return legend;
}

// The legend's total width: swatch, gap, text.
double legend_width(const Legend& legend) {
  return legend.entries.empty() ? 0 : kSwatch + kSwatchGap + legend.text_width;
}

std::string swatch(double x, double baseline, const LegendEntry& e) {
  if (e.box)
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", px(x), px(baseline - 9), e.color);
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", px(x),
                     px(baseline - 4), px(x + kSwatch), px(baseline - 4), e.color, e.dashed ? " stroke-dasharray=\"5,3\"" : "");
}

// One entry's name as a <text class="legend">, a <tspan> per wrapped line.
std::string legend_text(double x, double baseline, const LegendEntry& e) {
  std::string out = fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">", px(x), px(baseline));
  for (std::size_t i = 0; i < e.lines.size(); ++i)
    out += fmt::format("<tspan x=\"{}\"{}>{}</tspan>", px(x), i ? fmt::format(" dy=\"{}\"", kLineHeight) : "", escape_xml(e.lines[i]));
  return out + "</text>\n";
}

// The legend stacked top-down from (x, top).
std::string render_legend_column(const Legend& legend, double x, double top) {
  std::string out = "<g class=\"legend\">\n";
  double baseline = top + 10;
  for (const auto& e : legend.entries) {
    out += swatch(x, baseline, e) + legend_text(x + kSwatch + kSwatchGap, baseline, e);
    baseline += static_cast<double>(e.lines.size()) * kLineHeight + 3;
  }
  return out + "</g>\n";
}

// The y axis's left margin: the rotated axis title (about x = 8..24), then the widest tick label and 6 px.
double left_margin(const std::vector<double>& ticks) {
  double widest = 0;
  for (double t : ticks) widest = std::max(widest, text_width(tick_label(t)));
  return std::max(50.0, 30 + widest + 6);
}

// Characters trainsim's reports use, in DejaVu Sans Bold, hundredths of an em rounded up; 1 em for any other.
double non_ascii_width(std::string_view utf8_character) {
  static const std::pair<std::string_view, int> known[] = {{"·", 38}, {"₂", 44}, {"µ", 74}, {"∈", 90}, {"—", 100}, {"≥", 84}};
  for (const auto& [character, width] : known)
    if (utf8_character == character) return width / 100.0;
  return 1.0;
}

// Where a chart with a y axis and a legend on the right puts things: the plot fills `width` × `height` but for
// the axes' margins, the legend starts past the plot, and the SVG is as large as the plot, the legend and the
// title need.
struct Frame {
  double left, plot_right, plot_bottom, legend_x, width, height;
};

Frame frame_with_legend(const std::vector<double>& y_ticks, int width, int height, const Legend& legend, const std::string& title) {
  Frame f{};
  f.left = left_margin(y_ticks);
  f.plot_right = std::max<double>(width, f.left + 100) - kPlotRight;
  f.plot_bottom = height - kBottom;
  f.legend_x = f.plot_right + kPlotRight;
  f.width = std::max(f.legend_x + legend_width(legend) + 10, title_width(title));
  f.height = std::max<double>(height, kTop + legend.height + 10);
  return f;
}

std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

double text_width(std::string_view text, double font_size) {
  double ems = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 32 && c <= 126) {
      ems += kAsciiWidth[c - 32] / 100.0;
      ++i;
    } else {
      const std::size_t n = std::min(utf8_sequence_length(c), text.size() - i);
      ems += non_ascii_width(text.substr(i, n));
      i += n;
    }
  }
  return ems * font_size;
}

std::vector<std::string> wrap_text(std::string_view text, double max_width, double font_size) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!word.empty()) {
      const std::string candidate = line.empty() ? std::string(word) : line + " " + std::string(word);
      if (!line.empty() && text_width(candidate, font_size) > max_width) {
        lines.push_back(line);
        line = std::string(word);
      } else {
        line = candidate;
      }
    }
    start = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  TRAINSIM_CHECK(lo < hi && target >= 1, "a non-empty range");
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double i = first; i <= last + 0.5; i += 1) ticks.push_back(std::abs(i) < 0.5 ? 0.0 : i * step);
  return ticks;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e9) return fmt::format("{:.3g}", v);
  if (a >= 1e6) return fmt::format("{:g}M", std::round(v / 1e3) / 1e3);
  if (a >= 1e4) return fmt::format("{:g}k", std::round(v) / 1e3);
  if (a < 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", std::round(v * 1e6) / 1e6);
}

Axis::Axis(double data_lo, double data_hi, double pixel_lo, double pixel_hi, bool log2)
    : data_lo_(data_lo), data_hi_(data_hi), pixel_lo_(pixel_lo), pixel_hi_(pixel_hi), log2_(log2) {
  TRAINSIM_CHECK(data_lo < data_hi, "a non-empty data range");
  TRAINSIM_CHECK(!log2 || data_lo > 0, "log axes need positive data");
}

double Axis::operator()(double value) const {
  const double f = log2_ ? (std::log2(value) - std::log2(data_lo_)) / (std::log2(data_hi_) - std::log2(data_lo_))
                         : (value - data_lo_) / (data_hi_ - data_lo_);
  return pixel_lo_ + f * (pixel_hi_ - pixel_lo_);
}

std::string palette(std::size_t index) {
  static const char* const colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return colors[index % 10];
}

namespace {

/// Whether point i of `s` can be drawn: both coordinates finite and, on a log2 x axis, x > 0.
bool plottable(const LineChart& chart, const Series& s, std::size_t i) {
  return std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && !(chart.log2_x && s.x[i] <= 0);
}

/// The data ranges a line chart's axes span.
struct Extent {
  double x_lo, x_hi, y_lo, y_hi;
};

/// The plottable points' extent, an empty frame's when there are none, zero included on y when asked,
/// and never empty (a single value gets a range of its own size).
Extent data_extent(const LineChart& chart) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : chart.series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!plottable(chart, s, i)) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  if (!std::isfinite(x_lo)) {  // nothing to draw: an empty frame with the title
    x_lo = chart.log2_x ? 1 : 0;
    x_hi = chart.log2_x ? 2 : 1;
    y_lo = 0;
    y_hi = 1;
  }
  if (chart.y_from_zero) y_lo = std::min(y_lo, 0.0), y_hi = std::max(y_hi, 0.0);
  if (x_hi <= x_lo) x_hi = chart.log2_x ? x_lo * 2 : x_lo + 1;
  if (y_hi <= y_lo) y_hi = y_lo + (y_lo == 0 ? 1 : std::abs(y_lo));
  return {x_lo, x_hi, y_lo, y_hi};
}

/// The powers of two in [lo, hi], every other one (repeatedly) while there are more than 12.
std::vector<double> log2_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (double t = std::exp2(std::ceil(std::log2(lo) - 1e-9)); t <= hi * (1 + 1e-9); t *= 2) ticks.push_back(t);
  while (ticks.size() > 12) {
    std::vector<double> thinned;
    for (std::size_t i = 0; i < ticks.size(); i += 2) thinned.push_back(ticks[i]);
    ticks = thinned;
  }
  return ticks;
}

/// The plot area of a line chart in pixels and its two axes.
struct Plot {
  double left, right, bottom;
  Axis x, y;
};

/// The axis lines, the tick labels within the ranges and the two axis labels.
std::string render_axes(const LineChart& chart, const Plot& p, const std::vector<double>& x_ticks,
                        const std::vector<double>& y_ticks, const Extent& e) {
  std::string out = fmt::format(
      "<g class=\"axes\" stroke=\"#333333\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n"
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\"/>\n</g>\n",
      px(p.left), px(p.bottom), px(p.right), px(kTop));
  for (double t : y_ticks) {
    if (t < e.y_lo || t > e.y_hi) continue;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n", px(p.left), px(p.y(t)),
                       px(p.right), px(p.y(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(p.left - 6), px(p.y(t) + 4),
                       tick_label(t));
  }
  for (double t : x_ticks) {
    if (t < e.x_lo || t > e.x_hi) continue;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(p.x(t)), px(p.bottom + 20),
                       tick_label(t));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px((p.left + p.right) / 2),
                     px(p.bottom + 40), escape_xml(chart.x_label));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     px((kTop + p.bottom) / 2), escape_xml(chart.y_label));
  return out;
}

/// The vertical markers within the x range, each a dashed line with the chart's marker label.
std::string render_markers(const LineChart& chart, const Plot& p, const Extent& e) {
  std::string out;
  for (double m : chart.vertical_markers) {
    if (!(m >= e.x_lo && m <= e.x_hi)) continue;
    out += fmt::format(
        "<line class=\"marker\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#d62728\" "
        "stroke-dasharray=\"2,4\" stroke-width=\"1.5\"/>\n",
        px(p.x(m)), px(kTop), px(p.bottom));
    // Right of the line, or left of it where the plot ends first (a divergence at the largest GPU
    // count would otherwise run into the legend).
    const bool fits_right = p.x(m) + 4 + text_width(chart.marker_label) <= p.right;
    if (!chart.marker_label.empty())
      out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#d62728\"{}>{}</text>\n",
                         px(fits_right ? p.x(m) + 4 : p.x(m) - 4), px(kTop + 12),
                         fits_right ? "" : " text-anchor=\"end\"", escape_xml(chart.marker_label));
  }
  return out;
}

/// One series: a group with its polyline (when a point is plottable) and its point markers.
std::string render_series(const LineChart& chart, const Series& s, const Plot& p) {
  std::string points;
  std::string markers;
  for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    if (!plottable(chart, s, i)) continue;
    if (!points.empty()) points += ' ';
    points += fmt::format("{},{}", px(p.x(s.x[i])), px(p.y(s.y[i])));
    if (s.markers)
      markers += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>\n", px(p.x(s.x[i])), px(p.y(s.y[i])),
                             s.color);
  }
  std::string out = fmt::format("<g class=\"series\" data-name=\"{}\">\n", escape_xml(s.name));
  if (!points.empty())
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", s.color,
                       s.dashed ? " stroke-dasharray=\"6,4\"" : "", points);
  return out + markers + "</g>\n";
}

}  // namespace

std::string render(const LineChart& chart) {
  Extent e = data_extent(chart);
  const auto y_ticks = nice_ticks(e.y_lo, e.y_hi, 5);
  e.y_lo = y_ticks.front();
  e.y_hi = y_ticks.back();
  std::vector<double> x_ticks;
  if (chart.log2_x) {
    x_ticks = log2_ticks(e.x_lo, e.x_hi);
  } else {
    x_ticks = nice_ticks(e.x_lo, e.x_hi, 6);
    e.x_lo = x_ticks.front();
    e.x_hi = x_ticks.back();
  }

  std::vector<LegendEntry> entries;
  std::vector<std::string> names;
  for (const auto& s : chart.series) {
    entries.push_back({s.color, s.dashed, false, {}});
    names.push_back(s.name);
  }
  const Legend legend = make_legend(std::move(entries), names);
  const Frame f = frame_with_legend(y_ticks, chart.width, chart.height, legend, chart.title);
  const Plot plot{f.left, f.plot_right, f.plot_bottom, Axis(e.x_lo, e.x_hi, f.left, f.plot_right, chart.log2_x),
                  Axis(e.y_lo, e.y_hi, f.plot_bottom, kTop)};
  std::string out = header(f.width, f.height, chart.title, plot.left, plot.right);
  out += render_axes(chart, plot, x_ticks, y_ticks, e);
  out += render_markers(chart, plot, e);
  for (const auto& s : chart.series) out += render_series(chart, s, plot);
  out += render_legend_column(legend, f.legend_x, kTop);
  return out + "</svg>\n";
}

std::string render(const StackedBarChart& chart) {
  double y_hi = 0;
  std::size_t bars_per_group = 1;
  for (const auto& g : chart.groups) {
    bars_per_group = std::max(bars_per_group, g.bars.size());
    for (const auto& bar : g.bars) {
      double total = 0;
      for (double v : bar) total += std::isfinite(v) ? std::max(v, 0.0) : 0.0;
      y_hi = std::max(y_hi, total);
    }
  }
  if (y_hi <= 0) y_hi = 1;
  const auto y_ticks = nice_ticks(0, y_hi, 5);
  y_hi = std::max(y_hi, y_ticks.back());
  auto color_of = [&](std::size_t s) {
    return s < chart.segment_colors.size() ? chart.segment_colors[s] : palette(s);
  };
  std::vector<LegendEntry> entries;
  for (std::size_t s = 0; s < chart.segment_names.size(); ++s) entries.push_back({color_of(s), false, true, {}});
  const Legend legend = make_legend(std::move(entries), chart.segment_names);
  const Frame f = frame_with_legend(y_ticks, chart.width, chart.height, legend, chart.title);
  const double left = f.left, plot_right = f.plot_right, plot_bottom = f.plot_bottom;

  const Axis ay(0, y_hi, plot_bottom, kTop);
  std::string out = header(f.width, f.height, chart.title, left, plot_right);
  for (double t : y_ticks) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n", px(left), px(ay(t)),
                       px(plot_right), px(ay(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(left - 6), px(ay(t) + 4),
                       tick_label(t));
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333333\"/>\n", px(left),
                     px(plot_bottom), px(plot_right));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     px((kTop + plot_bottom) / 2), escape_xml(chart.y_label));
  const double group_width = chart.groups.empty() ? 0 : (plot_right - left) / static_cast<double>(chart.groups.size());
  const double bar_width = group_width * 0.8 / static_cast<double>(bars_per_group);
  for (std::size_t g = 0; g < chart.groups.size(); ++g) {
    const auto& group = chart.groups[g];
    const double x0 = left + group_width * static_cast<double>(g) + group_width * 0.1;
    out += fmt::format("<g class=\"group\" data-label=\"{}\">\n", escape_xml(group.label));
    for (std::size_t b = 0; b < group.bars.size(); ++b) {
      const double x = x0 + bar_width * static_cast<double>(b);
      double base = 0;
      for (std::size_t s = 0; s < group.bars[b].size(); ++s) {
        const double v = std::isfinite(group.bars[b][s]) ? std::max(group.bars[b][s], 0.0) : 0.0;
        if (v <= 0) continue;
        out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                           px(x + 1), px(ay(base + v)), px(bar_width - 2), px(ay(base) - ay(base + v)), color_of(s),
                           escape_xml(fmt::format("{} {}: {}: {:.4g}", group.label,
                                                  b < group.bar_labels.size() ? group.bar_labels[b] : "",
                                                  s < chart.segment_names.size() ? chart.segment_names[s] : "", v)));
        base += v;
      }
      if (b < group.bar_labels.size())
        out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n",
                           px(x + bar_width / 2), px(plot_bottom + 12), escape_xml(group.bar_labels[b]));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x0 + group_width * 0.4),
                       px(plot_bottom + 28), escape_xml(group.label));
    out += "</g>\n";
  }
  out += render_legend_column(legend, f.legend_x, kTop);
  return out + "</svg>\n";
}

// Layout, top to bottom: title; legend rows (entries side by side, wrapping at the SVG's width); tick labels
// when repeated on top; one band per row; the axis line, tick labels and axis title. Left to right: a
// 10 px margin, the label column, 8 px, the plot, the totals column.
std::string render(const HorizontalBarChart& chart) {
  auto color_of = [&](std::size_t s) {
    return s < chart.segment_colors.size() ? chart.segment_colors[s] : palette(s);
  };
  auto clean = [](double v) { return std::isfinite(v) ? std::max(v, 0.0) : 0.0; };
  std::vector<double> totals;
  double x_hi = 0;
  for (const auto& row : chart.rows) {
    double total = 0;
    for (double v : row.segments) total += clean(v);
    totals.push_back(total);
    x_hi = std::max(x_hi, total);
  }
  const int decimals = decimals_for(x_hi);
  if (x_hi <= 0) x_hi = 1;
  const auto x_ticks = nice_ticks(0, x_hi, 5);
  x_hi = x_ticks.back();

  auto total_label = [&](double v) { return fmt::format("{:.{}f}", v, decimals); };
  double label_column = 0, totals_column = 0;
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    label_column = std::max(label_column, text_width(chart.rows[r].label));
    totals_column = std::max(totals_column, text_width(total_label(totals[r]), 11));
  }
  const double left = 10 + label_column + 8;
  const double plot_right = left + std::max(100, chart.plot_width);
  // Half of the last tick label may stick out on the right; a total sits 4 px after its bar.
  const double right = plot_right + std::max(text_width(tick_label(x_ticks.back())) / 2, 4 + totals_column) + 10;
  double w = std::max({right, title_width(chart.title), (left + plot_right) / 2 + text_width(chart.x_label) / 2 + 10});

  // Legend entries side by side, a new line when the next one would pass the right edge.
  struct Placed {
    double x, baseline;
  };
  std::vector<Placed> placed;
  const bool has_legend = chart.segment_names.size() >= 2;
  double y = 36;  // under the title
  if (has_legend) {
    double widest = 0;
    for (const auto& name : chart.segment_names) widest = std::max(widest, kSwatch + kSwatchGap + text_width(name));
    w = std::max(w, widest + 20);
    double x = 10;
    y += 10;
    for (const auto& name : chart.segment_names) {
      const double entry = kSwatch + kSwatchGap + text_width(name);
      if (x > 10 && x + entry > w - 10) {
        x = 10;
        y += kLineHeight + 3;
      }
      placed.push_back({x, y});
      x += entry + kLegendGap;
    }
    y += 10;
  }
  const bool ticks_on_top = chart.rows.size() > 15;
  if (ticks_on_top) y += 18;
  const double plot_top = y + 4;
  // A few rows get taller bars (up to 36 px), so that two points do not make a sliver of a plot.
  const double row_h = std::max({12.0, static_cast<double>(chart.row_height),
                                 std::min(36.0, 100.0 / static_cast<double>(std::max<std::size_t>(chart.rows.size(), 1)))});
  const double plot_bottom = plot_top + row_h * static_cast<double>(chart.rows.size());
  const double h = plot_bottom + 50;

  const Axis ax(0, x_hi, left, plot_right);
  std::string out = header(w, h, chart.title, left, plot_right);
  if (has_legend) {
    out += "<g class=\"legend\">\n";
    for (std::size_t s = 0; s < chart.segment_names.size(); ++s) {
      const LegendEntry e{color_of(s), false, true, {chart.segment_names[s]}};
      out += swatch(placed[s].x, placed[s].baseline, e) + legend_text(placed[s].x + kSwatch + kSwatchGap, placed[s].baseline, e);
    }
    out += "</g>\n";
  }
  for (std::size_t r = 1; r < chart.rows.size(); r += 2)
    out += fmt::format("<rect class=\"stripe\" x=\"5\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f3f3\"/>\n",
                       px(plot_top + row_h * static_cast<double>(r)), px(w - 10), px(row_h));
  for (double t : x_ticks) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#dddddd\"/>\n", px(ax(t)), px(plot_top),
                       px(plot_bottom));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(ax(t)), px(plot_bottom + 16),
                       tick_label(t));
    if (ticks_on_top)
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(ax(t)), px(plot_top - 6),
                         tick_label(t));
  }
  out += fmt::format("<g class=\"axes\" stroke=\"#333333\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n"
                     "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\"/>\n</g>\n",
                     px(left), px(plot_bottom), px(plot_right), px(plot_top));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px((left + plot_right) / 2),
                     px(plot_bottom + 38), escape_xml(chart.x_label));
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const auto& row = chart.rows[r];
    const double top = plot_top + row_h * static_cast<double>(r);
    const double baseline = top + row_h / 2 + 4;
    out += fmt::format("<g class=\"row\" data-label=\"{}\">\n", escape_xml(row.label));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(left - 8), px(baseline),
                       escape_xml(row.label));
    double base = 0;
    for (std::size_t s = 0; s < row.segments.size(); ++s) {
      const double v = clean(row.segments[s]);
      if (v <= 0) continue;
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                         px(ax(base)), px(top + row_h * 0.15), px(ax(base + v) - ax(base)), px(row_h * 0.7), color_of(s),
                         escape_xml(fmt::format("{}: {}{:.4g}", row.label,
                                                s < chart.segment_names.size() ? chart.segment_names[s] + ": " : "", v)));
      base += v;
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">{}</text>\n", px(ax(totals[r]) + 4),
                       px(baseline), total_label(totals[r]));
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

}  // namespace trainsim::svg
