#include "nccl_tuner_table.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace trainsim::platforms {

namespace {

// The names NCCL's example tuner plugin reads (plugins/tuner/example/plugin.c: parseCollType,
// parseAlgorithm, parseProtocol). The plugin reads any other name as its default; trainsim refuses
// it, since a misspelt row would silently pick something else.
const std::vector<std::string> kCollectives{"allreduce", "allgather", "reducescatter", "broadcast", "reduce"};
const std::vector<std::string> kAlgorithms{"tree",      "ring", "collnet_direct", "collnet_chain", "nvls",
                                           "nvls_tree", "pat"};
const std::vector<std::string> kProtocols{"ll", "ll128", "simple"};
constexpr const char* kFields[] = {"collective_type", "min_bytes", "max_bytes", "algorithm",  "protocol",
                                   "channels",        "nNodes",    "nRanks",    "numPipeOps", "regBuff"};

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

class RowReader {
 public:
  explicit RowReader(const JsonNode& node) : node_(node), text_(node.as_string()) {
    // Split no further than an 11th field: a row of millions of commas is refused as it is read.
    std::size_t start = 0;
    while (fields_.size() < 11) {
      const std::size_t comma = text_.find(',', start);
      fields_.push_back(trimmed(text_.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (fields_.size() < 8 || fields_.size() > 10)
      throw node_.error(fmt::format("a tuner row has 8 to 10 comma-separated fields ({}), got {}",
                                    fmt::join(kFields, ","),
                                    fields_.size() > 10 ? "more" : std::to_string(fields_.size())));
  }
  std::size_t size() const { return fields_.size(); }
  const std::string& text() const { return text_; }

  std::string name(std::size_t i, const std::vector<std::string>& allowed) const {
    if (std::find(allowed.begin(), allowed.end(), fields_[i]) == allowed.end())
      throw error(i, fmt::format("one of {}", fmt::join(allowed, ", ")));
    return fields_[i];
  }
  /// An integer in [lo, hi]; `any` (-1) allowed besides when `any_allowed`.
  std::int64_t integer(std::size_t i, std::int64_t lo, std::int64_t hi, bool any_allowed) const {
    const std::string& f = fields_[i];
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    const bool ok = ec == std::errc() && end == f.data() + f.size() && !f.empty() &&
                    ((v >= lo && v <= hi) || (any_allowed && v == -1));
    if (!ok) throw error(i, fmt::format("{}an integer from {} to {}", any_allowed ? "-1 (any) or " : "", lo, hi));
    return v;
  }
  std::uint64_t bytes(std::size_t i) const {
    const std::string& f = fields_[i];
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || end != f.data() + f.size() || f.empty())
      throw error(i, "a whole number of bytes from 0 to 18446744073709551615");
    return v;
  }

 private:
  InputError error(std::size_t i, const std::string& expected) const {
    constexpr std::size_t kShown = 40;  // a field of a megabyte is named by its start
    const std::string& f = fields_[i];
    const std::string shown = f.size() > kShown ? f.substr(0, kShown) + "..." : f;
    return node_.error(fmt::format("field {} ({}): expected {}, got '{}'", i + 1, kFields[i], expected, shown));
  }
  const JsonNode& node_;
  std::string text_;
  std::vector<std::string> fields_;
};

}  // namespace

NcclTunerRow read_nccl_tuner_row(const JsonNode& node) {
  const RowReader r(node);
  NcclTunerRow row;
  row.text = r.text();
  row.collective = r.name(0, kCollectives);
  row.min_bytes = r.bytes(1);
  row.max_bytes = r.bytes(2);
  if (row.max_bytes < row.min_bytes)
    throw node.error(
        fmt::format("field 3 (max_bytes): expected at least min_bytes {}, got {}", row.min_bytes, row.max_bytes));
  row.algorithm = r.name(3, kAlgorithms);
  row.protocol = r.name(4, kProtocols);
  // 0, as -1, leaves NCCL's own (enqueue.cc overrides only with a positive count); MAXCHANNELS 64.
  row.channels = int(r.integer(5, 0, 64, true));
  if (row.channels == 0) row.channels = -1;
  row.nodes = int(r.integer(6, 1, 1'000'000, true));
  row.ranks = int(r.integer(7, 1, 1'000'000'000, true));
  if (r.size() > 8) row.pipe_ops = int(r.integer(8, 1, 1'000'000, true));
  if (r.size() > 9) row.reg_buff = int(r.integer(9, 0, 1, true));
  return row;
}

}  // namespace trainsim::platforms
