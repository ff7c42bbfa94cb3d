// `trainsim collective`: one collective on a platform, like nccl-tests (time, algbw, busbw per size).
// All sizes run one after another in this process's single SimGrid simulation, each on the idle
// network, so every time is that of the collective alone.
#include <iostream>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/engine/collective_timing.hpp"
#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/nccl_tuner.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::app {
namespace {

struct CollectiveCliOptions {
  std::string platform;
  std::string op = "allreduce";
  std::string algorithm = "auto";
  std::string protocol;  // empty: none modelled unless the algorithm is auto, nvls, nvls_tree or collnet_*
  std::string bytes;
  int gpus = 0;
  int nodes = 0;
  std::string network_model;
  std::string representation = "auto";
  double step_overhead_us = 0;
  int channels = 0;
  std::string hd_order;  // empty: plan::CollectiveOptions' default (near)
  std::string json_output;
};

/// The largest size `--bytes` takes: 2^50 bytes (1 PiB). Sizes travel as doubles and SimGrid
/// payloads as 64-bit integers; up to 2^50 every byte count, every share of it (S/n, S/2^k) and
/// every time stays exact enough to print, while 1e20 overflowed the payload (wrong times, exit 0).
constexpr double kMaxCollectiveBytes = 1125899906842624.0;  // 2^50
/// The most sizes one `--bytes` range may give: each is simulated in turn in this process.
constexpr std::size_t kMaxCollectiveSizes = 1000;
/// NCCL's MAXCHANNELS (src/include/device.h): no communicator runs more channels.
constexpr int kMaxChannels = 64;

/// "N", or "A:B" (factor 2), or "A:B:xF": sizes A, A·F, ... up to B (nccl-tests' -b/-e/-f),
/// rounded to whole bytes; a size that rounds to the one before is skipped, so sizes strictly
/// increase. More than kMaxCollectiveSizes sizes, or a size above kMaxCollectiveBytes, is refused.
std::vector<double> parse_sizes(const std::string& text) {
  auto bad = [&text](const std::string& why) {
    return InputError("command line", "--bytes", "expected N, A:B or A:B:xF (sizes like 8, 64K, 8G), got '" + text +
                                                     "': " + why);
  };
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) throw bad("too many ':'");
  auto size = [&](const std::string& part) {
    const auto value = parse_byte_size(part);
    if (!value) throw bad("'" + part + "' is not a size");
    if (*value > kMaxCollectiveBytes)
      throw bad("'" + part + "' is more than " + fmt::format("{:.0f}", kMaxCollectiveBytes) +
                " bytes (2^50, 1048576G), the largest size trainsim times exactly");
    return *value;
  };
  const double first = size(parts[0]);
  if (parts.size() == 1) return {first};
  const double last = size(parts[1]);
  double factor = 2;
  if (parts.size() == 3) {
    if (parts[2].size() < 2 || parts[2][0] != 'x') throw bad("the step must read xF");
    try {
      std::size_t used = 0;
      factor = std::stod(parts[2].substr(1), &used);
      if (used != parts[2].size() - 1) throw bad("the factor is not a number");
    } catch (const std::logic_error&) {
      throw bad("the factor is not a number");
    }
    if (!(factor > 1) || !std::isfinite(factor)) throw bad("the factor must be > 1");
  }
  if (first <= 0) throw bad("the first size must be > 0 in a range");
  if (last < first) throw bad("the last size is smaller than the first");
  std::vector<double> sizes;
  for (double s = first; s <= last * (1 + 1e-12);) {
    const double bytes = std::round(s);
    if (sizes.empty() || bytes > sizes.back()) {
      if (sizes.size() == kMaxCollectiveSizes)
        throw bad(fmt::format("the range gives more than {} sizes, the most one run times; use a larger factor or a "
                              "narrower range",
                              kMaxCollectiveSizes));
      sizes.push_back(bytes);
    }
    double next = s * factor;
    // A factor close to 1 repeats whole sizes: go straight to the first power of it that rounds
    // to a larger size, so the loop takes at most as many turns as there are sizes.
    if (std::round(next) <= bytes) {
      const double steps = std::ceil(std::log((bytes + 0.5) / s) / std::log(factor));
      next = s * std::pow(factor, std::max(1.0, steps));
    }
    s = next;
  }
  return sizes;
}

/// The command line's name for a platform field the options override.
std::string option_of(const std::string& pointer) {
  if (pointer.rfind("/nodes", 0) == 0) return "--nodes";
  if (pointer.rfind("/network/model", 0) == 0) return "--network-model";
  return pointer;
}

platforms::PlatformSpec resolve_platform(const CollectiveCliOptions& o) {
  const platforms::PlatformSpec given = platforms::load_platform(o.platform);  // names the file in its errors
  if (o.nodes == 0 && o.network_model.empty()) return given;
  // A SimGrid XML platform (or a JSON file wrapping one) lists its hosts: no node count to change.
  // Its network model is SimGrid's configuration, which --network-model does set.
  if (given.simgrid_xml && o.nodes > 0)
    throw InputError("command line", "--nodes",
                     "cannot apply to " + o.platform + ", a SimGrid XML platform" +
                         (*given.simgrid_xml == o.platform ? std::string() : " (" + *given.simgrid_xml + ")") +
                         ": its hosts fix the node count; edit the XML, or run on its first N GPUs with --gpus N");
  // Overrides go through the platform reader, so a new node count re-derives the topology shape.
  Json j;
  const bool is_preset = [&] {
    for (const auto& n : platforms::preset_names())
      if (n == o.platform) return true;
    return false;
  }();
  if (is_preset) j["preset"] = o.platform;
  else j["file"] = o.platform;
  if (o.nodes > 0) j["nodes"] = o.nodes;
  if (!o.network_model.empty()) j["network"]["model"] = o.network_model;
  try {
    return platforms::read_platform_spec(json_root(std::make_shared<const Json>(std::move(j)), "command line"));
  } catch (const InputError& e) {
    if (e.source() != "command line") throw;
    throw InputError("command line", option_of(e.location()), e.detail());  // RX08: name the option, not "/nodes"
  }
}

/// The options' checks before the platform is read: outputs, channels, the halving-doubling order.
std::optional<plan::HdOrder> check_collective_options(const CollectiveCliOptions& o) {
  check_outputs_apart({{"--platform", o.platform}}, {{"--json", o.json_output}});
  if (!o.json_output.empty()) check_output_file(o.json_output);
  if (o.channels > kMaxChannels)
    throw InputError("command line", "--channels",
                     fmt::format("at most {} (NCCL's MAXCHANNELS: no communicator runs more), got {}", kMaxChannels,
                                 o.channels));
  std::optional<plan::HdOrder> hd_order;
  if (!o.hd_order.empty()) {
    hd_order = plan::parse_hd_order(o.hd_order);
    if (!hd_order) throw InputError("command line", "--hd-order", unknown_name_message("order", o.hd_order, plan::hd_order_names()));
    if (o.algorithm != "halving_doubling" || o.op != "allreduce")
      throw InputError("command line", "--hd-order",
                       "orders the exchanges of --algorithm halving_doubling (an allreduce) only, not " +
                           (o.op != "allreduce" ? o.op : o.algorithm));
  }
  return hd_order;
}

/// The request the options make: the operation, the algorithm or the tuner, NCCL's protocols, the
/// representation and its options, the GPUs. Refuses a protocol on another operation than allreduce
/// and a step-level run past its limit.
engine::CollectiveRequest collective_request(const CollectiveCliOptions& o,
                                             const std::optional<plan::HdOrder>& hd_order,
                                             const platforms::PlatformSpec& spec) {
  engine::CollectiveRequest request;
  // CLI11 has checked both names (`auto` is not an algorithm: the tuner picks one, ring until then).
  request.op = plan::parse_collective_op(o.op).value_or(plan::CollectiveOp::allreduce);
  request.algorithm = plan::parse_algorithm(o.algorithm).value_or(plan::Algorithm::ring);
  // NCCL's way (nccl_tuner.hpp): `auto` lets the tuner pick the algorithm; NCCL's own algorithms
  // that run on heads (nvls, nvls_tree, collnet_*) or a protocol model the protocols; a textbook
  // algorithm without --protocol runs as before, protocol-less.
  request.tune_algorithm = o.algorithm == "auto";
  const bool on_heads = plan::runs_on_heads(request.algorithm);
  request.nccl = request.tune_algorithm || on_heads || !o.protocol.empty();
  if (!o.protocol.empty() && o.protocol != "auto")
    request.protocol = plan::parse_protocol(o.protocol).value_or(plan::Protocol::simple);
  if (request.op != plan::CollectiveOp::allreduce && (on_heads || !o.protocol.empty()))
    throw InputError("command line", on_heads ? "--algorithm" : "--protocol",
                     "NVLS, CollNet and protocols are modelled for allreduce only, not " + o.op);
  request.options.representation = plan::parse_representation(o.representation).value_or(plan::Representation::automatic);
  request.options.step_overhead_s = us_to_s(o.step_overhead_us);
  request.options.channels = o.channels;
  if (hd_order) request.options.hd_order = *hd_order;
  request.gpus = o.gpus;
  // Refused before the platform is built: a step-level run past the limit would run for hours.
  // A SimGrid XML platform's GPUs are its hosts, counted from the file.
  if (request.options.representation == plan::Representation::step) {
    const int all = spec.simgrid_xml ? platforms::simgrid_xml_nodes(spec) * spec.gpus_per_node : spec.total_gpus();
    const std::string why = plan::step_representation_refusal(o.gpus > 0 ? o.gpus : all);
    if (!why.empty()) throw InputError("command line", "--representation", why);
  }
  return request;
}

/// One row per size: the time, algorithm and bus bandwidths, the representation, channels,
/// algorithm and protocol, and with a protocol NCCL's own model and the SMs its kernel holds.
Json collective_results(const std::vector<engine::CollectiveTiming>& timings, const engine::CollectiveRequest& request,
                        const std::string& algorithm, double bus_factor, const platforms::PlatformSpec& spec) {
  Json results = Json::array();
  for (const auto& t : timings) {
    const double algbw = t.time_s > 0 ? t.bytes / t.time_s / 1e9 : 0.0;
    results.push_back(Json{{"size_bytes", t.bytes},
                           {"time_s", t.time_s},
                           {"algbw_GBps", algbw},
                           {"busbw_GBps", algbw * bus_factor},
                           {"representation", plan::to_string(t.used)},
                           {"channels", t.channels},
                           {"algorithm", request.op == plan::CollectiveOp::allreduce ? plan::to_string(t.algorithm) : algorithm},
                           {"protocol", t.protocol ? plan::to_string(*t.protocol) : "-"}});
    if (t.protocol) {
      results.back()["nccl_model_time_s"] = t.predicted_s;
      results.back()["kernel_sms"] = t.kernel_sms;
      results.back()["gpu_sms"] = spec.gpu.sm_count;
    }
    if (!t.tuner_row.empty()) results.back()["nccl_tuner_row"] = t.tuner_row;
  }
  return results;
}

/// Whether the run is a halving-doubling all-reduce chosen by name (not the tuner's pick), whose
/// exchange order the outputs report.
bool ordered_halving_doubling(const engine::CollectiveRequest& request) {
  return request.op == plan::CollectiveOp::allreduce && request.algorithm == plan::Algorithm::halving_doubling &&
         !request.tune_algorithm;
}

/// The --json document: the run's settings and its rows (a single size's fields also at the top).
Json collective_json(const CollectiveCliOptions& o, const engine::CollectiveRequest& request,
                     const std::string& algorithm, int ranks, const platforms::PlatformSpec& spec,
                     const Json& results) {
  Json j;
  j["platform"] = spec.name;
  j["op"] = o.op;
  j["algorithm"] = algorithm;
  j["gpus"] = ranks;
  j["network_model"] = platforms::to_string(spec.network.model);
  j["step_overhead_s"] = request.options.step_overhead_s;
  if (ordered_halving_doubling(request)) j["hd_order"] = plan::to_string(request.options.hd_order);
  if (results.size() == 1)
    for (const char* key :
         {"size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "representation", "channels", "protocol"})
      j[key] = results[0][key];
  j["results"] = results;
  return j;
}

/// The nccl-tests-like table of the rows.
std::string collective_table(const CollectiveCliOptions& o, const engine::CollectiveRequest& request,
                             const std::string& algorithm, int ranks, const platforms::PlatformSpec& spec,
                             const Json& results) {
  const bool hd = ordered_halving_doubling(request);
  std::string out = fmt::format("# trainsim collective: {} ({}{}) on {}, {} GPUs, network model {}\n", o.op, algorithm,
                                hd ? ", " + plan::to_string(request.options.hd_order) + " partners first" : "",
                                spec.name, ranks, platforms::to_string(spec.network.model));
  // Protocol runs add the SMs NCCL's kernel holds (of the GPU's), taken from overlapped compute.
  const bool sms = !results.empty() && results[0].contains("kernel_sms");
  out += fmt::format("# {:>14} {:>14} {:>12} {:>12}  {:<16} {:<8} {:>8}  {}\n", "size(B)", "time(us)", "algbw(GB/s)",
                     "busbw(GB/s)", "algorithm", "protocol", "channels",
                     sms ? fmt::format("{:<14}  SMs (of {})", "representation", spec.gpu.sm_count) : "representation");
  for (const auto& r : results)
    out += fmt::format("  {:>14.0f} {:>14.2f} {:>12.2f} {:>12.2f}  {:<16} {:<8} {:>8}  {}\n",
                       r["size_bytes"].get<double>(), r["time_s"].get<double>() * 1e6, r["algbw_GBps"].get<double>(),
                       r["busbw_GBps"].get<double>(), r["algorithm"].get<std::string>(),
                       r["protocol"].get<std::string>(), r["channels"].get<int>(),
                       r.contains("kernel_sms") ? fmt::format("{:<14}  {:>3}", r["representation"].get<std::string>(),
                                                              r["kernel_sms"].get<int>())
                                                : r["representation"].get<std::string>());
  return out;
}

int run_collective(const CollectiveCliOptions& o) {
  const std::optional<plan::HdOrder> hd_order = check_collective_options(o);
  const std::vector<double> sizes = parse_sizes(o.bytes);
  const platforms::PlatformSpec spec = resolve_platform(o);
  const engine::CollectiveRequest request = collective_request(o, hd_order, spec);
  std::vector<engine::CollectiveTiming> timings;
  try {
    notice_large_platform(spec.nodes);
    timings = engine::time_collectives(spec, request, sizes);
  } catch (const InputError& e) {
    if (e.source() != "collective request") throw;
    // The request's fields came from these options.
    throw InputError("command line", "--" + e.location(), e.detail());
  }
  // The GPUs the engine ran on: --gpus, else all of the platform's (a SimGrid XML platform's hosts).
  const int ranks = timings.empty() ? std::max(o.gpus, 1) : timings.front().gpus;
  const double bus_factor = ranks > 1 ? plan::bus_bandwidth_factor(request.op, ranks) : 0.0;
  const std::string algorithm = request.op == plan::CollectiveOp::allreduce   ? o.algorithm
                                : request.op == plan::CollectiveOp::broadcast ? "chain"
                                                                              : "ring";
  const Json results = collective_results(timings, request, algorithm, bus_factor, spec);
  if (!o.json_output.empty()) {
    write_output(o.json_output, collective_json(o, request, algorithm, ranks, spec, results).dump(2) + "\n");
    return 0;
  }
  std::cout << collective_table(o, request, algorithm, ranks, spec, results);
  return 0;
}

void add_collective(CLI::App& app, Action& action) {
  auto o = std::make_shared<CollectiveCliOptions>();
  CLI::App* cmd = app.add_subcommand("collective", "Time one collective on a platform, like nccl-tests");
  cmd->add_option("--platform", o->platform, "preset name, platform JSON or SimGrid XML file")->required();
  cmd->add_option("--op", o->op, "allreduce, reduce_scatter, all_gather or broadcast")
      ->check(CLI::IsMember(plan::collective_op_names()));
  cmd->add_option("--algorithm", o->algorithm,
                  "all-reduce algorithm: auto (NCCL's tuner picks per size), ring, tree, nvls, nvls_tree, "
                  "collnet_direct, collnet_chain (SHARP), hierarchical, halving_doubling")
      ->check(CLI::IsMember({"auto", "ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain",
                             "hierarchical", "halving_doubling"}));
  cmd->add_option("--protocol", o->protocol,
                  "NCCL protocol: auto (the tuner's pick), LL, LL128 or Simple; default auto under --algorithm "
                  "auto, nvls, nvls_tree or collnet_*, none otherwise")
      ->check(CLI::IsMember({"auto", "LL", "LL128", "Simple"}));
  cmd->add_option("--bytes", o->bytes, "size N, or a range A:B:xF (e.g. 8:8G:x2); K, M, G are binary")->required();
  cmd->add_option("--hd-order", o->hd_order,
                  "halving_doubling's exchange order: near (distance 1 first, MPICH's rab_rdb; default) or far "
                  "(farthest partner first, Open MPI's rab1)");
  cmd->add_option("--gpus", o->gpus, "use the first N GPUs (default: all)")->check(positive_number());
  cmd->add_option("--nodes", o->nodes, "override the node count (not of a SimGrid XML platform)")->check(positive_number());
  cmd->add_option("--network-model", o->network_model, "override the network model: ideal or tcp")
      ->check(CLI::IsMember({"ideal", "tcp"}));
  cmd->add_option("--representation", o->representation, "auto (coarse where exact, else lockstep or step), coarse, lockstep or step")
      ->check(CLI::IsMember(plan::representation_names()));
  cmd->add_option("--step-overhead-us", o->step_overhead_us, "software latency added to every step, microseconds")
      ->check(non_negative_number());
  cmd->add_option("--channels", o->channels,
                  "parallel rings (NCCL channels), at most 64 (NCCL's MAXCHANNELS); default as NCCL: at least one per "
                  "NIC across nodes")
      ->check(positive_number());
  cmd->add_option("--json", o->json_output, "write the results as JSON to FILE (- = stdout)");
  cmd->callback([&action, o] { action = [o] { return run_collective(*o); }; });
}

[[maybe_unused]] static const bool registered = register_command(50, &add_collective);

}  // namespace
}  // namespace trainsim::app
