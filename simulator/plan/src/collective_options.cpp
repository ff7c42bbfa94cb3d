#include "trainsim/plan/collective_options.hpp"

#include <algorithm>
#include <string>

#include "trainsim/core/enum_names.hpp"

namespace trainsim::plan {

namespace {
constexpr EnumNames<Algorithm, 8> kAlgorithms{{{{Algorithm::ring, "ring"},
                                                {Algorithm::hierarchical, "hierarchical"},
                                                {Algorithm::halving_doubling, "halving_doubling"},
                                                {Algorithm::tree, "tree"},
                                                {Algorithm::nvls, "nvls"},
                                                {Algorithm::nvls_tree, "nvls_tree"},
                                                {Algorithm::collnet_direct, "collnet_direct"},
                                                {Algorithm::collnet_chain, "collnet_chain"}}}};
// NCCL's own spelling (NCCL_PROTO); Simple is listed first as the fallback name.
constexpr EnumNames<Protocol, 3> kProtocols{
    {{{Protocol::simple, "Simple"}, {Protocol::ll, "LL"}, {Protocol::ll128, "LL128"}}}};
constexpr EnumNames<Representation, 4> kRepresentations{{{{Representation::automatic, "auto"},
                                                          {Representation::coarse, "coarse"},
                                                          {Representation::lockstep, "lockstep"},
                                                          {Representation::step, "step"}}}};
constexpr EnumNames<ServerRepresentation, 3> kServerRepresentations{{{{ServerRepresentation::automatic, "auto"},
                                                                      {ServerRepresentation::coarse, "coarse"},
                                                                      {ServerRepresentation::flow, "flow"}}}};
constexpr EnumNames<HdOrder, 2> kHdOrders{{{{HdOrder::near, "near"}, {HdOrder::far, "far"}}}};
constexpr EnumNames<CollectiveOp, 4> kCollectiveOps{{{{CollectiveOp::allreduce, "allreduce"},
                                                      {CollectiveOp::reduce_scatter, "reduce_scatter"},
                                                      {CollectiveOp::all_gather, "all_gather"},
                                                      {CollectiveOp::broadcast, "broadcast"}}}};
}  // namespace

std::string to_string(Algorithm a) {
  return std::string(kAlgorithms.name(a));
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  return kAlgorithms.parse(name);
}

std::vector<std::string> algorithm_names() {
  return kAlgorithms.names();
}

std::string to_string(Protocol p) {
  return std::string(kProtocols.name(p));
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  return kProtocols.parse(name);
}

std::string to_string(Representation r) {
  return std::string(kRepresentations.name(r));
}

std::optional<Representation> parse_representation(const std::string& name) {
  return kRepresentations.parse(name);
}

std::vector<std::string> representation_names() {
  return kRepresentations.names();
}

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
  return kServerRepresentations.parse(name);
}

std::vector<std::string> server_representation_names() {
  return kServerRepresentations.names();
}

std::string to_string(HdOrder order) {
  return std::string(kHdOrders.name(order));
}

std::optional<HdOrder> parse_hd_order(const std::string& name) {
  return kHdOrders.parse(name);
}

std::vector<std::string> hd_order_names() {
  return kHdOrders.names();
}

std::string to_string(CollectiveOp op) {
  return std::string(kCollectiveOps.name(op));
}

std::optional<CollectiveOp> parse_collective_op(std::string_view name) {
  return kCollectiveOps.parse(name);
}

std::vector<std::string> collective_op_names() {
  return kCollectiveOps.names();
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
