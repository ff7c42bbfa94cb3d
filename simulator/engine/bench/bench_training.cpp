// Benchmark of one simulated training iteration at scale (ResNet-50, 25 MB buckets, ring,
// overlap, DGX-A100 nodes over a fat-tree; targets: 16,384 GPUs ≤ 10 s, 65,536 GPUs ≤ 60 s,
// ≤ 2 GB, cost growing no worse than n log n).
// Each size runs in a child process (one SimGrid engine per process); the parent reports the
// child's wall time and peak resident memory (getrusage of the child).
#include <cmath>
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
  // The GPU series of the scale targets: 1k to 64k GPUs (128 to 8,192 nodes) with the ring, then the
  // hierarchical all-reduce up to 16k. Arguments: node counts (both strategies for each).
  std::vector<int> ring_nodes = {128, 256, 512, 1024, 2048, 4096, 8192};
  std::vector<int> hierarchical_nodes = {128, 512, 2048};
  if (argc > 1) {
    ring_nodes.clear();
    for (int i = 1; i < argc; ++i) ring_nodes.push_back(std::stoi(argv[i]));
    hierarchical_nodes = ring_nodes;
  }
  // cost/(n log2 n) relative to the series' first point: stays ≤ 1 while the cost grows no faster
  // than n log n.
  std::printf("%-8s %-24s %12s %14s %14s %12s %14s\n", "GPUs", "strategy", "wall_s", "peak_rss_MiB", "iteration_ms",
              "samples/s", "wall/(nlogn)");
  for (const char* kind : {"ring_allreduce", "hierarchical_allreduce"}) {
    double first = 0;
    for (int nodes : std::string(kind) == "ring_allreduce" ? ring_nodes : hierarchical_nodes) {
      const auto f = trainsim_bench::measure_iteration(scenario(nodes, kind));
      const double gpus = nodes * 8.0, per_nlogn = f.wall_s / (gpus * std::log2(gpus));
      if (first == 0) first = per_nlogn;
      std::printf("%-8d %-24s %12.3f %14.1f %14.3f %12.0f %14.2f%s\n", nodes * 8, kind, f.wall_s, f.peak_rss_MiB,
                  f.iteration_s * 1e3, f.samples_per_s, per_nlogn / first, f.ok ? "" : "  (failed)");
      std::fflush(stdout);
    }
  }
  return 0;
}
