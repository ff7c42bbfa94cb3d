#pragma once
// Sweeps (trainsim::study): the cartesian product of a scenario's `sweep` axes, each point simulated in a child
// process (SimGrid allows one engine per process), results appended to DIR/results.jsonl as they
// finish, then DIR/results.csv and DIR/report.html.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/result.hpp"
#include "trainsim/plan/scenario.hpp"

namespace trainsim::study {

/// One point of a sweep.
struct SweepPoint {
  std::size_t index = 0;    ///< position in the cartesian product (first axis varies slowest)
  Json point;               ///< dotted path → value, in axis order
  plan::Scenario scenario;  ///< the scenario with the point's values set, validated
  std::string key;  ///< FNV-1a 64 of the point's document without its sweep: what a result line was computed from
};

/// The most points one sweep may have. Each point is checked and held in memory as a typed
/// scenario (without the sweep's axes) before the first one runs, and each is simulated in its own
/// process: 100,000 resnet18 points took 350 MB (3.5 kB a point) and 6 to 8 s to check on the
/// 2-core VM under load, the same with a 50,000-value axis as with two short ones, and take hours
/// to simulate. A sweep over the limit, or one axis longer than it, is refused before anything is
/// allocated.
inline constexpr std::size_t kMaxSweepPoints = 100000;
inline constexpr int kSweepPointKiB = 4;

/// Every point of `base`'s sweep (one point, with an empty `point`, when it has none), each read
/// into a typed scenario once, here; a path that is not a scenario field is reported at /sweep/<path> with the
/// nearest valid key. A value given twice on one axis counts once (a warning for each such axis
/// goes to `warnings` when given). Throws InputError, also for more than kMaxSweepPoints points
/// (at /sweep, before any point is built).
std::vector<SweepPoint> expand_sweep(const plan::Scenario& base, std::vector<std::string>* warnings = nullptr);

/// How many distinct points `base`'s sweep has, checked against kMaxSweepPoints without building
/// any (InputError at /sweep above it): commands call it before they create anything.
std::size_t count_sweep_points(const plan::Scenario& base);

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;           ///< child processes at a time (≥ 1)
  bool resume = false;    ///< skip points already in results.jsonl
  bool progress = false;  ///< progress bar with ETA on stderr
};

/// What a sweep did.
struct SweepSummary {
  std::size_t points = 0;   ///< 0 on MPI ranks other than 0
  std::size_t skipped = 0;  ///< already present (resume)
  std::size_t simulated = 0;
  std::size_t failed = 0;    ///< recorded with their error
  bool interrupted = false;  ///< SIGINT/SIGTERM stopped it early
};

/// Simulates one point in the current process and returns its result line (a JSON object with
/// "index", "point", and either the result fields or "error"). Used by children.
std::string simulate_point_line(const SweepPoint& point);

/// Runs the points not yet done, `jobs` children at a time, appending each finished line to
/// out_dir/results.jsonl; `on_line` receives every finished line; `on_tick` (may be empty) runs at
/// least four times a second while children run. Stops early on SIGINT/SIGTERM.
SweepSummary run_points_locally(const std::vector<SweepPoint>& points, const SweepOptions& options,
                                const std::vector<std::size_t>& todo,
                                const std::function<void(const std::string&)>& on_line,
                                const std::function<void()>& on_tick);

/// The largest results.jsonl a sweep reads back (--resume, the final results.csv): 512 MiB. A
/// result line is 2 to 3 kB, so kMaxSweepPoints points write about 300 MB; 263 MB (110,000 lines)
/// took 0.8 GB to read on the 2-core VM, so the limit keeps a read under about 1.7 GB.
inline constexpr std::uint64_t kMaxResultsBytes = 512ull << 20;

/// Reads results.jsonl: one parsed object per line; `line_numbers`, when given, receives each
/// object's line number (from 1). Never changes the file. An unterminated last line that is not
/// JSON (a writer killed mid-write) is left out; one that is JSON counts as a line. Other lines
/// that are not result objects, a file that is not regular (a FIFO, a device) or larger than
/// kMaxResultsBytes are an InputError.
std::vector<Json> read_results(const std::string& path, std::vector<std::size_t>* line_numbers = nullptr);

/// The lines of `results` that belong to `points` (same scenario_key: same scenario document),
/// one per point, with their index set to the point's current index, sorted by index. Lines of
/// other scenarios (an edited scenario, another --set) are left out. A kept line without the
/// fields of a result or an error is an InputError naming `source` and its line (from
/// `line_numbers`, read_results's, when given; else "result N").
std::vector<plan::ResultRecord> current_results(const std::vector<SweepPoint>& points, const std::vector<Json>& results,
                                                const std::string& source,
                                                const std::vector<std::size_t>* line_numbers = nullptr);

/// Writes results.csv and report.html for `results` (sorted by index) into `out_dir`, atomically.
void write_sweep_outputs(const plan::Scenario& base, const std::vector<plan::ResultRecord>& results,
                         const std::string& out_dir);

/// Writes all of `text` to `fd`, retrying short and interrupted writes; RunError on failure.
void write_all(int fd, const std::string& text);

/// FNV-1a's steps over 64 bits, as 16 hex digits: a stable fingerprint of a scenario document
/// (std::hash is not stable across implementations, and results.jsonl outlives the binary that
/// wrote it). Its offset basis, 1469598103934665603, is not FNV's published one (14695981039346656037,
/// one digit longer); it stays, because the result lines already written carry keys made with it.
std::string fingerprint(const std::string& text);

/// InputError unless `path` is missing or a regular file: results.jsonl and sweep.json named by a
/// FIFO or a device would block the read (or never end).
void require_regular_file(const std::string& path);

}  // namespace trainsim::study
