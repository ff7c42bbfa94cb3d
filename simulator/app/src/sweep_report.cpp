#include "sweep_report.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "trainsim/core/svg.hpp"
#include "trainsim/core/units.hpp"

namespace trainsim::app {

namespace {

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Axes that change the GPU count are the x axis; every other axis splits the points into series.
bool is_gpu_axis(const std::string& path) { return path == "platform.nodes" || path == "platform.gpus_per_node"; }

std::string series_name(const Json& point) {
  std::string name;
  for (const auto& [path, value] : point.items()) {
    if (is_gpu_axis(path)) continue;
    name += (name.empty() ? "" : ", ") + path + "=" + value_text(value);
  }
  return name;
}

// "#3 2, parameter_server": the point's values in axis order (the table gives the axis names).
std::string point_label(const plan::ResultRecord& r) {
  std::string values;
  for (const auto& [path, value] : r.point.items()) values += (values.empty() ? "" : ", ") + value_text(value);
  return fmt::format("#{} {}", r.index, values);
}

const char* kStyle = R"(body{font-family:sans-serif;margin:2em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em;border-bottom:1px solid #ccc}
.charts{display:flex;flex-wrap:wrap;gap:1em}table{border-collapse:collapse;font-size:.85em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}th{background:#f4f4f4}
td.text{text-align:left}tr.failed td{background:#fde8e8}.note{color:#666;font-size:.9em})";

}  // namespace

std::string sweep_report_html(const plan::Scenario& base, const std::vector<plan::ResultRecord>& results) {
  using Record = plan::ResultRecord;
  std::vector<const Record*> ok;
  for (const Record& r : results)
    if (r.ok()) ok.push_back(&r);

  // Series of (gpus, value) in index order.
  std::map<std::string, std::vector<const Record*>> series;
  std::vector<std::string> series_order;
  for (const Record* r : ok) {
    const std::string name = series_name(r->point);
    if (!series.count(name)) series_order.push_back(name);
    series[name].push_back(r);
  }
  std::set<int> gpu_counts;
  for (const Record* r : ok) gpu_counts.insert(r->result->gpus);

  svg::LineChart throughput, efficiency;
  throughput.title = "Throughput";
  throughput.x_label = "GPUs";
  throughput.y_label = "samples/s";
  throughput.log2_x = true;
  efficiency.title = "Scaling efficiency";
  efficiency.x_label = "GPUs";
  efficiency.y_label = "efficiency (1 = linear)";
  efficiency.log2_x = true;
  for (std::size_t i = 0; i < series_order.size(); ++i) {
    const std::string& name = series_order[i];
    svg::Series t;
    t.name = name.empty() ? base.name : name;
    t.color = svg::palette(i);
    svg::Series e = t;
    std::vector<const Record*> points = series[name];
    std::stable_sort(points.begin(), points.end(), [](const Record* a, const Record* b) { return a->result->gpus < b->result->gpus; });
    for (const Record* r : points) {
      t.x.push_back(r->result->gpus);
      t.y.push_back(r->result->samples_per_s);
      e.x.push_back(r->result->gpus);
      e.y.push_back(r->result->scaling_efficiency);
    }
    throughput.series.push_back(t);
    efficiency.series.push_back(e);
  }

  // One group per point; its single bar stacks the mean GPU's compute, the exposed communication
  // and the wait for slower GPUs, which add up to the iteration time.
  svg::StackedBarChart breakdown;
  breakdown.title = "Where an iteration goes";
  breakdown.y_label = "seconds per iteration";
  breakdown.segment_names = {"compute", "exposed communication", "idle (waiting for slower GPUs)"};
  for (const Record* r : ok) {
    const plan::Breakdown& b = r->result->breakdown;
    svg::BarGroup group;
    group.label = point_label(*r);
    group.bar_labels = {""};
    group.bars = {{b.compute_s - b.idle_s, b.exposed_communication_s, b.idle_s}};
    breakdown.groups.push_back(group);
  }
  breakdown.width = std::max(720, 60 * static_cast<int>(ok.size()) + 360);
  breakdown.height = 420;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + svg::escape_xml(base.name) +
                     " — trainsim sweep</title>\n<style>" + kStyle + "</style></head><body>\n";
  html += "<h1>" + svg::escape_xml(base.name) + "</h1>\n";
  if (!base.description.empty()) html += "<p>" + svg::escape_xml(base.description) + "</p>\n";
  html += fmt::format("<p class=\"note\">{} points ({} failed) from {}. Axes: ", results.size(), results.size() - ok.size(),
                      svg::escape_xml(base.source));
  for (std::size_t a = 0; a < base.sweep.size(); ++a) {
    html += (a ? "; " : "") + svg::escape_xml(base.sweep[a].first) + " ∈ {";
    for (std::size_t v = 0; v < base.sweep[a].second.size(); ++v) html += (v ? ", " : "") + svg::escape_xml(value_text(base.sweep[a].second[v]));
    html += "}";
  }
  html += ".</p>\n<h2>Scaling</h2>\n<div class=\"charts\">\n";
  if (gpu_counts.size() > 1) {
    html += svg::render(throughput) + svg::render(efficiency);
  } else {
    // One GPU count: compare the points side by side.
    svg::StackedBarChart bars;
    bars.title = fmt::format("Throughput on {} GPUs", gpu_counts.empty() ? 0 : *gpu_counts.begin());
    bars.y_label = "samples/s";
    bars.segment_names = {"samples/s"};
    for (const Record* r : ok) bars.groups.push_back(svg::BarGroup{point_label(*r), {""}, {{r->result->samples_per_s}}});
    bars.width = breakdown.width;
    html += svg::render(bars);
  }
  html += "</div>\n<h2>Iteration breakdown</h2>\n<div class=\"charts\">\n" + svg::render(breakdown) + "</div>\n";

  html += "<h2>Results</h2>\n<table><tr><th>#</th>";
  for (const auto& [path, values] : base.sweep) html += "<th>" + svg::escape_xml(path) + "</th>";
  html += "<th>GPUs</th><th>iteration</th><th>samples/s</th><th>efficiency</th><th>compute</th><th>exposed comm.</th><th>idle</th>"
          "<th>network</th><th>memory/GPU</th><th>note</th></tr>\n";
  for (const Record& record : results) {
    html += record.ok() ? "<tr>" : "<tr class=\"failed\">";
    html += fmt::format("<td>{}</td>", record.index);
    for (const auto& [path, values] : base.sweep)
      html += "<td class=\"text\">" + svg::escape_xml(record.point.contains(path) ? value_text(record.point[path]) : "") + "</td>";
    if (!record.ok()) {
      html += "<td colspan=\"9\"></td><td class=\"text\">" + svg::escape_xml(record.error) + "</td></tr>\n";
      continue;
    }
    const plan::IterationResult& r = *record.result;
    const plan::Breakdown& b = r.breakdown;
    html += fmt::format("<td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f} %</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                        r.gpus, format_seconds(r.iteration_time_s), r.samples_per_s, 100 * r.scaling_efficiency,
                        format_seconds(b.compute_s), format_seconds(b.exposed_communication_s), format_seconds(b.idle_s),
                        format_bytes(r.network_bytes), format_bytes(r.memory.total));
    html += std::string("<td class=\"text\">") + (r.memory.fits() ? "" : "does not fit in GPU memory") + "</td></tr>\n";
  }
  html += "</table>\n<p class=\"note\">Generated by trainsim. Compute is the slowest GPU's; exposed communication is the part of the "
          "iteration not hidden behind compute; idle is the mean time GPUs wait for slower ones.</p>\n</body></html>\n";
  return html;
}

}  // namespace trainsim::app
