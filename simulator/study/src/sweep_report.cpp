#include "trainsim/study/sweep_report.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "trainsim/core/svg.hpp"
#include "trainsim/core/units.hpp"

namespace trainsim::study {

namespace {

using Record = plan::ResultRecord;

std::string value_text(const Json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Axes that change the GPU count are the x axis; every other axis splits the points into series.
bool is_gpu_axis(const std::string& path) {
  return path == "platform.nodes" || path == "platform.gpus_per_node";
}

// "platform.nodes" → "nodes".
std::string short_name(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// How labels (legend entries, bar rows) show a point's coordinates: only the axes that vary, joined by
// " · ". A string value stands alone ("cluster-10gbe · ring_allreduce") unless another axis has the same
// value; a number or a boolean means nothing alone, so it comes with its axis's last name ("nodes=16",
// "overlap=true", "bucket_MB=25").
class PointLabels {
 public:
  explicit PointLabels(const plan::Scenario& base) {
    std::map<std::string, int> axes_with_value;
    for (const auto& [path, values] : base.sweep) {
      if (values.size() >= 2) varying_.push_back(path);
      std::set<std::string> distinct;
      for (const Json& v : values)
        if (v.is_string()) distinct.insert(v.get<std::string>());
      for (const auto& v : distinct) ++axes_with_value[v];
    }
    for (const auto& [value, axes] : axes_with_value)
      if (axes > 1) shared_values_.insert(value);
  }

  // The varying axes' values of `point`, those for which `keep(path)` holds.
  template <class Keep>
  std::string operator()(const Json& point, Keep keep) const {
    std::string label;
    for (const auto& path : varying_) {
      if (!keep(path) || !point.contains(path)) continue;
      const Json& v = point[path];
      const bool alone = v.is_string() && !shared_values_.count(v.get<std::string>());
      label += (label.empty() ? "" : " · ") + (alone ? value_text(v) : short_name(path) + "=" + value_text(v));
    }
    return label;
  }

 private:
  std::vector<std::string> varying_;     // in the sweep's axis order
  std::set<std::string> shared_values_;  // string values found on more than one axis
};

// "#3 cluster-10gbe · parameter_server · nodes=2": the index ties a bar to its table row.
std::string row_label(const PointLabels& labels, const Record& r) {
  const std::string values = labels(r.point, [](const std::string&) { return true; });
  return fmt::format("#{}{}{}", r.index, values.empty() ? "" : " ", values);
}

std::string in_unit(double value, const DisplayUnit& unit) {
  return fmt::format("{:.{}f}", value / unit.scale, unit.decimals);
}

const char* kStyle = R"(body{font-family:sans-serif;margin:2em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em;border-bottom:1px solid #ccc}
.charts{display:flex;flex-wrap:wrap;gap:1em}.charts svg{flex:none}table{border-collapse:collapse;font-size:.85em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}td{white-space:nowrap}th{background:#f4f4f4}
td.text,th.text{text-align:left}td.error{white-space:normal;overflow-wrap:anywhere}tr.failed td{background:#fde8e8}.note{color:#666;font-size:.9em})";

// The measured cells of one simulated point's table row: GPUs, iteration, throughput (with its band
// over the software stack's ranges under it), efficiency, breakdown, traffic, memory and the note.
std::string result_cells(const plan::IterationResult& r, const DisplayUnit& time_unit, const DisplayUnit& traffic_unit,
                         const DisplayUnit& memory_unit) {
  std::string html;
  const plan::Breakdown& b = r.breakdown;
  const auto range = r.samples_per_s_range();
  const std::string band =
      range ? fmt::format("<br><span class=\"note\">{:.1f}–{:.1f}</span>", range->first, range->second) : std::string();
  html += fmt::format(
      "<td>{}</td><td>{}</td><td>{:.1f}{}</td><td>{:.1f}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
      r.gpus, in_unit(r.iteration_time_s, time_unit), r.samples_per_s, band, 100 * r.scaling_efficiency,
      in_unit(b.compute_s, time_unit), in_unit(b.exposed_communication_s, time_unit), in_unit(b.idle_s, time_unit),
      in_unit(r.network_bytes, traffic_unit), in_unit(r.memory.total, memory_unit));
  std::string note = r.memory.fits() ? "" : "does not fit in GPU memory";
  if (r.band && !r.band->widest.empty()) note += (note.empty() ? "" : "; ") + fmt::format("band: {}", r.band->widest);
  html += "<td class=\"text\">" + svg::escape_xml(note) + "</td></tr>\n";
  return html;
}

}  // namespace

std::string sweep_report_html(const plan::Scenario& base, const std::vector<plan::ResultRecord>& results) {
  const PointLabels labels(base);
  std::vector<const Record*> ok;
  for (const Record& r : results)
    if (r.ok()) ok.push_back(&r);

  // Durations in one unit throughout (chart and table), chosen by the longest iteration.
  double longest = 0, most_traffic = 0, most_memory = 0;
  for (const Record* r : ok) {
    longest = std::max(longest, r->result->iteration_time_s);
    most_traffic = std::max(most_traffic, r->result->network_bytes);
    most_memory = std::max(most_memory, r->result->memory.total);
  }
  const DisplayUnit time_unit = seconds_unit_for(longest);
  const DisplayUnit traffic_unit = bytes_unit_for(most_traffic);
  const DisplayUnit memory_unit = bytes_unit_for(most_memory);

  // Series of (gpus, value) in index order, named by the non-GPU axes that vary.
  std::map<std::string, std::vector<const Record*>> series;
  std::vector<std::string> series_order;
  for (const Record* r : ok) {
    const std::string name = labels(r->point, [](const std::string& path) { return !is_gpu_axis(path); });
    if (!series.count(name)) series_order.push_back(name);
    series[name].push_back(r);
  }
  std::set<int> gpu_counts;
  for (const Record* r : ok) gpu_counts.insert(r->result->gpus);

  svg::LineChart throughput, efficiency;
  throughput.title = "Throughput";
  throughput.x_label = "GPUs (log₂ scale)";
  throughput.y_label = "throughput (samples/s)";
  throughput.log2_x = true;
  efficiency.title = "Scaling efficiency";
  efficiency.x_label = "GPUs (log₂ scale)";
  efficiency.y_label = "scaling efficiency (%, 100 = linear)";
  efficiency.log2_x = true;
  for (std::size_t i = 0; i < series_order.size(); ++i) {
    const std::string& name = series_order[i];
    svg::Series t;
    t.name = name.empty() ? base.name : name;
    t.color = svg::palette(i);
    t.dashed = (i / 10) % 2 == 1;  // the palette has ten colours: the next ten series are dashed
    svg::Series e = t;
    std::vector<const Record*> points = series[name];
    std::stable_sort(points.begin(), points.end(),
                     [](const Record* a, const Record* b) { return a->result->gpus < b->result->gpus; });
    for (const Record* r : points) {
      t.x.push_back(r->result->gpus);
      t.y.push_back(r->result->samples_per_s);
      // The band over the software stack's ranges as an error bar (none: NaN).
      const auto range = r->result->samples_per_s_range();
      t.y_low.push_back(range ? range->first : std::nan(""));
      t.y_high.push_back(range ? range->second : std::nan(""));
      e.x.push_back(r->result->gpus);
      e.y.push_back(100 * r->result->scaling_efficiency);
    }
    throughput.series.push_back(t);
    efficiency.series.push_back(e);
  }

  // One bar per point, stacking the mean GPU's compute, the exposed communication and the wait for slower
  // GPUs, which add up to the iteration time. Horizontal bars rather than columns or small multiples: a
  // row per point keeps every label horizontal and whole (a sweep's labels run to 40 characters) at 2
  // points as at 100+, the chart only grows taller, and one shared time axis keeps every point comparable
  // with every other, which small multiples split into panels would not.
  svg::HorizontalBarChart breakdown;
  breakdown.title = "Where an iteration goes";
  breakdown.x_label = fmt::format("time per iteration ({})", time_unit.symbol);
  // The kernels' SM share last, so the first three keep their colours in every report.
  breakdown.segment_names = {"compute", "exposed communication", "idle (waiting for slower GPUs)",
                             "compute lost to collective kernels' SMs"};
  for (const Record* r : ok) {
    const plan::Breakdown& b = r->result->breakdown;
    breakdown.rows.push_back({row_label(labels, *r),
                              {(b.compute_s - b.idle_s) / time_unit.scale, b.exposed_communication_s / time_unit.scale,
                               b.idle_s / time_unit.scale, b.comm_kernel_slowdown_s / time_unit.scale}});
  }

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                     svg::escape_xml(base.name) + " — trainsim sweep</title>\n<style>" + kStyle +
                     "</style></head><body>\n";
  html += "<h1>" + svg::escape_xml(base.name) + "</h1>\n";
  if (!base.description.empty()) html += "<p>" + svg::escape_xml(base.description) + "</p>\n";
  html += fmt::format("<p class=\"note\">{} points ({} failed) from {}. Axes: ", results.size(),
                      results.size() - ok.size(), svg::escape_xml(base.source));
  for (std::size_t a = 0; a < base.sweep.size(); ++a) {
    html += (a ? "; " : "") + svg::escape_xml(base.sweep[a].first) + " ∈ {";
    for (std::size_t v = 0; v < base.sweep[a].second.size(); ++v)
      html += (v ? ", " : "") + svg::escape_xml(value_text(base.sweep[a].second[v]));
    html += "}";
  }
  html += ".</p>\n<h2>Scaling</h2>\n<div class=\"charts\">\n";
  const bool any_band = std::any_of(ok.begin(), ok.end(), [](const Record* r) { return r->result->band.has_value(); });
  if (gpu_counts.size() > 1) {
    html += svg::render(throughput) + svg::render(efficiency);
  } else {
    // One GPU count: compare the points side by side.
    svg::HorizontalBarChart bars;
    bars.title = fmt::format("Throughput on {} GPUs", gpu_counts.empty() ? 0 : *gpu_counts.begin());
    bars.x_label = "throughput (samples/s)";
    for (const Record* r : ok) bars.rows.push_back({row_label(labels, *r), {r->result->samples_per_s}});
    html += svg::render(bars);
  }
  if (any_band)
    html +=
        "</div>\n<p class=\"note\">Error bars (and the range under a throughput in the table): the band over "
        "the software stack's published ranges (gRPC, MPI over TCP, stragglers); the note names the constant "
        "whose range alone widens the slow side most.</p>\n<div class=\"charts\">\n";
  html += "</div>\n<h2>Iteration breakdown</h2>\n<div class=\"charts\">\n" + svg::render(breakdown) + "</div>\n";

  html += "<h2>Results</h2>\n<table><tr><th>#</th>";
  for (const auto& [path, values] : base.sweep)
    html += (values.empty() || !values.front().is_number() ? "<th class=\"text\">" : "<th>") + svg::escape_xml(path) +
            "</th>";
  const std::string t = std::string(time_unit.symbol);
  html += fmt::format(
      "<th>GPUs</th><th>iteration ({0})</th><th>throughput (samples/s)</th><th>scaling efficiency (%)</th>"
      "<th>compute ({0})</th><th>exposed comm. ({0})</th><th>idle ({0})</th><th>network traffic ({1})</th>"
      "<th>memory per GPU ({2})</th><th class=\"text\">note</th></tr>\n",
      t, traffic_unit.symbol, memory_unit.symbol);
  for (const Record& record : results) {
    html += record.ok() ? "<tr>" : "<tr class=\"failed\">";
    html += fmt::format("<td>{}</td>", record.index);
    for (const auto& [path, values] : base.sweep) {  // strings to the left, numbers to the right
      const bool present = record.point.contains(path);
      html += (present && record.point[path].is_number() ? "<td>" : "<td class=\"text\">") +
              svg::escape_xml(present ? value_text(record.point[path]) : "") + "</td>";
    }
    if (!record.ok()) {
      html += "<td colspan=\"10\" class=\"text error\">" + svg::escape_xml(record.error) + "</td></tr>\n";
      continue;
    }
    html += result_cells(*record.result, time_unit, traffic_unit, memory_unit);
  }
  html +=
      "</table>\n<p class=\"note\">Generated by trainsim. Compute is the slowest GPU's; exposed communication is the "
      "part of the "
      "iteration not hidden behind compute and the compute time that collective kernels' SMs take from it "
      "(nccl_allreduce; the chart shows that loss); idle is the mean time GPUs wait for slower ones. Network traffic "
      "is the bytes of "
      "every flow in one iteration, each counted once.</p>\n</body></html>\n";
  return html;
}

}  // namespace trainsim::study
