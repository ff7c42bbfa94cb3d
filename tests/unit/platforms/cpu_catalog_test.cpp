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

}  // namespace
