#include "trainsim/study/band.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

namespace trainsim::study {

namespace {

// A child process simulating one variant of the scenario; its iteration time comes back on a pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};

// Starts the child that simulates `scenario` (pid −1 when it cannot start).
Child start_child(const plan::Scenario& scenario) {
  int channel[2];
  if (::pipe(channel) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(channel[0]);
    ::close(channel[1]);
    return {};
  }
  if (pid == 0) {
    // Nothing may unwind into the parent's code: the child ends in _exit, always.
    int status = 0;
    try {
      ::close(channel[0]);
      const double t = engine::simulate_iteration(scenario, engine::SimulateOptions{}).iteration_time_s;
      const std::string text = fmt::format("{:.17g}", t);
      if (::write(channel[1], text.data(), text.size()) != static_cast<ssize_t>(text.size())) status = 3;
    } catch (...) {
      status = 3;
    }
    ::_exit(status);
  }
  ::close(channel[1]);
  return {pid, channel[0]};
}

// The child's iteration time once it has ended (nullopt when it failed or never started).
std::optional<double> finish_child(const Child& child) {
  if (child.pid < 0) return std::nullopt;
  std::string text;
  char buffer[256];
  for (;;) {
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) return std::nullopt;
  return std::stod(text);
}

// Runs the variants in children, at most as many at once as the machine has hardware threads
// (each holds a whole simulation's memory), in order; their times in the same order.
std::vector<std::optional<double>> iterations_in_children(const std::vector<plan::Scenario>& variants) {
  const std::size_t width = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  std::vector<std::optional<double>> out(variants.size());
  for (std::size_t first = 0; first < variants.size(); first += width) {
    const std::size_t last = std::min(variants.size(), first + width);
    std::vector<Child> children;
    for (std::size_t i = first; i < last; ++i) children.push_back(start_child(variants[i]));
    for (std::size_t i = first; i < last; ++i) out[i] = finish_child(children[i - first]);
  }
  return out;
}

}  // namespace

std::string stack_strategy(const plan::Scenario& scenario) {
  if (scenario.strategy.kind == plan::StrategyKind::ring_allreduce &&
      scenario.strategy.transport == plan::Transport::host)
    return "ring_allreduce_host";
  return std::string(plan::to_string(scenario.strategy.kind));
}

engine::IterationResult simulate_with_band(const plan::Scenario& scenario, const engine::SimulateOptions& options) {
  const std::string strategy = stack_strategy(scenario);
  if (scenario.cpu || scenario.gpus() < 2 || !scenario.stack.has_band(strategy))
    return engine::simulate_iteration(scenario, options);
  auto with = [&scenario](const plan::SoftwareStack& stack) {
    plan::Scenario s = scenario;
    s.stack = stack;
    return s;
  };
  // Every constant at its fast end, at its slow end, then each acting constant alone at its slow
  // end: the one that slows the iteration most widens the band most.
  std::vector<plan::Scenario> variants{with(scenario.stack.at(plan::BandEnd::fast)),
                                       with(scenario.stack.at(plan::BandEnd::slow))};
  std::vector<plan::StackKey> keys;
  for (plan::StackKey key : scenario.stack.acting_on(strategy)) {
    const plan::StackConstant& c = scenario.stack.constants.at(static_cast<std::size_t>(key));
    if (!(c.high > c.low)) continue;
    keys.push_back(key);
    variants.push_back(with(scenario.stack.at(plan::BandEnd::slow, key)));
  }
  const std::vector<std::optional<double>> times = iterations_in_children(variants);
  const std::optional<double> fast = times[0], slow = times[1];
  std::optional<plan::StackKey> widest;
  double widest_s = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::optional<double> t = times[2 + k];
    if (t && (!widest || *t > widest_s)) {
      widest = keys[k];
      widest_s = *t;
    }
  }
  engine::IterationResult result = engine::simulate_iteration(scenario, options);
  if (!fast || !slow) return result;
  plan::ResultBand band;
  band.iteration_time_low_s = std::min(*fast, result.iteration_time_s);
  band.iteration_time_high_s = std::max(*slow, result.iteration_time_s);
  const double width = band.iteration_time_high_s - result.iteration_time_s;
  if (widest && width > 0) {
    band.widest = plan::stack_key_name(*widest);
    const double share = std::clamp((widest_s - result.iteration_time_s) / width, 0.0, 1.0);
    band.sentence = fmt::format(
        "Over the software stack's published ranges the iteration takes {:.4g}–{:.4g} ms ({:+.0f} % / {:+.0f} %); {} "
        "({}) alone at its slow "
        "end gives {:.0f} % of the slow side.",
        1e3 * band.iteration_time_low_s, 1e3 * band.iteration_time_high_s,
        100 * (band.iteration_time_low_s / result.iteration_time_s - 1),
        100 * (band.iteration_time_high_s / result.iteration_time_s - 1), band.widest,
        plan::stack_key_description(*widest), 100 * share);
  } else {
    band.sentence = fmt::format("Over the software stack's published ranges the iteration takes {:.4g}–{:.4g} ms.",
                                1e3 * band.iteration_time_low_s, 1e3 * band.iteration_time_high_s);
  }
  result.band = band;
  return result;
}

}  // namespace trainsim::study
