#pragma once
// Units and their parsing, in one place. Internally trainsim uses SI base units everywhere:
// seconds, bytes, bytes per second, FLOP, FLOP/s. Units appear in names (`latency_s`,
// `bandwidth_Gbps`) and are converted here and nowhere else.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Gigabits per second (network convention, 10^9 bit/s) to bytes per second.
constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }
/// Gigabytes per second (10^9 B/s, the convention of NVLink and nccl-tests) to bytes per second.
constexpr double gBps_to_bytes_per_s(double gBps) { return gBps * 1e9; }
constexpr double us_to_s(double us) { return us * 1e-6; }
/// The inverses, for reporting in the units users give.
constexpr double bytes_per_s_to_gbps(double bytes_per_s) { return bytes_per_s * 8.0 / 1e9; }
constexpr double bytes_per_s_to_gBps(double bytes_per_s) { return bytes_per_s / 1e9; }
constexpr double s_to_us(double s) { return s * 1e6; }
/// Megabytes as used for bucket sizes (PyTorch's bucket_cap_mb is MiB: 25 MB = 25·2^20 bytes).
constexpr double bucket_mb_to_bytes(double mb) { return mb * kMiB; }

/// Numeric precision of tensors and of the GPU's arithmetic.
enum class Precision { fp32, tf32, fp16, bf16 };

/// "fp32", "tf32", "fp16", "bf16".
std::string_view to_string(Precision p);
/// Inverse of to_string; nullopt for anything else.
std::optional<Precision> parse_precision(std::string_view text);
std::vector<std::string> precision_names();
/// Bytes per stored element: 4 for fp32 and tf32 (tf32 is an fp32 storage format), 2 otherwise.
int bytes_per_element(Precision p);

/// Parses a byte count: a plain integer ("1073741824"), or a number with a suffix. K, M, G, T and
/// KiB, MiB, GiB, TiB are binary (as in nccl-tests' -b/-e), KB, MB, GB, TB decimal. Case-insensitive
/// suffix; nullopt when malformed or negative.
std::optional<double> parse_byte_size(std::string_view text);

/// Human-readable figures for summaries: "25.0 MiB", "1.23 ms", "3.4 GB/s".
std::string format_bytes(double bytes);
std::string format_seconds(double seconds);
std::string format_rate_GBps(double bytes_per_s);
/// Compact number with SI prefix: 4.09 G, 25.6 M.
std::string format_si(double value);

/// A unit in which to show a set of values (a table column, an axis): its symbol, its size in the SI base
/// unit (value_in_unit = value / scale) and the decimals that keep about four significant digits.
struct DisplayUnit {
  std::string_view symbol;
  double scale = 1;
  int decimals = 2;
};
/// The unit for a set of durations whose largest is `largest_seconds`: s from 10 s on, ms from 10 µs on
/// (so that the largest reads 0.01 to 9999.99 ms), µs below.
DisplayUnit seconds_unit_for(double largest_seconds);
/// B, KiB, MiB or GiB: the largest binary unit not above `largest_bytes` (B below 1 KiB).
DisplayUnit bytes_unit_for(double largest_bytes);

}  // namespace trainsim
