// `platform info --this-cpu`: the CPU object read from /proc and /sys, on copies of those files (an
// Emerald Rapids VM like the one trainsim is developed on, a two-socket SMT Xeon, an Arm Grace) and
// on this machine's own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "trainsim/core/error.hpp"
#include "trainsim/platforms/this_cpu.hpp"
#include "trainsim_test/files.hpp"

using namespace trainsim;
using namespace trainsim::platforms;

namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// /proc/cpuinfo of `logical` processors, `cores` per socket, `sockets` sockets.
std::string x86_cpuinfo(int sockets, int cores, int smt, const std::string& model_name, int model,
                        const std::string& flags, const std::string& mhz) {
  std::string out;
  for (int i = 0; i < sockets * cores * smt; ++i)
    out += "processor\t: " + std::to_string(i) +
           "\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: " + std::to_string(model) +
           "\nmodel name\t: " + model_name + "\ncpu MHz\t\t: " + mhz +
           "\nphysical id\t: " + std::to_string(i / (cores * smt)) + "\nsiblings\t: " + std::to_string(cores * smt) +
           "\ncpu cores\t: " + std::to_string(cores) + "\nflags\t\t: " + flags + "\n\n";
  return out;
}

void l2(const std::string& root, const std::string& size, const std::string& shared) {
  const std::string dir = root + "/sys/devices/system/cpu/cpu0/cache/index2/";
  write(dir + "level", "2\n");
  write(dir + "size", size + "\n");
  write(dir + "shared_cpu_list", shared + "\n");
}

TEST(ThisCpu, EmeraldRapidsVm) {
  const std::string root = trainsim_test::make_temp_dir("this-cpu-emr");
  write(root + "/proc/cpuinfo",
        x86_cpuinfo(1, 2, 1, "Intel(R) Xeon(R) Processor", 207,
                    "fpu avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile hypervisor", "2100.000"));
  write(root + "/proc/meminfo", "MemTotal:       24731708 kB\nMemFree:  1 kB\n");
  l2(root, "2048K", "0");
  const DetectedCpu d = detect_this_cpu(root);
  EXPECT_EQ(d.platform.sockets, 1);
  EXPECT_EQ(d.platform.cpu.cores, 2);
  EXPECT_EQ(d.platform.cpu.smt, 1);
  EXPECT_DOUBLE_EQ(d.platform.cpu.clock_Hz, 2.1e9);
  EXPECT_DOUBLE_EQ(d.platform.cpu.fp32_flops_per_cycle(), 64);
  EXPECT_DOUBLE_EQ(d.platform.cpu.bf16_flops_per_cycle(), 1024);
  EXPECT_DOUBLE_EQ(d.platform.cpu.l2_bytes, 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(d.platform.cpu.memory_bandwidth_Bps, 8 * 5600e6 * 8);  // assumed: the generation's channels
  EXPECT_NEAR(d.platform.cpu.socket_memory_bytes(), 24731708.0 * 1024, 1);
  ASSERT_FALSE(d.assumptions.empty());
  EXPECT_NE(d.assumptions.back().find("memory_GBps"), std::string::npos);
  EXPECT_NE(d.assumptions.back().find("virtual machine"), std::string::npos);
  // The object reads back as a platform.cpu.
  const auto again = read_cpu_object(json_root(std::make_shared<const Json>(cpu_object_json(d.platform)), "this"));
  EXPECT_EQ(again.physical_cores(), 2);
}

TEST(ThisCpu, TwoSocketsWithHyperThreadsAndAClockInTheName) {
  const std::string root = trainsim_test::make_temp_dir("this-cpu-skx");
  write(root + "/proc/cpuinfo",
        x86_cpuinfo(2, 4, 2, "Intel(R) Xeon(R) Platinum 8160 CPU @ 2.10GHz", 85, "fpu avx2 fma avx512f", "3000.000"));
  l2(root, "1024K", "0,8");  // shared by the core's two hardware threads
  const DetectedCpu d = detect_this_cpu(root);
  EXPECT_EQ(d.platform.sockets, 2);
  EXPECT_EQ(d.platform.cpu.cores, 4);
  EXPECT_EQ(d.platform.cpu.smt, 2);
  EXPECT_DOUBLE_EQ(d.platform.cpu.clock_Hz, 2.1e9);  // the name's base clock, not the current MHz
  EXPECT_DOUBLE_EQ(d.platform.cpu.bf16_flops_per_cycle(), 0);
  EXPECT_DOUBLE_EQ(d.platform.cpu.l2_bytes, 1024.0 * 1024);
  EXPECT_DOUBLE_EQ(d.platform.cpu.memory_bandwidth_Bps, 6 * 2666e6 * 8);
}

TEST(ThisCpu, ArmTopologyFromSysfs) {
  const std::string root = trainsim_test::make_temp_dir("this-cpu-arm");
  std::string info;
  for (int i = 0; i < 4; ++i)
    info += "processor\t: " + std::to_string(i) +
            "\nFeatures\t: fp asimd sve sve2 bf16\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n\n";
  write(root + "/proc/cpuinfo", info);
  for (int i = 0; i < 4; ++i) {
    write(root + "/sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/physical_package_id", "0\n");
    write(root + "/sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/thread_siblings_list",
          std::to_string(i) + "\n");
  }
  write(root + "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3438000\n");
  l2(root, "1024K", "0");
  const DetectedCpu d = detect_this_cpu(root);
  EXPECT_EQ(d.platform.sockets, 1);
  EXPECT_EQ(d.platform.cpu.cores, 4);
  EXPECT_EQ(d.platform.cpu.smt, 1);
  EXPECT_DOUBLE_EQ(d.platform.cpu.fp32_flops_per_cycle(), 32);  // Neoverse V2
  EXPECT_DOUBLE_EQ(d.platform.cpu.bf16_flops_per_cycle(), 64);
  EXPECT_NEAR(d.platform.cpu.clock_Hz, 3.438e9, 1e6);
}

TEST(ThisCpu, MissingCpuinfoIsAnInputErrorNamingIt) {
  const std::string root = trainsim_test::make_temp_dir("this-cpu-none");
  try {
    detect_this_cpu(root);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("proc/cpuinfo"), std::string::npos) << e.what();
  }
}

TEST(ThisCpu, ThisMachine) {
  // Linux everywhere trainsim is built (here and in CI): a sane object, whatever the CPU.
  const DetectedCpu d = detect_this_cpu("/");
  EXPECT_GE(d.platform.physical_cores(), 1);
  EXPECT_GE(d.platform.cpu.fp32_flops_per_cycle(), 1);
  EXPECT_GT(d.platform.cpu.clock_Hz, 1e8);
  EXPECT_NO_THROW(read_cpu_object(json_root(std::make_shared<const Json>(cpu_object_json(d.platform)), "this")));
}

}  // namespace
