#pragma once
#include <string_view>

namespace trainsim {

/// Whether `a` sorts before `b` with runs of digits compared by value: "host9" < "host10",
/// "node 2 NIC 0" < "node 10 NIC 0". Otherwise unsigned byte order (UTF-8: code point order); a
/// proper prefix sorts first.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace trainsim
