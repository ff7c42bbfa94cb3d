#pragma once
// Benchmarks: one simulated training iteration in a child process (one SimGrid engine per
// process); the parent measures the child's wall time and peak resident memory (getrusage).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include "trainsim/engine/training.hpp"
#include "trainsim/plan/scenario.hpp"

namespace trainsim_bench {

struct IterationFigures {
  double wall_s = 0;
  double peak_rss_MiB = 0;
  double iteration_s = 0;
  double samples_per_s = 0;
  bool ok = false;         ///< the child simulated the iteration and exited 0
  bool over_limit = false; ///< the child was stopped at `limit_s`
};

/// Simulates `scenario` in a forked child and reports its cost and result; a child still running
/// after `limit_s` seconds of wall time (0: no limit) is stopped (SIGALRM) and reported over limit.
inline IterationFigures measure_iteration(const trainsim::Json& scenario, unsigned limit_s = 0) {
  IterationFigures f;
  int channel[2];
  if (::pipe(channel) != 0) return f;
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(channel[0]);
    if (limit_s > 0) ::alarm(limit_s);
    const auto s = trainsim::plan::read_scenario(scenario, "bench");
    const auto r = trainsim::engine::simulate_iteration(s, {});
    const std::string line = std::to_string(r.iteration_time_s) + " " + std::to_string(r.samples_per_s);
    if (::write(channel[1], line.data(), line.size()) < 0) _exit(1);
    _exit(0);
  }
  ::close(channel[1]);
  char buffer[128] = {};
  const ssize_t n = ::read(channel[0], buffer, sizeof buffer - 1);
  ::close(channel[0]);
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  f.peak_rss_MiB = usage.ru_maxrss / 1024.0;
  if (n > 0) std::sscanf(buffer, "%lf %lf", &f.iteration_s, &f.samples_per_s);
  f.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  f.over_limit = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  return f;
}

}  // namespace trainsim_bench
