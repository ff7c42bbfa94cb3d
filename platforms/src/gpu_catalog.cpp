#include "trainsim/platforms/gpu_catalog.hpp"

#include <cmath>

#include "trainsim/core/error.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::platforms {

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::fp32: return fp32_flops;
    case Precision::tf32: return tf32_flops;
    case Precision::fp16: return fp16_flops;
    case Precision::bf16: return bf16_flops;
  }
  return fp32_flops;
}

namespace {

constexpr double T = 1e12;  // TFLOP/s
constexpr double GB = 1e9;  // decimal gigabytes (datasheet convention for memory bandwidth)
constexpr double GiB = kGiB;

// Devices without a tensor-core path for a precision carry their fastest applicable rate: tf32 on
// pre-Ampere parts runs as fp32, bf16 on pre-Ampere parts is emulated at the fp32 rate, fp16 on
// Kepler has no fast path (fp32 rate).
std::vector<GpuSpec> make_catalog() {
  std::vector<GpuSpec> c;
  auto add = [&c](std::string name, double fp32, double tf32, double fp16, double bf16, double mem_bytes, double mem_bw,
                  int sms, std::string source) {
    c.push_back(GpuSpec{std::move(name), fp32, tf32, fp16, bf16, mem_bytes, mem_bw, sms, 0, false, std::move(source)});
  };
  // SM counts: K80 13 SMX per GK210 die (Tesla K80 board: 2 × 13 = 26 SMX, 4992 CUDA cores of 192
  // per SMX); P100 56 (Tesla P100 whitepaper, 2016, both form factors); V100 80 (Tesla V100 GPU
  // architecture whitepaper, 2017, SXM2 and PCIe); T4 40 (Turing architecture whitepaper, 2018:
  // 2560 CUDA cores of 64 per SM); A100 108 (A100 Tensor Core GPU architecture whitepaper, 2020);
  // H100 SXM5 132, H100 PCIe 114 (H100 Tensor Core GPU architecture whitepaper, 2022); H200 132
  // (the H100 SXM5's GH100 configuration); B200 148 (two dies of 74 enabled SMs: Chips and Cheese,
  // "Nvidia's B200: Keeping the CUDA Juggernaut Rolling", 2025).
  add("K80", 4.37 * T, 4.37 * T, 4.37 * T, 4.37 * T, 12 * GiB, 240 * GB, 13,
      "NVIDIA Tesla K80 datasheet (2014): 8.73 TFLOP/s fp32 boost, 24 GB, 480 GB/s per board of two GK210 dies; "
      "one die listed");
  add("P100-PCIe-16GB", 9.3 * T, 9.3 * T, 18.7 * T, 9.3 * T, 16 * GiB, 732 * GB, 56,
      "NVIDIA Tesla P100 datasheet (2016), PCIe 16 GB");
  add("P100-SXM2-16GB", 10.6 * T, 10.6 * T, 21.2 * T, 10.6 * T, 16 * GiB, 732 * GB, 56,
      "NVIDIA Tesla P100 datasheet (2016), SXM2 (NVLink)");
  add("V100-PCIe-16GB", 14 * T, 14 * T, 112 * T, 14 * T, 16 * GiB, 900 * GB, 80,
      "NVIDIA Tesla V100 datasheet (2018), PCIe: 14 TFLOP/s fp32, 112 TFLOP/s fp16 tensor");
  add("V100-PCIe-32GB", 14 * T, 14 * T, 112 * T, 14 * T, 32 * GiB, 900 * GB, 80,
      "NVIDIA Tesla V100 datasheet (2018), PCIe 32 GB");
  add("V100-SXM2-16GB", 15.7 * T, 15.7 * T, 125 * T, 15.7 * T, 16 * GiB, 900 * GB, 80,
      "NVIDIA Tesla V100 datasheet (2018), SXM2: 15.7 TFLOP/s fp32, 125 TFLOP/s fp16 tensor");
  add("V100-SXM2-32GB", 15.7 * T, 15.7 * T, 125 * T, 15.7 * T, 32 * GiB, 900 * GB, 80,
      "NVIDIA Tesla V100 datasheet (2018), SXM2 32 GB");
  add("T4", 8.1 * T, 8.1 * T, 65 * T, 8.1 * T, 16 * GiB, 320 * GB, 40,
      "NVIDIA T4 datasheet (2019): 8.1 TFLOP/s fp32, 65 TFLOP/s fp16 tensor, 320 GB/s");
  add("A100-SXM4-40GB", 19.5 * T, 156 * T, 312 * T, 312 * T, 40 * GiB, 1555 * GB, 108,
      "NVIDIA A100 datasheet (2021), SXM4 40 GB: 19.5 fp32, 156 tf32, 312 fp16/bf16 TFLOP/s dense");
  add("A100-SXM4-80GB", 19.5 * T, 156 * T, 312 * T, 312 * T, 80 * GiB, 2039 * GB, 108,
      "NVIDIA A100 datasheet (2021), SXM4 80 GB: 2039 GB/s HBM2e");
  add("H100-SXM", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 80 * GiB, 3350 * GB, 132,
      "NVIDIA H100 datasheet (2023), SXM5: 67 fp32, 494.7 tf32, 989.4 fp16/bf16 TFLOP/s dense, 3.35 TB/s");
  add("H100-PCIe", 51 * T, 378 * T, 756 * T, 756 * T, 80 * GiB, 2000 * GB, 114,
      "NVIDIA H100 datasheet (2023), PCIe: 51 fp32, 378 tf32, 756 fp16/bf16 TFLOP/s dense, 2 TB/s");
  add("H200", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 141 * GB, 4800 * GB, 132,
      "NVIDIA H200 datasheet (2024), SXM: H100 compute, 141 GB HBM3e at 4.8 TB/s");
  // Blackwell datasheets give 8- or 72-GPU systems and tensor-core rates with 2:4 sparsity: per GPU
  // dense is the system's figure / GPUs / 2 (fp32 has no sparse rate).
  add("B200", 75 * T, 1125 * T, 2250 * T, 2250 * T, 180 * GB, 8000 * GB, 148,
      "NVIDIA HGX B200 datasheet (2024), 8 GPUs: 600 TFLOP/s fp32, 18 PFLOP/s tf32 and 36 fp16/bf16 with sparsity, "
      "1.4 TB HBM3e; per GPU dense: 75 fp32, 1125 tf32, 2250 fp16/bf16 TFLOP/s, 180 GB at 8 TB/s");
  // Blackwell Ultra: 160 SMs (NVIDIA technical blog "Inside NVIDIA Blackwell Ultra", 2025).
  add("B300", 75 * T, 1125 * T, 2250 * T, 2250 * T, 288 * GB, 8000 * GB, 160,
      "NVIDIA HGX B300 datasheet (2025), 8 GPUs: 600 TFLOP/s fp32, 18 PFLOP/s tf32 and 36 fp16/bf16 with sparsity, "
      "up to 2.3 TB HBM3e; per GPU dense: 75 fp32, 1125 tf32, 2250 fp16/bf16 TFLOP/s, 288 GB at 8 TB/s");
  add("GB200", 80 * T, 1250 * T, 2500 * T, 2500 * T, 186 * GB, 8000 * GB, 148,
      "NVIDIA GB200 NVL72 datasheet (2024), 72 GPUs: 5,760 TFLOP/s fp32, 180 PFLOP/s tf32 and 360 fp16/bf16 with "
      "sparsity, up to 13.4 TB HBM3e at 576 TB/s; per GPU dense: 80 fp32, 1250 tf32, 2500 fp16/bf16 TFLOP/s, 186 GB "
      "at 8 TB/s");
  add("MI300X", 163.4 * T, 653.7 * T, 1307.4 * T, 1307.4 * T, 192 * GB, 5300 * GB, 304,
      "AMD Instinct MI300X datasheet (2023) and ROCm's \"AMD Instinct MI300 series microarchitecture\" peak table: "
      "163.4 TFLOP/s fp32 (vector and matrix), 653.7 tf32, 1307.4 fp16/bf16 dense (matrix cores), 192 GB HBM3 at "
      "5.3 TB/s, 304 compute units (counted as SMs)");
  for (auto& g : c) {
    // L2 per device from the architecture whitepapers (V100 6 MB, A100 40 MB, H100 50 MB, B200 2 × 63 MB
    // (Chips and Cheese), MI300X: 256 MB Infinity Cache); 0 where not listed.
    if (g.name.rfind("V100", 0) == 0) g.l2_bytes = 6 * kMiB;
    if (g.name.rfind("A100", 0) == 0) g.l2_bytes = 40 * kMiB;
    if (g.name.rfind("H100", 0) == 0 || g.name == "H200") g.l2_bytes = 50 * kMiB;
    if (g.name == "B200" || g.name == "GB200" || g.name == "B300") g.l2_bytes = 126 * kMiB;
    if (g.name == "MI300X") g.l2_bytes = 256 * kMiB;
    // GPU Boost's clock range, base to boost, MHz, where a board's power limit makes training use it:
    // Tesla K80 board specification BD-07317-001 (562-875, two GK210 dies sharing 300 W, passively
    // cooled). Single-GPU boards are left at 0: a P100 (datasheet 2016: SXM2 1,328-1,480, PCIe
    // 1,126-1,303) has its board's whole power limit to itself, and no P100 data shows such a spread
    // (with it, Horovod's PCIe P100 rows of tests/data/validation went from 10.7 to 12.4 % MAPE and
    // Piz Daint's single-P100 rows further below the measurements), so iteration_cv keeps its
    // default there and the clock range stays inside its band.
    const auto spread = [](double base, double boost) { return (boost - base) / std::sqrt(12.0) / boost; };
    if (g.name == "K80") g.clock_spread = spread(562, 875);
  }
  GpuSpec cpu{"CPU-host",
              4.15 * T,
              4.15 * T,
              4.15 * T,
              4.15 * T,
              512 * GiB,
              256 * GB,
              0,
              0,
              true,
              "2x Intel Xeon Platinum 8168 (DGX-1 V100 host): 24 cores x 2.7 GHz x 32 fp32 FLOP/cycle (AVX-512, "
              "2 FMA units) per socket; 6 DDR4-2666 channels (128 GB/s) per socket"};
  c.push_back(std::move(cpu));
  return c;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = make_catalog();
  return catalog;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const auto& g : gpu_catalog()) names.push_back(g.name);
  return names;
}

const GpuSpec* gpu_by_name_or_null(const std::string& name) {
  for (const auto& g : gpu_catalog())
    if (g.name == name) return &g;
  return nullptr;
}

const GpuSpec& gpu_by_name(const std::string& name, const std::string& source, const std::string& location) {
  if (const GpuSpec* g = gpu_by_name_or_null(name)) return *g;
  throw InputError(source, location, unknown_name_message("GPU", name, gpu_names()));
}

const GpuSpec& cpu_host() { return *gpu_by_name_or_null("CPU-host"); }

std::string GpuSpec::supported_precisions() const {
  std::string out;
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
    if (supports(p)) out += (out.empty() ? "" : ", ") + std::string(to_string(p));
  return out;
}

GpuSpec read_gpu(const JsonNode& node) {
  if (node.is_string()) return gpu_by_name(node.as_string(), node.source(), node.pointer());
  if (!node.is_object())
    throw node.error(
        "expected a catalog GPU name (trainsim platform list) or an object {\"name\", \"fp32_TFLOPS\", \"memory_GB\", "
        "\"memory_bandwidth_GBps\", \"sms\", ...}, got " +
        describe_json(node.raw()));
  node.allow_only({"name", "fp32_TFLOPS", "tf32_TFLOPS", "fp16_TFLOPS", "bf16_TFLOPS", "memory_GB",
                   "memory_bandwidth_GBps", "sms", "l2_MB", "source"});
  GpuSpec g;
  g.name = node.at("name").as_string();
  if (g.name.empty()) throw node.at("name").error("must not be empty");
  // A field given must be positive; one left out is a precision the GPU lacks.
  auto tflops = [&node](const char* key, bool required) -> double {
    const auto v = required ? std::optional<JsonNode>(node.at(key)) : node.find(key);
    if (!v) return 0;
    return v->number_in(1e-6, 1e6) * T;
  };
  g.fp32_flops = tflops("fp32_TFLOPS", true);
  g.tf32_flops = tflops("tf32_TFLOPS", false);
  g.fp16_flops = tflops("fp16_TFLOPS", false);
  g.bf16_flops = tflops("bf16_TFLOPS", false);
  g.memory_bytes = node.at("memory_GB").number_in(1e-3, 1e6) * GB;
  g.memory_bandwidth_Bps = node.at("memory_bandwidth_GBps").number_in(1e-3, 1e7) * GB;
  g.sm_count = static_cast<int>(node.at("sms").int_at_least(1));
  if (g.sm_count > 100'000) throw node.at("sms").error("must be at most 100000");
  if (auto v = node.find("l2_MB")) g.l2_bytes = v->number_in(0, 1e6) * kMiB;
  g.source = node.find("source") ? node.at("source").as_string() : "given as an object";
  return g;
}

Json gpu_json(const GpuSpec& gpu) {
  if (const GpuSpec* known = gpu_by_name_or_null(gpu.name);
      known != nullptr && known->fp32_flops == gpu.fp32_flops && known->memory_bytes == gpu.memory_bytes)
    return gpu.name;
  Json j{{"name", gpu.name},
         {"fp32_TFLOPS", gpu.fp32_flops / T},
         {"memory_GB", gpu.memory_bytes / GB},
         {"memory_bandwidth_GBps", gpu.memory_bandwidth_Bps / GB},
         {"sms", gpu.sm_count},
         {"source", gpu.source}};
  if (gpu.tf32_flops > 0) j["tf32_TFLOPS"] = gpu.tf32_flops / T;
  if (gpu.fp16_flops > 0) j["fp16_TFLOPS"] = gpu.fp16_flops / T;
  if (gpu.bf16_flops > 0) j["bf16_TFLOPS"] = gpu.bf16_flops / T;
  if (gpu.l2_bytes > 0) j["l2_MB"] = gpu.l2_bytes / kMiB;
  return j;
}

}  // namespace trainsim::platforms
