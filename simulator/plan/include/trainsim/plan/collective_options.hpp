#pragma once
// The vocabulary of collectives that plans and scenarios speak (no SimGrid): algorithms, flow
// representations and the knobs of every collective call. The engine implements them
// (trainsim/engine/collectives.hpp).
#include <optional>
#include <string>
#include <vector>

namespace trainsim::plan {

/// All-reduce algorithm.
enum class Algorithm {
  ring,              ///< reduce-scatter + all-gather around one ring, 2(n−1) steps of S/n
  hierarchical,      ///< intra-node reduce-scatter, g parallel inter-node ring all-reduces on S/g, intra-node all-gather
  halving_doubling,  ///< recursive halving reduce-scatter + recursive doubling all-gather, 2·log2(n) steps
  tree,              ///< double binary tree (each tree S/2), reduce then broadcast, pipelined in chunks
};

/// How the engine represents a collective's flows (see trainsim/engine/collectives.hpp).
enum class Representation { automatic, coarse, lockstep, step };

/// "auto", "coarse", "lockstep", "step" → the representation; nullopt otherwise.
std::optional<Representation> parse_representation(const std::string& name);
/// The names parse_representation accepts.
std::vector<std::string> representation_names();

std::string to_string(Algorithm a);
std::string to_string(Representation r);

}  // namespace trainsim::plan
