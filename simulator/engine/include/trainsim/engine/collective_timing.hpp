#pragma once
// nccl-tests-like timing of one collective on a fresh simulation (`trainsim collective`). No SimGrid
// header here: the CLI asks the engine without seeing SimGrid.
#include <optional>
#include <string>
#include <vector>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::engine {

using plan::Algorithm;
using plan::Protocol;
using plan::CollectiveOp;
using plan::CollectiveOptions;
using plan::Representation;

/// One timed collective of a size sweep.
struct CollectiveTiming {
  double bytes = 0;
  double time_s = 0;
  Representation used = Representation::step;
  int channels = 1;  ///< parallel rings or trees it ran on
  Algorithm algorithm = Algorithm::ring;  ///< the algorithm run (the tuner's pick under `nccl`)
  std::optional<Protocol> protocol;       ///< the protocol modelled; none for a protocol-less run
  double predicted_s = 0;                 ///< NCCL's cost model for the pick (protocol runs only)
  /// SMs NCCL's kernel for the pick holds on every GPU while it runs (nccl_tuner.hpp
  /// nccl_kernel_sms; protocol runs only, 0 otherwise): compute overlapping it keeps the rest.
  int kernel_sms = 0;
  int gpus = 0;  ///< GPUs (ranks) it ran on: the request's, else all of the platform's
  std::string tuner_row = "";  ///< the platform's tuner-table row that picked it (plan::NcclDecision); "" when none
};

/// What to time.
struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::allreduce;
  Algorithm algorithm = Algorithm::ring;
  int gpus = 0;  ///< first `gpus` ranks; 0 = all
  CollectiveOptions options;
  /// All-reduce as NCCL runs it (nccl_tuner.hpp): per size the tuner picks the algorithm (when
  /// `tune_algorithm`; else `algorithm`, which must be ring, tree or nvls), the protocol (unless
  /// `protocol` is given) and the channels; the engine charges the protocol's costs. On a SimGrid
  /// XML platform `tune_algorithm` without a protocol runs the protocol-less ring instead.
  bool nccl = false;
  bool tune_algorithm = false;
  std::optional<Protocol> protocol;
};

/// Builds a Simulation of `spec` in this process and runs the collective once per size, one after
/// another on the idle network (so the times are independent). Uses up this process's one SimGrid
/// engine. Throws InputError("collective request", "gpus", …) when `gpus` exceeds the platform, or
/// is not a whole number of nodes for a hierarchical all-reduce; InputError("collective request",
/// "protocol" | "algorithm", …) when an `nccl` request asks what NCCL does not run (NVLS off a single
/// Hopper NVSwitch node, LL128 over PCIe, a protocol other than Simple for NVLS, a protocol or NVLS
/// on a SimGrid XML platform); InputError from Simulation.
std::vector<CollectiveTiming> time_collectives(const platforms::PlatformSpec& spec, const CollectiveRequest& request,
                                               const std::vector<double>& sizes_bytes);

}  // namespace trainsim::engine
