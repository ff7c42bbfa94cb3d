#include "trainsim/fitting/divergence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/models.hpp"
#include "trainsim/core/svg.hpp"

namespace trainsim::fitting {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

double ratio(double a, double b) { return b != 0 ? a / b : kNaN; }

bool same_configuration(const Dataset& a, std::size_t ra, const Dataset& b, std::size_t rb) {
  for (std::size_t v = 0; v < a.variables().size(); ++v) {
    const double x = a.value(ra, v), y = b.value(rb, v);
    if (std::abs(x - y) > 1e-9 * std::max(std::abs(x), std::abs(y))) return false;
  }
  return true;
}

std::string fmt_ratio(double r) { return std::isfinite(r) ? fmt::format("{:.3g}", r) : "n/a"; }

}  // namespace

DivergenceReport compare_measured_simulated(const CsvTable& measured, const CsvTable& simulated,
                                            const CompareRequest& request) {
  if (!(request.threshold > 0) || !std::isfinite(request.threshold))
    throw InputError("--threshold", "", fmt::format("must be a number > 0, got {}", request.threshold));
  if (request.fit.holdout) throw InputError("compare", "", "a hold-out rule does not apply to compare");
  FitRequest fit = request.fit;
  if (!fit.expression && !fit.model) fit.model = "scaling";
  require_columns(measured, {"gpus"}, "compare (the scaling curve)");
  require_columns(simulated, {"gpus"}, "compare (the scaling curve)");

  DivergenceReport report;
  report.threshold = request.threshold;
  report.measured = run_fit(measured, fit);
  report.simulated = run_fit(simulated, fit);
  for (const FitReport* r : {&report.measured, &report.simulated})
    if (!r->fit.summary.usable())
      throw RunError("the fit to " + r->data_source + " found no usable constants (" + r->fit.summary.message +
                     "); there is nothing to compare");

  Expression expression = fit.model ? model_expression(find_model(*fit.model)) : Expression::parse(*fit.expression, "--expression");
  std::set<std::string> names(expression.variables().begin(), expression.variables().end());
  names.insert("gpus");
  const std::vector<std::string> variables(names.begin(), names.end());
  const Dataset m = Dataset::from_csv(measured, variables, fit.y_column);
  const Dataset s = Dataset::from_csv(simulated, variables, fit.y_column);
  const std::size_t gpus = *m.find_variable("gpus");
  const std::size_t terms = expression.terms().size();

  // Term values on the measured rows under both sets of constants.
  ExpressionEvaluator evaluator(expression, m);
  std::vector<std::vector<double>> tm(m.size(), std::vector<double>(terms)), ts = tm;
  evaluator.set_constants(report.measured.fit.constants);
  for (std::size_t r = 0; r < m.size(); ++r) evaluator.term_values(r, tm[r]);
  evaluator.set_constants(report.simulated.fit.constants);
  for (std::size_t r = 0; r < m.size(); ++r) evaluator.term_values(r, ts[r]);

  // The simulated value of each measured configuration, when the simulated CSV has it.
  std::vector<std::optional<double>> matched(m.size());
  for (std::size_t r = 0; r < m.size(); ++r) {
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t q = 0; q < s.size(); ++q)
      if (same_configuration(m, r, s, q)) sum += s.y(q), ++count;
    if (count) matched[r] = sum / static_cast<double>(count);
  }

  std::map<double, std::vector<std::size_t>> by_gpus;
  for (std::size_t r = 0; r < m.size(); ++r) by_gpus[m.value(r, gpus)].push_back(r);
  for (const auto& [g, rows] : by_gpus) {
    CurvePoint point;
    point.gpus = g;
    point.rows = rows.size();
    point.terms_measured.assign(terms, 0.0);
    point.terms_simulated.assign(terms, 0.0);
    bool all_matched = true;
    double matched_sum = 0, fitted_sum = 0;
    for (std::size_t r : rows) {
      const double n = static_cast<double>(rows.size());
      point.measured += m.y(r) / n;
      for (std::size_t t = 0; t < terms; ++t) {
        point.terms_measured[t] += tm[r][t] / n;
        point.terms_simulated[t] += ts[r][t] / n;
        fitted_sum += ts[r][t] / n;
      }
      if (matched[r]) matched_sum += *matched[r] / n;
      else all_matched = false;
    }
    point.simulated_from_fit = !all_matched;
    point.simulated = all_matched ? matched_sum : fitted_sum;
    point.relative_difference = ratio(point.measured - point.simulated, point.simulated);
    report.curve.push_back(std::move(point));
  }

  // The first GPU count from which every larger one differs by more than the threshold.
  std::size_t first = report.curve.size();
  for (std::size_t i = report.curve.size(); i-- > 0;) {
    const double d = report.curve[i].relative_difference;
    if (!(std::abs(d) > request.threshold)) break;
    first = i;
  }
  if (first < report.curve.size()) {
    const CurvePoint& p = report.curve[first];
    report.divergence_gpus = p.gpus;
    double modelled_gap = 0;
    for (std::size_t t = 0; t < terms; ++t) modelled_gap += p.terms_measured[t] - p.terms_simulated[t];
    const double direction = (p.measured - p.simulated) < 0 ? -1.0 : 1.0;
    std::size_t best = 0;
    double best_delta = -std::numeric_limits<double>::infinity();
    for (std::size_t t = 0; t < terms; ++t) {
      const double delta = direction * (p.terms_measured[t] - p.terms_simulated[t]);
      if (delta > best_delta) best_delta = delta, best = t;
    }
    report.responsible_term = best;
    report.responsible_gap_fraction = ratio(p.terms_measured[best] - p.terms_simulated[best], modelled_gap);
  }

  for (std::size_t t = 0; t < terms; ++t) {
    TermComparison c;
    c.name = report.measured.terms[t].name;
    c.expression = (expression.terms()[t].sign < 0 ? "-" : "") + expression.terms()[t].text;
    for (std::size_t r = 0; r < m.size(); ++r) {
      c.measured += tm[r][t] / static_cast<double>(m.size());
      c.simulated += ts[r][t] / static_cast<double>(m.size());
    }
    c.ratio = ratio(c.measured, c.simulated);
    report.terms.push_back(c);
  }
  for (std::size_t j = 0; j < report.measured.constant_names.size(); ++j)
    report.constants.push_back({report.measured.constant_names[j], report.measured.fit.constants[j],
                                report.simulated.fit.constants[j],
                                ratio(report.measured.fit.constants[j], report.simulated.fit.constants[j])});

  std::map<double, std::pair<double, std::size_t>> sim_by_gpus;
  for (std::size_t q = 0; q < s.size(); ++q) {
    auto& [sum, count] = sim_by_gpus[s.value(q, gpus)];
    sum += s.y(q);
    ++count;
  }
  for (const auto& [g, acc] : sim_by_gpus) report.simulated_curve.emplace_back(g, acc.first / static_cast<double>(acc.second));
  report.verdict = divergence_verdict(report);
  return report;
}

namespace {

enum class TermKind { communication, incast, latency, compute, overhead, other };

TermKind term_kind(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (has("incast")) return TermKind::incast;
  if (has("bandwidth") || has("push_pull") || has("communication")) return TermKind::communication;
  if (has("latency") || has("synchronisation") || name == "linear" || name == "logarithmic" || name == "serial_loss")
    return TermKind::latency;
  if (has("compute") || has("parallel")) return TermKind::compute;
  if (has("overhead") || name == "base" || name == "serial") return TermKind::overhead;
  return TermKind::other;
}

// What a term that costs more (or less) in reality than in the simulation says, and where to look.
std::string cause(TermKind kind, bool more_in_reality, const TermComparison& term) {
  switch (kind) {
    case TermKind::communication:
      return more_in_reality ? "the simulated network is faster than the real one; check the platform's link bandwidths "
                               "and efficiency, and the strategy's buckets"
                             : "the simulated network is slower than the real one; check the platform's link bandwidths, "
                               "the strategy and where its traffic flows";
    case TermKind::incast:
      return more_in_reality ? "the real parameter servers are a worse bottleneck than the simulated ones; check the "
                               "server count, their placement and their NICs"
                             : "the simulated parameter servers are a worse bottleneck than the real ones; check the server "
                               "count and placement, and how the framework spreads variables over them";
    case TermKind::latency:
      return more_in_reality ? "per-step latency and synchronisation cost more in reality than in the simulation; check "
                               "the links' latencies and per-message overheads"
                             : "the simulation charges more per-step latency than the real system pays; check the links' "
                               "latencies and the collective's algorithm";
    case TermKind::compute:
      return more_in_reality ? "the real GPUs slow down with scale where the simulated ones do not (contention for SMs, "
                               "memory bandwidth or the host); the one-GPU calibration does not carry over"
                             : "the simulated GPUs compute slower with scale than the real ones; check the compute model's "
                               "per-GPU slowdowns (heterogeneity)";
    case TermKind::overhead:
      return more_in_reality ? "a fixed per-iteration cost (framework, input pipeline, kernel launches) is larger in "
                               "reality than in the simulation"
                             : "a fixed per-iteration cost is larger in the simulation than in reality";
    case TermKind::other: break;
  }
  return fmt::format("the term {} accounts for most of the gap", term.expression);
}

std::string times(double ratio) { return ratio >= 10 ? fmt::format("{:.0f}×", ratio) : fmt::format("{:.2g}×", ratio); }

}  // namespace

std::string divergence_verdict(const DivergenceReport& report) {
  const std::string& y = report.measured.y_name;
  const bool is_time = y.size() > 2 && y.ends_with("_s") && !y.ends_with("_per_s");
  if (!report.divergence_gpus) {
    const CurvePoint* worst = nullptr;
    for (const auto& p : report.curve)
      if (std::isfinite(p.relative_difference) && (!worst || std::abs(p.relative_difference) > std::abs(worst->relative_difference)))
        worst = &p;
    if (!worst) return "No measured GPU count could be compared with the simulation.";
    return fmt::format("Measured and simulated scaling agree within {:g}% at every measured GPU count (largest gap "
                       "{:+.1f}% at {:g} GPUs): the simulation can stand in for the measurements over this range.",
                       100 * report.threshold, 100 * worst->relative_difference, worst->gpus);
  }
  const double from = *report.divergence_gpus;
  const CurvePoint* at = nullptr;
  for (const auto& p : report.curve)
    if (p.gpus == from) at = &p;
  TRAINSIM_CHECK(at != nullptr, "the divergence point is one of the curve's GPU counts");
  const std::string gap = fmt::format("where the measured {} is {:.0f}% {} the simulated one", y,
                                      100 * std::abs(at->relative_difference),
                                      at->relative_difference > 0 ? "above" : "below");
  if (!report.responsible_term)
    return fmt::format("The scaling curves part from {:g} GPUs on, {}, and no term of the expression accounts for it.", from, gap);
  const std::size_t t = *report.responsible_term;
  const TermComparison& term = report.terms[t];
  const double m = at->terms_measured[t], s = at->terms_simulated[t];
  const double scale = std::max({std::abs(m), std::abs(s), 1e-300});
  std::string size;
  if (std::abs(s) <= 1e-9 * scale)
    size = "is present in the measurements but absent from the simulation";
  else if (std::abs(m) <= 1e-9 * scale)
    size = "is absent from the measurements but present in the simulation";
  else if (m / s >= 1)
    size = "is " + times(m / s) + " larger in the measurements";
  else
    size = "is " + times(s / m) + " smaller in the measurements";
  // A term larger in the measurements costs more in reality when y is a time; for a rate it adds throughput.
  const bool term_more_in_reality = (m > s) == is_time;
  return fmt::format("The {} term {} from {:g} GPUs on, {}: {}.", term.name, size, from, gap,
                     cause(term_kind(term.name), term_more_in_reality, term));
}

Json divergence_json(const DivergenceReport& report) {
  Json out;
  out["verdict"] = report.verdict;
  out["threshold"] = report.threshold;
  out["divergence_gpus"] = report.divergence_gpus ? Json(*report.divergence_gpus) : Json(nullptr);
  if (report.responsible_term) {
    const auto& t = report.terms[*report.responsible_term];
    out["responsible_term"] = Json{{"name", t.name},
                                   {"expression", t.expression},
                                   {"gap_fraction", number_or_null(report.responsible_gap_fraction)}};
  } else {
    out["responsible_term"] = nullptr;
  }
  Json terms = Json::array();
  for (const auto& t : report.terms)
    terms.push_back(Json{{"name", t.name},
                         {"expression", t.expression},
                         {"measured", number_or_null(t.measured)},
                         {"simulated", number_or_null(t.simulated)},
                         {"ratio", number_or_null(t.ratio)}});
  out["terms"] = terms;
  Json constants = Json::array();
  for (const auto& c : report.constants)
    constants.push_back(Json{{"name", c.name},
                             {"measured", number_or_null(c.measured)},
                             {"simulated", number_or_null(c.simulated)},
                             {"ratio", number_or_null(c.ratio)}});
  out["constants"] = constants;
  Json curve = Json::array();
  for (const auto& p : report.curve) {
    Json ratios = Json::object();
    for (std::size_t t = 0; t < report.terms.size(); ++t)
      ratios[report.terms[t].name] = number_or_null(ratio(p.terms_measured[t], p.terms_simulated[t]));
    curve.push_back(Json{{"gpus", p.gpus},
                         {"rows", p.rows},
                         {"measured", number_or_null(p.measured)},
                         {"simulated", number_or_null(p.simulated)},
                         {"simulated_from_fit", p.simulated_from_fit},
                         {"relative_difference", number_or_null(p.relative_difference)},
                         {"exceeds_threshold", std::abs(p.relative_difference) > report.threshold},
                         {"term_ratios", ratios}});
  }
  out["curve"] = curve;
  out["measured"] = fit_report_json(report.measured);
  out["simulated"] = fit_report_json(report.simulated);
  return out;
}

std::string divergence_text(const DivergenceReport& report) {
  std::ostringstream out;
  const auto& mf = report.measured.fit;
  const auto& sf = report.simulated.fit;
  out << fmt::format("measured:  {} — R² {:.4f}, MAPE {:.2f}%, {}\n", report.measured.data_source, mf.r2, 100 * mf.mape,
                     to_string(mf.summary.termination));
  out << fmt::format("simulated: {} — R² {:.4f}, MAPE {:.2f}%, {}\n", report.simulated.data_source, sf.r2,
                     100 * sf.mape, to_string(sf.summary.termination));
  out << "term ratios (measured/simulated, mean over the measured rows):\n";
  for (const auto& t : report.terms) out << fmt::format("  {:<24} {}\n", t.name, fmt_ratio(t.ratio));
  out << "verdict: " << report.verdict << "\n";
  if (report.divergence_gpus) {
    out << fmt::format("the scaling curves differ by more than {:g}% from {:g} GPUs on", 100 * report.threshold,
                       *report.divergence_gpus);
    if (report.responsible_term)
      out << fmt::format("; term responsible: {} ({:.0f}% of the modelled gap)",
                         report.terms[*report.responsible_term].name, 100 * report.responsible_gap_fraction);
    out << "\n";
  } else {
    out << fmt::format("the scaling curves stay within {:g}% of each other\n", 100 * report.threshold);
  }
  return out.str();
}

std::string divergence_html_section(const DivergenceReport& report, int heading_level) {
  using svg::escape_xml;
  const std::string h_open = fmt::format("<h{}>", heading_level), h_close = fmt::format("</h{}>\n", heading_level);
  const std::size_t terms = report.terms.size();
  bool positive_gpus = true;
  for (const auto& p : report.curve) positive_gpus = positive_gpus && p.gpus > 0;
  for (const auto& [g, y] : report.simulated_curve) positive_gpus = positive_gpus && g > 0;

  svg::LineChart curves;
  curves.title = "Scaling: " + report.measured.y_name + " against GPUs";
  curves.x_label = "GPUs";
  curves.y_label = report.measured.y_name;
  curves.log2_x = positive_gpus;
  svg::Series measured{"measured", {}, {}, "#1f77b4", false, true, {}, {}};
  svg::Series measured_fit{"measured fit", {}, {}, "#1f77b4", true, false, {}, {}};
  svg::Series simulated{"simulated", {}, {}, "#ff7f0e", false, true, {}, {}};
  svg::Series simulated_fit{"simulated fit", {}, {}, "#ff7f0e", true, false, {}, {}};
  for (const auto& p : report.curve) {
    measured.x.push_back(p.gpus);
    measured.y.push_back(p.measured);
    double fm = 0, fs = 0;
    for (std::size_t t = 0; t < terms; ++t) fm += p.terms_measured[t], fs += p.terms_simulated[t];
    measured_fit.x.push_back(p.gpus);
    measured_fit.y.push_back(fm);
    simulated_fit.x.push_back(p.gpus);
    simulated_fit.y.push_back(fs);
  }
  for (const auto& [g, y] : report.simulated_curve) simulated.x.push_back(g), simulated.y.push_back(y);
  curves.series = {measured, measured_fit, simulated, simulated_fit};
  if (report.divergence_gpus) {
    curves.vertical_markers.push_back(*report.divergence_gpus);
    curves.marker_label = fmt::format("> {:g}% from here", 100 * report.threshold);
  }

  svg::StackedBarChart shares;
  shares.title = "Share of each term in the prediction (M = measured fit, S = simulated fit)";
  shares.y_label = "share of prediction";
  for (const auto& t : report.terms) shares.segment_names.push_back(t.name);
  for (const auto& p : report.curve) {
    svg::BarGroup group;
    group.label = fmt::format("{:g} GPUs", p.gpus);
    group.bar_labels = {"M", "S"};
    double fm = 0, fs = 0;
    for (std::size_t t = 0; t < terms; ++t) fm += p.terms_measured[t], fs += p.terms_simulated[t];
    std::vector<double> bm, bs;
    for (std::size_t t = 0; t < terms; ++t) {
      bm.push_back(fm != 0 ? p.terms_measured[t] / fm : kNaN);
      bs.push_back(fs != 0 ? p.terms_simulated[t] / fs : kNaN);
    }
    group.bars = {bm, bs};
    shares.groups.push_back(std::move(group));
  }

  std::ostringstream html;
  html << "<p>Measured: <code>" << escape_xml(report.measured.data_source) << "</code>; simulated: <code>"
       << escape_xml(report.simulated.data_source) << "</code>; quantity <code>" << escape_xml(report.measured.y_name)
       << "</code>.<br>Expression" << (report.measured.model ? " (model " + escape_xml(*report.measured.model) + ")" : "")
       << ": <code>" << escape_xml(report.measured.expression) << "</code></p>\n";
  html << "<p class=\"verdict-box\"><strong>Verdict:</strong> <span class=\"verdict\">" << escape_xml(report.verdict)
       << "</span></p>\n";
  if (report.divergence_gpus) {
    html << "<p class=\"warn\"><strong>"
         << escape_xml(fmt::format("The curves differ by more than {:g}% from {:g} GPUs on.", 100 * report.threshold,
                                   *report.divergence_gpus))
         << "</strong>";
    if (report.responsible_term)
      html << escape_xml(fmt::format(" Term responsible: {} ({:.0f}% of the modelled gap there).",
                                     report.terms[*report.responsible_term].name, 100 * report.responsible_gap_fraction));
    html << "</p>\n";
  } else {
    html << "<p>" << escape_xml(fmt::format("The curves stay within {:g}% of each other.", 100 * report.threshold))
         << "</p>\n";
  }
  html << svg::render(curves);
  html << svg::render(shares);
  html << "<p>Negative term shares, if any, are drawn as zero.</p>\n";

  html << h_open << "Terms" << h_close << "<table>\n<tr><th class=\"l\">term</th><th class=\"l\">expression</th><th>measured</th>"
          "<th>simulated</th><th>ratio</th></tr>\n";
  for (const auto& t : report.terms)
    html << "<tr><td class=\"l\">" << escape_xml(t.name) << "</td><td class=\"l\"><code>" << escape_xml(t.expression)
         << "</code></td><td>" << fmt::format("{:.4g}", t.measured) << "</td><td>" << fmt::format("{:.4g}", t.simulated)
         << "</td><td>" << fmt_ratio(t.ratio) << "</td></tr>\n";
  html << "</table>\n" << h_open << "Constants" << h_close << "<table>\n<tr><th class=\"l\">constant</th><th>measured</th><th>simulated</th>"
          "<th>ratio</th></tr>\n";
  for (const auto& c : report.constants)
    html << "<tr><td class=\"l\">" << escape_xml(c.name) << "</td><td>" << fmt::format("{:.4g}", c.measured)
         << "</td><td>" << fmt::format("{:.4g}", c.simulated) << "</td><td>" << fmt_ratio(c.ratio) << "</td></tr>\n";
  html << "</table>\n" << h_open << "Scaling curves" << h_close << "<table>\n<tr><th>GPUs</th><th>rows</th><th>measured</th><th>simulated</th>"
          "<th>difference</th></tr>\n";
  for (const auto& p : report.curve)
    html << "<tr><td>" << fmt::format("{:g}", p.gpus) << "</td><td>" << p.rows << "</td><td>"
         << fmt::format("{:.4g}", p.measured) << "</td><td>" << fmt::format("{:.4g}", p.simulated)
         << (p.simulated_from_fit ? " (fit)" : "") << "</td><td"
         << (std::abs(p.relative_difference) > report.threshold ? " class=\"warn\"" : "") << ">"
         << fmt::format("{:+.1f}%", 100 * p.relative_difference) << "</td></tr>\n";
  html << "</table>\n" << h_open << "Fits" << h_close << "<table>\n<tr><th class=\"l\">data</th><th>R²</th><th>MAPE</th>"
          "<th class=\"l\">solver</th></tr>\n";
  for (const FitReport* r : {&report.measured, &report.simulated})
    html << "<tr><td class=\"l\">" << escape_xml(r->data_source) << "</td><td>" << fmt::format("{:.4f}", r->fit.r2)
         << "</td><td>" << fmt::format("{:.2f}%", 100 * r->fit.mape) << "</td><td class=\"l\">"
         << escape_xml(r->fit.summary.brief_report()) << "</td></tr>\n";
  html << "</table>\n";
  return html.str();
}

std::string divergence_css() {
  return "body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}\n"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
         "th{background:#f4f4f4}td.l,th.l{text-align:left}.warn{color:#b00}code{background:#f4f4f4;padding:1px 3px}\n"
         ".verdict-box{font-size:1.1em;border-left:4px solid #1f77b4;background:#f4f8fc;padding:0.5em 0.8em}\n";
}

std::string divergence_html(const DivergenceReport& report) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>trainsim divergence report</title>\n<style>\n"
       << divergence_css() << "</style>\n</head>\n<body>\n<h1>Measured vs simulated scaling</h1>\n"
       << divergence_html_section(report, 2) << "<p>Generated by trainsim compare.</p>\n</body>\n</html>\n";
  return html.str();
}

}  // namespace trainsim::fitting
