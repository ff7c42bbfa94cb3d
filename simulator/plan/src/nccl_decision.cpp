#include "trainsim/plan/nccl_decision.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::plan {

namespace {

// Why nothing in `request` runs on `topo` (the request pinned an algorithm or protocol NCCL
// leaves out there).
[[noreturn]] void refuse(const NcclTopology& topo, const NcclRequest& request) {
  const bool pinned = !request.tune_algorithm;
  const Algorithm a = request.algorithm;
  const bool nvls = pinned && a == Algorithm::nvls;
  const bool nvls_tree = pinned && a == Algorithm::nvls_tree;
  const bool collnet = pinned && (a == Algorithm::collnet_direct || a == Algorithm::collnet_chain);
  const std::string where = (nvls || nvls_tree || collnet) && !request.protocol ? "algorithm" : "protocol";
  if (pinned && !topo.algorithms[std::size_t(nccl_algorithm_index(a))])
    throw InputError("collective request", "algorithm",
                     "the platform's network.nccl.algorithms (NCCL_ALGO) leaves " +
                         std::string(platforms::kNcclAlgorithmNames[std::size_t(nccl_algorithm_index(a))]) + " out");
  if (const std::vector<std::string> names = platforms::nccl_algorithm_names(topo.algorithms);
      !pinned && names.size() < topo.algorithms.size()) {
    throw InputError("collective request", "algorithm",
                     fmt::format("NCCL runs none of the platform's network.nccl.algorithms (NCCL_ALGO: {}) here",
                                 fmt::join(names, ", ")) +
                         (request.protocol ? " with " + to_string(*request.protocol) : std::string()) +
                         " (NVLS needs Hopper or later on NVSwitch and one node or SHARP; NVLSTree whole nodes "
                         "whose heads have NICs; CollNet SHARP)");
  }
  if (nvls)
    throw InputError("collective request", where,
                     "NCCL runs NVLS only with the Simple protocol, on one node of Hopper or later GPUs on NVSwitch, "
                     "or across whole such nodes whose switches run SHARP (\"sharp\": true)");
  if (collnet)
    throw InputError("collective request", where,
                     "NCCL runs CollNet only with the Simple protocol, across two or more whole nodes of at most 8 "
                     "GPUs whose switches run SHARP (\"network\": {\"sharp\": true}); Direct also needs NVSwitch");
  if (nvls_tree)
    throw InputError(
        "collective request", where,
        "NCCL runs NVLS_TREE only with the Simple protocol, across two or more whole nodes of Hopper "
        "or later GPUs on NVSwitch whose heads have NICs of their own (trainsim: \"nic_attach\": \"gpu\")");
  throw InputError("collective request", where,
                   "NCCL does not run " + to_string(pinned ? a : Algorithm::ring) + " with " +
                       (request.protocol ? to_string(*request.protocol) : std::string("any protocol")) +
                       " here (LL128 needs NVLink and Volta or later; the platform's network.nccl.protocols, "
                       "NCCL_PROTO, may leave a protocol out)");
}

// Protocol names as NCCL's example tuner plugin spells them (plugin.c parseProtocol); its
// algorithm names are trainsim's (parse_algorithm), but for pat, which NCCL never runs for an
// all-reduce.
constexpr EnumNames<Protocol, 3> kPluginProtocols{
    {{{Protocol::ll, "ll"}, {Protocol::ll128, "ll128"}, {Protocol::simple, "simple"}}}};

// The tuner plugin's pick (NCCL's example plugin, plugins/tuner/example/plugin.c
// pluginGetCollInfo): the first row whose size range, nNodes and nRanks match and whose algorithm
// and protocol NCCL runs here; the plugin passes over a combination NCCL's cost table ignores. An
// all-reduce here is one operation (numPipeOps 1) on a buffer not registered with NCCL (regBuff
// 0), as nccl-tests and DDP's buckets run it. Null when no row picks.
const NcclChoice* tuner_pick(const NcclTopology& topo, double bytes, const std::vector<NcclChoice>& candidates,
                             const platforms::NcclTunerRow** picked) {
  for (const platforms::NcclTunerRow& row : topo.tuner) {
    const bool matches = bytes >= double(row.min_bytes) && bytes <= double(row.max_bytes) &&
                         (row.nodes == -1 || row.nodes == topo.nodes) && (row.ranks == -1 || row.ranks == topo.ranks) &&
                         (row.pipe_ops == -1 || row.pipe_ops == 1) && (row.reg_buff == -1 || row.reg_buff == 0);
    if (!matches) continue;
    const std::optional<Algorithm> algorithm = parse_algorithm(row.algorithm);
    const std::optional<Protocol> protocol = kPluginProtocols.parse(row.protocol);
    for (const NcclChoice& c : candidates)
      if (c.algorithm == algorithm && c.protocol == protocol) {
        *picked = &row;
        return &c;
      }
  }
  return nullptr;
}

}  // namespace

NcclDecision nccl_decide(const NcclTopology& topo, double bytes, const NcclRequest& request) {
  // Channels asked for are the ring's and the tree's: NVLS, NVLS_TREE and CollNet run on their
  // heads, so `auto` leaves them out and naming one of them with channels is an error.
  if (request.channels > 0 && !request.tune_algorithm && runs_on_heads(request.algorithm))
    throw InputError("collective request", "channels",
                     "sets the channels of NCCL's ring and tree; " + to_string(request.algorithm) +
                         " runs on its heads (NCCL's NVLS and CollNet channels), so leave --channels out");
  std::vector<NcclChoice> candidates = nccl_candidates(topo, bytes);
  std::erase_if(candidates, [&](const NcclChoice& c) {
    return (!request.tune_algorithm && c.algorithm != request.algorithm) ||
           (request.protocol && c.protocol != *request.protocol) ||
           (request.channels > 0 && runs_on_heads(c.algorithm));
  });
  if (candidates.empty()) refuse(topo, request);
  NcclDecision d;
  const platforms::NcclTunerRow* row = nullptr;
  if (const NcclChoice* pick = request.all_reduce ? tuner_pick(topo, bytes, candidates, &row) : nullptr) {
    d.choice = *pick;
    d.tuner_row = row->text;
  } else {
    // Ties go to the earlier candidate (nccl_candidates' order), as NCCL's strict comparison does.
    d.choice = *std::min_element(candidates.begin(), candidates.end(), [](const NcclChoice& a, const NcclChoice& b) {
      return a.predicted_s < b.predicted_s;
    });
  }
  d.costs = protocol_costs(topo, d.choice, bytes);
  // A row's channels are NCCL's nChannels for the collective, at most the communicator's
  // (enqueue.cc caps the plugin's value at comm->nChannels, min(MAXCHANNELS, 2 × the graph's)),
  // and no per-size drop then: the ring's, or across nodes both trees' (trainsim runs half on
  // each, rounded up; NCCL fills tree 0's channels first). `--channels` wins. Not for the
  // algorithms on heads, nor the tree inside one node, which runs NCCL's own.
  const bool ring = d.choice.algorithm == Algorithm::ring;
  const bool tree_pair = d.choice.algorithm == Algorithm::tree && topo.nodes > 1;
  int channels = request.channels;
  int row_channels = 0;
  if (channels <= 0 && row && row->channels > 0 && (ring || tree_pair)) {
    row_channels = std::min(row->channels, nccl_comm_channels(topo));
    channels = tree_pair ? (row_channels + 1) / 2 : row_channels;
  }
  if (!runs_on_heads(d.choice.algorithm)) d.channels = channels > 0 ? channels : d.choice.channels;
  if (ring) d.comm_channels = channels;
  if (tree_pair) d.comm_channels = 2 * channels;
  d.kernel_sms = nccl_kernel_sms(topo, d.choice, bytes, request.gpu_sm_count, d.comm_channels);
  if (row_channels > 0 && request.gpu_sm_count > 1) d.kernel_sms = std::min(row_channels, request.gpu_sm_count - 1);
  return d;
}

}  // namespace trainsim::plan
