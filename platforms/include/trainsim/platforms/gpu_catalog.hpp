#pragma once
// The catalog of processors trainsim knows: GPUs (and one CPU host) with their public peak figures.
// Pure data, no SimGrid.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/units.hpp"

namespace trainsim::platforms {

/// One processor model. All figures are dense (no structured sparsity), per device; for the K80 a
/// "device" is one GK210 die, as CUDA and the cloud providers count it.
struct GpuSpec {
  std::string name;                ///< catalog key, e.g. "A100-SXM4-80GB"
  double fp32_flops = 0;           ///< peak FLOP/s for each precision; a precision the device has no
  double tf32_flops = 0;           ///< fast path for carries its fp32 (or fp16) rate
  double fp16_flops = 0;
  double bf16_flops = 0;
  double memory_bytes = 0;         ///< device memory, bytes
  double memory_bandwidth_Bps = 0; ///< device memory bandwidth, bytes/s
  /// Streaming multiprocessors (SMs) of one device, from NVIDIA's architecture whitepapers; NCCL's
  /// kernels hold one per channel while a collective runs (0 for the CPU host entry).
  int sm_count = 0;
  bool is_cpu = false;             ///< true for the CPU host entry
  std::string source;              ///< where the figures come from

  /// Peak FLOP/s at precision `p` (> 0 for every catalog entry).
  double peak_flops(Precision p) const;
};

/// Every catalog entry, in a fixed order (GPUs by generation, then the CPU host).
const std::vector<GpuSpec>& gpu_catalog();
/// Catalog names in catalog order.
std::vector<std::string> gpu_names();
/// The entry called `name` (exact match). Throws InputError{source, location, "unknown GPU 'x'; did
/// you mean 'y'?"}; `source`/`location` say where the name was read (defaults: "command line").
const GpuSpec& gpu_by_name(const std::string& name, const std::string& source = "command line",
                           const std::string& location = "");
/// The entry called `name`, or nullptr.
const GpuSpec* gpu_by_name_or_null(const std::string& name);
/// The CPU host entry used for the host CPUs of every node ("CPU-host").
const GpuSpec& cpu_host();

}  // namespace trainsim::platforms
