#pragma once
// `network.nccl.tuner`: the rows of NCCL's example tuner plugin's CSV table (NcclTunerRow).
#include "trainsim/core/json_reader.hpp"
#include "trainsim/platforms/platform_spec.hpp"

namespace trainsim::platforms {

/// At most this many rows: a table of every size range, node count and collective fits many times.
inline constexpr std::size_t kMaxNcclTunerRows = 4096;

/// One row from its string (the plugin's CSV line). Throws InputError at `node` naming the field
/// and what it expects.
NcclTunerRow read_nccl_tuner_row(const JsonNode& node);

}  // namespace trainsim::platforms
