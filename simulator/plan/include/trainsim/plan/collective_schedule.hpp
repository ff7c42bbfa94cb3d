#pragma once
// The collectives' schedules: which rank sends how many bytes to whom at which step. Pure data
// over participant and rank indices, no SimGrid; the engine runs them as flows
// (trainsim/engine/collectives.hpp).
//
// Two shapes (S bytes, n ranks):
//   StepSchedule  participant p at step s sends sends(p, s), then waits for receives(p, s)
//                 messages of that step. A participant starts step s+1 only when its step-s sends
//                 are done and its step-s messages have arrived: the data dependency of every
//                 algorithm below. Participant p stands for some rank list's ranks[p].
//   Ring          K steps in which ranks[i] sends c bytes to ranks[(i+1) mod n]. The rings of one
//                 phase run together; the engine can simulate a phase's rings coarsely (Representation).
//
//   ring all-reduce      one phase: per channel a ring of 2(n−1) steps of S/(n·channels)
//   hierarchical         three phases over g GPUs per node, N nodes:
//                          intra: per node a ring of g−1 steps of S/g (reduce-scatter)
//                          inter: g rings (local rank i of every node) of 2(N−1) steps of S/(g·N)
//                          intra again (all-gather)
//   halving-doubling     2·log2 p2 exchange steps on the largest power of two p2 ≤ n, plus one
//                        fold step at each end when n is not a power of two
//   double binary tree   two trees of S/2 each, reduce then broadcast, in m pipelined chunks
//   broadcast chain      ranks[0] → ranks[1] → …, m pipelined chunks
#include <cstddef>
#include <vector>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::plan {

/// One message of a step: `bytes` to participant `to`.
struct Send {
  int to = 0;
  double bytes = 0;
};

/// A step-level program over participants 0..participants()−1 (see the header comment).
class StepSchedule {
public:
  virtual ~StepSchedule() = default;
  virtual int participants() const = 0;
  virtual int steps() const = 0;
  /// Appends participant p's messages of step s to `out`. 0 ≤ p < participants(), 0 ≤ s < steps().
  virtual void sends(int p, int step, std::vector<Send>& out) const = 0;
  /// How many messages participant p receives in step s.
  virtual int receives(int p, int step) const = 0;
};

/// K steps of `chunk` bytes from p to p+1 (mod n) around a ring. n ≥ 2.
class RingSchedule final : public StepSchedule {
public:
  RingSchedule(int n, int steps, double chunk);
  int participants() const override { return n_; }
  int steps() const override { return steps_; }
  void sends(int p, int step, std::vector<Send>& out) const override;
  int receives(int p, int step) const override;

private:
  int n_, steps_;
  double chunk_;
};

/// Pipelined chain from participant 0: m chunks; p sends chunk j to p+1 at step p+j, so
/// n−2+m steps. n ≥ 2, m ≥ 1.
class ChainSchedule final : public StepSchedule {
public:
  ChainSchedule(int n, int chunks, double chunk);
  int participants() const override { return n_; }
  int steps() const override { return n_ - 2 + m_; }
  void sends(int p, int step, std::vector<Send>& out) const override;
  int receives(int p, int step) const override;

private:
  int n_, m_;
  double chunk_;
};

/// Recursive halving (reduce-scatter) then recursive doubling (all-gather) of `bytes` on the
/// largest power of two p2 ≤ n; the r = n − p2 extra ranks first hand their whole buffer to a
/// core rank and get the result back at the end (Rabenseifner / Thakur et al. 2005). n ≥ 2.
/// Halving step k sends S/2^(k+1), doubling step k sends S·2^k/p2, in either order; `order`
/// picks the partners:
///   near  halving at distance 1, 2, …, p2/2, doubling at p2/2, …, 1, on the core's ranks; rank
///         2i (i < r) folds into 2i+1, and the core is 2i+1 (i < r), then r+i… (MPICH's rab_rdb)
///   far   halving at distance p2/2, …, 1, doubling at 1, …, p2/2; rank p2+i folds into i and the
///         core is 0…p2−1 (Open MPI's and SMPI's rab1)
class HalvingDoublingSchedule final : public StepSchedule {
public:
  HalvingDoublingSchedule(int n, double bytes, HdOrder order);
  int participants() const override { return n_; }
  int steps() const override { return 2 * fold_ + 2 * levels_; }
  void sends(int p, int step, std::vector<Send>& out) const override;
  int receives(int p, int step) const override;

private:
  int partner(int p, int s) const;
  double bytes_at(int s) const;
  /// p's index in the power-of-two core, −1 for a rank folded away; and back.
  int core_index(int p) const;
  int core_rank(int q) const;
  /// The rank p's buffer folds into (p folded away), or that folds into p (p in the core); −1 if none.
  int fold_partner(int p) const;
  int n_, p2_ = 1, levels_ = 0, fold_ = 0;
  double bytes_;
  HdOrder order_;
};

/// NCCL-style double binary tree: two binary trees (heap layout over positions, and its mirror
/// p -> n−1−p, so the leaves of one are the inner nodes of the other), each reducing then
/// broadcasting m pipelined chunks. A node of height h sends chunk j up at step h+j; after
/// R = H+m−1 reduce steps (H the root's height, ⌊log2 n⌋), a node of depth d sends chunk j down at
/// step R+d+j. n ≥ 2, m ≥ 1.
class DoubleTreeSchedule final : public StepSchedule {
public:
  DoubleTreeSchedule(int n, int chunks, double chunk);
  int participants() const override { return n_; }
  int steps() const override { return reduce_steps_ + root_height_ + m_ - 1; }
  void sends(int p, int step, std::vector<Send>& out) const override;
  int receives(int p, int step) const override;

private:
  int pos(int tree, int p) const { return tree == 0 ? p : n_ - 1 - p; }  // an involution
  int n_, m_;
  double chunk_;
  std::vector<int> height_, depth_;
  int root_height_ = 0, reduce_steps_ = 0;
};

/// Several trees over the same participants run together, each reducing m pipelined chunks of
/// `chunk` bytes to its root, then broadcasting them back: NCCL's tree all-reduce over channels.
/// Tree t is given by parents[t][p], p's parent or −1 for a root: one per tree, or several where
/// tree t is a forest of trees over disjoint participants (NVLS_TREE's heads). As in
/// DoubleTreeSchedule, a participant of height h sends chunk j up at step h+j; after
/// R = H+m−1 reduce steps (H the largest root height) one of depth d sends chunk j to its
/// children at step R+d+j. n ≥ 2, m ≥ 1.
class TreeSchedule final : public StepSchedule {
 public:
  /// `forest`: a tree may have several roots (NVLS_TREE's heads); else exactly one (checked).
  TreeSchedule(int n, std::vector<std::vector<int>> parents, int chunks, double chunk, bool forest = false);
  int participants() const override { return n_; }
  int steps() const override { return reduce_steps_ + height_max_ + m_ - 1; }
  void sends(int p, int step, std::vector<Send>& out) const override;
  int receives(int p, int step) const override;
  int trees() const { return int(parents_.size()); }
  int chunks() const { return m_; }
  double chunk_bytes() const { return chunk_; }
  /// Steps of the reduce phase (R) and of the broadcast phase (H+m−1).
  int reduce_steps() const { return reduce_steps_; }
  int broadcast_steps() const { return height_max_ + m_ - 1; }
  /// Participant p's parent in tree t, −1 for the root.
  int parent(int t, int p) const { return parents_[std::size_t(t)][std::size_t(p)]; }
  /// Participant p's height (steps up to its farthest leaf) and depth in tree t.
  int height(int t, int p) const { return height_[std::size_t(t)][std::size_t(p)]; }
  int depth(int t, int p) const { return depth_[std::size_t(t)][std::size_t(p)]; }
  /// Edge durations for completion_s, indexed t·n+p for tree t's edge between p and its parent:
  /// `alone` when only the edges of its level (senders of one height going up, of one depth
  /// coming down) move, `loaded` when all of the phase's edges do.
  struct EdgeDurations {
    std::vector<double> up_alone, up_loaded, down_alone, down_loaded;
  };
  /// The schedule's completion time on those durations, every step with sends first paying
  /// overhead_s: the step-level semantics evaluated (a participant's step ends when its sends,
  /// started together after the overhead, are done and that step's messages have arrived). A
  /// step in which w of the phase's H levels send takes alone + (loaded − alone)·(w−1)/(H−1).
  double completion_s(const EdgeDurations& durations, double overhead_s) const;

 private:
  /// A phase's edges of one tree grouped by the level that sends them (up: the child's height;
  /// down: the parent's depth): edge i goes from sender[i] to receiver[i], and level k's edges are
  /// [begin[k], begin[k+1]). A step of the phase moves the edges of m consecutive levels, one range.
  struct LevelEdges {
    std::vector<int> sender, receiver, begin;
  };
  static LevelEdges level_edges(const std::vector<int>& parent, const std::vector<int>& level, bool up);
  int n_, m_;
  double chunk_;
  std::vector<std::vector<int>> parents_, height_, depth_, child_begin_, children_;
  std::vector<LevelEdges> up_edges_, down_edges_;  ///< per tree
  int height_max_ = 0, reduce_steps_ = 0;
};

/// Parent of `rank` in NCCL's binary tree over `nranks` (src/graph/trees.cc ncclGetBtree: root 0,
/// parent by the lowest set bit), or, for tree 1, in the mirror (even nranks) or shifted-by-one
/// (odd nranks) tree of ncclGetDtree; −1 for a root. 0 ≤ rank < nranks.
int nccl_tree_parent(int nranks, int rank, int tree);

/// Chunks a pipeline cuts `bytes` into: ⌈bytes / pipeline_chunk_bytes⌉ within [1, max_pipeline_chunks].
int pipeline_chunks(double bytes, const CollectiveOptions& options);
/// The double-binary-tree all-reduce of `bytes` over n participants: each tree carries bytes/2
/// in pipeline_chunks(bytes/2) chunks.
DoubleTreeSchedule double_tree_all_reduce(int n, double bytes, const CollectiveOptions& options);
/// The chain broadcast of `bytes` from participant 0 in pipeline_chunks(bytes) chunks.
ChainSchedule chain_broadcast(int n, double bytes, const CollectiveOptions& options);

/// K steps in which ranks[i] sends chunk_bytes to ranks[(i+1) mod n] (GPU ranks, node-major).
struct Ring {
  std::vector<int> ranks;
  int steps = 0;
  double chunk_bytes = 0;
};

/// Where ranks sit, as ring ordering needs it. Ranks are node-major: node = rank / gpus_per_node,
/// local rank = rank % gpus_per_node.
struct RingLayout {
  int gpus_per_node = 1;                   ///< ≥ 1
  std::vector<int> local_order;            ///< a node's ring over local ranks (ring_order_within_node)
  std::vector<std::vector<int>> channels;  ///< link-disjoint rings over local ranks, ≥ 1 (ring_channels_within_node)
  /// The node's network ports, ≥ 1: its NICs, at most one per GPU (more NICs than GPUs act as one
  /// port per GPU); local GPU a reaches the network through port a·nics_per_node/gpus_per_node.
  int nics_per_node = 1;
};

/// The layout of `spec`'s nodes: its gpus_per_node, ring_order_within_node and ring_channels_within_node.
RingLayout ring_layout(const platforms::PlatformSpec& spec);

/// Whether `ranks` (node-major GPU ranks) lie on more than one node; false when empty.
bool spans_nodes(const std::vector<int>& ranks, int gpus_per_node);

/// `ranks` in ring order: by node (in order of first appearance), then by position in
/// `local_order` (local ranks it does not list keep their own number as position); stable.
std::vector<int> ring_order(const std::vector<int>& ranks, int gpus_per_node, const std::vector<int>& local_order);
/// `ranks` in layout.local_order when options.topology_aware_ring, else as given.
std::vector<int> ring_order(const std::vector<int>& ranks, const RingLayout& layout, const CollectiveOptions& options);
/// `ranks` in ring order (as above) rotated so that ranks[0], the root, comes first.
std::vector<int> broadcast_order(const std::vector<int>& ranks, const RingLayout& layout,
                                 const CollectiveOptions& options);

/// The local GPU order of each of `channels` rings (0 = as NCCL picks: layout.channels.size(),
/// raised to nics_per_node when `spans_nodes`). Channel c follows layout.channels[c mod L]; across
/// nodes it is rotated so that its last GPU in a node is one attached to NIC c mod nics and the
/// next GPU is not: the ring leaves every node through that NIC (rail-aligned), so C ≥ nics
/// channels use every NIC in both directions.
///
///   8 GPUs, 8 NICs, channel 2:   node 0: 3 4 5 6 7 0 1 2 ─NIC 2─▶ node 1: 3 4 … 2 ─NIC 2─▶ …
std::vector<std::vector<int>> channel_orders(const RingLayout& layout, int channels, bool spans_nodes);

/// The rings of one ring phase of `steps` steps over `bytes` per rank: one ring per channel
/// (channel_orders with options.channels; needs options.multi_ring with topology_aware_ring),
/// each moving bytes/(n·channels) per step; else one ring in ring_order moving bytes/n per step.
std::vector<Ring> ring_phase(const std::vector<int>& ranks, int steps, double bytes, const RingLayout& layout,
                             const CollectiveOptions& options);
/// Ring all-reduce: ring_phase with 2(n−1) steps.
std::vector<Ring> ring_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                  const CollectiveOptions& options);
/// NVLS all-reduce inside one NVSwitch node: the switch reduces what every GPU sends (S each) and
/// multicasts the result (S to each), both halves pipelined, so every GPU port carries S·(n+1)/n
/// each way. The flows stand in for that load: one step in which every rank sends S·(n+1)/n to
/// its successor in ring order.
std::vector<Ring> nvls_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                  const CollectiveOptions& options);
/// Ring reduce-scatter, and all-gather (the same flows): ring_phase with n−1 steps.
std::vector<Ring> ring_reduce_scatter(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                      const CollectiveOptions& options);

/// The phases of a hierarchical all-reduce (see the header comment); `intra` runs before and
/// after `inter`.
struct HierarchicalPhases {
  std::vector<Ring> intra;  ///< one ring per node, in node order of first appearance
  std::vector<Ring> inter;  ///< one ring per local position
};
/// Hierarchical all-reduce of `bytes` over `ranks`, which must fill whole nodes (the same number
/// of ranks on every node; checked), grouped in ring_order.
HierarchicalPhases hierarchical_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                           const CollectiveOptions& options);

/// NCCL's tree all-reduce across nodes (src/graph/connect.cc): per channel a chain over each
/// node's ranks whose head (the rank on the channel's NIC) joins the double binary tree of nodes;
/// the channels are duplicated, the first half on tree 0, the second on tree 1 (each tree carries
/// half the data), each channel bytes / channels in pipeline_chunks of it.
struct NcclTrees {
  std::vector<int> ranks;  ///< participant p runs on GPU rank ranks[p]
  TreeSchedule schedule;
  int channels = 2;
  /// What a channel's hop moves at most, bytes/s; 0: as fast as the links share (nccl_tuner.hpp
  /// nccl_tree_channel_ceiling_Bps, the tuner's Simple tree).
  double channel_Bps = 0;
};
/// Whether nccl_tree_all_reduce applies: ranks on ≥ 2 nodes, the same number on every node.
bool nccl_tree_applies(const std::vector<int>& ranks, const RingLayout& layout);
/// The chunk NCCL's tree across `nodes` nodes of `ppn` GPUs pipelines a channel's `per_channel`
/// bytes in (enqueue.cc calcCollChunking): with the tuner's protocol, Simple's step
/// (options.pipeline_chunk_bytes: all_reduce_schedule sets the platform's NCCL_BUFFSIZE / 8,
/// 512 KiB by default) whole, LL's 64 KiB step, LL128's 600 KiB step halved for small
/// shares; without a protocol the textbook tree's depth rule.
double nccl_tree_chunk_bytes(double per_channel, int nodes, double ppn, const CollectiveOptions& options);
/// NCCL's trees over `ranks` (nccl_tree_applies must hold): options.channels graph channels (0: as
/// ring_phase picks them for rings that span nodes), each used by both trees, so 2·that channels.
NcclTrees nccl_tree_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                               const CollectiveOptions& options);

/// NCCL's NVLS heads of a node (search.cc, NVLS pattern): the local GPU leading each NIC, the
/// first GPU the platform attaches to it (8 NICs on 8 GPUs: 0…7; 4 NICs: 0, 2, 4, 6, as NCCL logs
/// "NVLS Head 1: 2 10" on such nodes; more NICs than GPUs: every GPU).
std::vector<int> nvls_tree_heads(const RingLayout& layout);

/// NCCL's NVLS_TREE all-reduce across nodes (src/device/all_reduce.h, runTreeSplit on NVLS):
/// inside every node the NVSwitch reduces what each GPU sends and multicasts the result
/// (nvls_all_reduce's flows, with `intra_factor` × the bytes); head k of every node (the GPU on
/// NIC k) carries S/h of the reduced data up and down NCCL's double binary tree of the nodes
/// (nccl_tree_parent), half on each tree, in pipeline_chunks. The two phases run at once: NCCL
/// pipelines them chunk by chunk, and they share no link (NVSwitch ports, and PCIe and NICs).
struct NvlsTreePhases {
  std::vector<Ring> intra;  ///< one NVLS ring per node
  /// The heads' trees over participants k·N + i (head k of node i): tree t of the schedule is a
  /// forest of h trees, one per head; `channels` = h.
  NcclTrees inter;
};
/// NVLS_TREE over `ranks`, which must fill ≥ 2 whole nodes (checked); intra_factor ≥ 1.
NvlsTreePhases nvls_tree_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                    const CollectiveOptions& options, double intra_factor = 1);

/// NCCL's all-reduces through SHARP switches (CollNet; src/device/all_reduce.h): inside every node
/// the data meets at the heads, the heads' NICs send S/h each to the switches, which reduce across
/// the nodes and send the result back, and the heads spread it in the node again. Inside:
/// `nvls` the NVSwitch's reduce and multicast (nvls_all_reduce's flows, × intra_factor); else
/// CollNet Direct's scatter to the heads and broadcast back, or Chain's chains up and down, both
/// 2·S(g−1)/g through every GPU's port each way: two steps of S(g−1)/g around the node's ring
/// channels (ring_phase: the DGX-1 cube-mesh's four NVLink rings).
/// Between: the switches' reduction as a one-step ring of head k over the nodes, each sending
/// S/h (a head's NIC carries S/h each way, as under SHARP, whatever the node count). The heads
/// are the first GPU on each NIC (nvls_tree_heads), at most `max_heads`. Both run at once, as
/// NCCL pipelines them; on PCIe nodes they share links, so the engine runs them as one phase.
struct SharpPhases {
  std::vector<Ring> intra;  ///< one ring per node
  std::vector<Ring> inter;  ///< one ring per head over the nodes
};
/// The SHARP all-reduce over `ranks`, which must fill ≥ 2 whole nodes (checked); intra_factor ≥ 1.
SharpPhases sharp_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                             const CollectiveOptions& options, bool nvls, int max_heads, double intra_factor = 1);

}  // namespace trainsim::plan
