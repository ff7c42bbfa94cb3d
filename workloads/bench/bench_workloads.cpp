// bench_workloads: how long loading a model takes (generating the zoo's layer-graph document,
// parsing it, building the Boost graph, shape inference and costs). Not a test; prints figures
// for tests/README.md's Performance section.
#include <chrono>
#include <cstdio>

#include "trainsim/workloads/layer_graph.hpp"

int main() {
  using Clock = std::chrono::steady_clock;
  std::printf("%-14s %7s %12s\n", "model", "layers", "ms per load");
  for (const auto& entry : trainsim::workloads::zoo()) {
    std::size_t layers = 0;
    int runs = 0;
    const auto start = Clock::now();
    double elapsed_s = 0;
    while (runs < 3 || elapsed_s < 0.2) {
      layers = trainsim::workloads::load_workload(entry.name).layers.size();
      ++runs;
      elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::printf("%-14s %7zu %12.3f\n", entry.name.c_str(), layers, 1e3 * elapsed_s / runs);
  }
  return 0;
}
