#pragma once
// Paleo's scaling rules (Qi, Sparks, Talwalkar, ICLR 2017) as a prediction, not a fit: the baseline
// that `trainsim validate` puts beside the simulation. No overlap: one GPU's iteration time plus the
// gradient exchange of the scheme, with t(S) = S / β (β the bottleneck link's bandwidth, the
// platform percent of peak already in it):
//
//   one-to-all  2·t(S·(n−1))        (a parameter server)
//   tree        2·⌈log2 n⌉·t(S)     (tree all-reduce)
//   butterfly   ⌈log2 n⌉·t(S)       (ring, hierarchical, halving-doubling all-reduce)
#include <string_view>

namespace trainsim::fitting {

enum class PaleoScheme { one_to_all, tree, butterfly };

/// The scheme Paleo assigns to a trainsim strategy kind (`parameter_server` → one-to-all,
/// `tree_allreduce` → tree, every other all-reduce → butterfly).
PaleoScheme paleo_scheme_for(std::string_view strategy_kind);

std::string_view to_string(PaleoScheme scheme);

/// Paleo's iteration time in seconds for `gpus` ≥ 1 workers: `single_gpu_time_s` (the measured
/// one-GPU iteration, Paleo's compute calibrated as the validation protocol allows) plus the exchange
/// of `gradient_bytes` over links of `bandwidth_Bps` > 0 bytes/s. One GPU exchanges nothing.
double paleo_iteration_time_s(PaleoScheme scheme, double single_gpu_time_s, double gradient_bytes, int gpus,
                              double bandwidth_Bps);

}  // namespace trainsim::fitting
