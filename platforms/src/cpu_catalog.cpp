#include "trainsim/platforms/cpu_catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::platforms {

double CpuSpec::fp32_flops_per_cycle() const {
  return fp32_per_cycle > 0 ? fp32_per_cycle : vector_bits / 32.0 * 2.0 * fma_units;
}

double CpuSpec::bf16_flops_per_cycle() const {
  if (bf16_per_cycle > 0) return bf16_per_cycle;
  // AVX512_BF16's VDPBF16PS does two bf16 multiply-adds per fp32 lane: twice the fp32 rate.
  return bf16 ? 2.0 * fp32_flops_per_cycle() : 0.0;
}

double CpuSpec::socket_memory_bytes() const {
  return memory_bytes > 0 ? memory_bytes : memory_channels * 64.0 * kGiB;
}

bool CpuSpec::supports(Precision p) const {
  return p == Precision::fp32 || (p == Precision::bf16 && bf16_flops_per_cycle() > 0);
}

double CpuSpec::core_peak_flops(Precision p) const {
  if (!supports(p)) return 0;
  return clock_Hz * (p == Precision::bf16 ? bf16_flops_per_cycle() : fp32_flops_per_cycle());
}

std::string CpuSpec::supported_precisions() const {
  return supports(Precision::bf16) ? "fp32, bf16" : "fp32";
}

std::string CpuPlatformSpec::describe() const {
  return fmt::format("{} × {} ({} cores, {} threads)", sockets, cpu.name, physical_cores(), logical_cores());
}

namespace {

constexpr double GHz = 1e9;

std::vector<CpuSpec> make_catalog() {
  std::vector<CpuSpec> c;
  // Memory bandwidth per socket = channels × MT/s × 8 bytes (a 64-bit DDR channel).
  auto add = [&c](std::string name, int cores, int smt, double ghz, int vector_bits, int fma_units, bool bf16, int channels,
                  double mtps, double l2_KiB, std::string source) {
    c.push_back(CpuSpec{std::move(name), cores, smt, ghz * GHz, vector_bits, fma_units, bf16, channels, mtps,
                        channels * mtps * 1e6 * 8, l2_KiB * 1024, std::move(source)});
  };
  add("Xeon-Gold-6148", 20, 2, 2.4, 512, 2, false, 6, 2666, 1024,
      "Intel ARK 120489 (Skylake-SP, 2017): 20 cores, 40 threads, 2.4 GHz base, AVX-512 with 2 FMA units, "
      "6 channels DDR4-2666, 1 MiB L2 per core");
  add("Xeon-Platinum-8160", 24, 2, 2.1, 512, 2, false, 6, 2666, 1024,
      "Intel ARK 120501 (Skylake-SP, 2017): 24 cores, 48 threads, 2.1 GHz base, AVX-512 with 2 FMA units, "
      "6 channels DDR4-2666, 1 MiB L2 per core");
  add("Xeon-Platinum-8168", 24, 2, 2.7, 512, 2, false, 6, 2666, 1024,
      "Intel ARK 120504 (Skylake-SP, 2017; the DGX-1 host): 24 cores, 48 threads, 2.7 GHz base, AVX-512 with 2 FMA "
      "units, 6 channels DDR4-2666, 1 MiB L2 per core");
  add("Xeon-Platinum-8260", 24, 2, 2.4, 512, 2, false, 6, 2933, 1024,
      "Intel ARK 192474 (Cascade Lake, 2019): 24 cores, 48 threads, 2.4 GHz base, AVX-512 with 2 FMA units, "
      "6 channels DDR4-2933, 1 MiB L2 per core");
  add("Xeon-Platinum-8380", 40, 2, 2.3, 512, 2, false, 8, 3200, 1280,
      "Intel ARK 212287 (Ice Lake-SP, 2021): 40 cores, 80 threads, 2.3 GHz base, AVX-512 with 2 FMA units, "
      "8 channels DDR4-3200, 1.25 MiB L2 per core");
  // Sapphire, Emerald and Granite Rapids have AMX: tile matrix multiply at 1024 bf16 FLOP per cycle
  // per core (Intel, "Accelerate AI workloads with Intel AMX", 2023: 1,024 BF16 operations per
  // cycle per core against 64 FP32 with AVX-512), which oneDNN uses for bf16 convolutions and GEMMs.
  auto amx = [&c] { c.back().bf16_per_cycle = 1024; };
  add("Xeon-Platinum-8480+", 56, 2, 2.0, 512, 2, true, 8, 4800, 2048,
      "Intel ARK 231746 (Sapphire Rapids, 2023): 56 cores, 112 threads, 2.0 GHz base (3.8 GHz max turbo), AVX-512 "
      "with 2 FMA units, AMX (bf16 1024 FLOP/cycle/core), 8 channels DDR5-4800, 2 MiB L2 per core");
  amx();
  add("Xeon-Platinum-8592+", 64, 2, 1.9, 512, 2, true, 8, 5600, 2048,
      "Intel ARK 237263 (Emerald Rapids, 5th gen. Xeon Scalable, 2023): 64 cores, 128 threads, 1.9 GHz base (3.9 GHz "
      "max turbo), AVX-512 with 2 FMA units, AMX (bf16 1024 FLOP/cycle/core), 8 channels DDR5-5600, 2 MiB L2 per core");
  amx();
  add("Xeon-6980P", 128, 2, 2.0, 512, 2, true, 12, 6400, 2048,
      "Intel ARK 240777 (Granite Rapids-AP, Xeon 6, 2024): 128 cores, 256 threads, 2.0 GHz base (3.9 GHz max turbo), "
      "AVX-512 with 2 FMA units, AMX with FP16 (bf16 1024 FLOP/cycle/core), 12 channels DDR5-6400 (8800 with "
      "MRDIMMs), 2 MiB L2 per core");
  amx();
  add("EPYC-7742", 64, 2, 2.25, 256, 2, false, 8, 3200, 512,
      "AMD EPYC 7742 product page (Zen 2, 2019): 64 cores, 128 threads, 2.25 GHz base, AVX2 with two 256-bit FMA "
      "pipes, 8 channels DDR4-3200, 512 KiB L2 per core");
  add("EPYC-9654", 96, 2, 2.4, 256, 2, true, 12, 4800, 1024,
      "AMD EPYC 9654 product page (Zen 4, 2022): 96 cores, 192 threads, 2.4 GHz base, AVX-512 (with BF16) on two "
      "256-bit FMA pipes, 12 channels DDR5-4800, 1 MiB L2 per core");
  add("EPYC-9755", 128, 2, 2.7, 512, 2, true, 12, 6000, 1024,
      "AMD EPYC 9755 product page (Zen 5 'Turin', 2024): 128 cores, 256 threads, 2.7 GHz base, AVX-512 (with BF16) "
      "on a full 512-bit data path (two 512-bit FMA pipes), 12 channels DDR5-6000, 1 MiB L2 per core");
  // Grace is Arm: 4 × 128-bit SVE2 FMA pipes (vector_bits 128, fma_units 4) = 32 fp32 FLOP/cycle;
  // BFMMLA's bf16 matrix multiply-accumulate doubles it. NVIDIA quotes 7.1 TFLOP/s fp64 for the
  // 144-core superchip, which at 16 fp64 FLOP/cycle is 3.1 GHz; LPDDR5X at up to 1 TB/s for two
  // Grace CPUs is 500 GB/s for one, which is what a socket here is (32 × 16-bit channels at 8533
  // MT/s ≈ 546 GB/s raw: channels and MT/s are given so that channels × MT/s × 8 B ≈ 500 GB/s).
  add("Grace", 72, 1, 3.1, 128, 4, true, 16, 3906, 1024,
      "NVIDIA Grace CPU Superchip whitepaper and developer blog (2023): 72 Arm Neoverse V2 cores per Grace CPU, one "
      "thread each, 4 x 128-bit SVE2 pipes, 7.1 TFLOP/s fp64 for 144 cores (3.1 GHz), LPDDR5X up to 1 TB/s per "
      "superchip (500 GB/s per CPU), 1 MiB L2 per core");
  return c;
}

std::vector<CpuPreset> make_presets() {
  std::vector<CpuPreset> p;
  auto add = [&p](std::string name, std::string description, const std::string& cpu, int sockets) {
    CpuPlatformSpec spec;
    spec.preset = name;
    spec.cpu = *cpu_by_name_or_null(cpu);
    spec.sockets = sockets;
    p.push_back(CpuPreset{std::move(name), std::move(description), spec});
  };
  add("cpu-2s-xeon-8160", "two-socket Skylake-SP server, 2 × 24 cores (the class of machine Wang et al. measured on)",
      "Xeon-Platinum-8160", 2);
  add("cpu-1s-xeon-8160", "one socket of the same server, 24 cores", "Xeon-Platinum-8160", 1);
  add("cpu-2s-xeon-6148", "two-socket Skylake-SP server, 2 × 20 cores", "Xeon-Gold-6148", 2);
  add("cpu-2s-xeon-8260", "two-socket Cascade Lake server, 2 × 24 cores", "Xeon-Platinum-8260", 2);
  add("cpu-2s-xeon-8380", "two-socket Ice Lake server, 2 × 40 cores", "Xeon-Platinum-8380", 2);
  add("cpu-2s-epyc-7742", "two-socket AMD Rome server, 2 × 64 cores", "EPYC-7742", 2);
  add("cpu-2s-epyc-9654", "two-socket AMD Genoa server, 2 × 96 cores, bf16", "EPYC-9654", 2);
  add("cpu-2s-xeon-8480", "two-socket Sapphire Rapids server, 2 × 56 cores, AMX", "Xeon-Platinum-8480+", 2);
  add("cpu-2s-xeon-8592", "two-socket Emerald Rapids server, 2 × 64 cores, AMX", "Xeon-Platinum-8592+", 2);
  add("cpu-2s-xeon-6980p", "two-socket Granite Rapids server, 2 × 128 cores, AMX", "Xeon-6980P", 2);
  add("cpu-2s-epyc-9755", "two-socket AMD Turin server, 2 × 128 cores, bf16", "EPYC-9755", 2);
  add("cpu-grace-superchip", "NVIDIA Grace CPU Superchip, 2 × 72 Arm cores", "Grace", 2);
  return p;
}

}  // namespace

const std::vector<CpuSpec>& cpu_catalog() {
  static const std::vector<CpuSpec> catalog = make_catalog();
  return catalog;
}

std::vector<std::string> cpu_names() {
  std::vector<std::string> names;
  for (const auto& c : cpu_catalog()) names.push_back(c.name);
  return names;
}

const CpuSpec* cpu_by_name_or_null(const std::string& name) {
  for (const auto& c : cpu_catalog())
    if (c.name == name) return &c;
  return nullptr;
}

const std::vector<CpuPreset>& cpu_presets() {
  static const std::vector<CpuPreset> presets = make_presets();
  return presets;
}

const CpuPreset* cpu_preset_or_null(const std::string& name) {
  for (const auto& p : cpu_presets())
    if (p.name == name) return &p;
  return nullptr;
}

bool is_cpu_platform(const JsonNode& platform) {
  if (!platform.is_object()) return false;
  if (auto d = platform.find("device"); d && d->raw().is_string() && d->raw().get<std::string>() == "cpu") return true;
  if (auto p = platform.find("preset"); p && p->raw().is_string()) return cpu_preset_or_null(p->raw().get<std::string>()) != nullptr;
  return false;
}

namespace {

// A field of a CPU object: a number in [lo, hi]; a zero or a value outside says what was expected
// and why the bounds are what they are.
double cpu_field(const JsonNode& node, const char* key, double lo, double hi, const char* why) {
  const JsonNode v = node.at(key);
  const double x = v.as_number();
  if (!(x >= lo && x <= hi))
    throw v.error(fmt::format("must be in [{}, {}] ({}), got {}", lo, hi, why, v.raw().dump()));
  return x;
}

int cpu_count_field(const JsonNode& node, const char* key, int lo, int hi, const char* why) {
  const JsonNode v = node.at(key);
  const double x = v.as_number();
  if (!(x >= lo && x <= hi) || x != static_cast<double>(static_cast<int>(x)))
    throw v.error(fmt::format("must be an integer in [{}, {}] ({}), got {}", lo, hi, why, v.raw().dump()));
  return static_cast<int>(x);
}

}  // namespace

CpuPlatformSpec read_cpu_object(const JsonNode& node) {
  node.require_object();
  node.allow_only({"name", "source", "sockets", "cores_per_socket", "threads_per_core", "clock_GHz",
                   "fp32_flops_per_cycle", "bf16_flops_per_cycle", "memory_GBps", "memory_GiB", "l2_KiB"});
  CpuPlatformSpec spec;
  CpuSpec& c = spec.cpu;
  c.described = true;
  c.name = node.find("name") ? node.at("name").as_string() : std::string("described CPU");
  if (c.name.empty()) throw node.at("name").error("must not be empty");
  c.source = node.find("source") ? node.at("source").as_string() : std::string("described by the scenario");
  spec.sockets = cpu_count_field(node, "sockets", 1, 8, "the largest glueless multi-socket servers have 8");
  c.cores = cpu_count_field(node, "cores_per_socket", 1, 1024,
                            "physical cores of one socket; the largest parts have a few hundred");
  c.smt = cpu_count_field(node, "threads_per_core", 1, 8, "hardware threads per core: 1 or 2 on x86, up to 8 on POWER");
  c.clock_Hz = cpu_field(node, "clock_GHz", 0.2, 10, "the sustained clock of a busy core, in GHz") * 1e9;
  c.fp32_per_cycle =
      cpu_field(node, "fp32_flops_per_cycle", 1, 1024,
                "fp32 FLOP per cycle of one core: SIMD lanes × 2 (FMA) × FMA units, 64 for two AVX-512 FMA units");
  if (node.find("bf16_flops_per_cycle")) {
    const double bf16 = node.at("bf16_flops_per_cycle").as_number();
    if (bf16 != 0)
      c.bf16_per_cycle =
          cpu_field(node, "bf16_flops_per_cycle", 1, 16384,
                    "bf16 FLOP per cycle of one core, 0 for none: twice fp32 with AVX512_BF16, 1024 with AMX");
  }
  c.bf16 = c.bf16_per_cycle > 0;
  c.memory_bandwidth_Bps =
      cpu_field(node, "memory_GBps", 0.1, 10000, "the memory bandwidth of one socket in GB/s, e.g. STREAM triad") * 1e9;
  if (node.find("memory_GiB"))
    c.memory_bytes = cpu_field(node, "memory_GiB", 0.01, 1e6, "the memory of one socket in GiB") * kGiB;
  c.l2_bytes = cpu_field(node, "l2_KiB", 0, 1048576, "the L2 cache of one core in KiB (0 if it has none)") * 1024;
  return spec;
}

Json cpu_object_json(const CpuPlatformSpec& p) {
  const CpuSpec& c = p.cpu;
  Json j{{"name", c.name},
         {"sockets", p.sockets},
         {"cores_per_socket", c.cores},
         {"threads_per_core", c.smt},
         {"clock_GHz", c.clock_Hz / 1e9},
         {"fp32_flops_per_cycle", c.fp32_flops_per_cycle()},
         {"bf16_flops_per_cycle", c.bf16_flops_per_cycle()},
         {"memory_GBps", c.memory_bandwidth_Bps / 1e9},
         {"l2_KiB", c.l2_bytes / 1024}};
  if (c.socket_memory_bytes() > 0) j["memory_GiB"] = c.socket_memory_bytes() / kGiB;
  j["source"] = c.source;
  return j;
}

CpuPlatformSpec read_cpu_platform(const JsonNode& node) {
  node.require_object();
  node.allow_only({"preset", "device", "cpu", "sockets", "nodes"});
  CpuPlatformSpec spec;
  bool have_cpu = false;
  if (auto p = node.find("preset")) {
    std::vector<std::string> names;
    for (const auto& preset : cpu_presets()) names.push_back(preset.name);
    const CpuPreset* preset = cpu_preset_or_null(p->as_string());
    if (!preset) throw p->error(unknown_name_message("CPU preset", p->as_string(), names));
    spec = preset->platform;
    have_cpu = true;
  }
  if (auto d = node.find("device")) d->one_of({"cpu"});
  if (auto c = node.find("cpu"); c && c->is_object()) {
    if (auto s = node.find("sockets"))
      throw s->error("a CPU object gives its own 'sockets' (platform/cpu/sockets); give it once, there");
    spec = read_cpu_object(*c);
    have_cpu = true;
  } else if (c) {
    if (!c->is_string()) throw c->error("must be a catalog CPU name or a CPU object, got " + describe_json(c->raw()));
    const CpuSpec* cpu = cpu_by_name_or_null(c->as_string());
    if (!cpu) throw c->error(unknown_name_message("CPU", c->as_string(), cpu_names()));
    spec.cpu = *cpu;
    spec.preset.clear();
    have_cpu = true;
  }
  if (!have_cpu)
    throw node.error("a CPU platform needs 'cpu' (one of " + fmt::format("{}", fmt::join(cpu_names(), ", ")) +
                     ", or a CPU object: trainsim platform info --this-cpu prints this machine's) or a CPU 'preset'");
  if (auto s = node.find("sockets")) {
    const std::int64_t sockets = s->int_at_least(1);
    if (sockets > 8) throw s->error("must be ≤ 8 (the largest glueless multi-socket servers), got " + s->raw().dump());
    spec.sockets = static_cast<int>(sockets);
  }
  if (auto n = node.find("nodes")) {
    if (n->int_at_least(1) != 1) throw n->error("CPU platforms simulate one node (CPU data parallelism is not modelled), got " + n->raw().dump());
  }
  return spec;
}

}  // namespace trainsim::platforms
