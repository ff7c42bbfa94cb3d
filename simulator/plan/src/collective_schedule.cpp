#include "trainsim/plan/collective_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <utility>

#include "trainsim/core/error.hpp"

namespace trainsim::plan {

// The byte expressions below (bytes / n, bytes / n / channels, shard / N, half / m) are the ones
// the simulated results were made with; reordering them changes results in the last bit.

RingSchedule::RingSchedule(int n, int steps, double chunk) : n_(n), steps_(steps), chunk_(chunk) {}

void RingSchedule::sends(int p, int, std::vector<Send>& out) const { out.push_back({(p + 1) % n_, chunk_}); }

int RingSchedule::receives(int, int) const { return 1; }

ChainSchedule::ChainSchedule(int n, int chunks, double chunk) : n_(n), m_(chunks), chunk_(chunk) {}

void ChainSchedule::sends(int p, int s, std::vector<Send>& out) const {
  if (p < n_ - 1 && s - p >= 0 && s - p < m_) out.push_back({p + 1, chunk_});
}

int ChainSchedule::receives(int p, int s) const { return p >= 1 && s - (p - 1) >= 0 && s - (p - 1) < m_ ? 1 : 0; }

HalvingDoublingSchedule::HalvingDoublingSchedule(int n, double bytes, HdOrder order)
    : n_(n), bytes_(bytes), order_(order) {
  p2_ = 1;
  while (p2_ * 2 <= n_) p2_ *= 2;
  levels_ = 0;
  while ((1 << levels_) < p2_) ++levels_;
  fold_ = n_ > p2_ ? 1 : 0;
}

int HalvingDoublingSchedule::core_index(int p) const {
  if (order_ == HdOrder::far) return p < p2_ ? p : -1;
  const int r = n_ - p2_;
  if (p < 2 * r) return p % 2 == 1 ? p / 2 : -1;
  return p - r;
}

int HalvingDoublingSchedule::core_rank(int q) const {
  if (order_ == HdOrder::far) return q;
  const int r = n_ - p2_;
  return q < r ? 2 * q + 1 : q + r;
}

int HalvingDoublingSchedule::fold_partner(int p) const {
  const int r = n_ - p2_;
  if (order_ == HdOrder::far) return p >= p2_ ? p - p2_ : p < r ? p + p2_ : -1;
  return p >= 2 * r ? -1 : p % 2 == 0 ? p + 1 : p - 1;
}

void HalvingDoublingSchedule::sends(int p, int s, std::vector<Send>& out) const {
  if (int to = partner(p, s); to >= 0) out.push_back({to, bytes_at(s)});
}

int HalvingDoublingSchedule::receives(int p, int s) const {
  // Exchanges are symmetric except the fold steps: first the folded ranks send to the core, at
  // the end the core sends back.
  const bool folded = core_index(p) < 0;
  if (fold_ && s == 0) return !folded && fold_partner(p) >= 0 ? 1 : 0;
  if (fold_ && s == steps() - 1) return folded ? 1 : 0;
  return folded ? 0 : 1;
}

int HalvingDoublingSchedule::partner(int p, int s) const {
  const int q = core_index(p);
  if (fold_ && s == 0) return q < 0 ? fold_partner(p) : -1;
  if (fold_ && s == steps() - 1) return q >= 0 ? fold_partner(p) : -1;
  if (q < 0) return -1;
  const int k = s - fold_;
  const bool halving = k < levels_;
  const int j = halving ? k : k - levels_;  // the step within its phase
  // far: halving at p2/2, p2/4, …, doubling at 1, 2, …; near: the reverse of both.
  const bool largest_first = (order_ == HdOrder::far) == halving;
  const int distance = largest_first ? p2_ >> (j + 1) : 1 << j;
  return core_rank(q ^ distance);
}

double HalvingDoublingSchedule::bytes_at(int s) const {
  if (fold_ && (s == 0 || s == steps() - 1)) return bytes_;
  const int k = s - fold_;
  if (k < levels_) return bytes_ / double(1 << (k + 1));
  return bytes_ / p2_ * double(1 << (k - levels_));
}

DoubleTreeSchedule::DoubleTreeSchedule(int n, int chunks, double chunk) : n_(n), m_(chunks), chunk_(chunk) {
  height_.assign(std::size_t(n), 0);
  depth_.assign(std::size_t(n), 0);
  for (int p = n - 1; p >= 1; --p) {
    const int parent = (p - 1) / 2;
    height_[std::size_t(parent)] = std::max(height_[std::size_t(parent)], height_[std::size_t(p)] + 1);
  }
  for (int p = 1; p < n; ++p) depth_[std::size_t(p)] = depth_[std::size_t((p - 1) / 2)] + 1;
  root_height_ = height_[0];
  reduce_steps_ = root_height_ + m_ - 1;
}

void DoubleTreeSchedule::sends(int p, int s, std::vector<Send>& out) const {
  for (int tree = 0; tree < 2; ++tree) {
    const int q = pos(tree, p);
    if (s < reduce_steps_) {
      const int j = s - height_[std::size_t(q)];
      if (q > 0 && j >= 0 && j < m_) out.push_back({pos(tree, (q - 1) / 2), chunk_});
    } else {
      const int j = s - reduce_steps_ - depth_[std::size_t(q)];
      if (j >= 0 && j < m_)
        for (int c = 2 * q + 1; c <= 2 * q + 2 && c < n_; ++c) out.push_back({pos(tree, c), chunk_});
    }
  }
}

int DoubleTreeSchedule::receives(int p, int s) const {
  int count = 0;
  for (int tree = 0; tree < 2; ++tree) {
    const int q = pos(tree, p);
    if (s < reduce_steps_) {
      for (int c = 2 * q + 1; c <= 2 * q + 2 && c < n_; ++c) {
        const int j = s - height_[std::size_t(c)];
        if (j >= 0 && j < m_) ++count;
      }
    } else if (q > 0) {
      const int j = s - reduce_steps_ - depth_[std::size_t((q - 1) / 2)];
      if (j >= 0 && j < m_) ++count;
    }
  }
  return count;
}

namespace {

// Every participant's depth in the tree (or forest) `parent` over n participants, by walking up to a
// participant whose depth is known (a root's is 0); checks one root (`forest`: at least one),
// parents in range and no cycle. Also returns the number of roots.
std::vector<int> tree_depths(const std::vector<int>& parent, int n, bool forest, int& roots) {
  const auto n_size = std::size_t(n);
  TRAINSIM_CHECK(parent.size() == n_size, "a tree needs one parent per participant");
  std::vector<int> depth(n_size, -1), path;
  roots = 0;
  for (std::size_t p = 0; p < n_size; ++p) {
    if (parent[p] < 0) {
      depth[p] = 0;
      ++roots;
    }
  }
  TRAINSIM_CHECK(forest ? roots >= 1 : roots == 1, forest ? "a forest needs a root" : "a tree needs exactly one root");
  for (std::size_t p = 0; p < n_size; ++p) {
    path.clear();
    int q = int(p);
    while (depth[std::size_t(q)] < 0) {
      path.push_back(q);
      TRAINSIM_CHECK(path.size() <= n_size, "a tree must not have cycles");
      q = parent[std::size_t(q)];
      TRAINSIM_CHECK(q >= 0 && q < n, "a tree's parent must be a participant");
    }
    int known = depth[std::size_t(q)];
    for (auto it = path.rbegin(); it != path.rend(); ++it) depth[std::size_t(*it)] = ++known;
  }
  return depth;
}

// Every participant's height (steps up to its farthest leaf), deepest participants first.
std::vector<int> tree_heights(const std::vector<int>& parent, const std::vector<int>& depth) {
  const std::size_t n_size = parent.size();
  const int max_depth = *std::max_element(depth.begin(), depth.end());
  std::vector<std::vector<int>> by_depth(std::size_t(max_depth) + 1);
  for (std::size_t p = 0; p < n_size; ++p) by_depth[std::size_t(depth[p])].push_back(int(p));
  std::vector<int> height(n_size, 0);
  for (int d = max_depth; d >= 1; --d)
    for (int p : by_depth[std::size_t(d)]) {
      const auto up = std::size_t(parent[std::size_t(p)]);
      height[up] = std::max(height[up], height[std::size_t(p)] + 1);
    }
  return height;
}

// The children of every participant in compressed rows: participant p's are
// children[begin[p]] … children[begin[p+1]−1], in participant order.
void tree_children(const std::vector<int>& parent, int roots, std::vector<int>& begin, std::vector<int>& children) {
  const std::size_t n_size = parent.size();
  begin.assign(n_size + 1, 0);
  children.assign(n_size - std::size_t(roots), 0);
  for (std::size_t p = 0; p < n_size; ++p)
    if (parent[p] >= 0) ++begin[std::size_t(parent[p]) + 1];
  for (std::size_t p = 0; p < n_size; ++p) begin[p + 1] += begin[p];
  std::vector<int> fill(begin.begin(), begin.end() - 1);
  for (std::size_t p = 0; p < n_size; ++p)
    if (parent[p] >= 0) children[std::size_t(fill[std::size_t(parent[p])]++)] = int(p);
}

}  // namespace

// Tree `parent`'s edges by the level that sends them (level[p] of the child going up, of the
// parent coming down), in participant order within a level.
TreeSchedule::LevelEdges TreeSchedule::level_edges(const std::vector<int>& parent, const std::vector<int>& level,
                                                   bool up) {
  LevelEdges out;
  int top = 0;
  for (std::size_t p = 0; p < parent.size(); ++p)
    if (parent[p] >= 0) top = std::max(top, level[up ? p : std::size_t(parent[p])]);
  out.begin.assign(std::size_t(top) + 2, 0);
  for (std::size_t p = 0; p < parent.size(); ++p)
    if (parent[p] >= 0) ++out.begin[std::size_t(level[up ? p : std::size_t(parent[p])]) + 1];
  for (std::size_t k = 0; k + 1 < out.begin.size(); ++k) out.begin[k + 1] += out.begin[k];
  out.sender.resize(std::size_t(out.begin.back()));
  out.receiver.resize(out.sender.size());
  std::vector<int> fill(out.begin.begin(), out.begin.end() - 1);
  for (std::size_t p = 0; p < parent.size(); ++p)
    if (parent[p] >= 0) {
      const auto i = std::size_t(fill[std::size_t(level[up ? p : std::size_t(parent[p])])]++);
      out.sender[i] = up ? int(p) : parent[p];
      out.receiver[i] = up ? parent[p] : int(p);
    }
  return out;
}

TreeSchedule::TreeSchedule(int n, std::vector<std::vector<int>> parents, int chunks, double chunk, bool forest)
    : n_(n), m_(chunks), chunk_(chunk), parents_(std::move(parents)) {
  TRAINSIM_CHECK(n_ >= 2 && m_ >= 1 && !parents_.empty(), "a tree schedule needs n ≥ 2, m ≥ 1 and a tree");
  for (const std::vector<int>& parent : parents_) {
    int roots = 0;
    std::vector<int> depth = tree_depths(parent, n_, forest, roots);
    std::vector<int> height = tree_heights(parent, depth);
    std::vector<int> begin, children;
    tree_children(parent, roots, begin, children);
    for (std::size_t p = 0; p < parent.size(); ++p)
      if (parent[p] < 0) height_max_ = std::max(height_max_, height[p]);
    up_edges_.push_back(level_edges(parent, height, true));
    down_edges_.push_back(level_edges(parent, depth, false));
    height_.push_back(std::move(height));
    depth_.push_back(std::move(depth));
    child_begin_.push_back(std::move(begin));
    children_.push_back(std::move(children));
  }
  reduce_steps_ = height_max_ + m_ - 1;
}

void TreeSchedule::sends(int p, int s, std::vector<Send>& out) const {
  const auto pi = std::size_t(p);
  for (std::size_t t = 0; t < parents_.size(); ++t) {
    if (s < reduce_steps_) {
      const int j = s - height_[t][pi];
      if (parents_[t][pi] >= 0 && j >= 0 && j < m_) out.push_back({parents_[t][pi], chunk_});
    } else {
      const int j = s - reduce_steps_ - depth_[t][pi];
      if (j >= 0 && j < m_)
        for (int c = child_begin_[t][pi]; c < child_begin_[t][pi + 1]; ++c) out.push_back({children_[t][std::size_t(c)], chunk_});
    }
  }
}

int TreeSchedule::receives(int p, int s) const {
  const auto pi = std::size_t(p);
  int count = 0;
  for (std::size_t t = 0; t < parents_.size(); ++t) {
    if (s < reduce_steps_) {
      for (int c = child_begin_[t][pi]; c < child_begin_[t][pi + 1]; ++c) {
        const int j = s - height_[t][std::size_t(children_[t][std::size_t(c)])];
        if (j >= 0 && j < m_) ++count;
      }
    } else if (const int up = parents_[t][pi]; up >= 0) {
      const int j = s - reduce_steps_ - depth_[t][std::size_t(up)];
      if (j >= 0 && j < m_) ++count;
    }
  }
  return count;
}

double TreeSchedule::completion_s(const EdgeDurations& d, double overhead_s) const {
  const auto n = std::size_t(n_), trees = parents_.size();
  for (const auto* v : {&d.up_alone, &d.up_loaded, &d.down_alone, &d.down_loaded})
    TRAINSIM_CHECK(v->size() == n * trees, "one duration per tree edge");
  const int H = height_max_;
  // Levels sending at phase step k: heights (or depths) in [k−m+1, k] ∩ [0, H−1].
  auto load = [&](int k) {
    const int w = std::min(k, H - 1) - std::max(0, k - m_ + 1) + 1;
    return H <= 1 ? 1.0 : double(std::max(1, w) - 1) / double(H - 1);
  };
  // Each phase's durations laid out as its LevelEdges (an edge's index is its child: the sender
  // going up, the receiver coming down), so that a step reads the edges of its levels in one run
  // instead of testing every edge of every tree (92 % of the edges idle in a step at 65,536 GPUs).
  struct Laid {
    std::vector<double> alone, loaded;
  };
  auto lay = [&](const std::vector<LevelEdges>& edges, const std::vector<double>& alone,
                 const std::vector<double>& loaded, bool up) {
    std::vector<Laid> out(trees);
    for (std::size_t t = 0; t < trees; ++t) {
      const std::vector<int>& child = up ? edges[t].sender : edges[t].receiver;
      out[t].alone.resize(child.size());
      out[t].loaded.resize(child.size());
      for (std::size_t i = 0; i < child.size(); ++i) {
        out[t].alone[i] = alone[t * n + std::size_t(child[i])];
        out[t].loaded[i] = loaded[t * n + std::size_t(child[i])];
      }
    }
    return out;
  };
  const std::vector<Laid> up = lay(up_edges_, d.up_alone, d.up_loaded, true);
  const std::vector<Laid> down = lay(down_edges_, d.down_alone, d.down_loaded, false);
  // Per step: each participant's longest send (an edge lasting alone + (loaded − alone)·load), −1
  // when it sends nothing; its step ends when its sends are done and its messages have arrived.
  // A maximum does not depend on the order its terms are taken in.
  std::vector<double> done(n, 0.0), sent(n, 0.0), longest(n);
  for (int s = 0; s < steps(); ++s) {
    const bool reducing = s < reduce_steps_;
    const int k = reducing ? s : s - reduce_steps_;
    const double f = load(k);
    const std::vector<LevelEdges>& edges = reducing ? up_edges_ : down_edges_;
    const std::vector<Laid>& laid = reducing ? up : down;
    auto range = [&](const LevelEdges& e) {
      const int levels = int(e.begin.size()) - 1;
      const int lo = std::clamp(k - m_ + 1, 0, levels), hi = std::clamp(k + 1, 0, levels);
      return lo < hi ? std::pair{std::size_t(e.begin[std::size_t(lo)]), std::size_t(e.begin[std::size_t(hi)])}
                     : std::pair{std::size_t(0), std::size_t(0)};
    };
    std::fill(longest.begin(), longest.end(), -1.0);
    for (std::size_t t = 0; t < trees; ++t) {
      const auto [first, last] = range(edges[t]);
      const int* from = edges[t].sender.data();
      const double* a = laid[t].alone.data();
      const double* l = laid[t].loaded.data();
      for (std::size_t i = first; i < last; ++i) {
        double& x = longest[std::size_t(from[i])];
        x = std::max(x, a[i] + (l[i] - a[i]) * f);
      }
    }
    for (std::size_t p = 0; p < n; ++p) sent[p] = longest[p] < 0 ? done[p] : done[p] + overhead_s + longest[p];
    done = sent;
    for (std::size_t t = 0; t < trees; ++t) {
      const auto [first, last] = range(edges[t]);
      const int* from = edges[t].sender.data();
      const int* to = edges[t].receiver.data();
      for (std::size_t i = first; i < last; ++i) {
        double& x = done[std::size_t(to[i])];
        x = std::max(x, sent[std::size_t(from[i])]);
      }
    }
  }
  return *std::max_element(done.begin(), done.end());
}

namespace {

// NVIDIA/nccl src/graph/trees.cc, ncclGetBtree: the parent only.
int btree_parent(int nranks, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < nranks && !(bit & rank)) bit <<= 1;
  const int up = (rank ^ bit) | (bit << 1);
  return up >= nranks ? rank ^ bit : up;
}

}  // namespace

int nccl_tree_parent(int nranks, int rank, int tree) {
  TRAINSIM_CHECK(nranks >= 1 && rank >= 0 && rank < nranks, "nccl_tree_parent needs 0 ≤ rank < nranks");
  if (tree == 0) return btree_parent(nranks, rank);
  if (nranks % 2 == 1) {  // ncclGetDtree: shift by one
    const int u = btree_parent(nranks, (rank - 1 + nranks) % nranks);
    return u < 0 ? -1 : (u + 1) % nranks;
  }
  const int u = btree_parent(nranks, nranks - 1 - rank);  // mirror
  return u < 0 ? -1 : nranks - 1 - u;
}

int pipeline_chunks(double bytes, const CollectiveOptions& options) {
  const double m = std::ceil(bytes / options.pipeline_chunk_bytes);
  return static_cast<int>(std::clamp(m, 1.0, double(std::max(1, options.max_pipeline_chunks))));
}

DoubleTreeSchedule double_tree_all_reduce(int n, double bytes, const CollectiveOptions& options) {
  const double half = bytes / 2;
  const int m = pipeline_chunks(half, options);
  return DoubleTreeSchedule(n, m, half / m);
}

ChainSchedule chain_broadcast(int n, double bytes, const CollectiveOptions& options) {
  const int m = pipeline_chunks(bytes, options);
  return ChainSchedule(n, m, bytes / m);
}

RingLayout ring_layout(const platforms::PlatformSpec& spec) {
  return {spec.gpus_per_node, platforms::ring_order_within_node(spec), platforms::ring_channels_within_node(spec),
          platforms::network_ports(spec)};
}

std::vector<int> ring_order(const std::vector<int>& ranks, int gpus_per_node, const std::vector<int>& local_order) {
  TRAINSIM_CHECK(gpus_per_node >= 1, "ring_order needs gpus_per_node ≥ 1");
  std::vector<int> position(local_order.size());
  for (std::size_t i = 0; i < local_order.size(); ++i) position[std::size_t(local_order[i])] = int(i);
  std::map<int, int> node_rank;
  for (int r : ranks) node_rank.try_emplace(r / gpus_per_node, int(node_rank.size()));
  std::vector<int> out = ranks;
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const int na = node_rank[a / gpus_per_node], nb = node_rank[b / gpus_per_node];
    if (na != nb) return na < nb;
    const auto la = std::size_t(a % gpus_per_node), lb = std::size_t(b % gpus_per_node);
    const int pa = la < position.size() ? position[la] : int(la), pb = lb < position.size() ? position[lb] : int(lb);
    return pa < pb;
  });
  return out;
}

std::vector<int> ring_order(const std::vector<int>& ranks, const RingLayout& layout, const CollectiveOptions& options) {
  if (!options.topology_aware_ring) return ranks;
  return ring_order(ranks, layout.gpus_per_node, layout.local_order);
}

std::vector<int> broadcast_order(const std::vector<int>& ranks, const RingLayout& layout,
                                 const CollectiveOptions& options) {
  std::vector<int> ordered = ring_order(ranks, layout, options);
  if (!ranks.empty()) std::rotate(ordered.begin(), std::find(ordered.begin(), ordered.end(), ranks[0]), ordered.end());
  return ordered;
}

bool spans_nodes(const std::vector<int>& ranks, int gpus_per_node) {
  return std::any_of(ranks.begin(), ranks.end(), [&](int r) { return r / gpus_per_node != ranks[0] / gpus_per_node; });
}

std::vector<std::vector<int>> channel_orders(const RingLayout& layout, int channels, bool spans_nodes) {
  TRAINSIM_CHECK(!layout.channels.empty(), "a ring layout needs at least one channel");
  const int L = int(layout.channels.size()), g = layout.gpus_per_node, nics = std::max(1, layout.nics_per_node);
  const int count = channels > 0 ? channels : spans_nodes ? std::max(L, nics) : L;
  auto nic_of = [&](int local) { return local * nics / g; };  // the platform builder's attachment
  std::vector<std::vector<int>> orders;
  for (int c = 0; c < count; ++c) {
    std::vector<int> order = layout.channels[std::size_t(c % L)];
    const int n = int(order.size());
    if (spans_nodes && nics > 1) {
      // The exit GPU: on NIC c mod nics, followed by a GPU on another NIC (so the ring's node
      // segment does not end in the middle of the NIC's GPUs); any GPU on that NIC otherwise.
      int exit = -1;
      for (int i = 0; i < n && exit < 0; ++i)
        if (nic_of(order[std::size_t(i)]) == c % nics && nic_of(order[std::size_t((i + 1) % n)]) != c % nics) exit = i;
      for (int i = 0; i < n && exit < 0; ++i)
        if (nic_of(order[std::size_t(i)]) == c % nics) exit = i;
      if (exit >= 0) std::rotate(order.begin(), order.begin() + (exit + 1) % n, order.end());
    }
    orders.push_back(std::move(order));
  }
  return orders;
}

std::vector<Ring> ring_phase(const std::vector<int>& ranks, int steps, double bytes, const RingLayout& layout,
                             const CollectiveOptions& options) {
  const double n = double(ranks.size());
  if (!options.topology_aware_ring || !options.multi_ring)
    return {Ring{ring_order(ranks, layout, options), steps, bytes / n}};
  const std::vector<std::vector<int>> orders =
      channel_orders(layout, options.channels, spans_nodes(ranks, layout.gpus_per_node));
  std::vector<Ring> rings;
  for (const auto& order : orders)
    rings.push_back(Ring{ring_order(ranks, layout.gpus_per_node, order), steps, bytes / n / double(orders.size())});
  return rings;
}

std::vector<Ring> ring_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                  const CollectiveOptions& options) {
  return ring_phase(ranks, 2 * (int(ranks.size()) - 1), bytes, layout, options);
}

std::vector<Ring> nvls_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                  const CollectiveOptions& options) {
  const double n = double(ranks.size());
  return {Ring{ring_order(ranks, layout, options), 1, bytes * (n + 1) / n}};
}

std::vector<Ring> ring_reduce_scatter(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                      const CollectiveOptions& options) {
  return ring_phase(ranks, int(ranks.size()) - 1, bytes, layout, options);
}

namespace {

/// ranks in ring order, grouped by node in order of first appearance.
std::vector<std::vector<int>> ranks_by_node(const std::vector<int>& ranks, const RingLayout& layout,
                                            const CollectiveOptions& options) {
  std::vector<std::vector<int>> nodes;
  std::map<int, std::size_t> index;
  for (int r : ring_order(ranks, layout, options)) {
    auto [it, fresh] = index.try_emplace(r / layout.gpus_per_node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(r);
  }
  return nodes;
}

}  // namespace

HierarchicalPhases hierarchical_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                           const CollectiveOptions& options) {
  const std::vector<std::vector<int>> nodes = ranks_by_node(ranks, layout, options);  // ring order inside each node
  HierarchicalPhases phases;
  if (nodes.empty()) return phases;
  const std::size_t g = nodes.front().size();
  for (const auto& n : nodes)
    TRAINSIM_CHECK(n.size() == g, "hierarchical all-reduce needs the same number of ranks on every node");
  const int N = int(nodes.size());
  const double shard = bytes / double(g);
  for (const auto& n : nodes) phases.intra.push_back({n, int(g) - 1, shard});
  for (std::size_t i = 0; i < g; ++i) {
    Ring ring{{}, 2 * (N - 1), shard / N};
    for (const auto& n : nodes) ring.ranks.push_back(n[i]);
    phases.inter.push_back(std::move(ring));
  }
  return phases;
}


bool nccl_tree_applies(const std::vector<int>& ranks, const RingLayout& layout) {
  std::map<int, int> per_node;
  for (int r : ranks) ++per_node[r / layout.gpus_per_node];
  if (per_node.size() < 2) return false;
  return std::all_of(per_node.begin(), per_node.end(),
                     [&](const auto& kv) { return kv.second == per_node.begin()->second; });
}

double nccl_tree_chunk_bytes(double per_channel, int nodes, double ppn, const CollectiveOptions& options) {
  double chunk = options.pipeline_chunk_bytes;
  if (!options.nccl_protocol) {
    // The textbook tree (NCCL up to 2.19 for every protocol): the chunk starts at the pipeline
    // chunk and halves while a channel would get fewer than depth·8 chunks (down to 128 KiB),
    // depth·4 (64 KiB) or depth (32 KiB), depth the tree's: the chain plus the tree of nodes.
    const double depth = ppn - 1 + std::ceil(std::log2(double(nodes)));
    for (const auto& [per_depth, floor_bytes] : {std::pair{8.0, 131072.0}, {4.0, 65536.0}, {1.0, 32768.0}})
      while (per_channel / chunk < depth * per_depth && chunk > floor_bytes) chunk /= 2;
    return chunk;
  }
  switch (*options.nccl_protocol) {
    case Protocol::simple: return chunk;  // one step of the buffer (NCCL_BUFFSIZE / 8), as since NCCL 2.20
    case Protocol::ll: return kNcclLlStepBytes;
    case Protocol::ll128: {
      // calcCollChunking: nstepsLL128 = 1 + log2(nodes) + ppn / 10; halve while a channel gets fewer
      // than nstepsLL128·64/ppn chunks (down to 128 KiB), then nstepsLL128·16/ppn (down to 32 KiB).
      chunk = kNcclLl128StepBytes;
      const double steps = 1 + std::floor(std::log2(double(nodes))) + 0.1 * ppn;
      while (std::floor(per_channel / chunk) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
      while (std::floor(per_channel / chunk) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
      return chunk;
    }
  }
  return chunk;
}

NcclTrees nccl_tree_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                               const CollectiveOptions& options) {
  const std::vector<std::vector<int>> nodes = ranks_by_node(ranks, layout, options);
  TRAINSIM_CHECK(nodes.size() >= 2, "NCCL's tree across nodes needs ranks on two nodes or more");
  const int N = int(nodes.size()), g = layout.gpus_per_node;
  std::vector<int> order;
  order.reserve(ranks.size());
  for (const auto& node : nodes) order.insert(order.end(), node.begin(), node.end());
  int max_rank = 0;
  for (int r : order) max_rank = std::max(max_rank, r);
  std::vector<int> participant(std::size_t(max_rank) + 1, -1);
  for (std::size_t p = 0; p < order.size(); ++p) participant[std::size_t(order[p])] = int(p);
  // The graph channels' node orders: as the rings', whose last GPU leaves through the channel's
  // NIC; reversed, that GPU heads the chain and talks to the other nodes (treeToParent/Child).
  const bool channelled = options.topology_aware_ring && options.multi_ring;
  const std::vector<std::vector<int>> local_orders =
      channelled ? channel_orders(layout, options.channels, true) : std::vector<std::vector<int>>{};
  const int G = channelled ? int(local_orders.size()) : std::max(1, options.channels);
  std::vector<std::vector<int>> parents;
  std::vector<int> heads(static_cast<std::size_t>(N)), chain;
  std::vector<std::vector<int>> chains(static_cast<std::size_t>(N));
  for (int c = 0; c < 2 * G; ++c) {
    const int tree = c / G;
    for (int k = 0; k < N; ++k) {
      const std::vector<int>& node = nodes[std::size_t(k)];
      chain.clear();
      if (channelled) {
        const int base = node.front() / g * g;
        const std::vector<int>& local = local_orders[std::size_t(c % G)];
        for (auto it = local.rbegin(); it != local.rend(); ++it)
          if (const int r = base + *it; r <= max_rank && participant[std::size_t(r)] >= 0) chain.push_back(r);
      }
      if (chain.size() != node.size()) chain = node;
      chains[std::size_t(k)] = chain;
      heads[std::size_t(k)] = participant[std::size_t(chain.front())];
    }
    std::vector<int> parent(order.size(), -1);
    for (int k = 0; k < N; ++k) {
      const std::vector<int>& ch = chains[std::size_t(k)];
      for (std::size_t i = 1; i < ch.size(); ++i) parent[std::size_t(participant[std::size_t(ch[i])])] = participant[std::size_t(ch[i - 1])];
      const int up = nccl_tree_parent(N, k, tree);
      parent[std::size_t(heads[std::size_t(k)])] = up < 0 ? -1 : heads[std::size_t(up)];
    }
    parents.push_back(std::move(parent));
  }
  const double per_channel = bytes / double(2 * G);
  const double chunk = nccl_tree_chunk_bytes(per_channel, N, double(nodes.front().size()), options);
  const int m = static_cast<int>(std::clamp(std::ceil(per_channel / chunk), 1.0, double(std::max(1, options.max_pipeline_chunks))));
  return NcclTrees{std::move(order), TreeSchedule(int(ranks.size()), std::move(parents), m, per_channel / m), 2 * G};
}

std::vector<int> nvls_tree_heads(const RingLayout& layout) {
  const int g = layout.gpus_per_node, nics = std::max(1, layout.nics_per_node);
  std::vector<int> heads;
  int last = -1;
  for (int local = 0; local < g; ++local)  // the first GPU on each NIC (the platform's attachment)
    if (const int nic = local * nics / g; nic != last) {
      heads.push_back(local);
      last = nic;
    }
  return heads;
}

NvlsTreePhases nvls_tree_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                    const CollectiveOptions& options, double intra_factor) {
  TRAINSIM_CHECK(intra_factor >= 1, "NVLS_TREE's intra-node factor must be ≥ 1");
  const int g = layout.gpus_per_node;
  const std::vector<std::vector<int>> nodes = ranks_by_node(ranks, layout, options);
  TRAINSIM_CHECK(nodes.size() >= 2, "NVLS_TREE needs ranks on two nodes or more");
  for (const auto& node : nodes)
    TRAINSIM_CHECK(int(node.size()) == g, "NVLS_TREE needs whole nodes");
  std::vector<Ring> intra;
  for (const auto& node : nodes) {
    std::vector<Ring> ring = nvls_all_reduce(node, bytes * intra_factor, layout, options);
    intra.insert(intra.end(), ring.begin(), ring.end());
  }
  // Participant k·N + i is head k of node i; tree t of head k is NCCL's tree t over the nodes.
  const std::vector<int> heads = nvls_tree_heads(layout);
  const int N = int(nodes.size()), h = int(heads.size());
  std::vector<int> order;
  for (int k = 0; k < h; ++k)
    for (const auto& node : nodes) order.push_back(node.front() / g * g + heads[std::size_t(k)]);
  std::vector<std::vector<int>> parents(2, std::vector<int>(order.size(), -1));
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < h; ++k)
      for (int i = 0; i < N; ++i)
        if (const int up = nccl_tree_parent(N, i, t); up >= 0) parents[std::size_t(t)][std::size_t(k * N + i)] = k * N + up;
  const double per_tree = bytes / (2.0 * h);
  const int m = pipeline_chunks(per_tree, options);
  return NvlsTreePhases{std::move(intra),
                        NcclTrees{std::move(order), TreeSchedule(h * N, std::move(parents), m, per_tree / m, true), h}};
}

SharpPhases sharp_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                             const CollectiveOptions& options, bool nvls, int max_heads, double intra_factor) {
  TRAINSIM_CHECK(intra_factor >= 1 && max_heads >= 1, "SHARP all-reduce needs intra_factor ≥ 1 and a head");
  const int g = layout.gpus_per_node;
  const std::vector<std::vector<int>> nodes = ranks_by_node(ranks, layout, options);
  TRAINSIM_CHECK(nodes.size() >= 2, "a SHARP all-reduce needs ranks on two nodes or more");
  for (const auto& node : nodes) TRAINSIM_CHECK(int(node.size()) == g, "a SHARP all-reduce needs whole nodes");
  SharpPhases phases;
  for (const auto& node : nodes) {
    if (nvls) {
      for (Ring& r : nvls_all_reduce(node, bytes * intra_factor, layout, options)) phases.intra.push_back(std::move(r));
    } else if (g > 1) {  // two steps of S(g−1)/g on the node's ring channels
      for (Ring& r : ring_phase(node, 2, bytes * intra_factor * (g - 1), layout, options)) phases.intra.push_back(std::move(r));
    }
  }
  std::vector<int> heads = nvls_tree_heads(layout);
  if (int(heads.size()) > max_heads) heads.resize(std::size_t(max_heads));
  for (int local : heads) {
    Ring ring{{}, 1, bytes / double(heads.size())};
    for (const auto& node : nodes) ring.ranks.push_back(node.front() / g * g + local);
    phases.inter.push_back(std::move(ring));
  }
  return phases;
}

}  // namespace trainsim::plan
