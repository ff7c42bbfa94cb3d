#pragma once
// Server CPUs for CPU training and inference (Wang et al., TACO 2021), and CPU-only platforms: one
// node of one or more identical sockets. Pure data, no SimGrid.
//
//   socket 0: cores 0 … c−1 ──┐                        socket 1: cores c … 2c−1 ──┐
//     (SMT: smt threads each) ├─ memory channels        (SMT: smt threads each)  ├─ memory channels
//                             └─ memory_bandwidth_Bps                            └─ memory_bandwidth_Bps
#include <optional>
#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"

namespace trainsim::platforms {

/// One CPU model (one socket). Peak FLOP/s per core = clock × vector lanes × 2 (FMA) × FMA units.
struct CpuSpec {
  std::string name;              ///< catalog key, e.g. "Xeon-Platinum-8160"
  int cores = 0;                 ///< physical cores per socket
  int smt = 1;                   ///< hardware threads per core
  double clock_Hz = 0;           ///< base clock (the all-core AVX clock is lower; calibration absorbs it)
  int vector_bits = 0;           ///< widest SIMD width the FMA units execute natively (256 or 512)
  int fma_units = 0;             ///< FMA pipes per core at that width
  bool bf16 = false;             ///< has bf16 dot-product instructions (AVX512_BF16), at twice the fp32 rate
  int memory_channels = 0;       ///< per socket
  double memory_MTps = 0;        ///< transfers per second of one channel, in millions (DDR4-2666 → 2666)
  double memory_bandwidth_Bps = 0;  ///< per socket: channels × MT/s × 8 bytes
  double l2_bytes = 0;           ///< private L2 cache of one core (its hardware threads share it)
  std::string source;            ///< where the figures come from
  /// fp32 FLOP per cycle of one core as given by a CPU object (`fp32_flops_per_cycle`); 0 = derived
  /// from vector_bits and fma_units (the catalog).
  double fp32_per_cycle = 0;
  /// bf16 FLOP per cycle of one core (AMX tiles or AVX512_BF16); 0 = twice fp32 when `bf16`.
  double bf16_per_cycle = 0;
  /// Memory of one socket in bytes; 0 = one 64 GiB DIMM per memory channel (the catalog's
  /// assumption; a CPU object without `memory_GiB` and channels gets no memory check).
  double memory_bytes = 0;
  /// Described by the user (a `platform.cpu` object), not a catalog entry.
  bool described = false;

  /// fp32 FLOP per cycle of one core: fp32_per_cycle, else vector_bits / 32 lanes × 2 × fma_units.
  double fp32_flops_per_cycle() const;
  /// bf16 FLOP per cycle of one core; 0 when the CPU has no bf16.
  double bf16_flops_per_cycle() const;
  /// The node memory the memory check assumes per socket (see memory_bytes); 0 = unknown.
  double socket_memory_bytes() const;
  /// Peak FLOP/s of one core at precision p; 0 when the CPU cannot run p (see supports()).
  double core_peak_flops(Precision p) const;
  /// fp32 always, bf16 when the CPU has it; tf32 and fp16 are GPU-only formats here.
  bool supports(Precision p) const;
  /// The precisions supports() accepts, comma-separated ("fp32, bf16").
  std::string supported_precisions() const;
};

/// Every CPU model, in a fixed order (Intel by generation, then AMD).
const std::vector<CpuSpec>& cpu_catalog();
std::vector<std::string> cpu_names();
/// The entry called `name`, or nullptr.
const CpuSpec* cpu_by_name_or_null(const std::string& name);

/// A CPU-only platform: one node of `sockets` identical CPUs.
struct CpuPlatformSpec {
  std::string preset;        ///< the preset it came from; empty when described in full
  CpuSpec cpu;
  int sockets = 1;
  int nodes = 1;             ///< only 1 is simulated (CPU data parallelism is not modelled)

  int physical_cores() const { return sockets * cpu.cores; }
  int logical_cores() const { return sockets * cpu.cores * cpu.smt; }
  double memory_bandwidth_Bps() const { return sockets * cpu.memory_bandwidth_Bps; }
  /// "2 × Xeon-Platinum-8160 (48 cores, 96 threads)".
  std::string describe() const;
};

/// CPU-only presets: name, description, the platform.
struct CpuPreset {
  std::string name;
  std::string description;
  CpuPlatformSpec platform;
};
const std::vector<CpuPreset>& cpu_presets();
const CpuPreset* cpu_preset_or_null(const std::string& name);

/// Whether a scenario's `platform` object describes a CPU platform: `"device": "cpu"`, or a
/// `preset` naming a CPU preset.
bool is_cpu_platform(const JsonNode& platform);

/// Reads a CPU `platform` object: `preset` and/or `device: "cpu"`, `cpu` (a catalog name or a CPU
/// object, see read_cpu_object), `sockets` (1–8), `nodes` (must be 1). Throws InputError at the
/// offending pointer (unknown CPU or preset with a suggestion, unknown key, out-of-range numbers).
CpuPlatformSpec read_cpu_platform(const JsonNode& platform);

/// Reads a CPU object (`platform.cpu` as an object; what `trainsim platform info --this-cpu`
/// prints): required `sockets` (1–8), `cores_per_socket` (1–1024), `threads_per_core` (1–8),
/// `clock_GHz` (0.2–10), `fp32_flops_per_cycle` per core (1–1024), `memory_GBps` per socket
/// (0.1–10000), `l2_KiB` per core (0–1048576); optional `bf16_flops_per_cycle` (0 or 1–16384; 0 = no
/// bf16), `memory_GiB` per socket, `name`, `source`. Missing, zero or absurd fields are InputError at
/// their pointer, with the range and why.
CpuPlatformSpec read_cpu_object(const JsonNode& cpu);

/// The CPU object of a platform, as read_cpu_object reads it (sockets from the platform).
Json cpu_object_json(const CpuPlatformSpec& platform);

}  // namespace trainsim::platforms
