#include "trainsim/fitting/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/models.hpp"

namespace trainsim::fitting {
namespace {

// JSON has no NaN or infinity: non-finite figures are written as null.
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json metrics_json(const ErrorMetrics& m) {
  return Json{{"r2", number_or_null(m.r2)}, {"mape", number_or_null(m.mape)}, {"max_ape", number_or_null(m.max_ape)},
              {"rmse", number_or_null(m.rmse)}};
}

// Names of the terms whose text uses constant `name` (for the constants table).
std::string terms_using(const std::vector<Term>& terms, const std::string& name) {
  const std::regex word("(^|[^A-Za-z0-9_])" + name + "([^A-Za-z0-9_]|$)");
  std::string out;
  for (const auto& term : terms)
    if (std::regex_search(term.text, word)) out += (out.empty() ? "" : ", ") + term.name;
  return out;
}

std::string percent(double fraction) { return std::isfinite(fraction) ? fmt::format("{:.2f}%", 100 * fraction) : "n/a"; }

}  // namespace

double FitReport::share(std::size_t point, std::size_t term) const {
  const auto& p = points.at(point);
  if (p.predicted == 0 || !std::isfinite(p.predicted)) return std::numeric_limits<double>::quiet_NaN();
  return p.term_values.at(term) / p.predicted;
}

namespace {

// run_fit in its steps: the request's checks, the rows read, the fit, then what is reported of it.

void check_request(const FitRequest& request) {
  request.options.validate();
  if (request.expression && request.model)
    throw InputError("command line", "", "give either --expression or --model, not both");
  if (!request.expression && !request.model)
    throw InputError("command line", "", "give an expression (--expression EXPR) or a built-in model (--model NAME)");
}

std::optional<Expression> parse_holdout(const FitRequest& request) {
  if (!request.holdout) return std::nullopt;
  Expression holdout = Expression::parse(*request.holdout, "--holdout");
  if (!holdout.constants().empty())
    throw InputError(
        "--holdout", "",
        "the rule uses " + holdout.constants().front() + ", a fitted constant; it may only use CSV columns");
  return holdout;
}

// Neither the expression nor the baseline's features may use the fitted column.
void check_not_fitted_column(const Expression& expression, const std::vector<std::string>& features,
                             const std::string& y) {
  for (const auto& name : expression.variables())
    if (name == y)
      throw InputError(expression.source(), "", "the expression uses '" + name +
                                                    "', the fitted column (--y), as a variable; it cannot use what it predicts");
  for (const auto& name : features)
    if (name == y)
      throw InputError("--features", "", "'" + name + "' is the fitted column (--y); it cannot be a feature");
}

// Checks each group's columns with a message that says who needs them, then reads them all.
Dataset read_rows(const CsvTable& table, const FitRequest& request, const Expression& expression,
                  const std::optional<Expression>& holdout, const std::vector<std::string>& features) {
  require_columns(table, {request.y_column}, "--y");
  require_columns(table, expression.variables(), "the expression");
  if (holdout) require_columns(table, holdout->variables(), "--holdout");
  if (request.baseline) require_columns(table, features, "--features");
  std::set<std::string> wanted(expression.variables().begin(), expression.variables().end());
  if (holdout) wanted.insert(holdout->variables().begin(), holdout->variables().end());
  if (request.baseline) wanted.insert(features.begin(), features.end());
  if (table.find_column("gpus")) wanted.insert("gpus");
  return Dataset::from_csv(table, {wanted.begin(), wanted.end()}, request.y_column);
}

// The rows fitted and those the holdout rule holds out (none without a rule).
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> split_rows(const Dataset& all,
                                                                         const std::optional<Expression>& holdout,
                                                                         const FitRequest& request,
                                                                         const std::string& source) {
  std::vector<std::size_t> fit_rows, held_rows;
  if (!holdout) {
    for (std::size_t r = 0; r < all.size(); ++r) fit_rows.push_back(r);
    return {fit_rows, held_rows};
  }
  ExpressionEvaluator rule(*holdout, all);
  for (std::size_t r = 0; r < all.size(); ++r) (rule.value(r) != 0 ? held_rows : fit_rows).push_back(r);
  if (fit_rows.empty())
    throw InputError("--holdout", "",
                     "'" + *request.holdout + "' holds out every row of " + source + "; nothing is left to fit");
  return {fit_rows, held_rows};
}

// Every row, fitted or held out, with its terms.
std::vector<PointReport> point_reports(const Expression& expression, const Dataset& all,
                                       const std::vector<double>& constants,
                                       const std::vector<std::size_t>& held_rows) {
  const auto gpus_index = all.find_variable("gpus");
  std::vector<char> is_held(all.size(), 0);
  for (std::size_t r : held_rows) is_held[r] = 1;
  ExpressionEvaluator evaluator(expression, all);
  evaluator.set_constants(constants);
  std::vector<PointReport> points;
  for (std::size_t r = 0; r < all.size(); ++r) {
    PointReport point;
    point.line = all.line(r);
    point.held_out = is_held[r] != 0;
    if (gpus_index) point.gpus = all.value(r, *gpus_index);
    point.y = all.y(r);
    point.predicted = evaluator.value(r);
    point.term_values.resize(evaluator.term_count());
    evaluator.term_values(r, point.term_values);
    points.push_back(std::move(point));
  }
  return points;
}

// The fit's (and the baseline's) errors on the held-out rows.
HoldoutReport holdout_report(const FitReport& report, const Dataset& all, const std::string& rule,
                             const std::vector<std::size_t>& held_rows) {
  HoldoutReport h;
  h.rule = rule;
  h.rows = held_rows.size();
  if (held_rows.empty()) return h;
  std::vector<double> observed, predicted, baseline_predicted;
  for (std::size_t r : held_rows) {
    observed.push_back(all.y(r));
    predicted.push_back(report.points[r].predicted);
    if (report.baseline && report.baseline->fitted) baseline_predicted.push_back(report.baseline->predict(all, r));
  }
  h.errors = error_metrics(observed, predicted);
  if (!baseline_predicted.empty()) h.baseline_errors = error_metrics(observed, baseline_predicted);
  return h;
}

// The term with the largest mean share of the prediction at the largest GPU count.
std::optional<DominantTerm> dominant_term(const FitReport& report) {
  double max_gpus = -std::numeric_limits<double>::infinity();
  for (const auto& p : report.points) max_gpus = std::max(max_gpus, *p.gpus);
  std::vector<double> mean_share(report.terms.size(), 0.0);
  std::size_t count = 0;
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    if (*report.points[i].gpus != max_gpus) continue;
    ++count;
    for (std::size_t t = 0; t < report.terms.size(); ++t) mean_share[t] += report.share(i, t);
  }
  DominantTerm dominant{max_gpus, 0, -std::numeric_limits<double>::infinity()};
  for (std::size_t t = 0; t < mean_share.size(); ++t) {
    const double s = mean_share[t] / static_cast<double>(count);
    if (s > dominant.share) dominant = {max_gpus, t, s};
  }
  if (std::isfinite(dominant.share)) return dominant;
  return std::nullopt;
}

}  // namespace

FitReport run_fit(const CsvTable& table, const FitRequest& request) {
  check_request(request);
  FitReport report;
  report.data_source = table.source();
  report.y_name = request.y_column;
  report.confidence_level = request.options.confidence_level;
  const NamedModel* model = request.model ? &find_model(*request.model) : nullptr;
  const Expression expression =
      model ? model_expression(*model) : Expression::parse(*request.expression, "--expression");
  if (model) report.model = model->name;
  report.expression = expression.text();
  report.terms = expression.terms();
  report.constant_names = expression.constants();
  if (expression.constants().empty())
    throw InputError(expression.source(), "", "the expression has no constants to fit; name them c0, c1, …");

  const std::optional<Expression> holdout = parse_holdout(request);
  const std::vector<std::string> features = request.features.empty() ? expression.variables() : request.features;
  check_not_fitted_column(expression, features, request.y_column);
  const Dataset all = read_rows(table, request, expression, holdout, features);
  const auto [fit_rows, held_rows] = split_rows(all, holdout, request, table.source());
  const Dataset fit_data = all.subset(fit_rows);

  BoundsMap bounds = model ? model->default_bounds(fit_data) : BoundsMap{};
  for (const auto& text : request.bounds) parse_bounds_into(text, bounds);
  report.bounds = resolve_bounds(expression, bounds);
  report.fit = fit_expression(expression, fit_data, report.bounds, request.options);
  if (!report.fit.summary.usable()) return report;

  report.points = point_reports(expression, all, report.fit.constants, held_rows);
  if (request.baseline) {
    RegressionOptions regression;
    regression.seed = request.options.seed;
    report.baseline = fit_regression_baseline(fit_data, features, regression);
  }
  if (holdout) report.holdout = holdout_report(report, all, *request.holdout, held_rows);
  if (all.find_variable("gpus") && !report.points.empty()) report.dominant = dominant_term(report);
  return report;
}

Json fit_report_json(const FitReport& report) {
  const FitResult& fit = report.fit;
  Json out;
  out["data"] = report.data_source;
  out["y"] = report.y_name;
  out["model"] = report.model ? Json(*report.model) : Json(nullptr);
  out["expression"] = report.expression;
  std::size_t held = 0;
  for (const auto& p : report.points) held += p.held_out ? 1 : 0;
  out["rows"] = Json{{"fitted", fit.summary.points}, {"held_out", held}};
  Json constants = Json::object(), intervals = Json::object(), bounds = Json::object();
  for (std::size_t j = 0; j < report.constant_names.size(); ++j) {
    const auto& name = report.constant_names[j];
    constants[name] = j < fit.constants.size() ? number_or_null(fit.constants[j]) : Json(nullptr);
    if (j < fit.confidence.size())
      intervals[name] = Json::array({number_or_null(fit.confidence[j].lower), number_or_null(fit.confidence[j].upper)});
    bounds[name] = Json::array({report.bounds[j].lower, report.bounds[j].upper});
  }
  out["constants"] = constants;
  out["confidence_intervals"] = intervals;
  out["confidence_level"] = report.confidence_level;
  out["bounds"] = bounds;
  const bool usable = fit.summary.usable();
  out["r2"] = usable ? number_or_null(fit.r2) : Json(nullptr);
  out["mape"] = usable ? number_or_null(fit.mape) : Json(nullptr);
  out["rmse"] = usable ? number_or_null(fit.rmse) : Json(nullptr);

  Json terms = Json::array();
  for (std::size_t t = 0; t < report.terms.size(); ++t) {
    Json share = Json::array(), value = Json::array();
    for (std::size_t i = 0; i < report.points.size(); ++i) {
      share.push_back(number_or_null(report.share(i, t)));
      value.push_back(number_or_null(report.points[i].term_values[t]));
    }
    terms.push_back(Json{{"name", report.terms[t].name},
                         {"expression", report.terms[t].text},
                         {"sign", report.terms[t].sign},
                         {"share", share},
                         {"value", value}});
  }
  out["terms"] = terms;
  Json points = Json::array();
  for (const auto& p : report.points) {
    Json point{{"line", p.line}, {"held_out", p.held_out}};
    if (p.gpus) point["gpus"] = *p.gpus;
    point["y"] = p.y;
    point["predicted"] = number_or_null(p.predicted);
    points.push_back(point);
  }
  out["points"] = points;
  if (report.dominant)
    out["dominant_term"] = Json{{"gpus", report.dominant->gpus},
                                {"term", report.terms[report.dominant->term].name},
                                {"share", report.dominant->share}};
  else
    out["dominant_term"] = nullptr;
  if (report.holdout) {
    const auto& h = *report.holdout;
    Json holdout{{"rule", h.rule}, {"rows", h.rows}};
    if (h.rows > 0) {
      holdout["extrapolation_mape"] = number_or_null(h.errors.mape);
      holdout["errors"] = metrics_json(h.errors);
      if (h.baseline_errors) holdout["baseline_errors"] = metrics_json(*h.baseline_errors);
    } else {
      holdout["extrapolation_mape"] = nullptr;
    }
    out["holdout"] = holdout;
  }
  const FitSummary& s = fit.summary;
  Json cv = Json::array();
  for (const auto& point : s.cross_validation) cv.push_back(Json{{"lambda", point.lambda}, {"validation_msre", point.validation_msre}});
  out["summary"] = Json{{"termination", to_string(s.termination)},
                        {"message", s.message},
                        {"de_runs", s.de_runs},
                        {"de_generations", s.de_generations},
                        {"de_converged", s.de_converged},
                        {"polish_iterations", s.polish_iterations},
                        {"polish_converged", s.polish_converged},
                        {"function_evaluations", s.function_evaluations},
                        {"de_cost", number_or_null(s.de_cost)},
                        {"final_cost", number_or_null(s.final_cost)},
                        {"msre", number_or_null(s.msre)},
                        {"penalty", number_or_null(s.penalty)},
                        {"regularization", to_string(s.regularization)},
                        {"lambda", s.lambda},
                        {"lambda_source", s.lambda_source},
                        {"cross_validation", cv},
                        {"bootstrap_samples", s.bootstrap_samples}};
  if (report.baseline) {
    const auto& b = *report.baseline;
    Json baseline{{"kind", "linear_regression_forward_selection"}, {"fitted", b.fitted}, {"status", b.status}};
    if (b.fitted) {
      Json features = Json::array();
      for (std::size_t j = 0; j < b.features.size(); ++j)
        features.push_back(Json{{"feature", b.features[j].name()}, {"coefficient", b.coefficients[j]}});
      baseline["intercept"] = b.intercept;
      baseline["features"] = features;
      baseline["cv_msre"] = number_or_null(b.cv_msre);
      baseline["r2"] = number_or_null(b.r2);
      baseline["mape"] = number_or_null(b.mape);
      baseline["rmse"] = number_or_null(b.rmse);
    }
    out["baseline"] = baseline;
  }
  return out;
}

std::string fit_report_text(const FitReport& report, bool full) {
  const FitResult& fit = report.fit;
  std::ostringstream out;
  std::size_t held = 0;
  for (const auto& p : report.points) held += p.held_out ? 1 : 0;
  out << fmt::format("fit of {} in {}: {} rows fitted", report.y_name, report.data_source, fit.summary.points);
  if (report.holdout) out << fmt::format(", {} held out ({})", held, report.holdout->rule);
  out << "\n";
  out << (report.model ? "model " + *report.model + ": " : "expression: ") << report.expression << "\n";
  out << "status: " << fit.summary.brief_report() << "\n";
  if (!fit.summary.usable()) {
    out << "no usable constants: " << fit.summary.message << "\n";
    if (full) out << fit.summary.full_report();
    return out.str();
  }
  const bool with_ci = !fit.confidence.empty();
  out << (with_ci ? fmt::format("constants ({:g}% bootstrap intervals):\n", 100 * report.confidence_level)
                  : std::string("constants:\n"));
  for (std::size_t j = 0; j < fit.constants.size(); ++j) {
    out << fmt::format("  {:<4} = {:<12.6g}", report.constant_names[j], fit.constants[j]);
    if (with_ci) out << fmt::format(" [{:.6g}, {:.6g}]", fit.confidence[j].lower, fit.confidence[j].upper);
    out << fmt::format("  bounds [{:g}, {:g}]  in {}\n", report.bounds[j].lower, report.bounds[j].upper,
                       terms_using(report.terms, report.constant_names[j]));
  }
  out << fmt::format("R² {:.4f}   MAPE {}   RMSE {:.6g}\n", fit.r2, percent(fit.mape), fit.rmse);
  if (report.dominant) {
    out << fmt::format("dominant term at {:g} GPUs: {} ({:.1f}% of the prediction)", report.dominant->gpus,
                       report.terms[report.dominant->term].name, 100 * report.dominant->share);
    out << "\n  shares at " << fmt::format("{:g}", report.dominant->gpus) << " GPUs:";
    for (std::size_t t = 0; t < report.terms.size(); ++t) {
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t i = 0; i < report.points.size(); ++i)
        if (report.points[i].gpus && *report.points[i].gpus == report.dominant->gpus) {
          sum += report.share(i, t);
          ++n;
        }
      out << fmt::format(" {} {:.1f}%", report.terms[t].name, 100 * sum / static_cast<double>(n));
    }
    out << "\n";
  }
  if (report.holdout) {
    const auto& h = *report.holdout;
    if (h.rows == 0) {
      out << "hold-out (" << h.rule << "): no rows matched\n";
    } else {
      out << fmt::format("hold-out ({}): {} rows, extrapolation MAPE {}, max {}", h.rule, h.rows, percent(h.errors.mape),
                         percent(h.errors.max_ape));
      if (h.baseline_errors) out << fmt::format("; baseline MAPE {}", percent(h.baseline_errors->mape));
      out << "\n";
    }
  }
  if (report.baseline) {
    const auto& b = *report.baseline;
    if (!b.fitted) {
      out << "baseline (linear regression): " << b.status << "\n";
    } else {
      out << fmt::format("baseline (linear regression, forward selection): y = {:.6g}", b.intercept);
      for (std::size_t j = 0; j < b.features.size(); ++j)
        out << fmt::format(" {} {:.6g}·{}", b.coefficients[j] < 0 ? "-" : "+", std::abs(b.coefficients[j]),
                           b.features[j].name());
      out << fmt::format("\n  R² {:.4f}   MAPE {}\n", b.r2, percent(b.mape));
    }
  }
  if (full) out << fit.summary.full_report();
  return out.str();
}

}  // namespace trainsim::fitting
