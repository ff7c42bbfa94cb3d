#pragma once
// Turns a validated PlatformSpec into SimGrid 3.32 netzones through the C++ platform API (or loads a
// SimGrid XML platform as is). Target trainsim::platforms_simgrid; the only platforms header that
// sees SimGrid.
//
// Zones: the inter-node topology is a SimGrid cluster zone (a one-level fat tree for "switch",
// create_fatTree_zone / create_torus_zone / create_dragonfly_zone otherwise) whose leaves are node
// zones (Full zones with explicit routes, see platform_spec.hpp for the node's inside). Each node
// zone's gateway is a router behind the node's NICs; the cluster's links carry the node's injection
// bandwidth (nics_per_node x NIC bandwidth) and half the node-to-node latency each. Hosts:
// "node<k>/gpu<i>" (speeds per pstate: fp32, tf32, fp16, bf16 peak FLOP/s), "node<k>/cpu",
// "server<j>/cpu" for dedicated parameter servers. Every link gets a human name and a class
// (link_names.hpp), kept in BuiltPlatform::links so that reports never parse SimGrid's names.
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "trainsim/platforms/cpu_catalog.hpp"
#include "trainsim/platforms/link_names.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::platforms {

/// Options of build_platform.
struct BuildOptions {
  /// Extra nodes holding only a CPU and NICs (dedicated parameter servers). They join the
  /// inter-node topology as further leaves; a topology shape that was derived from the node count
  /// is derived again for nodes + server_nodes, an explicit one must fit that total (InputError).
  int server_nodes = 0;
};

/// What build_platform created. Host pointers are owned by the SimGrid engine.
struct BuiltPlatform {
  std::vector<simgrid::s4u::Host*> gpus;     ///< rank order: node-major (node·gpus_per_node + local)
  std::vector<simgrid::s4u::Host*> cpus;     ///< the host CPU of each worker node (empty for XML)
  std::vector<simgrid::s4u::Host*> servers;  ///< CPUs of the dedicated server nodes
  /// A CPU node (build_cpu_node): its memory, the far end of link "memory" from cpus[0].
  simgrid::s4u::Host* dram = nullptr;
  int gpus_per_node = 1;
  /// Every link of the platform (each direction of a connection is one link): its human name,
  /// class and owner. An XML platform's links keep their ids (class from link_class_from_id).
  std::unordered_map<const simgrid::s4u::Link*, LinkInfo> links;
  /// The gateway of each node zone (worker or server) that a topology zone joins, by the node
  /// zone's netpoint: where its routes to other nodes leave it (empty for XML and one node).
  std::unordered_map<const simgrid::kernel::routing::NetPoint*, simgrid::kernel::routing::NetPoint*> gateways;
};

/// pstate index of each precision on GPU hosts (Host::set_pstate selects the peak used by exec).
int pstate_of(Precision p);

/// Sets SimGrid's network model configuration for `spec.network.model`. Call after the Engine
/// exists and before anything is built (SimGrid reads the model when the first zone is created).
///   ideal:   network/model:CM02, crosstraffic 0, latency and bandwidth factors 1, weight-S 0,
///            TCP-gamma 0 (no window limit): one flow takes latency + bytes/bandwidth exactly.
///   tcp:     SimGrid's default LV08 (latency x13.01, bandwidth x0.97, cross-traffic on).
///   factors: CM02 with the spec's factors.
void configure_network_model(const PlatformSpec& spec);

/// SimGrid's plain max-min network (CM02, weight-S 0) with `factors` (the default: ideal, as
/// above). Also for engines that simulate no platform's network, such as a CPU node's memory
/// flows. Call after the Engine exists and before anything is built.
void configure_max_min_network(const NetworkFactors& factors = {});

/// Builds a CPU-only node into the engine's (empty) root, under the plain max-min network
/// (configure_max_min_network, called here):
///   host "cpu"  — the node's physical cores (one core runs 1e9 work units a second: the CPU engine
///                 gives work in core-seconds); out.cpus holds it
///   host "dram" — its memory, behind link "memory" (the node's memory bandwidth, no latency,
///                 shared max-min by concurrent streams); out.dram, and out.links names the link
///   host "intra-op pool" — when shared_pool_cores > 0: the cores of one intra-op thread pool that
///                 concurrent ops share (TensorFlow, ONNX Runtime); out.cpus[1]
BuiltPlatform build_cpu_node(simgrid::s4u::Engine& engine, const CpuPlatformSpec& spec, int shared_pool_cores = 0);

/// Core speed of build_cpu_node's host "cpu": work units per second of one core.
constexpr double kCpuCoreSpeed = 1e9;

/// Builds the platform into the engine's (empty) root. Throws InputError when a SimGrid XML file
/// is rejected by SimGrid or has no hosts, or when the topology does not fit the server nodes.
BuiltPlatform build_platform(simgrid::s4u::Engine& engine, const PlatformSpec& spec, const BuildOptions& options);

}  // namespace trainsim::platforms
