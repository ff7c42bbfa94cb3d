#include "trainsim/core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace trainsim {
namespace {
std::string compose(const std::string& source, const std::string& location, const std::string& detail) {
  std::string text = source.empty() ? std::string("input") : source;
  if (!location.empty()) text += ": " + location;
  return text + ": " + detail;
}
}  // namespace

InputError::InputError(std::string source, std::string location, std::string detail)
    : std::runtime_error(compose(source, location, detail)),
      source_(std::move(source)),
      location_(std::move(location)),
      detail_(std::move(detail)) {}

namespace detail {
void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "trainsim internal error at %s:%d: check '%s' failed: %s\n", file, line, condition,
               message.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail
}  // namespace trainsim
