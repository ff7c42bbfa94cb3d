#include "trainsim/plan/server_placement.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::plan {

namespace {
constexpr EnumNames<VariablePlacement, 3> kVariablePlacements{{{{VariablePlacement::round_robin, "round_robin"},
                                                                {VariablePlacement::greedy, "greedy"},
                                                                {VariablePlacement::sharded, "sharded"}}}};
}  // namespace

std::string_view to_string(VariablePlacement placement) {
  return kVariablePlacements.name(placement);
}

std::optional<VariablePlacement> parse_variable_placement(std::string_view name) {
  return kVariablePlacements.parse(name);
}

std::vector<std::string> variable_placement_names() {
  return kVariablePlacements.names();
}

std::int64_t partition_count(const std::vector<Variable>& variables, double partition_bytes) {
  std::int64_t count = 0;
  for (const Variable& v : variables) {
    if (!(v.bytes > 0)) continue;
    const double parts = partition_bytes > 0 && v.bytes > partition_bytes ? std::ceil(v.bytes / partition_bytes) : 1.0;
    if (parts > double(kMaxVariablePartitions)) return kMaxVariablePartitions + 1;
    count = std::min(count + static_cast<std::int64_t>(parts), kMaxVariablePartitions + 1);
  }
  return count;
}

double smallest_partition_bytes(const std::vector<Variable>& variables) {
  // The count only falls as the size grows: bisect on whole bytes.
  double lo = 1, hi = 1;
  for (const Variable& v : variables) hi = std::max(hi, v.bytes);
  if (partition_count(variables, hi) > kMaxVariablePartitions) return hi;  // too many variables to fit at all
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (partition_count(variables, mid) > kMaxVariablePartitions ? lo : hi) = mid;
  }
  return hi;
}

std::vector<PlacedVariable> place_variables(const std::vector<Variable>& variables, int servers, VariablePlacement placement,
                                            double partition_bytes) {
  TRAINSIM_CHECK(servers >= 1, "place_variables needs at least one server");
  std::vector<PlacedVariable> placed;
  if (placement == VariablePlacement::sharded) return placed;
  std::vector<double> load(static_cast<std::size_t>(servers), 0.0);
  int next = 0;  // round robin: the next ps task, as replica_device_setter's _RoundRobinStrategy
  for (const Variable& v : variables) {
    if (!(v.bytes > 0)) continue;
    const int parts = partition_bytes > 0 && v.bytes > partition_bytes ? static_cast<int>(std::ceil(v.bytes / partition_bytes)) : 1;
    for (int part = 0; part < parts; ++part) {
      PlacedVariable p{v.layer, part, parts, v.bytes / parts, 0};
      if (placement == VariablePlacement::round_robin) {
        p.server = next;
        next = (next + 1) % servers;
      } else {
        // The first least-loaded server, as numpy's argmin in GreedyLoadBalancingStrategy.
        p.server = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      }
      load[static_cast<std::size_t>(p.server)] += p.bytes;
      placed.push_back(std::move(p));
    }
  }
  return placed;
}

std::vector<double> bytes_per_server(const std::vector<PlacedVariable>& placed, const std::vector<std::string>& layers, int servers) {
  std::vector<double> out(static_cast<std::size_t>(servers), 0.0);
  const std::unordered_set<std::string> wanted(layers.begin(), layers.end());
  for (const PlacedVariable& p : placed)
    if (wanted.count(p.layer) != 0) out.at(static_cast<std::size_t>(p.server)) += p.bytes;
  return out;
}

}  // namespace trainsim::plan
