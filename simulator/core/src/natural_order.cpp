#include "trainsim/core/natural_order.hpp"

#include <cctype>
#include <cstddef>

namespace trainsim {

namespace {
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      const std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      // Bytes compare unsigned, so UTF-8 text sorts by code point whatever char's signedness.
      const auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
      if (ca != cb) return ca < cb;
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace trainsim
