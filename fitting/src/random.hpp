#pragma once
// Reproducible randomness for fitting (private): seeds derived from one user seed, unbiased
// bounded integers whose sequence does not depend on the standard library, and k-fold splits.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace trainsim::fitting::detail {

/// SplitMix64 finaliser: derives independent seeds for each phase from the user's one seed.
inline std::uint64_t mix_seed(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform integer in [0, n), n ≥ 1, by rejection (std::uniform_int_distribution differs between
/// standard libraries; this does not).
inline std::size_t uniform_below(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - max % range;
  std::uint64_t v;
  do v = rng();
  while (v >= limit);
  return static_cast<std::size_t>(v % range);
}

/// The validation rows of each of `k` folds over rows 0…n−1 (a seeded shuffle dealt round-robin);
/// each fold sorted.
inline std::vector<std::vector<std::size_t>> make_folds(std::size_t n, unsigned k, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(mix_seed(seed ^ 0xf01d5ULL));
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[uniform_below(rng, i)]);
  std::vector<std::vector<std::size_t>> folds(k);
  for (std::size_t i = 0; i < n; ++i) folds[i % k].push_back(order[i]);
  for (auto& fold : folds) std::sort(fold.begin(), fold.end());
  return folds;
}

}  // namespace trainsim::fitting::detail
