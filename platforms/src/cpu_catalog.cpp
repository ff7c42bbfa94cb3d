#include "trainsim/platforms/cpu_catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::platforms {

double CpuSpec::fp32_flops_per_cycle() const { return vector_bits / 32.0 * 2.0 * fma_units; }

bool CpuSpec::supports(Precision p) const { return p == Precision::fp32 || (p == Precision::bf16 && bf16); }

double CpuSpec::core_peak_flops(Precision p) const {
  if (!supports(p)) return 0;
  // AVX512_BF16's VDPBF16PS does two bf16 multiply-adds per fp32 lane: twice the fp32 rate.
  return clock_Hz * fp32_flops_per_cycle() * (p == Precision::bf16 ? 2.0 : 1.0);
}

std::string CpuSpec::supported_precisions() const { return bf16 ? "fp32, bf16" : "fp32"; }

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
  add("EPYC-7742", 64, 2, 2.25, 256, 2, false, 8, 3200, 512,
      "AMD EPYC 7742 product page (Zen 2, 2019): 64 cores, 128 threads, 2.25 GHz base, AVX2 with two 256-bit FMA "
      "pipes, 8 channels DDR4-3200, 512 KiB L2 per core");
  add("EPYC-9654", 96, 2, 2.4, 256, 2, true, 12, 4800, 1024,
      "AMD EPYC 9654 product page (Zen 4, 2022): 96 cores, 192 threads, 2.4 GHz base, AVX-512 (with BF16) on two "
      "256-bit FMA pipes, 12 channels DDR5-4800, 1 MiB L2 per core");
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
  if (auto c = node.find("cpu")) {
    const CpuSpec* cpu = cpu_by_name_or_null(c->as_string());
    if (!cpu) throw c->error(unknown_name_message("CPU", c->as_string(), cpu_names()));
    spec.cpu = *cpu;
    spec.preset.clear();
    have_cpu = true;
  }
  if (!have_cpu) throw node.error("a CPU platform needs 'cpu' (one of " + fmt::format("{}", fmt::join(cpu_names(), ", ")) + ") or a CPU 'preset'");
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
