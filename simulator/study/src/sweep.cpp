#include "trainsim/study/sweep.hpp"

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

#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim/study/band.hpp"
#include "trainsim/study/sweep_report.hpp"

namespace trainsim::study {

namespace {

volatile sig_atomic_t g_stop_requested = 0;
extern "C" void request_stop(int) {
  g_stop_requested = 1;
}

// Installs SIGINT/SIGTERM handlers for the life of the object; the previous ones come back after.
class StopSignals {
 public:
  StopSignals() {
    g_stop_requested = 0;
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string format_duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

class ProgressBar {
 public:
  ProgressBar(bool enabled, std::size_t total)
      : enabled_(enabled), total_(total), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done, std::size_t failed) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int width = 30;
    const int filled = total_ == 0 ? width : static_cast<int>(width * done / total_);
    const std::string eta = done == 0 ? "--:--" : format_duration(elapsed / done * (total_ - done));
    std::fprintf(stderr, "\r[%s%s] %zu/%zu points%s, elapsed %s, ETA %s ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_,
                 failed ? fmt::format(" ({} failed)", failed).c_str() : "", format_duration(elapsed).c_str(),
                 eta.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  std::size_t total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

void write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RunError("cannot write results: " + std::string(std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

namespace {

Json error_line(const SweepPoint& point, const std::string& name, const std::string& message) {
  plan::ResultRecord record;
  record.index = point.index;
  record.scenario_key = point.key;
  record.name = name;
  record.point = point.point;
  record.error = message;
  return record.to_json();
}

}  // namespace

// FNV-1a, 64 bits: a stable fingerprint of a scenario document (std::hash is not stable across
// implementations, and results.jsonl outlives the binary that wrote it).
std::string fingerprint(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::size_t point = 0;
  std::string output;
};

pid_t wait_for(pid_t pid, int* status) {
  pid_t r;
  do {
    r = ::waitpid(pid, status, 0);
  } while (r < 0 && errno == EINTR);  // our SIGINT/SIGTERM handlers do not restart system calls
  return r;
}

// Children still running when the parent leaves early (an exception, a stop) are terminated and
// reaped: none simulates on after trainsim has exited.
class ChildGuard {
 public:
  explicit ChildGuard(std::vector<Child>& children) : children_(children) {}
  ~ChildGuard() {
    for (auto& c : children_) ::kill(c.pid, SIGTERM);
    for (auto& c : children_) {
      wait_for(c.pid, nullptr);
      ::close(c.fd);
    }
    children_.clear();
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;

 private:
  std::vector<Child>& children_;
};

bool is_error_line(const std::string& line) {
  try {
    return Json::parse(line).contains("error");
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

namespace {

std::vector<std::pair<std::string, std::vector<Json>>> distinct_axes(const plan::Scenario& base,
                                                                     std::vector<std::string>* warnings) {
  // An axis longer than the point limit is refused before anything is de-duplicated or copied:
  // the 32 MiB input limit allows millions of values on one axis.
  for (const auto& [path, values] : base.sweep)
    if (values.size() > kMaxSweepPoints)
      throw InputError(
          base.source, json_pointer_append("/sweep", path),
          fmt::format(
              "{} values exceed the limit of {} points per sweep (one axis alone); split the sweep into several "
              "scenarios (simulator/README.md, Troubleshooting and limits)",
              values.size(), kMaxSweepPoints));
  std::vector<std::pair<std::string, std::vector<Json>>> axes;
  for (const auto& [path, values] : base.sweep) {
    std::vector<Json> distinct;
    std::vector<std::string> repeated;
    std::unordered_set<std::string> seen, seen_repeated;  // hashed: linear in the axis length
    for (const Json& v : values) {
      std::string text = v.dump();
      if (seen.insert(text).second)
        distinct.push_back(v);
      else if (seen_repeated.insert(text).second)
        repeated.push_back(std::move(text));
    }
    if (!repeated.empty() && warnings) {
      std::string list;
      for (const auto& r : repeated) list += (list.empty() ? "" : ", ") + r;
      warnings->push_back(fmt::format(
          "{}: {}: value{} {} given more than once; each distinct point is simulated once ({} of {} values)",
          base.source, json_pointer_append("/sweep", path), repeated.size() == 1 ? "" : "s", list, distinct.size(),
          values.size()));
    }
    axes.emplace_back(path, std::move(distinct));
  }
  return axes;
}

}  // namespace

namespace {

// The number of distinct points of `axes`; an InputError at /sweep when it exceeds the limit,
// computed without allocating anything (10^12 points cost no more to refuse than 10).
std::size_t checked_point_count(const plan::Scenario& base,
                                const std::vector<std::pair<std::string, std::vector<Json>>>& axes) {
  std::size_t total = 1;
  long double exact = 1;
  std::string sizes;
  for (const auto& [path, values] : axes) {
    exact *= static_cast<long double>(values.size());
    total = values.empty() || total == 0
                ? 0
                : (total > kMaxSweepPoints / values.size() ? kMaxSweepPoints + 1 : total * values.size());
    sizes += (sizes.empty() ? "" : " × ") + std::to_string(values.size());
  }
  if (total > kMaxSweepPoints)
    throw InputError(
        base.source, "/sweep",
        fmt::format(
            "{:.0f} points ({} values) exceed the limit of {} points per sweep: every point is checked and held in "
            "memory (about {} kB each) before the first one runs, and each is simulated in its own process; split "
            "the sweep into several scenarios (simulator/README.md, Troubleshooting and limits)",
            exact, sizes, kMaxSweepPoints, kSweepPointKiB));
  return total;
}

}  // namespace

std::size_t count_sweep_points(const plan::Scenario& base) {
  return checked_point_count(base, distinct_axes(base, nullptr));
}

std::vector<SweepPoint> expand_sweep(const plan::Scenario& base, std::vector<std::string>* warnings) {
  // Duplicate values of an axis would only repeat points: each distinct value once, in file order.
  const auto axes = distinct_axes(base, warnings);
  // The size is known before anything is allocated: a sweep over the limit is refused here.
  const std::size_t total = checked_point_count(base, axes);
  std::vector<SweepPoint> points;
  points.reserve(total);
  std::set<std::string> checked_workloads;
  // Each point's document is the scenario without its sweep (which describes the space, not the
  // point): a copy of the whole sweep in every point made memory grow with points × axis length
  // (20,000 × 2 points went past 22 GB). Only a strategy.kind axis stays, since the strategy's
  // fields are checked against every kind the sweep may give it (plan/scenario.cpp).
  Json slim = *base.document;
  if (auto sweep = slim.find("sweep"); sweep != slim.end()) {
    Json kept = Json::object();
    if (sweep->is_object() && sweep->contains("strategy.kind")) kept["strategy.kind"] = (*sweep)["strategy.kind"];
    if (kept.empty())
      slim.erase("sweep");
    else
      *sweep = std::move(kept);
  }
  for (std::size_t i = 0; i < total; ++i) {
    SweepPoint p;
    p.index = i;
    p.point = Json::object();
    Json document = slim;
    std::vector<std::size_t> choice(axes.size());
    std::size_t rest = i;
    for (std::size_t a = axes.size(); a-- > 0;) {
      choice[a] = rest % axes[a].second.size();
      rest /= axes[a].second.size();
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const auto& [path, values] = axes[a];
      const Json& value = values[choice[a]];
      p.point[path] = value;
      const std::string where = json_pointer_append("/sweep", path);
      try {
        plan::set_path(document, path, value, base.source);
      } catch (const InputError& e) {
        throw InputError(base.source, where, e.detail());
      }
    }
    // Validate the point as a scenario now, and its workload once per distinct model or file, so a
    // bad axis fails (exit 2) before anything runs.
    auto blame = [&](const InputError& e) {
      std::string culprit;
      for (const auto& [path, value] : p.point.items()) {
        // The error's pointer lies under the axis path ("platform.nodse" → /platform/nodse): blame that axis.
        std::string pointer = "/" + path;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        if (e.location().rfind(pointer, 0) == 0 || pointer.rfind(e.location() + "/", 0) == 0) culprit = path;
      }
      if (culprit.empty() || e.source() != base.source) throw e;
      throw InputError(base.source, json_pointer_append("/sweep", culprit),
                       "value " + p.point[culprit].dump() + ": " + e.location() + ": " + e.detail());
    };
    try {
      p.scenario = plan::read_scenario(std::move(document), base.source);
      if (checked_workloads.insert(p.scenario.workload.model_or_file).second) plan::load_scenario_workload(p.scenario);
    } catch (const InputError& e) {
      blame(e);
    }
    // The point's scenario without the sweep (which describes the space, not the point).
    if (p.scenario.document->contains("sweep")) {
      Json identity = *p.scenario.document;
      identity.erase("sweep");
      p.key = fingerprint(identity.dump());
      p.scenario.document = std::make_shared<const Json>(std::move(identity));
      p.scenario.sweep.clear();
    } else {
      p.key = fingerprint(p.scenario.document->dump());
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::string simulate_point_line(const SweepPoint& point) {
  const std::string& name = point.scenario.name;
  try {
    plan::ResultRecord record;
    record.index = point.index;
    record.scenario_key = point.key;
    record.name = name;
    record.point = point.point;
    record.result = simulate_with_band(point.scenario, engine::SimulateOptions{});
    return record.to_json().dump();
  } catch (const std::exception& e) {
    return error_line(point, name, e.what()).dump();
  }
}

namespace {

// A point child's line goes out on this descriptor.
constexpr int kPointChannel = 3;

// Called in a point child right after fork: closes every descriptor it inherited except the
// standard streams and `channel`, which becomes kPointChannel. Without this the child held the
// parent's descriptors, the output directory's lock among them: a sweep killed outright left the
// directory locked until its last point child had exited.
void keep_only_standard_streams_and(int channel) {
  if (channel != kPointChannel && ::dup2(channel, kPointChannel) < 0) ::_exit(3);
  if (::close_range(kPointChannel + 1, ~0U, 0) == 0) return;
  const long open_max = ::sysconf(_SC_OPEN_MAX);  // close_range needs Linux 5.9
  const long limit = open_max > 0 ? std::min(open_max, 1L << 16) : 1024;
  for (int fd = kPointChannel + 1; fd < limit; ++fd) ::close(fd);
}

}  // namespace

SweepSummary run_points_locally(const std::vector<SweepPoint>& points, const SweepOptions& options,
                                const std::vector<std::size_t>& todo,
                                const std::function<void(const std::string&)>& on_line,
                                const std::function<void()>& on_tick) {
  StopSignals signals;
  SweepSummary summary;
  std::vector<Child> children;
  ChildGuard guard(children);
  std::size_t next = 0;
  ProgressBar progress(options.progress, todo.size());
  progress.update(0, 0);

  auto launch = [&](std::size_t index) {
    int channel[2];
    if (::pipe(channel) != 0) throw RunError("cannot create a pipe for a sweep point");
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(channel[0]);
      ::close(channel[1]);
      throw RunError("cannot fork a child for a sweep point");
    }
    if (pid == 0) {
      // Nothing may unwind from here into the parent's code: the child ends in _exit, always.
      int status = 0;
      try {
        ::signal(SIGINT, SIG_IGN);  // the parent decides; it terminates us with SIGTERM
        ::signal(SIGTERM, SIG_DFL);
        // A parent killed outright (SIGKILL, OOM) cannot terminate us: the kernel does, and a
        // parent already gone before prctl took effect is caught by the reparenting check.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(3);
        // The read end first: with a standard stream closed in the parent it may be descriptor
        // 0-2, which the clean-up below keeps.
        if (channel[0] != kPointChannel) ::close(channel[0]);
        keep_only_standard_streams_and(channel[1]);
        const int devnull = ::open("/dev/null", O_WRONLY);
        if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);  // children print nothing; their line goes through the pipe
        write_all(kPointChannel, simulate_point_line(points[index]));
      } catch (...) {
        status = 3;
      }
      ::_exit(status);
    }
    ::close(channel[1]);
    children.push_back(Child{pid, channel[0], index, {}});
  };

  while ((next < todo.size() && !g_stop_requested) || !children.empty()) {
    while (!g_stop_requested && children.size() < static_cast<std::size_t>(options.jobs) && next < todo.size())
      launch(todo[next++]);
    if (on_tick) on_tick();
    if (children.empty()) break;
    std::vector<pollfd> fds;
    for (const auto& c : children) fds.push_back(pollfd{c.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 250);
    if (g_stop_requested) {
      summary.interrupted = true;
      break;  // the guard terminates and reaps the children
    }
    if (ready <= 0) {
      progress.update(summary.simulated + summary.failed, summary.failed);
      continue;
    }
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = children[i];
      char buffer[65536];
      const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
      if (n > 0) {
        c.output.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ::close(c.fd);
      int status = 0;
      wait_for(c.pid, &status);
      std::string line = c.output;
      if (line.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !Json::accept(line)) {
        const std::string how = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                                    : fmt::format("exited with status {}", WEXITSTATUS(status));
        line = error_line(points[c.point], "", "simulation child " + how).dump();
      }
      if (is_error_line(line))
        ++summary.failed;
      else
        ++summary.simulated;
      on_line(line);
      children.erase(children.begin() + static_cast<std::ptrdiff_t>(i));
      progress.update(summary.simulated + summary.failed, summary.failed);
    }
  }
  progress.finish();
  return summary;
}

// results.jsonl and sweep.json must be regular files: a FIFO or a device named so would block the
// read (or never end); refused before anything opens it.
void require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(
        path, "",
        "is not a regular file; a sweep's output directory holds results.jsonl and sweep.json as plain files. "
        "Nothing was changed: give another --out");
}

std::vector<Json> read_results(const std::string& path, std::vector<std::size_t>* line_numbers) {
  std::vector<Json> out;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec)) && !std::filesystem::exists(path, ec))
    return out;
  require_regular_file(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > kMaxResultsBytes)
    throw InputError(
        path, "",
        fmt::format("is {} MiB, more than the {} MiB a sweep's results file can reach ({} points); is this the "
                    "right directory? Nothing was changed",
                    st.st_size >> 20, kMaxResultsBytes >> 20, kMaxSweepPoints));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  // Nothing is cut off the file here: run_sweep decides what to keep once it knows the directory
  // holds this sweep. An unterminated last line that parses is a line; one that does not is a
  // write interrupted mid-line, left out (and dropped from the file only if the sweep goes on).
  std::string line;
  std::size_t line_number = 0, bytes = 0;
  while (std::getline(in, line)) {
    ++line_number;
    bytes += line.size() + 1;
    if (bytes > kMaxResultsBytes + 1)
      throw InputError(path, "", fmt::format("grew past {} MiB while being read", kMaxResultsBytes >> 20));
    const bool terminated = !in.eof();
    if (line.empty()) continue;
    try {
      Json j = Json::parse(line);
      if (!j.is_object() || !j.contains("index")) throw std::runtime_error("not a result object");
      out.push_back(std::move(j));
      if (line_numbers) line_numbers->push_back(line_number);
    } catch (const std::exception&) {
      if (!terminated && !Json::accept(line)) break;  // a writer died mid-line
      throw InputError(path, "line " + std::to_string(line_number), "expected one result object per line");
    }
  }
  return out;
}

std::vector<plan::ResultRecord> current_results(const std::vector<SweepPoint>& points, const std::vector<Json>& results,
                                                const std::string& source,
                                                const std::vector<std::size_t>* line_numbers) {
  std::map<std::string, std::size_t> index_of;
  for (const auto& p : points) index_of.emplace(p.key, p.index);
  std::vector<plan::ResultRecord> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Json& r = results[i];
    const auto key = r.find("scenario_key");
    if (key == r.end() || !key->is_string() || !index_of.count(key->get<std::string>())) continue;
    if (!seen.insert(key->get<std::string>()).second) continue;  // a point recorded twice: keep the first
    const std::string where = line_numbers && i < line_numbers->size() ? "line " + std::to_string((*line_numbers)[i])
                                                                       : "result " + std::to_string(i + 1);
    try {
      plan::ResultRecord record = plan::ResultRecord::from_json(json_root(std::make_shared<const Json>(r), source));
      record.index = index_of.at(record.scenario_key);
      out.push_back(std::move(record));
    } catch (const InputError& e) {
      throw InputError(
          source, where,
          "a result line without the fields of a result or an error (" + e.location() + ": " + e.detail() + ")");
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const plan::ResultRecord& a, const plan::ResultRecord& b) { return a.index < b.index; });
  return out;
}

void write_sweep_outputs(const plan::Scenario& base, const std::vector<plan::ResultRecord>& results,
                         const std::string& out_dir) {
  std::vector<std::string> axes;
  for (const auto& [path, values] : base.sweep) axes.push_back(path);
  std::string csv = plan::result_csv_header(axes) + "\n";
  for (const auto& r : results) csv += plan::result_csv_row(r, axes) + "\n";
  write_file_atomically(std::filesystem::path(out_dir) / "results.csv", csv);
  write_file_atomically(std::filesystem::path(out_dir) / "report.html", sweep_report_html(base, results));
}

}  // namespace trainsim::study
