#include "trainsim/fitting/paleo.hpp"

#include <cmath>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::fitting {

PaleoScheme paleo_scheme_for(std::string_view strategy_kind) {
  if (strategy_kind == "parameter_server") return PaleoScheme::one_to_all;
  if (strategy_kind == "tree_allreduce") return PaleoScheme::tree;
  return PaleoScheme::butterfly;
}

namespace {
// Paleo's own names (Qi et al., ICLR 2017, section 3.3).
constexpr EnumNames<PaleoScheme, 3> kPaleoSchemes{
    {{{PaleoScheme::one_to_all, "one-to-all"}, {PaleoScheme::tree, "tree"}, {PaleoScheme::butterfly, "butterfly"}}}};
}  // namespace

std::string_view to_string(PaleoScheme scheme) {
  return kPaleoSchemes.name(scheme);
}

double paleo_iteration_time_s(PaleoScheme scheme, double single_gpu_time_s, double gradient_bytes, int gpus,
                              double bandwidth_Bps) {
  TRAINSIM_CHECK(gpus >= 1 && bandwidth_Bps > 0, "Paleo needs at least one GPU and a positive bandwidth");
  const double n = gpus;
  const double t = gradient_bytes / bandwidth_Bps;  // t(S)
  const double steps = std::ceil(std::log2(n));
  double exchange = 0;
  switch (scheme) {
    case PaleoScheme::one_to_all: exchange = 2 * (n - 1) * t; break;
    case PaleoScheme::tree: exchange = 2 * steps * t; break;
    case PaleoScheme::butterfly: exchange = steps * t; break;
  }
  return single_gpu_time_s + exchange;
}

}  // namespace trainsim::fitting
