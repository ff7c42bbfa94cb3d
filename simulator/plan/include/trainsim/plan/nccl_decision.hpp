#pragma once
// The one NCCL decision of the plan: for an all-reduce of a given size, what NCCL runs (algorithm,
// protocol, channels, from nccl_tuner.hpp's cost model) and what the engine charges for it. Both
// `trainsim simulate` (training_plan.cpp, per bucket) and `trainsim collective` (the engine's size
// sweep) call it, so an NCCL all-reduce of S bytes is decided the same way in both.
#include <optional>
#include <string>

#include "trainsim/plan/nccl_tuner.hpp"

namespace trainsim::plan {

/// What the caller pins of NCCL's choice (NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS).
struct NcclRequest {
  bool tune_algorithm = true;             ///< NCCL_ALGO unset: the tuner picks the algorithm
  Algorithm algorithm = Algorithm::ring;  ///< the algorithm when !tune_algorithm
  std::optional<Protocol> protocol;       ///< NCCL_PROTO; none: the tuner picks
  int channels = 0;                       ///< the ring's and tree's channels (`--channels`); 0: NCCL's
  int gpu_sm_count = 0;                   ///< SMs of one GPU (for kernel_sms); ≤ 1: unknown
  /// The decision is for an all-reduce; false for an all-gather or reduce-scatter run as NCCL's
  /// ring (ZeRO's), which NCCL asks a tuner plugin about under its own type, so the platform's
  /// tuner table's all-reduce rows do not pick it.
  bool all_reduce = true;
};

/// NCCL's decision for one all-reduce and the costs the engine charges for it.
struct NcclDecision {
  NcclChoice choice;    ///< the fastest candidate the request allows
  ProtocolCosts costs;  ///< launch, per-step overhead and wire factor of the choice (protocol_costs)
  /// Channels the engine runs the ring or tree on: the request's, else the choice's; 0 for the
  /// algorithms NCCL runs on its heads (NVLS, NVLS_TREE, CollNet), whose flows follow the heads.
  int channels = 0;
  /// The communicator's channels the request sets (nccl_ctas' comm_channels): a ring's, or twice
  /// a tree's across nodes (both trees use every graph channel); 0 when NCCL's own.
  int comm_channels = 0;
  int kernel_sms = 0;  ///< SMs NCCL's kernel holds on each GPU (nccl_kernel_sms); 0 when unknown
  /// The row of the platform's tuner table that picked the choice (NcclTopology::tuner); "" when
  /// NCCL's own tuner did.
  std::string tuner_row;
};

/// NCCL's decision for an all-reduce of `bytes` on `topo` under `request`: the platform's tuner
/// table's pick where a row matches (within what the request pins), else the fastest candidate. Throws
/// InputError("collective request", "channels" | "algorithm" | "protocol", …) when the request
/// asks what NCCL does not run: channels for an algorithm that runs on its heads, NVLS off a
/// Hopper NVSwitch node, LL128 over PCIe, a protocol other than Simple for NVLS and CollNet.
NcclDecision nccl_decide(const NcclTopology& topo, double bytes, const NcclRequest& request);

}  // namespace trainsim::plan
