#pragma once
// `trainsim validate`: the validation protocol on a user's own measurements.
//
//   MEASURED.csv... ──group by dataset, system, strategy, model, batch, precision, metric──┐
//   SYSTEMS.json ──(dataset, system) → platform, strategy per measured strategy, defaults──┤
//                                                                                         ▼
//   per group: calibrate on its one-GPU row only ──► every row simulated (forked children, -j)
//              ──► simulated.csv, errors.csv, mape.csv (+ Paleo's scaling rules as baseline)
//   per dataset × strategy family: `compare` on the pair ──► compare/<set>/, report.html
//
// A group without a one-GPU row, with an unmapped system or strategy, or a model not in the zoo is
// reported and skipped, as is a row trainsim cannot simulate (named by its line on stderr); bad
// files (a missing column, a bad systems entry, two rows of one point that disagree, the same file
// twice, a value above its metric's sanity ceiling) are InputErrors.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace trainsim::study {

struct ValidateOptions {
  std::vector<std::string> measured;  ///< CSV files in the schema of tests/data/validation
  std::string systems;                ///< SYSTEMS.json
  std::string out_dir;
  int jobs = 1;              ///< simulations at once (≥ 1)
  bool progress = false;     ///< progress bar on stderr
  unsigned bootstrap = 200;  ///< bootstrap resamples per fit of the comparisons
  double threshold = 0.10;   ///< compare's divergence threshold
};

/// What a validation did.
struct ValidateSummary {
  std::size_t groups = 0;   ///< groups simulated
  std::size_t skipped = 0;  ///< groups reported and skipped
  std::size_t points = 0;   ///< rows simulated (one-GPU rows included)
  std::size_t failed = 0;   ///< simulations that failed (recorded with their error)
  bool interrupted = false;
};

/// Runs the whole command: reads and checks the inputs (InputError before anything is simulated),
/// simulates, writes out_dir/{simulated.csv, errors.csv, mape.csv, accuracy.md, skipped.csv, report.html,
/// compare/<set>/…} atomically, and prints the accuracy table (Markdown) and the verdicts to `out`.
ValidateSummary run_validate(const ValidateOptions& options, std::ostream& out);

}  // namespace trainsim::study
