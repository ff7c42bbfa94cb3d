#include "trainsim/platforms/this_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"

namespace trainsim::platforms {

namespace {

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

// A number from a one-line sysfs file, or < 0.
double read_number(const std::string& path) {
  std::string text;
  if (!read_text(path, text)) return -1;
  try {
    std::size_t used = 0;
    const double v = std::stod(trim(text), &used);
    return v;
  } catch (const std::exception&) {
    return -1;
  }
}

// Count of CPUs in a sysfs list ("0-3,8,10-11").
int count_cpu_list(const std::string& list) {
  int n = 0;
  std::stringstream in(trim(list));
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    try {
      if (dash == std::string::npos)
        n += 1;
      else
        n += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return n;
}

using Block = std::map<std::string, std::string>;  // one processor's "key : value" lines

std::vector<Block> parse_cpuinfo(const std::string& text) {
  std::vector<Block> blocks;
  Block current;
  std::stringstream in(text);
  std::string line;
  auto flush = [&] {
    if (current.count("processor")) blocks.push_back(current);
    current.clear();
  };
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (trim(line).empty()) {
      flush();
      continue;
    }
    if (colon == std::string::npos) continue;
    current[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }
  flush();
  return blocks;
}

std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::stringstream in(text);
  std::string w;
  while (in >> w) out.insert(w);
  return out;
}

int to_int(const Block& b, const std::string& key, int fallback) {
  const auto it = b.find(key);
  if (it == b.end()) return fallback;
  try {
    return std::stoi(it->second, nullptr, 0);
  } catch (const std::exception&) {
    return fallback;
  }
}

struct MemoryGuess {
  int channels;
  double mtps;
  const char* what;
};

// Per-socket memory of a known CPU generation (vendors' figures, as in the catalog).
MemoryGuess memory_of(const std::string& vendor, int family, int model) {
  if (vendor == "GenuineIntel" && family == 6) {
    switch (model) {
      case 85: return {6, 2666, "Skylake-SP / Cascade Lake: 6 channels DDR4-2666"};
      case 106: return {8, 3200, "Ice Lake-SP: 8 channels DDR4-3200"};
      case 143: return {8, 4800, "Sapphire Rapids: 8 channels DDR5-4800"};
      case 207: return {8, 5600, "Emerald Rapids: 8 channels DDR5-5600"};
      case 173: return {12, 6400, "Granite Rapids: 12 channels DDR5-6400"};
      default: break;
    }
  }
  if (vendor == "AuthenticAMD") {
    if (family == 0x17) return {8, 3200, "AMD Zen 2/Rome: 8 channels DDR4-3200"};
    if (family == 0x19 && model < 0x10) return {8, 3200, "AMD Zen 3/Milan: 8 channels DDR4-3200"};
    if (family == 0x19) return {12, 4800, "AMD Zen 4/Genoa: 12 channels DDR5-4800"};
    if (family == 0x1A) return {12, 6000, "AMD Zen 5/Turin: 12 channels DDR5-6000"};
  }
  return {8, 3200, "unknown generation: 8 channels DDR4-3200 assumed"};
}

// Sockets (physical ids in cpuinfo, else sysfs packages), hardware threads per core (cpuinfo's
// siblings / cpu cores, else sysfs thread siblings, else 1 assumed) and cores per socket.
void read_topology(const std::vector<Block>& blocks, const std::string& sys, CpuPlatformSpec& p,
                   std::vector<std::string>& assumptions) {
  const Block& b = blocks.front();
  const int logical = static_cast<int>(blocks.size());
  std::set<int> packages;
  for (const auto& blk : blocks) packages.insert(to_int(blk, "physical id", 0));
  if (!b.count("physical id")) {
    packages.clear();
    for (int i = 0; i < logical; ++i) {
      const double id = read_number(sys + fmt::format("cpu{}/topology/physical_package_id", i));
      packages.insert(id >= 0 ? static_cast<int>(id) : 0);
    }
  }
  p.sockets = std::max(1, static_cast<int>(packages.size()));
  int smt = 0;
  if (b.count("siblings") && b.count("cpu cores") && to_int(b, "cpu cores", 0) > 0)
    smt = to_int(b, "siblings", 0) / to_int(b, "cpu cores", 1);
  if (smt <= 0) {
    std::string list;
    if (read_text(sys + "cpu0/topology/thread_siblings_list", list)) smt = count_cpu_list(list);
  }
  if (smt <= 0) {
    smt = 1;
    assumptions.push_back("threads_per_core: neither cpuinfo nor sysfs topology says; 1 assumed");
  }
  p.cpu.smt = smt;
  p.cpu.cores = std::max(1, logical / p.sockets / smt);
}

// The model name (an Arm CPU's part number, else "this CPU") with its family and model.
std::string cpu_name(const Block& b, int family, int model) {
  std::string name = b.count("model name") ? b.at("model name") : std::string();
  if (name.empty() && b.count("CPU part")) name = "Arm CPU part " + b.at("CPU part");
  if (name.empty()) name = "this CPU";
  if (family >= 0 && model >= 0) name += fmt::format(" (family {} model {})", family, model);
  return name;
}

// The clock in GHz, the base clock as the catalog's: cpufreq's base frequency, else the model
// name's "@ x GHz", else the turbo clock, else cpuinfo's cpu MHz, else 2.0 assumed. `from` says
// which.
double read_clock_GHz(const std::string& sys, const std::string& name, const Block& b, std::string& from,
                      std::vector<std::string>& assumptions) {
  double ghz = read_number(sys + "cpu0/cpufreq/base_frequency") / 1e6;  // kHz
  from = "cpufreq base_frequency";
  if (!(ghz > 0)) {
    if (const auto at = name.find('@'); at != std::string::npos) {
      try {
        ghz = std::stod(name.substr(at + 1));
        from = "the model name";
      } catch (const std::exception&) {
      }
    }
  }
  if (!(ghz > 0)) {
    ghz = read_number(sys + "cpu0/cpufreq/cpuinfo_max_freq") / 1e6;
    from = "cpufreq cpuinfo_max_freq (the turbo clock: a busy socket runs slower)";
  }
  if (!(ghz > 0) && b.count("cpu MHz")) {
    try {
      ghz = std::stod(b.at("cpu MHz")) / 1e3;
      from = "cpuinfo's 'cpu MHz' (under a hypervisor, its nominal clock)";
    } catch (const std::exception&) {
    }
  }
  if (!(ghz > 0)) {
    ghz = 2.0;
    from = "nothing: 2.0 GHz assumed";
    assumptions.push_back("clock_GHz: no cpufreq, model name clock or cpu MHz; 2.0 GHz assumed");
  }
  return ghz;
}

// FP32 operations per cycle and core, and the SIMD units they come from.
struct Simd {
  double fp32_per_cycle = 8;
  std::string what = "SSE: 4 lanes × 2 (add and multiply pipes)";
};

// The SIMD width and FMA units from the ISA flags (x86 flags, Arm Features).
Simd simd_of(const std::set<std::string>& flags, const std::string& vendor, int family, const Block& b) {
  Simd s;
  if (flags.count("avx512f")) {
    if (vendor == "AuthenticAMD" && family == 0x19) {
      s.fp32_per_cycle = 32;
      s.what = "AVX-512 on Zen 4's two 256-bit FMA pipes";
    } else {
      s.fp32_per_cycle = 64;
      s.what =
          "AVX-512, two 512-bit FMA units assumed (Xeon Platinum and later; some Skylake/Cascade Lake Silver and Gold "
          "5xxx have one)";
    }
  } else if (flags.count("avx2") && flags.count("fma")) {
    s.fp32_per_cycle = 32;
    s.what = "AVX2 with two 256-bit FMA units";
  } else if (flags.count("asimd") || flags.count("sve")) {
    const int part = to_int(b, "CPU part", 0);
    s.fp32_per_cycle = part == 0xd4f || part == 0xd40
                           ? 32
                           : 16;  // Neoverse V2 (4 × 128-bit), V1 (2 × 256-bit SVE); else 2 × 128-bit NEON
    s.what = part == 0xd4f   ? "Neoverse V2: 4 × 128-bit SVE2 pipes"
             : part == 0xd40 ? "Neoverse V1: 2 × 256-bit SVE pipes"
                             : "Arm NEON: 2 × 128-bit pipes assumed";
  }
  return s;
}

// A sysfs cache size ("2048K", "1M", "512") in bytes, or nullopt.
std::optional<double> cache_size_bytes(const std::string& text) {
  try {
    std::size_t used = 0;
    double bytes = std::stod(trim(text), &used);
    const std::string unit = trim(text).substr(used);
    bytes *= unit == "K" ? 1024 : unit == "M" ? 1024 * 1024 : 1;
    return bytes;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// CPU 0's level-2 cache per core (0 when sysfs lists none), for `smt` hardware threads per core.
double read_l2_per_core(const std::string& sys, int smt) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = sys + fmt::format("cpu0/cache/index{}/", index);
    if (read_number(dir + "level") != 2) continue;
    std::string size, shared;
    if (!read_text(dir + "size", size)) continue;
    const std::optional<double> bytes = cache_size_bytes(size);
    if (!bytes) continue;
    int sharers = read_text(dir + "shared_cpu_list", shared) ? count_cpu_list(shared) : smt;
    if (sharers <= 0) sharers = smt;
    // Per core: shared by the core's hardware threads, or by a cluster of cores.
    return *bytes * smt / std::max(smt, sharers);
  }
  return 0;
}

// /proc/meminfo's MemTotal in bytes, or nullopt.
std::optional<double> read_memory_total_bytes(const std::string& root) {
  std::string meminfo;
  if (!read_text(root + "proc/meminfo", meminfo)) return std::nullopt;
  std::stringstream in(meminfo);
  std::string key;
  double kb = 0;
  while (in >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

}  // namespace

DetectedCpu detect_this_cpu(const std::string& root_in) {
  const std::string root = root_in.empty() || root_in.back() == '/' ? root_in : root_in + "/";
  const std::string cpuinfo_path = root + "proc/cpuinfo";
  std::string text;
  if (!read_text(cpuinfo_path, text))
    throw InputError(cpuinfo_path, "", "cannot be read: --this-cpu reads Linux's /proc/cpuinfo");
  const std::vector<Block> blocks = parse_cpuinfo(text);
  if (blocks.empty()) throw InputError(cpuinfo_path, "", "lists no processor");
  const Block& b = blocks.front();
  DetectedCpu out;
  CpuPlatformSpec& p = out.platform;
  CpuSpec& c = p.cpu;
  c.described = true;
  const std::string sys = root + "sys/devices/system/cpu/";

  // Topology.
  const int logical = static_cast<int>(blocks.size());
  read_topology(blocks, sys, p, out.assumptions);
  const int smt = c.smt;

  // Identity.
  const std::string vendor = b.count("vendor_id") ? b.at("vendor_id") : std::string();
  const int family = to_int(b, "cpu family", -1);
  const int model = to_int(b, "model", -1);
  c.name = cpu_name(b, family, model);

  std::string clock_from;
  const double ghz = read_clock_GHz(sys, c.name, b, clock_from, out.assumptions);
  c.clock_Hz = std::round(ghz * 1000) / 1000 * 1e9;

  const std::set<std::string> flags = words(b.count("flags")      ? b.at("flags")
                                            : b.count("Features") ? b.at("Features")
                                                                  : "");
  const Simd simd = simd_of(flags, vendor, family, b);
  c.fp32_per_cycle = simd.fp32_per_cycle;
  if (flags.count("amx_bf16"))
    c.bf16_per_cycle = 1024;
  else if (flags.count("avx512_bf16") || flags.count("bf16"))
    c.bf16_per_cycle = 2 * simd.fp32_per_cycle;
  c.bf16 = c.bf16_per_cycle > 0;

  c.l2_bytes = read_l2_per_core(sys, smt);
  if (c.l2_bytes == 0) out.assumptions.push_back("l2_KiB: no level-2 cache in sysfs; 0");

  // Memory: bandwidth cannot be read; capacity can.
  const MemoryGuess mem = memory_of(vendor, family, model);
  c.memory_bandwidth_Bps = mem.channels * mem.mtps * 1e6 * 8;
  out.assumptions.push_back(
      fmt::format("memory_GBps: {:.1f} assumed per socket ({}; channels × MT/s × 8 B): DIMM speeds and populated "
                  "channels need root (dmidecode){}; measure it (STREAM triad) and set it",
                  c.memory_bandwidth_Bps / 1e9, mem.what,
                  flags.count("hypervisor") ? ", and this is a virtual machine that shares its host's channels" : ""));
  if (const auto total = read_memory_total_bytes(root)) c.memory_bytes = *total / p.sockets;
  c.source = fmt::format(
      "read from {} and sysfs by trainsim platform info --this-cpu: {} {} logical CPUs; clock from {}; {}{}",
      cpuinfo_path, logical, vendor.empty() ? "" : "(" + vendor + ")", clock_from, simd.what,
      flags.count("hypervisor") ? "; a virtual machine" : "");
  return out;
}

}  // namespace trainsim::platforms
