// `trainsim platform list | info`: the preset catalog, and what a platform builds into (hosts,
// links, bisection bandwidth).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/engine/platform_census.hpp"
#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/platforms/this_cpu.hpp"

namespace trainsim::app {
namespace {

struct PlatformInfoOptions {
  std::string platform;
  std::string json_output;
  bool this_cpu = false;
};

/// `platform info --this-cpu`: this machine's CPU as a CPU object (platform.cpu), on stdout or in
/// --json FILE; what had to be assumed goes to stderr, one note a line.
int this_cpu_info(const PlatformInfoOptions& o) {
  if (!o.platform.empty())
    throw InputError("--this-cpu", "", "describes this machine: give no platform with it (got " + o.platform + ")");
  if (!o.json_output.empty()) check_output_file(o.json_output);
  const platforms::DetectedCpu detected = platforms::detect_this_cpu("/");
  const std::string text = platforms::cpu_object_json(detected.platform).dump(2) + "\n";
  if (!o.json_output.empty())
    write_output(o.json_output, text);
  else
    std::cout << text;
  for (const auto& note : detected.assumptions) std::cerr << "trainsim: note: " << note << "\n";
  std::cerr << "trainsim: note: use it as a scenario's \"platform\": {\"device\": \"cpu\", \"cpu\": <this object>} "
               "(simulator/README.md, "
               "\"Describing your own CPU\")\n";
  return 0;
}

int platform_list() {
  std::string out = fmt::format("{:<18} {:>6}  {:>9}  {}\n", "preset", "GPUs", "$/GPU-h", "description (source)");
  for (const auto& p : platforms::preset_catalog()) {
    const platforms::PlatformSpec spec = platforms::preset_by_name(p.name);
    const std::string price = p.price_per_gpu_hour ? fmt::format("{:.3f}", *p.price_per_gpu_hour) : "-";
    out += fmt::format("{:<18} {:>6}  {:>9}  {} ({})\n", p.name,
                       fmt::format("{}x{}", spec.nodes, spec.gpus_per_node), price, p.description, p.source);
  }
  // CPU-only presets (simulator/README.md, CPU training): one node of sockets; no GPUs and no price.
  out += fmt::format("\n{:<18} {:>7}  {}\n", "CPU preset", "sockets", "description");
  for (const auto& p : platforms::cpu_presets())
    out += fmt::format("{:<18} {:>7}  {} ({})\n", p.name, p.platform.sockets, p.description, p.platform.describe());
  std::cout << out;
  return 0;
}

/// `platform info cpu-…`: what a CPU preset is (no SimGrid platform to build: a CPU scenario
/// builds its one node itself).
int cpu_platform_info(const platforms::CpuPreset& preset, const PlatformInfoOptions& o) {
  const platforms::CpuPlatformSpec& p = preset.platform;
  const platforms::CpuSpec& cpu = p.cpu;
  if (!o.json_output.empty()) {
    Json j;
    j["preset"] = preset.name;
    j["description"] = preset.description;
    j["device"] = "cpu";
    j["cpu"] = cpu.name;
    j["sockets"] = p.sockets;
    j["physical_cores"] = p.physical_cores();
    j["logical_cores"] = p.logical_cores();
    Json peak = Json::object();
    for (Precision q : {Precision::fp32, Precision::bf16})
      if (cpu.supports(q)) peak[std::string(to_string(q))] = cpu.core_peak_flops(q) * p.physical_cores();
    j["peak_flops"] = peak;
    j["memory_bandwidth_Bps"] = p.memory_bandwidth_Bps();
    j["cpu_source"] = cpu.source;
    j["cpu_object"] = platforms::cpu_object_json(p);
    write_output(o.json_output, j.dump(2) + "\n");
    return 0;
  }
  std::string out;
  out += fmt::format("platform   {} (CPU)\n", preset.name);
  out += fmt::format("about      {}\n", preset.description);
  out += fmt::format("CPUs       {}\n", p.describe());
  out += fmt::format("peak       fp32 {}FLOP/s{}\n", format_si(cpu.core_peak_flops(Precision::fp32) * p.physical_cores()),
                     cpu.supports(Precision::bf16)
                         ? fmt::format(", bf16 {}FLOP/s", format_si(cpu.core_peak_flops(Precision::bf16) * p.physical_cores()))
                         : std::string());
  out += fmt::format("memory     {} ({} channels per socket at {} MT/s)\n", format_rate_GBps(p.memory_bandwidth_Bps()),
                     cpu.memory_channels, cpu.memory_MTps);
  out += fmt::format("L2         {} per core\n", format_bytes(cpu.l2_bytes));
  out += fmt::format("source     {}\n", cpu.source);
  out += "use        a scenario's \"platform\": {\"preset\": \"" + preset.name + "\"} (one node; simulator/README.md, CPU training)\n";
  std::cout << out;
  return 0;
}

int platform_info(const PlatformInfoOptions& o) {
  if (o.this_cpu) return this_cpu_info(o);
  if (o.platform.empty()) throw InputError("PLATFORM", "", "give a preset name, a platform file, or --this-cpu");
  check_outputs_apart({{"the platform file", o.platform}}, {{"--json", o.json_output}});
  if (!o.json_output.empty()) check_output_file(o.json_output);
  if (const platforms::CpuPreset* cpu = platforms::cpu_preset_or_null(o.platform)) return cpu_platform_info(*cpu, o);
  const platforms::PlatformSpec spec = platforms::load_platform(o.platform, "PLATFORM");
  // Build it (this process's one SimGrid engine) to count what SimGrid sees.
  notice_large_platform(spec.nodes);
  const engine::PlatformCensus built = engine::census(spec);
  const platforms::NetworkSummary net = platforms::summarize_network(spec);
  if (!o.json_output.empty()) {
    Json j;
    j["platform"] = platforms::to_json(spec);
    j["gpus"] = built.gpus;
    j["hosts"] = built.hosts;
    j["links"] = built.links;
    j["gpu_peak_flops"] = Json{{"fp32", spec.gpu.peak_flops(Precision::fp32)},
                               {"tf32", spec.gpu.peak_flops(Precision::tf32)},
                               {"fp16", spec.gpu.peak_flops(Precision::fp16)},
                               {"bf16", spec.gpu.peak_flops(Precision::bf16)}};
    j["gpu_memory_bytes"] = spec.gpu.memory_bytes;
    j["gpu_memory_bandwidth_Bps"] = spec.gpu.memory_bandwidth_Bps;
    j["gpu_sm_count"] = spec.gpu.sm_count;
    j["gpu_source"] = spec.gpu.source;
    j["node_injection_Bps"] = net.node_injection_Bps;
    j["bisection_Bps"] = net.bisection_Bps;
    j["intra_node_bisection_Bps"] = net.intra_node_bisection_Bps;
    write_output(o.json_output, j.dump(2) + "\n");
    return 0;
  }
  std::string out;
  out += fmt::format("platform   {}\n", spec.name);
  if (!spec.source.empty()) out += fmt::format("source     {}\n", spec.source);
  out += fmt::format("GPUs       {} x {} ({} per node x {} nodes)\n", built.gpus, spec.gpu.name,
                     built.gpus_per_node, built.gpus / built.gpus_per_node);
  out += fmt::format("GPU peak   fp32 {}FLOP/s, tf32 {}FLOP/s, fp16 {}FLOP/s, bf16 {}FLOP/s; memory {} at {}; {} SMs\n",
                     format_si(spec.gpu.peak_flops(Precision::fp32)), format_si(spec.gpu.peak_flops(Precision::tf32)),
                     format_si(spec.gpu.peak_flops(Precision::fp16)), format_si(spec.gpu.peak_flops(Precision::bf16)),
                     format_bytes(spec.gpu.memory_bytes), format_rate_GBps(spec.gpu.memory_bandwidth_Bps), spec.gpu.sm_count);
  if (!spec.simgrid_xml) {
    out += fmt::format("intra-node {} {:.1f} GB/s x {:.3g} efficiency, {:.2f} us; PCIe {:.2f} GB/s, {} switches\n",
                       platforms::to_string(spec.intra_node.kind), spec.intra_node.bandwidth_Bps / 1e9,
                       spec.intra_node.efficiency, spec.intra_node.latency_s * 1e6,
                       spec.intra_node.pcie_bandwidth_Bps / 1e9, spec.intra_node.pcie_switches);
    if (spec.gpu_board.gpus > 1)
      out += fmt::format("boards     {} GPUs per board; a GPU with a busy board sibling runs at {:.3g} x its speed alone "
                         "(gpu_board.shared_speed)\n",
                         spec.gpu_board.gpus, spec.gpu_board.shared_speed);
    out += fmt::format("network    {}, {} NIC(s) x {:.0f} Gb/s on the {}, {:.2f} us node to node\n",
                       platforms::to_string(spec.network.topology), spec.network.nics_per_node,
                       spec.network.bandwidth_Bps * 8 / 1e9, spec.network.nics_on_gpus ? "GPUs' PCIe switches" : "host",
                       spec.network.latency_s * 1e6);
    if (spec.network.sharp) out += "SHARP      the switches reduce in the network; NCCL's CollNet and NVLS across nodes are on\n";
    if (spec.network.nccl.given())
      out += fmt::format(
          "NCCL net   {}+{:.3g} us per network hop{}, {:.3g} us per proxy step{}\n",
          spec.network.nccl.transport == platforms::NcclTransport::unspecified
              ? ""
              : platforms::to_string(spec.network.nccl.transport) + ", ",
          spec.network.nccl.hop_latency_s * 1e6,
          spec.network.nccl.reported_latency_s
              ? fmt::format(" ({:.3g} reported to NCCL's tuner)", *spec.network.nccl.reported_latency_s * 1e6)
              : "",
          spec.network.nccl.proxy_step_s * 1e6,
          spec.network.nccl.calibrated_from.empty() ? ""
                                                    : " (calibrated from " + spec.network.nccl.calibrated_from + ")");
    if (spec.network.nccl.given() || spec.network.nccl.ring_efficiency < 1)
      out += fmt::format("NCCL ring  {:.3g} of the NICs' line rate across nodes (ring_efficiency)\n",
                         spec.network.nccl.ring_efficiency);
    if (!spec.network.nccl.all_protocols())
      out += fmt::format("NCCL proto {} only (NCCL_PROTO)\n", fmt::join(spec.network.nccl.protocol_names(), ", "));
    if (!spec.network.nccl.all_algorithms())
      out += fmt::format("NCCL algo  {} only (NCCL_ALGO)\n", fmt::join(spec.network.nccl.algorithm_names(), ", "));
    if (spec.network.nccl.buffsize_bytes > 0)
      out += fmt::format("NCCL buf   {} (NCCL_BUFFSIZE; Simple's steps {} each)\n",
                         format_bytes(spec.network.nccl.buffsize_bytes),
                         format_bytes(spec.network.nccl.simple_step_bytes()));
    if (const auto& rows = spec.network.nccl.tuner; !rows.empty()) {
      const auto all_reduce =
          std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.collective == "allreduce"; });
      out += fmt::format("NCCL tuner {} row(s), {} for all-reduce (the first matching row NCCL runs picks)\n",
                         rows.size(), all_reduce);
    }
    out += fmt::format("bisection  {} between nodes, {} inside a node\n", format_rate_GBps(net.bisection_Bps),
                       format_rate_GBps(net.intra_node_bisection_Bps));
  }
  out += fmt::format("model      {}\n", platforms::to_string(spec.network.model));
  out += fmt::format("SimGrid    {} hosts, {} links\n", built.hosts, built.links);
  if (spec.price_per_gpu_hour) out += fmt::format("price      ${:.4f} per GPU-hour\n", *spec.price_per_gpu_hour);
  std::cout << out;
  return 0;
}

void add_platform(CLI::App& app, Action& action) {
  CLI::App* platform = app.add_subcommand("platform", "Platform presets and descriptions");
  platform->require_subcommand(1);
  CLI::App* list = platform->add_subcommand("list", "List the platform presets with their sources and prices");
  list->callback([&action] { action = [] { return platform_list(); }; });
  auto options = std::make_shared<PlatformInfoOptions>();
  CLI::App* info = platform->add_subcommand("info", "Describe a preset or platform file: hosts, links, bisection bandwidth");
  info->add_option("platform", options->platform, "preset name, platform JSON or SimGrid XML file");
  info->add_flag("--this-cpu", options->this_cpu,
                 "print this machine's CPU as a CPU object (platform.cpu) from /proc/cpuinfo and sysfs");
  info->add_option("--json", options->json_output, "write the description as JSON to FILE (- = stdout)");
  info->callback([&action, options] { action = [options] { return platform_info(*options); }; });
}

[[maybe_unused]] static const bool registered = register_command(45, &add_platform);

}  // namespace
}  // namespace trainsim::app
