#pragma once
// Which parameter server owns which variable: pure arithmetic on variable sizes, no SimGrid.
//
//   variables in creation order (forward layer order), each optionally split into partitions
//     round_robin:  v0→s0  v1→s1  v2→s2  v3→s0 …         TensorFlow's replica_device_setter default
//     greedy:       each to the least-loaded server so far, by bytes (first such server on ties):
//                   TensorFlow's GreedyLoadBalancingStrategy with byte_size_load_fn
//     sharded:      every server owns 1/servers of every bucket (BytePS / MXNet kvstore slicing)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::plan {

enum class VariablePlacement { round_robin, greedy, sharded };
std::string_view to_string(VariablePlacement placement);
/// "round_robin", "greedy", "sharded".
std::vector<std::string> variable_placement_names();
/// Inverse of to_string; nullopt for any other name.
std::optional<VariablePlacement> parse_variable_placement(std::string_view name);

/// A variable to place: one layer's parameters (the layer graph does not separate a layer's
/// kernel from its bias, so a layer is one variable).
struct Variable {
  std::string layer;
  double bytes = 0;
};

/// A variable, or one partition of it, and the server that owns it.
struct PlacedVariable {
  std::string layer;
  int part = 0;       ///< partition index, 0 … parts−1
  int parts = 1;      ///< partitions the variable was split into
  double bytes = 0;   ///< of this partition
  int server = 0;     ///< owner, 0 … servers−1
};

/// Places `variables` (creation order; zero-byte ones are skipped) on `servers` (≥ 1) servers.
/// partition_bytes > 0 splits a variable larger than it into ⌈bytes / partition_bytes⌉ equal
/// partitions, placed one after another like separate variables (TensorFlow's
/// fixed_size_partitioner gives each partition its own variable). `sharded` places nothing
/// (every bucket is split evenly instead): the result is empty.
/// The smallest `partition_MB` (1 KiB): 1e-9 MB asked for billions of partitions.
constexpr double kMinPartitionMB = 1.0 / 1024;
/// The most partitions a model's variables may be split into: each is a transfer between every
/// worker and its server, so time and memory grow with their count (1e-5 MB on ResNet-18, 4.7
/// million partitions, took 3.6 s and 500 MB; 1e-9 MB ran out of memory). TensorFlow's partitioned
/// models have hundreds to a few thousand variable shards.
constexpr std::int64_t kMaxVariablePartitions = 10000;

/// How many partitions `variables` are split into at `partition_bytes` (0 = no partitioning),
/// saturating at kMaxVariablePartitions + 1.
std::int64_t partition_count(const std::vector<Variable>& variables, double partition_bytes);
/// The smallest partition size, in bytes, that keeps `variables` within kMaxVariablePartitions.
double smallest_partition_bytes(const std::vector<Variable>& variables);

std::vector<PlacedVariable> place_variables(const std::vector<Variable>& variables, int servers, VariablePlacement placement,
                                            double partition_bytes);

/// Bytes per server of a set of layers (a bucket) under `placed`: what one worker pushes to and
/// pulls from each server for these layers. Layers absent from `placed` contribute nothing.
std::vector<double> bytes_per_server(const std::vector<PlacedVariable>& placed, const std::vector<std::string>& layers, int servers);

}  // namespace trainsim::plan
