#pragma once
// What each link of a built platform is, in a user's words: its class and a human name. Pure data
// (no SimGrid); the builder (simgrid_builder.hpp) fills one LinkInfo per SimGrid link.
//
// Names say where a link runs, in the direction of its traffic (each direction of a full-duplex
// connection is its own link):
//
//   inside node k      node k GPU 1 → GPU 2 (nvlink)        node k GPU 1 → NVSwitch, node k NVSwitch → GPU 1
//                      node k GPU 1 → PCIe switch 0         node k PCIe switch 0 → host bridge (pcie)
//                      node k CPU → host bridge, node k host bridge → CPU (memory: the CPU's memory bus)
//                      node k NIC 0 → network, network → node k NIC 0 (nic)
//   server node j      server node j NICs → network, network → server node j NICs (nic)
//   between nodes      node k → switch, switch → node k               (topology "switch")
//   (fabric)           node k → leaf 2, leaf 2 → spine 0, spine 0 → leaf 2 …  (fat tree: leaf, spine,
//                      super-spine, then "level-ℓ switch"; a one-level tree has one "switch")
//                      node 3 → node 4                                (torus: the cable between neighbours)
//                      node 5 → router 2, router 2 → router 3         (dragonfly: router r serves nodes
//                                                                      r·nodes_per_router …; routers are
//                                                                      numbered group-major, then chassis)
// Leaves of the topology past the worker nodes are the dedicated server nodes ("server node j").
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::platforms {

/// The kind of hardware a link models.
enum class LinkClass {
  nvlink,    ///< a DGX-1 NVLink connection between two GPUs
  nvswitch,  ///< a GPU's port into the node's NVSwitch
  pcie,      ///< a GPU's PCIe link or a PCIe switch's uplink to the host bridge
  memory,    ///< the host CPU's memory bus (where colocated parameter servers receive)
  nic,       ///< a network interface between a node's PCIe tree and the network
  fabric,    ///< the inter-node topology: cables between nodes and switches, switches and switches
  unknown,   ///< a SimGrid XML link whose id follows no naming convention
};

/// "nvlink", "nvswitch", "pcie", "memory", "nic", "fabric", "unknown".
std::string_view to_string(LinkClass c);

/// One link of a built platform.
struct LinkInfo {
  std::string name;  ///< human name (see the sketch above); an XML platform's link id
  /// Both directions of the connection: "node 0 NIC 0 ↔ network", the same for the two links of a
  /// full-duplex connection; an XML link's id without SimGrid's _UP / _DOWN suffix.
  std::string connection;
  LinkClass link_class = LinkClass::unknown;
  int node = -1;         ///< the worker node it lies in or connects to the topology; −1 otherwise
  int server_node = -1;  ///< the dedicated server node it lies in or connects; −1 otherwise
};

/// The class of a SimGrid XML link from its id: a class name (case-insensitive) that the id starts
/// with, followed by its end or by a character that is not a letter ("nic-node3", "PCIe_gpu0_UP",
/// "nvlink0-1" are nic, pcie, nvlink; "fabric7" is fabric; "link_from_0_1" is unknown).
LinkClass link_class_from_id(std::string_view id);

/// The `up` counts of SimGrid's FatTreeParams for a fat tree shape: one parent per leaf; the first
/// switch level has down[0]/oversubscription uplinks, every further level down[i−1].
std::vector<unsigned> fat_tree_parents(const FatTreeShape& shape);

/// Names the links SimGrid 3.32 created for the inter-node topology of `shaped` (whose `nodes` counts
/// every leaf, worker and server nodes), from the names SimGrid gave them: fat trees
/// "link_from_<child>_<parent>_<n>", tori "<zone>_link_from_<a>_to_<b>", dragonflies
/// "local_link_from_router_…", "green_link_in_chassis_…", "black_link_in_group_…",
/// "blue_link_between_group_…", each with "_UP" / "_DOWN" for the two directions. Leaves from
/// `worker_nodes` on are server nodes. A name that does not parse keeps its SimGrid name with class
/// fabric (the builder's tests check that none is left so). One result per name, in order.
std::vector<LinkInfo> name_topology_links(const std::vector<std::string>& simgrid_names, const PlatformSpec& shaped,
                                          int worker_nodes);

}  // namespace trainsim::platforms
