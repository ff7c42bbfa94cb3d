#pragma once
// The CPU of the machine trainsim runs on, as a CPU object (cpu_catalog.hpp, read_cpu_object): what
// `trainsim platform info --this-cpu` prints. Read from Linux's /proc/cpuinfo, /proc/meminfo and
// /sys/devices/system/cpu (the files lscpu reads); no instruction is executed to probe the CPU.
//
//   sockets, cores, threads   distinct "physical id"s; "cpu cores"; "siblings" ÷ "cpu cores"
//                             (sysfs topology where cpuinfo lacks them, e.g. on Arm)
//   clock_GHz                 cpufreq base_frequency, else the "@ 2.10GHz" of the model name, else
//                             cpuinfo_max_freq, else "cpu MHz" (a VM's nominal clock)
//   fp32_flops_per_cycle      from the ISA flags: AVX-512 64 (two 512-bit FMA units; AMD Zen 4 runs
//                             it on two 256-bit pipes: 32), AVX2+FMA 32, SSE 8; Arm by core part
//   bf16_flops_per_cycle      AMX 1024, AVX512_BF16 or Arm BF16 twice fp32, else 0
//   l2_KiB                    sysfs cache index of level 2, divided among the cores sharing it
//   memory_GBps               NOT knowable from these files (DIMM speed and populated channels need
//                             root and dmidecode; a VM's share of its host's channels is nowhere):
//                             the generation's channels × MT/s where the CPU model is known, else
//                             8 channels of DDR4-3200; noted so that the user measures and sets it
//   memory_GiB                MemTotal ÷ sockets
#include <string>
#include <vector>

#include "trainsim/platforms/cpu_catalog.hpp"

namespace trainsim::platforms {

/// A CPU read from the machine, and what had to be assumed.
struct DetectedCpu {
  CpuPlatformSpec platform;
  std::vector<std::string> assumptions;  ///< one sentence per field that could not be read
};

/// Reads the CPU of the machine whose /proc and /sys lie under `root` ("/" for this one; tests pass a
/// copied tree). Throws InputError naming the file when /proc/cpuinfo is missing or has no processor.
DetectedCpu detect_this_cpu(const std::string& root = "/");

}  // namespace trainsim::platforms
