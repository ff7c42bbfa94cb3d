// bench_collectives: figures for tests/README.md's Performance section (not a test). Each simulation
// runs in a forked child because SimGrid allows one engine per process.
//   1. The α-β oracle grid: ring all-reduce on a non-blocking switch (ideal model), n = 2..1024,
//      S = 1 KiB..4 GiB, worst relative error against 2(n−1)α + 2(n−1)/n·S/β.
//   2. Scale: 1 GiB ring all-reduce on 128 and 512 DGX A100 nodes (1024 and 4096 GPUs): wall time
//      (platform build included) and peak memory of the child.
//   3. Coarse vs step representation on the same rings: times, their difference, walls.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/engine/collectives.hpp"

namespace te = trainsim::engine;
namespace tp = trainsim::platforms;

namespace {

/// Runs fn in a child; returns what it printed to the pipe.
std::string in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string out = fn();
    if (write(fds[1], out.data(), out.size()) < 0) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

struct Run {
  double time_s = 0, wall_s = 0, peak_MB = 0;
  std::string used;
};

Run run(const std::string& platform_json, te::Representation rep, double bytes) {
  const std::string out = in_child([&] {
    const auto start = std::chrono::steady_clock::now();
    const tp::PlatformSpec spec = tp::read_platform_spec(trainsim::parse_json_text(platform_json, "bench"));
    te::CollectiveRequest q;
    q.options.representation = rep;
    const auto t = te::time_collectives(spec, q, {bytes});
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::ostringstream s;
    s.precision(17);
    s << t[0].time_s << " " << wall << " " << usage.ru_maxrss / 1024.0 << " " << te::to_string(t[0].used);
    return s.str();
  });
  Run r;
  std::istringstream in(out);
  in >> r.time_s >> r.wall_s >> r.peak_MB >> r.used;
  return r;
}

std::string switch_cluster(int n) {
  return R"({"gpu": "V100-SXM2-16GB", "nodes": )" + std::to_string(n) +
         R"(, "gpus_per_node": 1, "intra_node": {"kind": "pcie", "bandwidth_GBps": 1000, "latency_us": 0},
            "network": {"topology": "switch", "bandwidth_Gbps": 100, "latency_us": 5}})";
}

}  // namespace

int main() {
  constexpr double KiB = 1024.0, alpha = 5e-6, beta = 12.5e9;
  std::printf("== 1. ring all-reduce vs 2(n-1)a + 2(n-1)/n S/b (ideal model, switch, a = 5 us, b = 12.5 GB/s)\n");
  std::printf("%6s %14s %14s %14s %9s %8s\n", "n", "S(B)", "formula_s", "simulated_s", "error", "wall_s");
  double worst = 0;
  for (int n = 2; n <= 1024; n *= 2) {
    for (double bytes : {KiB, 32 * KiB, KiB * KiB, 32 * KiB * KiB, KiB * KiB * KiB, 4 * KiB * KiB * KiB}) {
      const Run r = run(switch_cluster(n), te::Representation::automatic, bytes);
      const double f = 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / beta;
      const double err = std::fabs(r.time_s - f) / f;
      worst = std::max(worst, err);
      std::printf("%6d %14.0f %14.6e %14.6e %8.2e%% %8.3f\n", n, bytes, f, r.time_s, 100 * err, r.wall_s);
    }
  }
  std::printf("worst relative error: %.3e%%\n\n", 100 * worst);

  std::printf("== 2. 1 GiB ring all-reduce on DGX A100 nodes (auto representation), wall incl. platform build\n");
  std::printf("%6s %6s %12s %12s %10s %10s %8s\n", "nodes", "GPUs", "sim_time_s", "busbw_GB/s", "wall_s", "peak_MB",
              "repr");
  for (int nodes : {128, 512}) {
    const Run r = run(R"({"preset": "dgx-a100", "nodes": )" + std::to_string(nodes) + "}",
                      te::Representation::automatic, 1024.0 * KiB * KiB);
    const int n = nodes * 8;
    std::printf("%6d %6d %12.6f %12.2f %10.3f %10.1f %8s\n", nodes, n, r.time_s,
                1024.0 * KiB * KiB / r.time_s * 2 * (n - 1) / n / 1e9, r.wall_s, r.peak_MB, r.used.c_str());
  }

  std::printf("\n== 3. coarse vs step representation (1 GiB ring all-reduce)\n");
  std::printf("%-28s %14s %14s %10s %10s %10s\n", "platform", "coarse_s", "step_s", "diff", "wall_c_s", "wall_s_s");
  for (const auto& [label, json] :
       {std::pair<std::string, std::string>{"switch, 64 x 1 GPU", switch_cluster(64)},
        {"switch, 256 x 1 GPU", switch_cluster(256)},
        {"dgx-a100, 8 x 8 GPUs", R"({"preset": "dgx-a100", "nodes": 8})"},
        {"dgx-a100, 32 x 8 GPUs", R"({"preset": "dgx-a100", "nodes": 32})"}}) {
    const Run c = run(json, te::Representation::coarse, 1024.0 * KiB * KiB);
    const Run s = run(json, te::Representation::step, 1024.0 * KiB * KiB);
    std::printf("%-28s %14.6e %14.6e %9.2e%% %10.3f %10.3f\n", label.c_str(), c.time_s, s.time_s,
                100 * std::fabs(c.time_s - s.time_s) / s.time_s, c.wall_s, s.wall_s);
  }
  return 0;
}
