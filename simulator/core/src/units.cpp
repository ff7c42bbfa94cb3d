#include "trainsim/core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "trainsim/core/enum_names.hpp"

namespace trainsim {

namespace {
constexpr EnumNames<Precision, 4> kPrecisions{
    {{{Precision::fp32, "fp32"}, {Precision::tf32, "tf32"}, {Precision::fp16, "fp16"}, {Precision::bf16, "bf16"}}}};
}  // namespace

std::string_view to_string(Precision p) {
  return kPrecisions.name(p);
}

std::optional<Precision> parse_precision(std::string_view text) {
  return kPrecisions.parse(text);
}

std::vector<std::string> precision_names() {
  return kPrecisions.names();
}

int bytes_per_element(Precision p) { return (p == Precision::fp32 || p == Precision::tf32) ? 4 : 2; }

std::optional<double> parse_byte_size(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
                               text[end] == 'e' || text[end] == 'E')) {
    // an 'e' followed by a letter starts no exponent (there is no such suffix, but be strict)
    ++end;
  }
  if (end == 0) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (ec != std::errc() || ptr != text.data() + end || value < 0 || !std::isfinite(value)) return std::nullopt;
  std::string suffix;
  for (char c : text.substr(end)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char*, double> table[] = {
      {"", 1.0},          {"B", 1.0},          {"K", kKiB},          {"KIB", kKiB},     {"M", kMiB},
      {"MIB", kMiB},      {"G", kGiB},         {"GIB", kGiB},        {"T", kGiB * 1024}, {"TIB", kGiB * 1024},
      {"KB", 1e3},        {"MB", 1e6},         {"GB", 1e9},          {"TB", 1e12}};
  for (const auto& [name, multiplier] : table)
    if (suffix == name) return value * multiplier;
  return std::nullopt;
}

namespace {
std::string printf_string(const char* format, double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value, unit);
  return buffer;
}
}  // namespace

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  return printf_string(i == 0 ? "%.0f %s" : "%.2f %s", bytes, units[i]);
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 3600.0) return printf_string("%.2f %s", seconds / 3600.0, "h");
  if (a >= 1.0) return printf_string("%.3f %s", seconds, "s");
  if (a >= 1e-3) return printf_string("%.3f %s", seconds * 1e3, "ms");
  if (a >= 1e-6) return printf_string("%.3f %s", seconds * 1e6, "us");
  return printf_string("%.1f %s", seconds * 1e9, "ns");
}

DisplayUnit seconds_unit_for(double largest_seconds) {
  const double a = std::fabs(largest_seconds);
  if (a >= 10.0) return {"s", 1.0, 3};
  if (a >= 10e-6) return {"ms", 1e-3, 2};
  return {"µs", 1e-6, 2};
}

DisplayUnit bytes_unit_for(double largest_bytes) {
  const double a = std::fabs(largest_bytes);
  if (a >= kGiB) return {"GiB", kGiB, 2};
  if (a >= kMiB) return {"MiB", kMiB, 2};
  if (a >= kKiB) return {"KiB", kKiB, 2};
  return {"B", 1.0, 0};
}

std::string format_rate_GBps(double bytes_per_s) { return printf_string("%.2f %s", bytes_per_s / 1e9, "GB/s"); }

std::string format_si(double value) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(value) >= 1000.0 && i < 6) {
    value /= 1000.0;
    ++i;
  }
  return printf_string(i == 0 ? "%.0f%s" : "%.3g %s", value, prefixes[i]);
}

}  // namespace trainsim
