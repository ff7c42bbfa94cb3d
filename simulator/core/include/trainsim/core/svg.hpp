#pragma once
// A small SVG chart writer for trainsim's HTML reports (sweeps, divergence): line charts (optionally log2 x axis) and
// grouped stacked bar charts. Written here rather than calling gnuplot so that report.html is
// produced deterministically, needs no extra package at run time, and is inline SVG that any
// browser shows without network access.
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::svg {

/// Escapes &, <, >, " and ' for XML text and attributes.
std::string escape_xml(std::string_view text);

/// Round tick values (steps of 1, 2, 2.5 or 5 × 10^k, about `target` of them) covering [lo, hi]:
/// the first is ≤ lo, the last ≥ hi. Requires lo < hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

/// Maps a data interval onto a pixel interval, linearly or by log2 (then data must be > 0).
class Axis {
public:
  /// TRAINSIM_CHECKs data_lo < data_hi (and data_lo > 0 for log2).
  Axis(double data_lo, double data_hi, double pixel_lo, double pixel_hi, bool log2 = false);
  /// The pixel coordinate of `value`.
  double operator()(double value) const;

private:
  double data_lo_, data_hi_, pixel_lo_, pixel_hi_;
  bool log2_;
};

/// One line of a line chart. Points with a non-finite coordinate are skipped.
struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  std::string color = "#1f77b4";
  bool dashed = false;
  bool markers = true;
};

/// A line chart.
struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;       ///< x ticks at powers of two
  bool y_from_zero = true;   ///< include 0 in the y range
  std::vector<Series> series;
  std::vector<double> vertical_markers;  ///< dashed vertical lines at these x
  std::string marker_label;
  int width = 720;
  int height = 380;
};

/// A `<svg>` element (no XML prolog, ready to inline in HTML) with axes, ticks, legend.
std::string render(const LineChart& chart);

/// One group of bars (one x category); bars[b][s] is segment s of bar b.
struct BarGroup {
  std::string label;
  std::vector<std::string> bar_labels;
  std::vector<std::vector<double>> bars;
};

/// Grouped stacked bars; negative segments are drawn as 0 (the caption should say so).
struct StackedBarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> segment_names;
  std::vector<std::string> segment_colors;  ///< one per segment; defaults used when empty
  std::vector<BarGroup> groups;
  int width = 720;
  int height = 380;
};

/// A `<svg>` element with one group per category, bars side by side, segments stacked from 0 up.
std::string render(const StackedBarChart& chart);

/// A categorical palette colour (10 colours, cycling).
std::string palette(std::size_t index);

}  // namespace trainsim::svg
