// The preset catalog, written in the platform JSON format itself so that a preset, a platform file
// and a scenario's `platform` object all go through the same checked reader.
//
// Where the fabric numbers come from (all per direction):
// - NVLink 1 (P100): 20 GB/s per link, 4 links per GPU; NVLink 2 (V100): 25 GB/s, 6 links; NVLink 3
//   (A100): 12 links x 25 GB/s = 300 GB/s per GPU; NVLink 4 (H100/H200): 18 x 25 = 450 GB/s;
//   DGX-2 NVSwitch: 6 NVLink 2 links = 150 GB/s per GPU. (NVIDIA DGX and GPU architecture whitepapers.)
// - Efficiency = what NCCL itself assumes a link delivers, over the signalling rate: NCCL's topology
//   code (src/graph/topo.h) uses 18 GB/s per NVLink on sm_60 (0.9 of 20), 20 GB/s on sm_70 and sm_80
//   (0.8 of 25), 20.6 GB/s on sm_90 (0.824 of 25), and 12 GB/s for a PCIe gen3 x16 link (0.76 of 15.75).
// - Latencies: the GPU-to-GPU latency of the fabric is NCCL's per-step ring latency for the Simple
//   protocol from its tuning model (src/graph/tuning.cc: 3.4 us over NVLink, 5.7 us over PCIe);
//   node-to-node latency ~2 us through an InfiniBand switch (typical MPI ping-pong on EDR/HDR), 10 us
//   for kernel TCP over Ethernet.
// - PCIe: gen3 x16 15.75 GB/s, gen4 x16 31.5 GB/s, gen5 x16 63 GB/s.
// - Prices: AWS and GCE on-demand list prices (us-east-1 / us-central1) divided by the GPU count.
#include <string>
#include <vector>

#include "presets.hpp"

namespace trainsim::platforms::detail {

namespace {

const std::vector<PresetText>& make_presets() {
  static const std::vector<PresetText> presets = {
      {"dgx1-p100", "NVIDIA DGX-1 (P100): 8x P100-SXM2, NVLink 1 hybrid cube-mesh, 4x EDR InfiniBand", R"json({
        "gpu": "P100-SXM2-16GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvlink", "bandwidth_GBps": 20, "latency_us": 3.4, "efficiency": 0.9,
                        "pcie_bandwidth_GBps": 15.75, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 2, "nics_per_node": 4,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX-1 system architecture whitepaper (2017); P100 NVLink 1 at 20 GB/s per link" })json"},
      {"dgx1-v100", "NVIDIA DGX-1 (V100): 8x V100-SXM2-16GB, NVLink 2 hybrid cube-mesh, 4x EDR InfiniBand", R"json({
        "gpu": "V100-SXM2-16GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvlink", "bandwidth_GBps": 25, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 15.75, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 2, "nics_per_node": 4,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (2017)" })json"},
      {"dgx2", "NVIDIA DGX-2: 16x V100-SXM2-32GB on NVSwitch (150 GB/s per GPU), 8x EDR InfiniBand", R"json({
        "gpu": "V100-SXM2-32GB", "nodes": 1, "gpus_per_node": 16,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 150, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 15.75, "pcie_switches": 8 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 2, "nics_per_node": 8,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX-2 datasheet (2018): 12 NVSwitches, 2.4 TB/s bisection" })json"},
      {"dgx-a100", "NVIDIA DGX A100: 8x A100-SXM4-80GB on NVSwitch (300 GB/s per GPU), 8x HDR InfiniBand", R"json({
        "gpu": "A100-SXM4-80GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 300, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 31.5, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 200, "latency_us": 2, "nics_per_node": 8,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX A100 datasheet and system architecture (2020): NVLink 3, 8x ConnectX-6 HDR 200 Gb/s" })json"},
      {"dgx-h100", "NVIDIA DGX H100: 8x H100-SXM on NVSwitch (450 GB/s per GPU), 8x NDR InfiniBand", R"json({
        "gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 450, "latency_us": 3.4, "efficiency": 0.824,
                        "pcie_bandwidth_GBps": 63, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 400, "latency_us": 2, "nics_per_node": 8,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX H100 datasheet (2023): NVLink 4, 8x ConnectX-7 NDR 400 Gb/s" })json"},
      {"dgx-h200", "NVIDIA DGX H200: 8x H200 on NVSwitch (450 GB/s per GPU), 8x NDR InfiniBand", R"json({
        "gpu": "H200", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 450, "latency_us": 3.4, "efficiency": 0.824,
                        "pcie_bandwidth_GBps": 63, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 400, "latency_us": 2, "nics_per_node": 8,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "NVIDIA DGX H200 datasheet (2024)" })json"},
      {"aws-p2.xlarge", "AWS p2.xlarge: 1 K80 die, up to 10 Gb/s Ethernet", R"json({
        "gpu": "K80", "nodes": 1, "gpus_per_node": 1,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 0 },
        "network": { "topology": "switch", "bandwidth_Gbps": 10, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "price_per_gpu_hour": 0.90,
        "source": "AWS EC2 P2 instance page (2016): p2.xlarge $0.90/h on demand" })json"},
      {"aws-p2.8xlarge", "AWS p2.8xlarge: 8 K80 dies (4 boards) on PCIe, 10 Gb/s Ethernet", R"json({
        "gpu": "K80", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 4 },
        "gpu_board": { "gpus": 2 },
        "network": { "topology": "switch", "bandwidth_Gbps": 10, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "price_per_gpu_hour": 0.90,
        "source": "AWS EC2 P2 instance page (2016): p2.8xlarge $7.20/h, 10 Gb/s; each K80 board has its own PCIe switch and two GK210 dies (NVIDIA Tesla K80 board specification BD-07317)" })json"},
      {"aws-p3.16xlarge", "AWS p3.16xlarge: 8x V100-SXM2-16GB, NVLink cube-mesh, 25 Gb/s Ethernet", R"json({
        "gpu": "V100-SXM2-16GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvlink", "bandwidth_GBps": 25, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 15.75, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 25, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "price_per_gpu_hour": 3.06,
        "source": "AWS EC2 P3 instance page (2017): p3.16xlarge $24.48/h, 25 Gb/s" })json"},
      {"aws-p3dn.24xlarge", "AWS p3dn.24xlarge: 8x V100-SXM2-32GB, NVLink cube-mesh, 100 Gb/s Ethernet", R"json({
        "gpu": "V100-SXM2-32GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvlink", "bandwidth_GBps": 25, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 15.75, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "price_per_gpu_hour": 3.9015,
        "source": "AWS EC2 P3 instance page (2018): p3dn.24xlarge $31.212/h, 100 Gb/s" })json"},
      {"aws-p4d.24xlarge", "AWS p4d.24xlarge: 8x A100-SXM4-40GB on NVSwitch, 4x 100 Gb/s EFA", R"json({
        "gpu": "A100-SXM4-40GB", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 300, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 31.5, "pcie_switches": 4 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 10, "nics_per_node": 4,
                     "nic_attach": "gpu", "model": "ideal",
                     "nccl": { "transport": "efa", "hop_latency_us": 75, "protocols": ["Simple"] } },
        "price_per_gpu_hour": 4.0966,
        "source": "AWS EC2 P4 instance page (2020): p4d.24xlarge $32.7726/h, 400 Gb/s EFA; a hop of 75 us, the latency aws-ofi-nccl reports on p4d (its tuner models a hop on p5 and later only); NCCL_PROTO=Simple, which aws-ofi-nccl sets where EFA lacks 128-byte ordered delivery, as on p4d" })json"},
      {"gce-k80x8", "Google Compute Engine VM with 8 K80 dies on PCIe, 16 Gb/s egress", R"json({
        "gpu": "K80", "nodes": 1, "gpus_per_node": 8,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 4 },
        "gpu_board": { "gpus": 2 },
        "network": { "topology": "switch", "bandwidth_Gbps": 16, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "price_per_gpu_hour": 0.45,
        "source": "Google Cloud GPU pricing (2017): K80 $0.45 per die-hour; 2 Gb/s per vCPU egress up to 16 Gb/s; two GK210 dies per K80 board (NVIDIA BD-07317)" })json"},
      {"piz-daint", "CSCS Piz Daint (Cray XC50): one P100 per node, Aries dragonfly", R"json({
        "gpu": "P100-PCIe-16GB", "nodes": 16, "gpus_per_node": 1,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 0 },
        "network": { "topology": "dragonfly", "bandwidth_Gbps": 80, "latency_us": 1.3, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "CSCS Piz Daint description; Cray XC series network whitepaper (Aries: ~10 GB/s injection, ~1.3 us)" })json"},
      {"cluster-10gbe", "Generic cluster: nodes of 4x V100-PCIe-16GB, 10 Gb Ethernet, one switch", R"json({
        "gpu": "V100-PCIe-16GB", "nodes": 4, "gpus_per_node": 4,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 1 },
        "network": { "topology": "switch", "bandwidth_Gbps": 10, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "generic: IEEE 802.3 10GBASE-T; kernel TCP latency ~10 us" })json"},
      {"cluster-25gbe", "Generic cluster: nodes of 4x V100-PCIe-16GB, 25 Gb Ethernet, one switch", R"json({
        "gpu": "V100-PCIe-16GB", "nodes": 4, "gpus_per_node": 4,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 1 },
        "network": { "topology": "switch", "bandwidth_Gbps": 25, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "generic: IEEE 802.3by 25 GbE; kernel TCP latency ~10 us" })json"},
      {"cluster-40gbe", "Generic cluster: nodes of 4x V100-PCIe-16GB, 40 Gb Ethernet, one switch", R"json({
        "gpu": "V100-PCIe-16GB", "nodes": 4, "gpus_per_node": 4,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 1 },
        "network": { "topology": "switch", "bandwidth_Gbps": 40, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "generic: IEEE 802.3ba 40 GbE; kernel TCP latency ~10 us" })json"},
      {"cluster-100gbe", "Generic cluster: nodes of 4x V100-PCIe-16GB, 100 Gb Ethernet, one switch", R"json({
        "gpu": "V100-PCIe-16GB", "nodes": 4, "gpus_per_node": 4,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 1 },
        "network": { "topology": "switch", "bandwidth_Gbps": 100, "latency_us": 10, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "generic: IEEE 802.3ba 100 GbE; kernel TCP latency ~10 us" })json"},
      {"cluster-ib-edr", "Generic cluster: nodes of 4x V100-PCIe-16GB, EDR InfiniBand (100 Gb/s), fat tree", R"json({
        "gpu": "V100-PCIe-16GB", "nodes": 4, "gpus_per_node": 4,
        "intra_node": { "kind": "pcie", "bandwidth_GBps": 15.75, "latency_us": 5.7, "efficiency": 0.76,
                        "pcie_switches": 1 },
        "network": { "topology": "fat_tree", "bandwidth_Gbps": 100, "latency_us": 2, "nics_per_node": 1,
                     "nic_attach": "host", "model": "ideal" },
        "source": "generic: InfiniBand EDR 4x (100 Gb/s), ~2 us MPI latency through one switch" })json"},
      {"cluster-ib-hdr", "Generic cluster: nodes of 8x A100-SXM4-40GB (NVSwitch), 8x HDR InfiniBand, fat tree", R"json({
        "gpu": "A100-SXM4-40GB", "nodes": 4, "gpus_per_node": 8,
        "intra_node": { "kind": "nvswitch", "bandwidth_GBps": 300, "latency_us": 3.4, "efficiency": 0.8,
                        "pcie_bandwidth_GBps": 31.5, "pcie_switches": 4 },
        "network": { "topology": "fat_tree", "bandwidth_Gbps": 200, "latency_us": 2, "nics_per_node": 8,
                     "nic_attach": "gpu", "model": "ideal" },
        "source": "generic: InfiniBand HDR (200 Gb/s) rail per GPU, ~2 us through one switch" })json"},
  };
  return presets;
}

}  // namespace

const std::vector<PresetText>& preset_texts() { return make_presets(); }

}  // namespace trainsim::platforms::detail
