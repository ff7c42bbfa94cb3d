// `trainsim calibrate nccl-tests FILE... --platform P --out CALIBRATED.json`: fits NCCL's network
// transport constants to the user's own all_reduce_perf run and writes a platform that carries them
// (simulator/README.md "NCCL across nodes at every size").
//
// Three constants, each bounded: the network's efficiency (the share of the NIC's line rate NCCL's
// transport reaches, which scales the platform's NIC bandwidth), the latency each network hop adds
// to NCCL's own per-hop model, and the proxy thread's cost per network step (nccl_tuner.hpp,
// nccl_network_cost). The prediction is the engine's: every evaluation simulates the files' sizes
// with `trainsim collective --algorithm auto`'s decision, in a forked child (SimGrid 3.32 runs one
// simulation per process). The fit minimises the mean busbw error (the accuracy figure) over the
// sizes from 64 KiB (all sizes when fewer than six reach it): first the efficiency on the sizes of
// 64 MiB and more, then a grid over the two latencies, then a pattern search over all three. A
// constant that moves no size by 2 % is not identified by the data: it keeps its default and the
// report says so. The efficiency's range that fits the sizes alike is reported, and its middle is
// written (equal_efficiencies, centre_efficiency).
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/collective_timing.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/nccl_decision.hpp"
#include "trainsim/plan/nccl_tests.hpp"
#include "trainsim/plan/nccl_tuner.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::app {
namespace {

struct CalibrateCliOptions {
  std::vector<std::string> files;
  std::string platform;
  std::string out;
  std::string json_output;
};

/// The fitted constants and their bounds.
struct Constants {
  double efficiency = 1;  ///< × the platform's NIC bandwidth, [kMinEfficiency, 1]
  double hop_us = 0;      ///< NcclNetSpec::hop_latency_s in µs, [0, kMaxHopUs]
  double proxy_us = 0;    ///< NcclNetSpec::proxy_step_s in µs, [0, kMaxProxyUs]
};
constexpr double kMinEfficiency = platforms::kMinLineRateShare;
constexpr double kMaxHopUs = 500;        // a TCP round trip through two hosts' kernels, with margin
constexpr double kMaxProxyUs = 50;       // a proxy step slower than this is a stalled host
/// The fewest distinct sizes a calibration takes: two per constant.
constexpr std::size_t kMinSizes = 6;
/// A constant is identified when changing it moves some size's time by this much.
constexpr double kIdentifiedShift = 0.02;

platforms::PlatformSpec with_constants(const platforms::PlatformSpec& base, const Constants& c) {
  platforms::PlatformSpec spec = base;
  spec.network.bandwidth_Bps = base.network.bandwidth_Bps * c.efficiency;
  spec.network.nccl.hop_latency_s = c.hop_us * 1e-6;
  spec.network.nccl.proxy_step_s = c.proxy_us * 1e-6;
  return spec;
}

/// The platform of `run`: the calibrated one on as many nodes as the run's hosts.
platforms::PlatformSpec run_platform(const platforms::PlatformSpec& spec, const plan::NcclTestsRun& run) {
  const int nodes = run.ranks / std::max(1, spec.gpus_per_node);
  return nodes == spec.nodes ? spec : platforms::with_nodes(spec, nodes, run.source);
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

/// `trainsim collective --algorithm auto` times of `run`'s sizes on `spec`, simulated in a forked
/// child (one SimGrid simulation per process).
std::vector<double> simulate_run(const platforms::PlatformSpec& spec, const plan::NcclTestsRun& run) {
  std::vector<double> sizes;
  for (const auto& row : run.rows) sizes.push_back(row.size_bytes);
  int channel[2];
  if (::pipe(channel) != 0) throw RunError("calibrate: cannot create a pipe");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(channel[0]);
    ::close(channel[1]);
    throw RunError("calibrate: cannot fork a simulation");
  }
  if (pid == 0) {
    int status = 0;
    try {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      ::close(channel[0]);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
      engine::CollectiveRequest request;
      request.nccl = true;
      request.tune_algorithm = true;
      const std::vector<engine::CollectiveTiming> timings = engine::time_collectives(spec, request, sizes);
      std::vector<double> times;
      for (const auto& t : timings) times.push_back(t.time_s);
      write_all(channel[1], times.data(), times.size() * sizeof(double));
    } catch (...) {
      status = 3;
    }
    ::_exit(status);
  }
  ::close(channel[1]);
  std::vector<double> times(sizes.size());
  std::size_t want = times.size() * sizeof(double), got = 0;
  char* buffer = reinterpret_cast<char*>(times.data());
  while (got < want) {
    const ssize_t n = ::read(channel[0], buffer + got, want - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(channel[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != want || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw RunError("calibrate: the simulation of " + run.source + " failed");
  return times;
}

/// Predicted times of every row of every run, in order.
std::vector<double> predict(const platforms::PlatformSpec& base, const std::vector<plan::NcclTestsRun>& runs,
                            const Constants& c) {
  std::vector<double> out;
  const platforms::PlatformSpec spec = with_constants(base, c);
  for (const auto& run : runs) {
    const std::vector<double> t = simulate_run(run_platform(spec, run), run);
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

struct Observation {
  double size_bytes = 0, time_s = 0;
  bool large = false;  ///< ≥ 64 MiB: the bandwidth regime
  bool fitted = true;  ///< counted by the loss (≥ 64 KiB, unless too few sizes reach it)
};
/// The smallest size the loss counts: below it an all-reduce is the collective's floor, which the
/// model holds constant (launch and hops) and the published runs scatter around by ±20 % (30-46 µs
/// on the Nebius curve from 8 B to 32 KiB), so a dozen such sizes would outvote the few that
/// show the transport's costs. What DDP's buckets and the accuracy figures start from.
constexpr double kMinFittedBytes = 64.0 * 1024;

/// A size's busbw error: |predicted busbw − measured| / measured = |measured time / predicted − 1|.
/// It weighs a prediction too fast by more than one as much too slow (half the time is 100 % off,
/// twice the time 50 %), as the accuracy figures (simulator/README.md) weigh them.
double busbw_error(double measured_s, double predicted_s) {
  return std::abs(measured_s / predicted_s - 1);
}

/// Mean busbw error of `predicted` against the observations the loss counts (all, or the large
/// ones): the accuracy figure itself. Absolute rather than squared: one slow size of a published
/// run (Lambda's 512 KiB, 241 µs out of place against 126 in place) would otherwise pull every
/// constant toward it.
double loss(const std::vector<Observation>& obs, const std::vector<double>& predicted, bool large_only) {
  double sum = 0;
  int count = 0;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    if (large_only ? !obs[i].large : !obs[i].fitted) continue;
    sum += busbw_error(obs[i].time_s, predicted[i]);
    ++count;
  }
  return count > 0 ? sum / count : 0;
}

/// The fit: what it found, whether each constant is identified, and its prediction.
struct Fit {
  Constants constants;
  std::array<bool, 3> identified{true, true, true};
  /// The efficiencies that fit the sizes alike (equal_efficiencies); {1, 1} when not identified.
  std::array<double, 2> efficiency_range{1, 1};
  bool centred = false;  ///< the efficiency written is the middle of efficiency_range
  std::vector<double> predicted;
  int simulations = 0;
};

/// The runs simulated with a set of constants, and the loss of their times; counts the simulations.
struct Evaluation {
  const platforms::PlatformSpec& base;
  const std::vector<plan::NcclTestsRun>& runs;
  const std::vector<Observation>& obs;
  int simulations = 0;
  /// What each set of constants predicted: the searches and the range's bisections revisit some.
  std::map<std::array<double, 3>, std::vector<double>> predicted{};

  std::vector<double> times(const Constants& c) {
    const std::array<double, 3> key{c.efficiency, c.hop_us, c.proxy_us};
    if (const auto it = predicted.find(key); it != predicted.end()) return it->second;
    ++simulations;
    return predicted.emplace(key, predict(base, runs, c)).first->second;
  }
  double loss_of(const Constants& c, bool large_only) { return loss(obs, times(c), large_only); }
};

/// Step 1: the efficiency from the bandwidth regime, by six rounds of golden-section search on
/// [kMinEfficiency, 1] over the large sizes' loss, the other constants as in `c`.
double fit_efficiency(Evaluation& eval, const Constants& c) {
  double lo = kMinEfficiency, hi = 1.0;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  auto at = [&](double e) {
    Constants t = c;
    t.efficiency = e;
    return eval.loss_of(t, true);
  };
  double f1 = at(x1), f2 = at(x2);
  for (int i = 0; i < 6; ++i) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = at(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = at(x2);
    }
  }
  return (lo + hi) / 2;
}

/// Step 2: a grid over the two latencies (every fitted size) from `c`; keeps the best point in `c`
/// and its loss in `best`. Spaced about geometrically over what the published curves need (hops of
/// 4-8 µs on InfiniBand and RoCE, 20-60 µs on TCPXO; proxy steps of 0.5-10 µs): a 4 × 4 grid left
/// the pattern search in a neighbouring valley (Nebius H100 at 8.6 % where 6.4 % exists).
void grid_latencies(Evaluation& eval, Constants& c, double& best) {
  const Constants start = c;
  for (double hop : {0.0, 2.0, 4.0, 6.0, 8.0, 12.0, 20.0, 40.0, 70.0, 150.0})
    for (double proxy : {0.0, 0.5, 1.0, 2.0, 4.0, 10.0}) {
      if (hop == 0 && proxy == 0) continue;
      Constants t = start;
      t.hop_us = hop;
      t.proxy_us = proxy;
      const double f = eval.loss_of(t, false);
      if (f < best) {
        best = f;
        c = t;
      }
    }
}

/// Step 3: pattern search over all three constants (the efficiency only with a bandwidth regime),
/// steps halving after a round without a move; improves `c` and `best` in place.
void pattern_search(Evaluation& eval, bool has_large, Constants& c, double& best) {
  std::array<double, 3> step{0.05, std::max(2.0, c.hop_us / 4), std::max(0.25, c.proxy_us / 4)};
  for (int round = 0; round < 5; ++round) {
    bool moved = false;
    for (int k = 0; k < 3; ++k)
      for (double sign : {1.0, -1.0}) {
        Constants t = c;
        double& v = k == 0 ? t.efficiency : k == 1 ? t.hop_us : t.proxy_us;
        v += sign * step[std::size_t(k)];
        v = k == 0 ? std::clamp(v, kMinEfficiency, 1.0) : std::clamp(v, 0.0, k == 1 ? kMaxHopUs : kMaxProxyUs);
        if (k == 0 && !has_large) continue;
        const double f = eval.loss_of(t, false);
        if (f < best) {
          best = f;
          c = t;
          moved = true;
        }
      }
    if (!moved)
      for (double& s : step) s /= 2;
  }
}

/// Identifiability: a constant whose change moves no size the loss counts by kIdentifiedShift is
/// not fitted (nor the efficiency without a bandwidth regime). `predicted`: the times with `c`.
std::array<bool, 3> identified_constants(Evaluation& eval, bool has_large, const Constants& c,
                                         const std::vector<double>& predicted) {
  std::array<bool, 3> identified{};
  for (int k = 0; k < 3; ++k) {
    Constants t = c;
    if (k == 0) t.efficiency = c.efficiency > 0.5 ? c.efficiency * 0.9 : c.efficiency * 1.1;
    if (k == 1) t.hop_us = c.hop_us + std::max(10.0, c.hop_us / 2);
    if (k == 2) t.proxy_us = c.proxy_us + std::max(0.5, c.proxy_us / 2);
    const std::vector<double> moved = eval.times(t);
    double shift = 0;
    for (std::size_t i = 0; i < moved.size(); ++i)
      if (eval.obs[i].fitted) shift = std::max(shift, std::abs(std::log(moved[i] / predicted[i])));
    identified[std::size_t(k)] = shift >= kIdentifiedShift && (k != 0 || has_large);
  }
  return identified;
}

/// Two losses closer than this are a difference the accuracy figures (a per cent to one decimal)
/// do not show: the sizes fit both alike.
constexpr double kEqualLoss = 0.001;

/// The efficiencies that fit the sizes alike, their loss within kEqualLoss of `best` (the loss at
/// `c`): from c's toward each bound, the bound itself or the last of five bisections that stays
/// alike. Two nodes often leave it open: their tree and NVLS_TREE pass the NICs' rate in busbw with
/// each NIC far from it, so a fifth of the rate more or less moves none of their sizes.
std::array<double, 2> equal_efficiencies(Evaluation& eval, const Constants& c, double best) {
  const auto alike = [&](double e) {
    Constants t = c;
    t.efficiency = e;
    return eval.loss_of(t, false) <= best + kEqualLoss;
  };
  std::array<double, 2> range{c.efficiency, c.efficiency};
  const std::array<double, 2> bounds{kMinEfficiency, 1.0};
  for (std::size_t side = 0; side < 2; ++side) {
    if (bounds[side] == c.efficiency) continue;
    if (alike(bounds[side])) {
      range[side] = bounds[side];
      continue;
    }
    double in = c.efficiency, out = bounds[side];
    for (int i = 0; i < 5; ++i) {
      const double mid = (in + out) / 2;
      (alike(mid) ? in : out) = mid;
    }
    range[side] = in;
  }
  return range;
}

/// Writes the middle of the efficiencies that fit the sizes alike rather than the search's end
/// point, which lies anywhere in a flat valley: the middle is the value least far from every
/// efficiency the data allow (two nodes often leave a fifth of the rate open), and it fits alike.
/// The search can stop in a shallow valley below a better full rate: the range is then the one
/// around 1.
void centre_efficiency(Evaluation& eval, Fit& fit) {
  Constants& c = fit.constants;
  double at_fit = loss(eval.obs, fit.predicted, false);
  fit.efficiency_range = equal_efficiencies(eval, c, at_fit);
  if (fit.efficiency_range[1] >= 1 && c.efficiency < 1) {
    Constants one = c;
    one.efficiency = 1;
    std::vector<double> at_one = eval.times(one);
    const double loss_one = loss(eval.obs, at_one, false);
    if (loss_one < at_fit - kEqualLoss) {
      c = one;
      at_fit = loss_one;
      fit.predicted = std::move(at_one);
      fit.efficiency_range = equal_efficiencies(eval, c, at_fit);
    }
  }
  if (fit.efficiency_range[0] == fit.efficiency_range[1]) return;  // nothing else fits alike
  Constants middle = c;
  middle.efficiency = (fit.efficiency_range[0] + fit.efficiency_range[1]) / 2;
  std::vector<double> at_middle = eval.times(middle);
  if (loss(eval.obs, at_middle, false) > at_fit + kEqualLoss) return;
  c = middle;
  fit.predicted = std::move(at_middle);
  fit.centred = true;
}

Fit fit_constants(const platforms::PlatformSpec& base, const std::vector<plan::NcclTestsRun>& runs,
                  const std::vector<Observation>& obs) {
  Evaluation eval{base, runs, obs};
  const bool has_large = std::count_if(obs.begin(), obs.end(), [](const Observation& o) { return o.large; }) >= 2;
  Constants c;
  if (has_large) c.efficiency = fit_efficiency(eval, c);
  double best = eval.loss_of(c, false);
  grid_latencies(eval, c, best);
  pattern_search(eval, has_large, c, best);
  Fit fit;
  fit.constants = c;
  fit.predicted = eval.times(c);
  fit.identified = identified_constants(eval, has_large, c, fit.predicted);
  if (!fit.identified[0] || !fit.identified[1] || !fit.identified[2]) {
    // What is not identified keeps the platform's value: full efficiency, the latencies as written
    // (the transport's default hop latency: 0 where the platform names none).
    if (!fit.identified[0]) c.efficiency = 1;
    if (!fit.identified[1]) c.hop_us = base.network.nccl.hop_latency_s * 1e6;
    if (!fit.identified[2]) c.proxy_us = base.network.nccl.proxy_step_s * 1e6;
    fit.constants = c;
    fit.predicted = eval.times(c);
  }
  if (fit.identified[0]) centre_efficiency(eval, fit);
  fit.simulations = eval.simulations;
  return fit;
}

/// Refuses runs the platform cannot hold: ranks not filling its nodes, hosts not matching.
void check_run(const plan::NcclTestsRun& run, const platforms::PlatformSpec& spec, const std::string& platform) {
  const int g = std::max(1, spec.gpus_per_node);
  if (run.ranks % g != 0 || (run.hosts > 0 && run.hosts * g != run.ranks))
    throw InputError(run.source, "line " + std::to_string(run.rank_line),
                     fmt::format("{} ranks on {} host(s) do not match platform {}, {} GPUs per node: the run must fill "
                                 "whole nodes of the platform ({} ranks per host)",
                                 run.ranks, run.hosts, platform, g, g));
  if (run.ranks / g < 2)
    throw InputError(run.source, "line " + std::to_string(run.rank_line),
                     fmt::format("runs on one node ({} ranks): it says nothing of the network; calibrate on a run of "
                                 "two or more nodes",
                                 run.ranks));
}

int run_calibrate(const CalibrateCliOptions& o) {
  std::vector<CommandFile> inputs{{"--platform", o.platform}};
  for (const auto& f : o.files) inputs.push_back({"FILE", f});
  std::vector<CommandFile> outputs{{"--out", o.out}};
  if (!o.json_output.empty()) outputs.push_back({"--json", o.json_output});
  check_outputs_apart(inputs, outputs);
  check_output_file(o.out);
  if (!o.json_output.empty()) check_output_file(o.json_output);
  const platforms::PlatformSpec base = platforms::load_platform(o.platform);
  if (base.simgrid_xml)
    throw InputError("command line", "--platform",
                     "a SimGrid XML platform says nothing of GPUs, NICs or NCCL; calibrate a platform description");
  std::vector<plan::NcclTestsRun> runs;
  std::set<double> sizes;
  for (const auto& f : o.files) {
    runs.push_back(plan::read_nccl_tests(f));
    check_run(runs.back(), base, o.platform);
    for (const auto& r : runs.back().rows) sizes.insert(r.size_bytes);
  }
  if (sizes.size() < kMinSizes)
    throw InputError(runs.back().source, "line " + std::to_string(runs.back().rows.back().line),
                     fmt::format("has {} size(s) above 0 bytes; fitting three constants needs at least {} (run "
                                 "all_reduce_perf -b 8 -e 8G -f 2)",
                                 sizes.size(), kMinSizes));
  std::vector<Observation> obs;
  for (const auto& run : runs)
    for (const auto& r : run.rows)
      obs.push_back({r.size_bytes, r.time_s, r.size_bytes >= 64.0 * 1024 * 1024, r.size_bytes >= kMinFittedBytes});
  std::set<double> fitted_sizes;
  for (const Observation& x : obs)
    if (x.fitted) fitted_sizes.insert(x.size_bytes);
  if (fitted_sizes.size() < kMinSizes)
    for (Observation& x : obs) x.fitted = true;

  const Fit fit = fit_constants(base, runs, obs);
  platforms::PlatformSpec calibrated = with_constants(base, fit.constants);
  std::string from;
  for (const auto& f : o.files) from += (from.empty() ? "" : ", ") + f;
  calibrated.network.nccl.calibrated_from = from;
  calibrated.name = base.name + " (calibrated)";
  calibrated.source = "trainsim calibrate nccl-tests on " + from + "; base " + o.platform;
  if (calibrated.network.nccl.calibrated_from.empty()) calibrated.network.nccl.calibrated_from = "-";

  // The report: constants, then every size's residual.
  const std::array<const char*, 3> names{"network efficiency", "hop latency (us)", "proxy step (us)"};
  const std::array<double, 3> values{fit.constants.efficiency, fit.constants.hop_us, fit.constants.proxy_us};
  const std::array<std::string, 3> bounds{fmt::format("[{}, 1]", kMinEfficiency), fmt::format("[0, {}]", kMaxHopUs),
                                          fmt::format("[0, {}]", kMaxProxyUs)};
  std::string out = fmt::format("# trainsim calibrate nccl-tests: {} size(s) of {} file(s) on {} ({} simulations)\n",
                                obs.size(), runs.size(), o.platform, fit.simulations);
  Json constants = Json::array();
  for (std::size_t k = 0; k < 3; ++k) {
    const bool open = k == 0 && fit.identified[0] && fit.efficiency_range[0] < fit.efficiency_range[1];
    const std::string status = !fit.identified[k]      ? "not identified by these sizes: default kept"
                               : k == 0 && fit.centred ? "fitted, the middle of the range"
                                                       : "fitted";
    out += fmt::format("#   {:<20} {:>10.4g}  bounds {:<12} {}{}\n", names[k], values[k], bounds[k], status,
                       open ? fmt::format("; {:.3g} to {:.3g} fit these sizes alike (busbw error within 0.1 point)",
                                          fit.efficiency_range[0], fit.efficiency_range[1])
                            : "");
    Json entry{{"name", names[k]}, {"value", values[k]}, {"identified", fit.identified[k]}};
    if (k == 0 && fit.identified[0]) entry["range"] = Json::array({fit.efficiency_range[0], fit.efficiency_range[1]});
    constants.push_back(entry);
  }
  // The ring's share of the NICs' rate is the platform's, not fitted: the NICs' efficiency above is
  // fitted under it (a ring's bytes cross the NICs at both).
  const double ring_efficiency = base.network.nccl.ring_efficiency;
  out += fmt::format(
      "#   {:<20} {:>10.4g}  the platform's (network.nccl.ring_efficiency), kept: the efficiency "
      "above is fitted under it\n",
      "ring efficiency", ring_efficiency);
  out += fmt::format("# {:>14} {:>12} {:>12} {:>9} {:>12} {:>12}  {:<10} {}\n", "size(B)", "meas(us)", "pred(us)",
                     "error(%)", "busbw meas", "busbw pred", "algorithm", "protocol");
  Json residuals = Json::array();
  double abs_sum = 0;
  std::size_t i = 0;
  for (const auto& run : runs) {
    const platforms::PlatformSpec spec = run_platform(calibrated, run);
    const plan::NcclTopology topo = plan::nccl_topology(spec, run.ranks);
    const double factor = 2.0 * (run.ranks - 1) / run.ranks;
    for (const auto& r : run.rows) {
      const double pred = fit.predicted[i++];
      const double err = (pred - r.time_s) / r.time_s * 100;
      abs_sum += std::abs(err);
      const plan::NcclChoice choice = plan::nccl_decide(topo, r.size_bytes, {}).choice;
      out += fmt::format("  {:>14.0f} {:>12.2f} {:>12.2f} {:>+9.1f} {:>12.2f} {:>12.2f}  {:<10} {}\n", r.size_bytes,
                         r.time_s * 1e6, pred * 1e6, err, r.size_bytes / r.time_s / 1e9 * factor,
                         r.size_bytes / pred / 1e9 * factor, plan::to_string(choice.algorithm),
                         plan::to_string(choice.protocol));
      residuals.push_back(Json{{"file", run.source},
                               {"size_bytes", r.size_bytes},
                               {"measured_s", r.time_s},
                               {"predicted_s", pred},
                               {"error_percent", err}});
    }
  }
  const double mape = abs_sum / static_cast<double>(obs.size());
  const double busbw = 100 * loss(obs, fit.predicted, false);
  out += fmt::format(
      "# mean |time error| {:.1f} %, mean busbw error of the fitted sizes {:.1f} %; platform written to {}\n", mape,
      busbw, o.out);
  write_output(o.out, platforms::to_json(calibrated).dump(2) + "\n");
  if (!o.json_output.empty()) {
    Json j{{"platform", o.out},      {"constants", constants},         {"ring_efficiency", ring_efficiency},
           {"residuals", residuals}, {"mean_abs_error_percent", mape}, {"mean_busbw_error_percent", busbw}};
    write_output(o.json_output, j.dump(2) + "\n");
    if (o.json_output == "-") return 0;
  }
  std::cout << out;
  return 0;
}

void add_calibrate(CLI::App& app, Action& action) {
  auto o = std::make_shared<CalibrateCliOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Fit a platform's constants to measurements of your own machine");
  cmd->require_subcommand(1);
  CLI::App* nccl = cmd->add_subcommand(
      "nccl-tests", "Fit NCCL's network transport (efficiency, hop latency, proxy step) to all_reduce_perf output");
  nccl->add_option("FILE", o->files, "all_reduce_perf output of a run on two or more nodes (one or more files)")
      ->required();
  nccl->add_option("--platform", o->platform, "preset name or platform JSON the run was made on")->required();
  nccl->add_option("--out", o->out, "write the calibrated platform JSON to FILE")->required();
  nccl->add_option("--json", o->json_output, "write the constants and residuals as JSON to FILE (- = stdout)");
  nccl->callback([&action, o] { action = [o] { return run_calibrate(*o); }; });
  add_calibrate_stack(*cmd, action);
}

[[maybe_unused]] static const bool registered = register_command(55, &add_calibrate);

}  // namespace
}  // namespace trainsim::app
