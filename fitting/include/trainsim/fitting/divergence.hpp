#pragma once
// Where measured and simulated scaling part: the same expression is fitted to both CSVs, each
// term's contribution is compared (measured/simulated), and the first GPU count from which the two
// scaling curves differ by more than a threshold is reported with the term responsible.
//
//   measured.csv ──fit──► constants_m ─┐   terms evaluated on the measured rows under both sets of
//   simulated.csv ─fit──► constants_s ─┴─► constants: ratio per term, gap per GPU count, culprit term
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/fitting/analysis.hpp"

namespace trainsim::fitting {

/// What to compare. `fit.model` defaults to "scaling" (gpus only) when neither a model nor an
/// expression is given; `fit.holdout` must be empty.
struct CompareRequest {
  FitRequest fit;
  /// Relative difference |measured − simulated| / simulated above which the curves "differ", > 0.
  double threshold = 0.10;
};

/// The two curves at one GPU count of the measured data.
struct CurvePoint {
  double gpus = 0.0;
  std::size_t rows = 0;          ///< measured rows at this GPU count
  double measured = 0.0;         ///< mean measured y
  double simulated = 0.0;        ///< mean simulated y at the same configurations
  bool simulated_from_fit = false;  ///< true when the simulated CSV lacks these exact configurations and
                                    ///< the simulated fit's prediction stands in for them
  double relative_difference = 0.0;  ///< (measured − simulated) / simulated
  std::vector<double> terms_measured;   ///< mean term values under the measured constants
  std::vector<double> terms_simulated;  ///< … under the simulated constants
};

/// One term, averaged over the measured rows.
struct TermComparison {
  std::string name;
  std::string expression;
  double measured = 0.0;   ///< mean contribution under the measured constants, in y's units
  double simulated = 0.0;  ///< mean contribution under the simulated constants
  double ratio = 0.0;      ///< measured / simulated (NaN when the simulated contribution is 0)
};

/// One constant in both fits.
struct ConstantComparison {
  std::string name;
  double measured = 0.0;
  double simulated = 0.0;
  double ratio = 0.0;  ///< measured / simulated (NaN when simulated is 0)
};

/// The comparison.
struct DivergenceReport {
  FitReport measured;
  FitReport simulated;
  double threshold = 0.10;
  std::vector<CurvePoint> curve;                        ///< ascending GPU counts of the measured data
  std::vector<std::pair<double, double>> simulated_curve;  ///< (gpus, mean y) of the simulated CSV
  std::vector<TermComparison> terms;
  std::vector<ConstantComparison> constants;
  std::optional<double> divergence_gpus;      ///< first GPU count from which every point differs > threshold
  std::optional<std::size_t> responsible_term;  ///< term with the largest gap contribution there
  double responsible_gap_fraction = 0.0;      ///< its contribution / the modelled gap
  /// One sentence a user can act on: which term differs by how much from which GPU count on, in
  /// which direction, and what that says about the simulated system (see divergence_verdict).
  std::string verdict;
};

/// The verdict of a comparison, from its divergence point, the responsible term there (its value
/// under the measured and the simulated constants) and the term's kind, read from its name:
/// communication (bandwidth, push_pull, communication), parameter-server incast (incast), latency
/// and synchronisation (latency, synchronisation, linear, logarithmic), compute, fixed overhead
/// (overhead, base, serial); any other term is named with its expression. Without a divergence
/// point it says the curves agree and where their largest gap is. A y column ending in `_s` but not
/// `_per_s` is read as a time (larger is slower), any other as a rate.
std::string divergence_verdict(const DivergenceReport& report);

/// Fits both tables and compares them. Throws InputError for everything run_fit rejects, a table
/// without a `gpus` column, an invalid threshold or a hold-out rule. A fit that does not converge
/// is reported, not thrown; one with no usable constants is a RunError (nothing to compare).
DivergenceReport compare_measured_simulated(const CsvTable& measured, const CsvTable& simulated,
                                            const CompareRequest& request);

/// divergence.json: both fits (as fit_report_json), the curves, per-term ratios, the divergence point.
Json divergence_json(const DivergenceReport& report);

/// report.html: self-contained (inline SVG and CSS, no script, no network) — both scaling curves,
/// the stacked term shares per GPU count, and the tables.
std::string divergence_html(const DivergenceReport& report);

/// The body of report.html without the page around it, its headings at <h`heading_level`>, for
/// pages that hold several comparisons (`trainsim validate`); styled by divergence_css().
std::string divergence_html_section(const DivergenceReport& report, int heading_level);

/// The style sheet report.html uses.
std::string divergence_css();

/// A short human summary for stdout.
std::string divergence_text(const DivergenceReport& report);

}  // namespace trainsim::fitting
