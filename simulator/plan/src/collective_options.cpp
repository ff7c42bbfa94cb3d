#include "trainsim/plan/collective_options.hpp"

#include <algorithm>
#include <string>

namespace trainsim::plan {

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::halving_doubling: return "halving_doubling";
    case Algorithm::tree: return "tree";
    case Algorithm::nvls: return "nvls";
    case Algorithm::nvls_tree: return "nvls_tree";
    case Algorithm::collnet_direct: return "collnet_direct";
    case Algorithm::collnet_chain: return "collnet_chain";
  }
  return "ring";
}

std::string to_string(Protocol p) {
  switch (p) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  return "Simple";
}

std::string to_string(Representation r) {
  switch (r) {
    case Representation::automatic: return "auto";
    case Representation::coarse: return "coarse";
    case Representation::lockstep: return "lockstep";
    case Representation::step: return "step";
  }
  return "auto";
}

std::optional<Representation> parse_representation(const std::string& name) {
  for (Representation r : {Representation::automatic, Representation::coarse, Representation::lockstep, Representation::step})
    if (to_string(r) == name) return r;
  return std::nullopt;
}

std::vector<std::string> representation_names() { return {"auto", "coarse", "lockstep", "step"}; }

std::string step_refusal(const std::vector<int>& all_reduce_ranks) {
  int widest = 0;
  long long transfers = 0;
  std::size_t collectives = 0;
  for (int n : all_reduce_ranks) {
    if (n < 2) continue;  // one participant moves nothing
    widest = std::max(widest, n);
    transfers += 2LL * n * (n - 1);
    ++collectives;
  }
  if (widest > kMaxStepRanks)
    return "the step representation simulates every step's flows (a ring: 2 n² of them, one actor per GPU) and runs at "
           "most " +
           std::to_string(kMaxStepRanks) + " GPUs within about a minute; " + std::to_string(widest) +
           " GPUs would take far longer (1,024 GPUs: past 10 minutes; 65,536: 17.8 GB and an abort) "
           "(simulator/README.md, "
           "Troubleshooting and limits): use auto, coarse or lockstep, which run one step or one flow per hop";
  // A training iteration runs one all-reduce per bucket: the whole iteration's step work is bounded.
  if (transfers > kMaxStepTransfers)
    return "the step representation simulates every step's flows of every bucket's all-reduce: this iteration's " +
           std::to_string(collectives) + " all-reduces on " + std::to_string(widest) + " GPUs make " +
           std::to_string(transfers) + " step-level transfers (2 n(n-1) per all-reduce of n GPUs), past the " +
           std::to_string(kMaxStepTransfers) +
           " run within about a minute (32 GPUs of 107 per-layer buckets, 212288 of them: 54 s) (simulator/README.md, "
           "Troubleshooting and limits): use auto, coarse or lockstep, or fewer, larger buckets (strategy.bucket_MB)";
  return "";
}

std::string step_representation_refusal(int ranks) {
  return step_refusal({ranks});
}

std::optional<ServerRepresentation> parse_server_representation(const std::string& name) {
  if (name == "auto") return ServerRepresentation::automatic;
  if (name == "coarse") return ServerRepresentation::coarse;
  if (name == "flow") return ServerRepresentation::flow;
  return std::nullopt;
}

std::vector<std::string> server_representation_names() { return {"auto", "coarse", "flow"}; }

std::string to_string(HdOrder order) { return order == HdOrder::far ? "far" : "near"; }

std::optional<HdOrder> parse_hd_order(const std::string& name) {
  if (name == "near") return HdOrder::near;
  if (name == "far") return HdOrder::far;
  return std::nullopt;
}

std::vector<std::string> hd_order_names() { return {"near", "far"}; }

std::string to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::allreduce: return "allreduce";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::broadcast: return "broadcast";
  }
  return "allreduce";
}

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::allreduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather: return (n - 1) / n;
    case CollectiveOp::broadcast: return 1.0;
  }
  return 1.0;
}

}  // namespace trainsim::plan
