#pragma once
// The three error families of trainsim:
//   InputError  – the user gave something invalid; `main` maps it to exit code 2.
//   RunError    – a valid run failed inside the simulated world or the solver; exit code 1.
//   TRAINSIM_CHECK – a broken invariant inside trainsim; prints file:line and aborts.
#include <stdexcept>
#include <string>

namespace trainsim {

/// Invalid user input. `what()` reads "source: /json/pointer: detail" (or "source: detail" when
/// the pointer is empty, or "source:LINE: detail" for text formats such as CSV, where the caller
/// puts the line into `location`).
class InputError : public std::runtime_error {
public:
  /// `source` names the file (or "--set", "command line", a preset name); `location` is a JSON
  /// pointer such as "/platform/nodes", a CSV line such as "line 12", or empty.
  InputError(std::string source, std::string location, std::string detail);

  const std::string& source() const noexcept { return source_; }
  const std::string& location() const noexcept { return location_; }
  const std::string& detail() const noexcept { return detail_; }

private:
  std::string source_;
  std::string location_;
  std::string detail_;
};

/// A valid run that could not complete (simulation error, solver failure, I/O failure on output).
class RunError : public std::runtime_error {
public:
  explicit RunError(const std::string& detail) : std::runtime_error(detail) {}
};

namespace detail {
[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);
}  // namespace detail

}  // namespace trainsim

/// Aborts with file:line when an internal invariant does not hold. Never use it on user input.
#define TRAINSIM_CHECK(condition, message)                                                     \
  do {                                                                                         \
    if (!(condition)) ::trainsim::detail::check_failed(__FILE__, __LINE__, #condition, (message)); \
  } while (false)
