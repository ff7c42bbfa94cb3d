#include "trainsim/core/svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"

namespace trainsim::svg {
namespace {

constexpr double kLeft = 70, kRight = 170, kTop = 36, kBottom = 50;  // plot margins, px (legend on the right)

// Fixed-point coordinates keep the output byte-identical across runs and short.
std::string px(double v) { return fmt::format("{:.1f}", v); }

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:g}", std::round(v * 1e6) / 1e6);
}

std::string header(int width, int height, const std::string& title) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n",
      width, height);
  out += "<title>" + escape_xml(title) + "</title>\n";
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  out += fmt::format("<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                     px(width / 2.0), escape_xml(title));
  return out;
}

std::string legend_entry(double x, double y, const std::string& color, const std::string& name, bool dashed, bool box) {
  std::string out;
  if (box)
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", px(x), px(y - 9), color);
  else
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", px(x),
                       px(y - 4), px(x + 14), px(y - 4), color, dashed ? " stroke-dasharray=\"5,3\"" : "");
  out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", px(x + 20), px(y), escape_xml(name));
  return out;
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

std::string render(const LineChart& chart) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : chart.series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (chart.log2_x && s.x[i] <= 0)) continue;
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
  const auto y_ticks = nice_ticks(y_lo, y_hi, 5);
  y_lo = y_ticks.front();
  y_hi = y_ticks.back();

  std::vector<double> x_ticks;
  if (chart.log2_x) {
    for (double t = std::exp2(std::ceil(std::log2(x_lo) - 1e-9)); t <= x_hi * (1 + 1e-9); t *= 2) x_ticks.push_back(t);
    while (x_ticks.size() > 12) {  // keep every other power when there are many
      std::vector<double> thinned;
      for (std::size_t i = 0; i < x_ticks.size(); i += 2) thinned.push_back(x_ticks[i]);
      x_ticks = thinned;
    }
  } else {
    x_ticks = nice_ticks(x_lo, x_hi, 6);
    x_lo = x_ticks.front();
    x_hi = x_ticks.back();
  }
  const double w = chart.width, h = chart.height;
  const Axis ax(x_lo, x_hi, kLeft, w - kRight, chart.log2_x);
  const Axis ay(y_lo, y_hi, h - kBottom, kTop);
  std::string out = header(chart.width, chart.height, chart.title);
  out += fmt::format("<g class=\"axes\" stroke=\"#333333\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n"
                     "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\"/>\n</g>\n",
                     px(kLeft), px(h - kBottom), px(w - kRight), px(kTop));
  for (double t : y_ticks) {
    if (t < y_lo || t > y_hi) continue;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n", px(kLeft), px(ay(t)),
                       px(w - kRight), px(ay(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(kLeft - 6), px(ay(t) + 4),
                       tick_label(t));
  }
  for (double t : x_ticks) {
    if (t < x_lo || t > x_hi) continue;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(ax(t)), px(h - kBottom + 16),
                       tick_label(t));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px((kLeft + w - kRight) / 2),
                     px(h - 12), escape_xml(chart.x_label));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     px((kTop + h - kBottom) / 2), escape_xml(chart.y_label));
  for (double m : chart.vertical_markers) {
    if (!(m >= x_lo && m <= x_hi)) continue;
    out += fmt::format("<line class=\"marker\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#d62728\" "
                       "stroke-dasharray=\"2,4\" stroke-width=\"1.5\"/>\n",
                       px(ax(m)), px(kTop), px(h - kBottom));
    if (!chart.marker_label.empty())
      out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#d62728\">{}</text>\n", px(ax(m) + 4), px(kTop + 12),
                         escape_xml(chart.marker_label));
  }
  double legend_y = kTop + 10;
  for (const auto& s : chart.series) {
    std::string points;
    std::string markers;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (chart.log2_x && s.x[i] <= 0)) continue;
      if (!points.empty()) points += ' ';
      points += fmt::format("{},{}", px(ax(s.x[i])), px(ay(s.y[i])));
      if (s.markers)
        markers += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>\n", px(ax(s.x[i])), px(ay(s.y[i])), s.color);
    }
    out += fmt::format("<g class=\"series\" data-name=\"{}\">\n", escape_xml(s.name));
    if (!points.empty())
      out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", s.color,
                         s.dashed ? " stroke-dasharray=\"6,4\"" : "", points);
    out += markers + "</g>\n";
    out += legend_entry(w - kRight + 12, legend_y, s.color, s.name, s.dashed, false);
    legend_y += 18;
  }
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
  const double w = chart.width, h = chart.height;
  const Axis ay(0, y_hi, h - kBottom, kTop);
  std::string out = header(chart.width, chart.height, chart.title);
  for (double t : y_ticks) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>\n", px(kLeft), px(ay(t)),
                       px(w - kRight), px(ay(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", px(kLeft - 6), px(ay(t) + 4),
                       tick_label(t));
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333333\"/>\n", px(kLeft),
                     px(h - kBottom), px(w - kRight));
  out += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     px((kTop + h - kBottom) / 2), escape_xml(chart.y_label));
  auto color_of = [&](std::size_t s) {
    return s < chart.segment_colors.size() ? chart.segment_colors[s] : palette(s);
  };
  const double group_width = chart.groups.empty() ? 0 : (w - kRight - kLeft) / static_cast<double>(chart.groups.size());
  const double bar_width = group_width * 0.8 / static_cast<double>(bars_per_group);
  for (std::size_t g = 0; g < chart.groups.size(); ++g) {
    const auto& group = chart.groups[g];
    const double x0 = kLeft + group_width * static_cast<double>(g) + group_width * 0.1;
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
                           px(x + bar_width / 2), px(h - kBottom + 12), escape_xml(group.bar_labels[b]));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x0 + group_width * 0.4),
                       px(h - kBottom + 28), escape_xml(group.label));
    out += "</g>\n";
  }
  double legend_y = kTop + 10;
  for (std::size_t s = 0; s < chart.segment_names.size(); ++s) {
    out += legend_entry(w - kRight + 12, legend_y, color_of(s), chart.segment_names[s], false, true);
    legend_y += 18;
  }
  return out + "</svg>\n";
}

}  // namespace trainsim::svg
