// Benchmark of one simulated training iteration at scale (issue: ResNet-50, 25 MB buckets, ring,
// overlap, DGX-A100 nodes over a fat-tree; 1024 GPUs ≤ 5 s and ≤ 2 GB, 4096 GPUs ≤ 30 s).
// Each size runs in a child process (one SimGrid engine per process); the parent reports the
// child's wall time and peak resident memory (getrusage of the child).
#include <cstdio>
#include <string>
#include <vector>

#include "measure_iteration.hpp"

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
      const auto f = trainsim_bench::measure_iteration(scenario(nodes, kind));
      std::printf("%-8d %-24s %12.3f %14.1f %14.3f %12.0f%s\n", nodes * 8, kind, f.wall_s, f.peak_rss_MiB, f.iteration_s * 1e3,
                  f.samples_per_s, f.ok ? "" : "  (failed)");
    }
  }
  return 0;
}
