// Benchmark of parameter-server iterations: Inception-v3 on 128 single-GPU nodes with
// 116 and 128 colocated servers, a push per variable (≤ 5 s and ≤ 1 GB per point), and VGG-16 on
// 64 GPUs with 16 servers (≤ 2 s), for each variable placement; the same on dedicated servers,
// where the automatic representation is the coarse one. Each point runs in a child process
// (one SimGrid engine per process); the parent reports its wall time and peak resident memory.
// An argument runs only the points whose label contains it (e.g. "vgg16"). A point still running
// after 120 s is stopped and printed as over the limit (sharded placement on 128 colocated
// servers did, until a variable's flows between alike nodes became one group: about 1 s now).
#include <cstdio>
#include <string>
#include <vector>

#include "measure_iteration.hpp"

using trainsim::Json;

namespace {

struct Point {
  std::string label;
  Json scenario;
};

Json ps_scenario(const std::string& model, int batch, int nodes, int gpus_per_node, int servers, const std::string& placement,
                 const std::string& server_placement = "colocated") {
  return Json{{"name", "bench"},
              {"workload", Json{{"model", model}, {"batch_per_gpu", batch}, {"precision", "fp32"}}},
              {"platform", Json{{"preset", "cluster-25gbe"}, {"nodes", nodes}, {"gpus_per_node", gpus_per_node}}},
              {"strategy", Json{{"kind", "parameter_server"}, {"servers", servers}, {"server_placement", server_placement},
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
    // Dedicated servers: the automatic representation is coarse (grouped flows).
    points.push_back({std::string("inception_v3 128x1 116 dedicated ") + placement,
                      ps_scenario("inception_v3", 32, 128, 1, 116, placement, "dedicated")});
    points.push_back({std::string("vgg16 16x4 16 dedicated ") + placement, ps_scenario("vgg16", 32, 16, 4, 16, placement, "dedicated")});
  }
  std::printf("%-44s %10s %14s %14s %12s\n", "point", "wall_s", "peak_rss_MiB", "iteration_ms", "samples/s");
  for (const Point& p : points) {
    if (p.label.find(only) == std::string::npos) continue;
    constexpr unsigned limit_s = 120;
    const auto f = trainsim_bench::measure_iteration(p.scenario, limit_s);
    std::printf("%-44s %10.3f %14.1f %14.3f %12.0f", p.label.c_str(), f.wall_s, f.peak_rss_MiB, f.iteration_s * 1e3, f.samples_per_s);
    if (f.over_limit)
      std::printf("  (stopped at the %u s limit)", limit_s);
    else if (!f.ok)
      std::printf("  (failed)");
    std::printf("\n");
  }
  return 0;
}
