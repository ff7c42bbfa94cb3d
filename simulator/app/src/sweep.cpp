#include "sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "sweep_mpi.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/training.hpp"

namespace trainsim::app {
namespace {

// One sweep at a time per output directory: an exclusive flock on DIR/.trainsim-sweep.lock, held
// until the sweep ends (the kernel drops it when the process dies, however it dies). The file
// holds the holder's pid for the message; it is never removed (removing a lock file races).
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& out_dir) {
    const std::string path = (std::filesystem::path(out_dir) / ".trainsim-sweep.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw InputError(out_dir, "",
                       "cannot create the lock file .trainsim-sweep.lock: " + std::string(std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      char buffer[32] = {};
      const ssize_t n = ::pread(fd_, buffer, sizeof buffer - 1, 0);
      ::close(fd_);
      std::string pid = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string("unknown");
      pid.erase(pid.find_last_not_of(" \n") + 1);
      if (error == EWOULDBLOCK)
        throw InputError(
            out_dir, "",
            "is in use by another trainsim sweep (pid " + pid + "); wait for it to finish, or give another --out");
      throw InputError(out_dir, "", "cannot lock the output directory: " + std::string(std::strerror(error)));
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) == 0) {
      [[maybe_unused]] const ssize_t n = ::pwrite(fd_, pid.data(), pid.size(), 0);
    }
  }
  ~DirectoryLock() { ::close(fd_); }  // closing the last descriptor releases the lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// What DIR/sweep.json records about the sweep whose results DIR holds: the scenario's file and
// name, and its identity, the fingerprint of the canonical scenario document with its sweep space
// (after --set): the same file with another --set or another axis value is another sweep.
Json sweep_identity(const plan::Scenario& base) {
  return Json{
      {"scenario_file", base.source}, {"name", base.name}, {"identity", study::fingerprint(base.document->dump())}};
}

std::optional<Json> read_identity(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  study::require_regular_file(path);  // a FIFO would block the read
  try {
    Json j = Json::parse(read_input_text(path, "sweep.json"));
    if (j.is_object() && j.contains("identity")) return j;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string describe_values(const Json& point) {
  std::string out;
  for (const auto& [path, value] : point.items()) out += (out.empty() ? "" : ", ") + path + "=" + value.dump();
  return out;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// Writing results into a directory that was removed or replaced under us loses them all: the
// results.jsonl we append to must still be the one DIR holds, and DIR must stay writable.
class DirectoryWatch {
 public:
  DirectoryWatch(std::string out_dir, std::string results_path, int fd)
      : out_dir_(std::move(out_dir)), results_path_(std::move(results_path)), fd_(fd) {}
  void watch(std::string results_path) { results_path_ = std::move(results_path); }
  void check(std::size_t finished, std::size_t total) const {
    if (fd_ < 0) return;  // an MPI rank other than 0 writes nothing
    struct stat ours {
    }, there{};
    const bool same = ::fstat(fd_, &ours) == 0 && ::stat(results_path_.c_str(), &there) == 0 &&
                      ours.st_dev == there.st_dev && ours.st_ino == there.st_ino;
    std::string why;
    if (!same)
      why = "its results.jsonl was removed or replaced (was the directory deleted?)";
    else if (::access(out_dir_.c_str(), W_OK | X_OK) != 0)
      why = "it is no longer writable: " + std::string(std::strerror(errno));
    if (!why.empty())
      throw RunError(
          fmt::format("output directory {}: {}; stopped after {} of {} points (nothing more can be saved there)",
                      out_dir_, why, finished, total));
  }

 private:
  std::string out_dir_;
  std::string results_path_;
  int fd_;
};

}  // namespace

// Runs `step` on the coordinator; with other ranks waiting for it, an error ends them all (exit
// status 2 for bad input, 1 otherwise) rather than leaving them hanging.
template <class F>
void or_abort_ranks(const MpiContext& mpi, F&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    if (mpi.size() > 1) {
      std::fprintf(stderr, "trainsim: error: %s\n", e.what());
      mpi.abort(dynamic_cast<const InputError*>(&e) ? 2 : 1);
    }
    throw;
  }
}

// The output directory, created if missing and locked: a second sweep into it is told at once.
std::string locked_output_directory(const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir))
    throw InputError(out_dir, "", "cannot create the output directory");
  return out_dir;
}

// What the coordinator decides before the first point runs: the points still to simulate, and
// whether new lines go to .results.jsonl.new until the first lands (a plain sweep over this same
// sweep's results).
struct Prepared {
  std::vector<std::size_t> todo;
  bool deferred = false;
};

Prepared prepare_results(const plan::Scenario& base, const SweepOptions& options, const std::vector<SweepPoint>& points,
                         const std::string& results_path, const std::string& identity_path) {
  Prepared out;
  const Json identity = sweep_identity(base);
  const std::optional<Json> recorded = read_identity(identity_path);
  std::vector<std::size_t> line_numbers;
  const std::vector<Json> existing = read_results(results_path, &line_numbers);
  // No result is ever discarded by mistake. A plain sweep starts over only in an empty directory
  // or one holding this same sweep (same scenario, same sweep space: it recomputes the same
  // results). --resume keeps every line that is a point of this sweep, so it goes on only where
  // that is every line: this sweep's own, or a smaller sweep's of the same scenario (an axis
  // grown). A directory without sweep.json (written before it existed) is judged by its lines.
  std::map<std::string, std::size_t> index_of;
  for (const auto& p : points) index_of.emplace(p.key, p.index);
  std::size_t foreign = 0;
  for (const Json& r : existing) {
    const auto key = r.find("scenario_key");
    if (key == r.end() || !key->is_string() || !index_of.count(key->get<std::string>())) ++foreign;
  }
  const bool same = recorded ? recorded->at("identity") == identity.at("identity") : foreign == 0;
  if (!existing.empty() && !same && (!options.resume || foreign > 0)) {
    const std::string whose = recorded ? fmt::format("scenario '{}' from {}", recorded->value("name", std::string("?")),
                                                     recorded->value("scenario_file", std::string("?")))
                                       : std::string("another scenario");
    const std::string why = options.resume
                                ? fmt::format("; {} of them {} not points of this sweep and --resume would discard {}",
                                              foreign, foreign == 1 ? "is" : "are", foreign == 1 ? "it" : "them")
                                : std::string("; a new sweep would replace them");
    throw InputError(
        options.out_dir, "",
        fmt::format("holds {} result{} of another sweep ({}), not of {} with this sweep space{}. Nothing was changed: "
                    "give another --out, or remove the directory to start over",
                    existing.size(), existing.size() == 1 ? "" : "s", whose, base.source, why));
  }
  std::set<std::string> done;
  std::string kept;
  if (options.resume) {
    // Keep the lines of this scenario's points (renumbered): a shrunk sweep space drops the others.
    for (const plan::ResultRecord& r : current_results(points, existing, results_path, &line_numbers)) {
      done.insert(r.scenario_key);
      kept += r.to_json().dump() + "\n";
    }
  }
  write_file_atomically(identity_path, identity.dump(2) + "\n");
  out.deferred = !options.resume && !existing.empty();
  if (!out.deferred) write_file_atomically(results_path, kept);
  for (const auto& p : points)
    if (!done.count(p.key)) out.todo.push_back(p.index);
  return out;
}

SweepSummary run_sweep(const plan::Scenario& base, const SweepOptions& options) {
  MpiContext mpi;
  // The directory is locked first: a second sweep into it is told at once, before it checks its points.
  std::optional<DirectoryLock> lock;
  if (mpi.is_coordinator()) or_abort_ranks(mpi, [&] { lock.emplace(locked_output_directory(options.out_dir)); });
  std::vector<std::string> warnings;
  const std::vector<SweepPoint> points = expand_sweep(base, mpi.is_coordinator() ? &warnings : nullptr);
  for (const auto& w : warnings) std::fprintf(stderr, "trainsim: warning: %s\n", w.c_str());
  const std::string results_path = (std::filesystem::path(options.out_dir) / "results.jsonl").string();
  const std::string identity_path = (std::filesystem::path(options.out_dir) / "sweep.json").string();

  std::vector<std::size_t> todo;
  SweepSummary summary;
  // A plain sweep over this same sweep's results recomputes them all, but the old ones stay until
  // the first new point is written: new lines go to .results.jsonl.new, renamed over results.jsonl
  // then (a sweep stopped before that, or a forgotten --resume and Ctrl-C, loses nothing).
  const std::string fresh_path = (std::filesystem::path(options.out_dir) / ".results.jsonl.new").string();
  bool deferred = false;
  summary.points = mpi.is_coordinator() ? points.size() : 0;  // other ranks report nothing
  if (mpi.is_coordinator())
    or_abort_ranks(mpi, [&] {
      const Prepared prepared = prepare_results(base, options, points, results_path, identity_path);
      todo = prepared.todo;
      deferred = prepared.deferred;
      summary.skipped = points.size() - todo.size();
      std::fprintf(stderr, "trainsim: %zu point%s to simulate%s, %d at a time\n", todo.size(),
                   todo.size() == 1 ? "" : "s",
                   summary.skipped ? fmt::format(" ({} already done)", summary.skipped).c_str() : "",
                   options.jobs * std::max(1, mpi.size()));
    });
  todo = mpi.broadcast_indices(todo);

  if (deferred) {
    // Only a regular file (a leftover of a stopped sweep) is removed; anything else there is refused.
    struct stat st {};
    if (::lstat(fresh_path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode))
        throw RunError(fresh_path + " exists and is not a regular file; remove it or give another --out");
      ::unlink(fresh_path.c_str());
    }
  }
  const std::string& write_path = deferred ? fresh_path : results_path;
  const int fd =
      mpi.is_coordinator()
          ? ::open(write_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (deferred ? O_EXCL : 0), 0644)
          : -1;
  if (mpi.is_coordinator() && fd < 0)
    throw RunError("cannot open " + write_path + " for appending: " + std::strerror(errno));
  DirectoryWatch watch(options.out_dir, write_path, fd);
  auto drop_fresh = [&] {
    if (deferred) ::unlink(fresh_path.c_str());  // no new point landed: the old results stay as they were
  };
  std::size_t finished = 0, failures_shown = 0;
  constexpr std::size_t kFailuresShown = 10;
  // One write() per line with O_APPEND: a reader never sees two lines interleaved, and a kill
  // leaves at most one partial last line, which read_results leaves out and the next sweep drops.
  auto append = [&](const std::string& line) {
    watch.check(finished, todo.size());
    study::write_all(fd, line + "\n");
    if (deferred) {
      if (::rename(fresh_path.c_str(), results_path.c_str()) != 0)
        throw RunError("cannot rename " + fresh_path + " to " + results_path + ": " + std::strerror(errno));
      deferred = false;
      watch.watch(results_path);
    }
    ++finished;
    // A failed point is named on the terminal as it fails, with the first line of its error.
    const Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("error") && failures_shown++ < kFailuresShown) {
      const std::size_t index = j.value("index", std::size_t{0});
      const Json point = j.contains("point") ? j["point"] : Json::object();
      std::fprintf(stderr, "trainsim: point %zu (%s) failed: %s\n", index,
                   point.empty() ? "the scenario" : describe_values(point).c_str(),
                   first_line(j.value("error", std::string())).c_str());
    }
  };
  auto tick = [&] { watch.check(finished, todo.size()); };

  SweepSummary ran;
  try {
    if (mpi.size() > 1) {
      ran = run_points_with_mpi(mpi, points, options, todo, append);
    } else {
      ran = run_points_locally(points, options, todo, append, tick);
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    drop_fresh();
    throw;
  }
  if (mpi.is_coordinator()) {
    try {
      watch.check(finished, todo.size());
    } catch (...) {
      ::close(fd);
      drop_fresh();
      throw;
    }
  }
  if (fd >= 0) ::close(fd);
  drop_fresh();
  if (failures_shown > kFailuresShown)
    std::fprintf(stderr, "trainsim: ... and %zu more failed points (their errors are in %s)\n",
                 failures_shown - kFailuresShown, results_path.c_str());
  summary.simulated = ran.simulated;
  summary.failed = ran.failed;
  summary.interrupted = ran.interrupted;
  if (mpi.is_coordinator()) {
    std::vector<std::size_t> line_numbers;
    const std::vector<Json> lines = read_results(results_path, &line_numbers);
    study::write_sweep_outputs(base, current_results(points, lines, results_path, &line_numbers), options.out_dir);
  }
  return summary;
}

}  // namespace trainsim::app
