// The CPU catalog and CPU platforms: peak figures from the datasheet arithmetic, presets, reading.
#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim_test/errors.hpp"

using namespace trainsim;
using namespace trainsim::platforms;

namespace {

JsonNode node_of(const Json& j) { return json_root(std::make_shared<const Json>(j), "cpu.json"); }

TEST(CpuCatalog, PeakIsClockTimesLanesTimesFmaUnits) {
  // Skylake-SP: 16 fp32 lanes × 2 (FMA) × 2 units = 64 FLOP per cycle at 2.1 GHz.
  const CpuSpec& skx = *cpu_by_name_or_null("Xeon-Platinum-8160");
  EXPECT_DOUBLE_EQ(skx.fp32_flops_per_cycle(), 64);
  EXPECT_DOUBLE_EQ(skx.core_peak_flops(Precision::fp32), 2.1e9 * 64);
  // Six DDR4-2666 channels: 6 × 2666e6 × 8 bytes.
  EXPECT_DOUBLE_EQ(skx.memory_bandwidth_Bps, 6 * 2666e6 * 8);
  // Zen 2: two 256-bit FMA pipes, 32 FLOP per cycle.
  EXPECT_DOUBLE_EQ(cpu_by_name_or_null("EPYC-7742")->fp32_flops_per_cycle(), 32);
}

TEST(CpuCatalog, OnlyFp32AndBf16WhereTheCpuHasIt) {
  const CpuSpec& skx = *cpu_by_name_or_null("Xeon-Platinum-8160");
  EXPECT_TRUE(skx.supports(Precision::fp32));
  EXPECT_FALSE(skx.supports(Precision::bf16));
  EXPECT_FALSE(skx.supports(Precision::tf32));
  EXPECT_FALSE(skx.supports(Precision::fp16));
  EXPECT_EQ(skx.core_peak_flops(Precision::fp16), 0);
  const CpuSpec& genoa = *cpu_by_name_or_null("EPYC-9654");
  EXPECT_TRUE(genoa.supports(Precision::bf16));
  EXPECT_DOUBLE_EQ(genoa.core_peak_flops(Precision::bf16), 2 * genoa.core_peak_flops(Precision::fp32));
}

TEST(CpuCatalog, EveryEntryHasASourceAndEveryPresetACpu) {
  for (const auto& c : cpu_catalog()) {
    EXPECT_FALSE(c.source.empty()) << c.name;
    EXPECT_GT(c.cores, 0) << c.name;
  }
  for (const auto& p : cpu_presets()) {
    EXPECT_EQ(p.name.rfind("cpu-", 0), 0u) << p.name;
    EXPECT_GT(p.platform.physical_cores(), 0) << p.name;
  }
}

TEST(CpuPlatform, PresetAndOverrides) {
  const auto spec = read_cpu_platform(node_of(Json{{"preset", "cpu-2s-xeon-8160"}}));
  EXPECT_EQ(spec.physical_cores(), 48);
  EXPECT_EQ(spec.logical_cores(), 96);
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth_Bps(), 2 * 6 * 2666e6 * 8);
  const auto one = read_cpu_platform(node_of(Json{{"device", "cpu"}, {"cpu", "Xeon-Platinum-8380"}, {"sockets", 1}}));
  EXPECT_EQ(one.physical_cores(), 40);
  EXPECT_TRUE(is_cpu_platform(node_of(Json{{"device", "cpu"}, {"cpu", "EPYC-7742"}})));
  EXPECT_FALSE(is_cpu_platform(node_of(Json{{"preset", "dgx-a100"}})));
}

TEST(CpuPlatform, BadInputNamesThePointer) {
  auto error_of = [](const Json& j) {
    return std::string(trainsim_test::error_of([&] { read_cpu_platform(node_of(j)); }).what());
  };
  EXPECT_NE(error_of(Json{{"device", "cpu"}, {"cpu", "Xeon-Platinum-8161"}}).find("/cpu: unknown CPU 'Xeon-Platinum-8161'; did you mean"),
            std::string::npos);
  EXPECT_NE(error_of(Json{{"device", "cpu"}}).find("needs 'cpu'"), std::string::npos);
  EXPECT_NE(error_of(Json{{"preset", "cpu-2s-xeon-8160"}, {"nodes", 2}}).find("/nodes: CPU platforms simulate one node"), std::string::npos);
  EXPECT_NE(error_of(Json{{"preset", "cpu-2s-xeon-8160"}, {"sockets", 9}}).find("/sockets: must be ≤ 8"), std::string::npos);
  EXPECT_NE(error_of(Json{{"preset", "cpu-2s-xeon-8160"}, {"gpus_per_node", 8}}).find("gpus_per_node"), std::string::npos);
}

Json good_cpu_object() {
  return Json{{"sockets", 2},     {"cores_per_socket", 16},     {"threads_per_core", 2},
              {"clock_GHz", 2.5}, {"fp32_flops_per_cycle", 64}, {"memory_GBps", 300},
              {"l2_KiB", 2048}};
}

TEST(CpuObject, DescribesACpuWhereverACatalogNameGoes) {
  Json cpu = good_cpu_object();
  cpu["bf16_flops_per_cycle"] = 1024;
  cpu["memory_GiB"] = 256;
  const auto spec = read_cpu_platform(node_of(Json{{"device", "cpu"}, {"cpu", cpu}}));
  EXPECT_EQ(spec.sockets, 2);
  EXPECT_EQ(spec.physical_cores(), 32);
  EXPECT_EQ(spec.logical_cores(), 64);
  EXPECT_DOUBLE_EQ(spec.cpu.core_peak_flops(Precision::fp32), 2.5e9 * 64);
  EXPECT_DOUBLE_EQ(spec.cpu.core_peak_flops(Precision::bf16), 2.5e9 * 1024);
  EXPECT_DOUBLE_EQ(spec.memory_bandwidth_Bps(), 2 * 300e9);
  EXPECT_DOUBLE_EQ(spec.cpu.l2_bytes, 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(spec.cpu.socket_memory_bytes(), 256 * kGiB);
  EXPECT_TRUE(spec.cpu.described);
  // Also over a preset (the object replaces its CPU), and without bf16: fp32 only.
  const auto over = read_cpu_platform(node_of(Json{{"preset", "cpu-2s-xeon-8160"}, {"cpu", good_cpu_object()}}));
  EXPECT_EQ(over.physical_cores(), 32);
  EXPECT_FALSE(over.cpu.supports(Precision::bf16));
  EXPECT_DOUBLE_EQ(over.cpu.socket_memory_bytes(), 0);  // unknown: no memory check
  // cpu_object_json writes what read_cpu_object reads.
  const auto again = read_cpu_object(node_of(cpu_object_json(spec)));
  EXPECT_EQ(cpu_object_json(again), cpu_object_json(spec));
}

TEST(CpuObject, MissingZeroOrAbsurdFieldsNameTheirPointer) {
  auto error_of = [](const Json& cpu) {
    try {
      read_cpu_platform(node_of(Json{{"device", "cpu"}, {"cpu", cpu}}));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Json missing = good_cpu_object();
  missing.erase("clock_GHz");
  EXPECT_NE(error_of(missing).find("/cpu: missing required key 'clock_GHz'"), std::string::npos) << error_of(missing);
  Json zero = good_cpu_object();
  zero["cores_per_socket"] = 0;
  EXPECT_NE(error_of(zero).find("/cpu/cores_per_socket: must be an integer in [1, 1024]"), std::string::npos)
      << error_of(zero);
  Json absurd = good_cpu_object();
  absurd["clock_GHz"] = 2500;  // MHz typed as GHz
  EXPECT_NE(error_of(absurd).find("/cpu/clock_GHz: must be in [0.2, 10]"), std::string::npos) << error_of(absurd);
  Json flops = good_cpu_object();
  flops["fp32_flops_per_cycle"] = 0;
  EXPECT_NE(error_of(flops).find("/cpu/fp32_flops_per_cycle: must be in [1, 1024]"), std::string::npos);
  Json typo = good_cpu_object();
  typo["l2_kib"] = 1;
  EXPECT_NE(error_of(typo).find("l2_KiB"), std::string::npos) << error_of(typo);
  Json fractional = good_cpu_object();
  fractional["sockets"] = 1.5;
  EXPECT_NE(error_of(fractional).find("/cpu/sockets: must be an integer"), std::string::npos);
  // Sockets are the object's: giving them beside it as well is an error at the platform's.
  try {
    read_cpu_platform(node_of(Json{{"device", "cpu"}, {"cpu", good_cpu_object()}, {"sockets", 1}}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/sockets: a CPU object gives its own 'sockets'"), std::string::npos)
        << e.what();
  }
}

TEST(CpuCatalog, NewGenerationsWithSources) {
  for (const char* name :
       {"Xeon-Platinum-8480+", "Xeon-Platinum-8592+", "Xeon-6980P", "EPYC-9654", "EPYC-9755", "Grace"}) {
    const CpuSpec* c = cpu_by_name_or_null(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_FALSE(c->source.empty());
  }
  // AMX: 1024 bf16 FLOP per cycle per core; Zen 5: full-width AVX-512, 64 fp32; Grace: 4 × 128-bit SVE2, 32.
  EXPECT_DOUBLE_EQ(cpu_by_name_or_null("Xeon-Platinum-8592+")->bf16_flops_per_cycle(), 1024);
  EXPECT_DOUBLE_EQ(cpu_by_name_or_null("EPYC-9755")->fp32_flops_per_cycle(), 64);
  EXPECT_DOUBLE_EQ(cpu_by_name_or_null("Grace")->fp32_flops_per_cycle(), 32);
  EXPECT_NEAR(cpu_by_name_or_null("Grace")->memory_bandwidth_Bps, 500e9, 1e9);
  EXPECT_NE(cpu_preset_or_null("cpu-grace-superchip"), nullptr);
}

}  // namespace
