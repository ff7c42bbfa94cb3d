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

HalvingDoublingSchedule::HalvingDoublingSchedule(int n, double bytes) : n_(n), bytes_(bytes) {
  p2_ = 1;
  while (p2_ * 2 <= n_) p2_ *= 2;
  levels_ = 0;
  while ((1 << levels_) < p2_) ++levels_;
  fold_ = n_ > p2_ ? 1 : 0;
}

void HalvingDoublingSchedule::sends(int p, int s, std::vector<Send>& out) const {
  if (int to = partner(p, s); to >= 0) out.push_back({to, bytes_at(s)});
}

int HalvingDoublingSchedule::receives(int p, int s) const {
  // Exchanges are symmetric except the fold steps.
  if (fold_ && s == 0) return p < n_ - p2_ ? 1 : 0;
  if (fold_ && s == steps() - 1) return p >= p2_ ? 1 : 0;
  return p < p2_ ? 1 : 0;
}

int HalvingDoublingSchedule::partner(int p, int s) const {
  if (fold_ && s == 0) return p >= p2_ ? p - p2_ : -1;
  if (fold_ && s == steps() - 1) return p < n_ - p2_ ? p + p2_ : -1;
  if (p >= p2_) return -1;
  const int k = s - fold_;
  if (k < levels_) return p ^ (p2_ >> (k + 1));  // halving: distance p2/2, p2/4, ...
  return p ^ (1 << (k - levels_));                 // doubling: distance 1, 2, ...
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
          std::max(1, spec.network.nics_per_node)};
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
  const bool spans_nodes =
      !ranks.empty() && std::any_of(ranks.begin(), ranks.end(), [&](int r) {
        return r / layout.gpus_per_node != ranks[0] / layout.gpus_per_node;
      });
  const std::vector<std::vector<int>> orders = channel_orders(layout, options.channels, spans_nodes);
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

HierarchicalPhases hierarchical_all_reduce(const std::vector<int>& ranks, double bytes, const RingLayout& layout,
                                           const CollectiveOptions& options) {
  // Group by node, keeping ring order inside each node.
  std::vector<std::vector<int>> nodes;
  std::map<int, std::size_t> index;
  for (int r : ring_order(ranks, layout, options)) {
    auto [it, fresh] = index.try_emplace(r / layout.gpus_per_node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(r);
  }
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

}  // namespace trainsim::plan
