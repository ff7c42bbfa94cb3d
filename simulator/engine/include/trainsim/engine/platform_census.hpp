#pragma once
// What SimGrid builds from a platform, for `trainsim platform info`. No SimGrid header here: the
// CLI asks the engine without seeing SimGrid.
#include <cstddef>

#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::engine {

/// Counts of what SimGrid built.
struct PlatformCensus {
  int gpus = 0;
  int gpus_per_node = 0;
  std::size_t hosts = 0;  ///< GPUs, node CPUs and server CPUs
  std::size_t links = 0;
};

/// Builds `spec` with SimGrid in this process (using up its one engine) and counts what it made.
/// Throws InputError when the platform cannot be built.
PlatformCensus census(const platforms::PlatformSpec& spec);

}  // namespace trainsim::engine
