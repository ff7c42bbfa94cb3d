// Benchmark of parameter-server iterations (issue 10): Inception-v3 on 128 single-GPU nodes with
// 116 and 128 colocated servers, a push per variable (≤ 5 s and ≤ 1 GB per point), and VGG-16 on
// 64 GPUs with 16 servers (≤ 2 s), for each variable placement. Each point runs in a child process
// (one SimGrid engine per process); the parent reports its wall time and peak resident memory.
// An argument runs only the points whose label contains it (e.g. "vgg16").
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "trainsim/engine/training.hpp"
#include "trainsim/plan/scenario.hpp"

using trainsim::Json;

namespace {

struct Point {
  std::string label;
  Json scenario;
};

Json ps_scenario(const std::string& model, int batch, int nodes, int gpus_per_node, int servers, const std::string& placement) {
  return Json{{"name", "bench"},
              {"workload", Json{{"model", model}, {"batch_per_gpu", batch}, {"precision", "fp32"}}},
              {"platform", Json{{"preset", "cluster-25gbe"}, {"nodes", nodes}, {"gpus_per_node", gpus_per_node}}},
              {"strategy", Json{{"kind", "parameter_server"}, {"servers", servers}, {"server_placement", "colocated"},
                                {"placement", placement}, {"bucket_MB", 0}, {"overlap", true}}}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // run only the points whose label contains it
  std::vector<Point> points;
  for (const char* placement : {"round_robin", "greedy", "sharded"}) {
    for (int servers : {116, 128})
      points.push_back({std::string("inception_v3 128x1 ") + std::to_string(servers) + " servers " + placement,
                        ps_scenario("inception_v3", 32, 128, 1, servers, placement)});
    points.push_back({std::string("vgg16 16x4 16 servers ") + placement, ps_scenario("vgg16", 32, 16, 4, 16, placement)});
  }
  std::printf("%-44s %10s %14s %14s %12s\n", "point", "wall_s", "peak_rss_MiB", "iteration_ms", "samples/s");
  for (const Point& p : points) {
    if (p.label.find(only) == std::string::npos) continue;
    int channel[2];
    if (::pipe(channel) != 0) return 1;
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(channel[0]);
      const auto s = trainsim::plan::read_scenario(p.scenario, "bench");
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
    std::printf("%-44s %10.3f %14.1f %14.3f %12.0f%s\n", p.label.c_str(), wall, usage.ru_maxrss / 1024.0, iteration * 1e3, sps,
                WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  (failed)");
  }
  return 0;
}
