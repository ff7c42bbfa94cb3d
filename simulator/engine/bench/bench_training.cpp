// Benchmark of one simulated training iteration at scale (issue: ResNet-50, 25 MB buckets, ring,
// overlap, DGX-A100 nodes over a fat-tree; 1024 GPUs ≤ 5 s and ≤ 2 GB, 4096 GPUs ≤ 30 s).
// Each size runs in a child process (one SimGrid engine per process); the parent reports the
// child's wall time and peak resident memory (getrusage of the child).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "trainsim/plan/scenario.hpp"
#include "trainsim/engine/training.hpp"

using trainsim::Json;

namespace {

Json scenario(int nodes, const std::string& kind) {
  return Json{{"name", "bench"},
              {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 256}, {"precision", "tf32"}}},
              {"platform", Json{{"preset", "dgx-a100"}, {"nodes", nodes}, {"network", Json{{"topology", "fat_tree"}}}}},
              {"strategy", Json{{"kind", kind}, {"bucket_MB", 25}, {"overlap", true}}}};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> node_counts = {16, 128, 512};
  if (argc > 1) {
    node_counts.clear();
    for (int i = 1; i < argc; ++i) node_counts.push_back(std::stoi(argv[i]));
  }
  std::printf("%-8s %-24s %12s %14s %14s %12s\n", "GPUs", "strategy", "wall_s", "peak_rss_MiB", "iteration_ms", "samples/s");
  for (const char* kind : {"ring_allreduce", "hierarchical_allreduce"}) {
    for (int nodes : node_counts) {
      int channel[2];
      if (::pipe(channel) != 0) return 1;
      std::fflush(stdout);
      const auto start = std::chrono::steady_clock::now();
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(channel[0]);
        const auto s = trainsim::plan::read_scenario(scenario(nodes, kind), "bench");
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
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double iteration = 0, sps = 0;
      if (n > 0) std::sscanf(buffer, "%lf %lf", &iteration, &sps);
      std::printf("%-8d %-24s %12.3f %14.1f %14.3f %12.0f%s\n", nodes * 8, kind, wall, usage.ru_maxrss / 1024.0, iteration * 1e3, sps,
                  WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  (failed)");
    }
  }
  return 0;
}
