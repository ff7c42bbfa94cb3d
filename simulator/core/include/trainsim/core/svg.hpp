#pragma once
// A small SVG chart writer for trainsim's HTML reports (sweeps, divergence): line charts (optionally log2 x axis),
// grouped stacked bar charts and horizontal stacked bar charts. Written here rather than calling gnuplot so that
// report.html is produced deterministically, needs no extra package at run time, and is inline SVG that any
// browser shows without network access.
//
// No text is ever clipped: there is no script to measure text in the page, so every label, legend and title is
// measured here with text_width, a conservative estimate, and the SVG is sized to hold it (legends are wrapped
// or placed beside the plot, label columns are as wide as their longest label).
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::svg {

/// Escapes &, <, >, " and ' for XML text and attributes.
std::string escape_xml(std::string_view text);

/// An upper bound on the width, in px, of UTF-8 `text` drawn in sans-serif at `font_size` px, bold or not:
/// DejaVu Sans Bold's advance widths for ASCII (Debian's default sans-serif, wider than Arial, Helvetica or
/// Liberation Sans), 1 em for any other character.
double text_width(std::string_view text, double font_size = 12);

/// `text` broken at spaces into lines whose text_width is at most `max_width` px. A word wider than that
/// stays whole on a line of its own (measure the lines to size what holds them). At least one line.
std::vector<std::string> wrap_text(std::string_view text, double max_width, double font_size = 12);

/// Round tick values (steps of 1, 2, 2.5 or 5 × 10^k, about `target` of them) covering [lo, hi]:
/// the first is ≤ lo, the last ≥ hi. Requires lo < hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

/// A tick's text: "0", "0.25", "750", "20k", "1.5M" (k and M from 10^4 on, so that labels stay short).
std::string tick_label(double value);

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
  /// Error bars: parallel to y (or empty: none); a point whose two ends are not both finite has none.
  std::vector<double> y_low;
  std::vector<double> y_high;
};

/// A line chart. `width` × `height` px hold the plot and its axes; the legend (one entry per series, names
/// wrapped at 320 px) goes to the right of the plot and the SVG grows to hold it.
struct LineChart {
  std::string title;
  std::string x_label;       ///< axis title, with its unit
  std::string y_label;       ///< axis title, with its unit
  bool log2_x = false;       ///< x ticks at powers of two
  bool y_from_zero = true;   ///< include 0 in the y range
  std::vector<Series> series;
  std::vector<double> vertical_markers;  ///< dashed vertical lines at these x
  std::string marker_label;
  int width = 600;
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

/// Grouped stacked bars; negative segments are drawn as 0 (the caption should say so). `width` × `height`
/// px hold the plot; the legend goes to its right and the SVG grows to hold it. Suits a few groups (the
/// group labels sit side by side under the plot); for many categories use HorizontalBarChart.
struct StackedBarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> segment_names;
  std::vector<std::string> segment_colors;  ///< one per segment; defaults used when empty
  std::vector<BarGroup> groups;
  int width = 600;
  int height = 380;
};

/// A `<svg>` element with one group per category, bars side by side, segments stacked from 0 up.
std::string render(const StackedBarChart& chart);

/// One row of a horizontal bar chart: its label and its segments, stacked from 0 rightwards.
struct BarRow {
  std::string label;
  std::vector<double> segments;
};

/// Horizontal stacked bars, one row per category, for any number of categories: labels stay horizontal and
/// whole in a column as wide as the longest one, and the SVG grows `row_height` px per row. Negative and
/// non-finite segments are drawn as 0. The legend (when there are two or more segment names) flows in rows
/// under the title; each row's total is written after its bar.
struct HorizontalBarChart {
  std::string title;
  std::string x_label;                       ///< axis title, with its unit
  std::vector<std::string> segment_names;
  std::vector<std::string> segment_colors;   ///< one per segment; defaults used when empty
  std::vector<BarRow> rows;
  int plot_width = 560;                      ///< px from 0 to the axis's last tick
  int row_height = 20;                       ///< px per row
};

/// A `<svg>` element: rows top to bottom in order, x axis at the bottom (and repeated at the top when there
/// are more than 15 rows), light stripes on every other row so that a label leads the eye to its bar.
std::string render(const HorizontalBarChart& chart);

/// A categorical palette colour (10 colours, cycling).
std::string palette(std::size_t index);

}  // namespace trainsim::svg
