// Benchmark of the 131,072-GPU scale targets: one ResNet-50 iteration (batch 64 per GPU, fp16,
// 25 MiB buckets, overlap) with `nccl_allreduce` on DGX A100 nodes (switch network), from 1,024 to
// 131,072 GPUs (128 to 16,384 nodes). Targets: 65,536 GPUs ≤ 10 s; 131,072 GPUs ≤ 30 s and ≤ 4 GB;
// cost growing no worse than n log n (the last column, wall / (n log2 n) relative to the first row,
// stays near 1 or below). Each size runs in a forked child; a child past the limit is stopped.
//
//   bench_nccl_scale [--limit SECONDS] [NODES...]
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "measure_iteration.hpp"

using trainsim::Json;

int main(int argc, char** argv) {
  std::vector<int> nodes_series = {128, 512, 2048, 8192, 16384};
  unsigned limit_s = 600;
  std::vector<int> asked;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--limit" && i + 1 < argc)
      limit_s = static_cast<unsigned>(std::stoul(argv[++i]));
    else
      asked.push_back(std::stoi(arg));
  }
  if (!asked.empty()) nodes_series = asked;
  std::printf("%-8s %12s %14s %14s %14s\n", "GPUs", "wall_s", "peak_rss_MiB", "iteration_ms", "wall/(nlogn)");
  double first = 0;
  for (int nodes : nodes_series) {
    const Json scenario{{"name", "bench"},
                        {"workload", Json{{"model", "resnet50"}, {"batch_per_gpu", 64}, {"precision", "fp16"}}},
                        {"platform", Json{{"preset", "dgx-a100"}, {"nodes", nodes}}},
                        {"strategy", Json{{"kind", "nccl_allreduce"}, {"bucket_MB", 25}, {"overlap", true}}}};
    const auto f = trainsim_bench::measure_iteration(scenario, limit_s);
    const double gpus = nodes * 8.0, per_nlogn = f.wall_s / (gpus * std::log2(gpus));
    if (first == 0) first = per_nlogn;
    std::printf("%-8d %12.2f %14.1f %14.3f %14.2f%s\n", nodes * 8, f.wall_s, f.peak_rss_MiB, f.iteration_s * 1e3,
                per_nlogn / first,
                f.over_limit ? "  (stopped at the limit)"
                : f.ok       ? ""
                             : "  (failed)");
    std::fflush(stdout);
  }
  return 0;
}
