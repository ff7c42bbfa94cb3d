#include <gtest/gtest.h>

#include "trainsim/core/natural_order.hpp"

using trainsim::natural_less;

TEST(NaturalOrder, ComparesDigitRunsByValue) {
  EXPECT_TRUE(natural_less("host9", "host10"));
  EXPECT_FALSE(natural_less("host10", "host9"));
  EXPECT_TRUE(natural_less("node 2 NIC 0 → network", "node 10 NIC 0 → network"));
  EXPECT_TRUE(natural_less("node 1 NIC 7", "node 1 NIC 10"));
}

TEST(NaturalOrder, IsAStrictOrderWithPrefixesFirst) {
  EXPECT_FALSE(natural_less("gpu3", "gpu3"));
  EXPECT_TRUE(natural_less("gpu", "gpu0"));
  EXPECT_FALSE(natural_less("gpu0", "gpu"));
}

TEST(NaturalOrder, ComparesUtf8ByCodePoint) {
  // '↔' (U+2194, bytes E2 86 94) sorts after ASCII whatever the signedness of char.
  EXPECT_TRUE(natural_less("node 0 NIC 0 ↔ network", "node 0 ↔ switch"));
  EXPECT_FALSE(natural_less("node 0 ↔ switch", "node 0 NIC 0 ↔ network"));
}
