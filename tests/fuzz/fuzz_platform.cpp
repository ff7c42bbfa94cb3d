// libFuzzer target: the platform reader (presets with overrides, full descriptions, topology
// shapes) and what is derived from a valid spec: its JSON and its network summary. A spec the
// reader accepts must keep the invariants platform_spec.hpp promises; a broken one aborts.
#include <cmath>

#include "fuzz_input.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace {

namespace tp = trainsim::platforms;

double product(const std::vector<unsigned>& sizes) {
  double p = 1;
  for (unsigned s : sizes) p *= s;
  return p;
}

void check_invariants(const tp::PlatformSpec& spec) {
  if (spec.simgrid_xml) return;  // the XML's hosts decide the size when it is built
  TRAINSIM_CHECK(spec.nodes >= 1 && spec.gpus_per_node >= 1, "nodes and gpus_per_node are ≥ 1");
  for (double bandwidth : {spec.intra_node.bandwidth_Bps, spec.intra_node.pcie_bandwidth_Bps, spec.network.bandwidth_Bps})
    TRAINSIM_CHECK(std::isfinite(bandwidth) && bandwidth > 0, "every bandwidth is finite and > 0");
  for (double latency : {spec.intra_node.latency_s, spec.network.latency_s})
    TRAINSIM_CHECK(std::isfinite(latency) && latency >= 0, "every latency is finite and ≥ 0");
  const tp::NetworkSpec& net = spec.network;
  const tp::DragonflyShape& d = net.dragonfly;
  switch (net.topology) {
    case tp::TopologyKind::fat_tree: TRAINSIM_CHECK(product(net.fat_tree.down) == spec.nodes, "the fat tree has `nodes` leaves"); break;
    case tp::TopologyKind::torus: TRAINSIM_CHECK(product(net.torus_dimensions) == spec.nodes, "the torus has `nodes` nodes"); break;
    case tp::TopologyKind::dragonfly:
      TRAINSIM_CHECK(product({d.groups, d.chassis, d.routers, d.nodes_per_router}) == spec.nodes, "the dragonfly has `nodes` nodes");
      break;
    case tp::TopologyKind::single_switch: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_json(data, size, [](const trainsim::JsonNode& root) {
    const tp::PlatformSpec spec = tp::read_platform_spec(root);
    check_invariants(spec);
    (void)tp::to_json(spec);
    (void)tp::summarize_network(spec);
  });
}
