#pragma once
// The catalog of processors trainsim knows: GPUs (and one CPU host) with their public peak figures.
// Pure data, no SimGrid.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
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
  double l2_bytes = 0;             ///< last-level on-chip cache, bytes (0 = not given)
  bool is_cpu = false;             ///< true for the CPU host entry
  std::string source;              ///< where the figures come from
  /// The spread (σ/μ) of a busy device's clock under GPU Boost, which sets each GPU's clock between
  /// its base and boost clocks by its own power and thermal headroom: (boost − base)/√12 over the
  /// boost clock, a clock spread uniformly over that range, where a board's power limit makes
  /// training use it (the K80's two dies); 0 elsewhere.
  double clock_spread = 0;

  /// Peak FLOP/s at precision `p` (> 0 for every catalog entry; 0 for a precision a GPU given as
  /// an object does not list).
  double peak_flops(Precision p) const;
  /// True when the GPU computes in `p` (a rate for it is known).
  bool supports(Precision p) const { return peak_flops(p) > 0; }
  /// The precisions it computes in, "fp32, tf32, bf16".
  std::string supported_precisions() const;
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
/// A GPU as a scenario or platform file gives it: a catalog name, or an object describing a part
/// the catalog lacks: {"name", "fp32_TFLOPS", "tf32_TFLOPS"?, "fp16_TFLOPS"?, "bf16_TFLOPS"?,
/// "memory_GB", "memory_bandwidth_GBps", "sms", "l2_MB"?, "source"?} (dense peaks; a precision
/// left out is one the GPU lacks). Throws InputError at the node (unknown name with a suggestion;
/// missing, zero or negative fields).
GpuSpec read_gpu(const JsonNode& node);
/// The GPU as JSON in the object form read_gpu accepts (a catalog entry as its name).
Json gpu_json(const GpuSpec& gpu);

/// The CPU host entry used for the host CPUs of every node ("CPU-host").
const GpuSpec& cpu_host();

}  // namespace trainsim::platforms
