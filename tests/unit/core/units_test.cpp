#include <gtest/gtest.h>

#include "trainsim/core/units.hpp"

using namespace trainsim;

TEST(Units, ParsesByteSizesLikeNcclTests) {
  EXPECT_EQ(parse_byte_size("8"), 8.0);
  EXPECT_EQ(parse_byte_size("64K"), 65536.0);
  EXPECT_EQ(parse_byte_size("1G"), kGiB);
  EXPECT_EQ(parse_byte_size("4GiB"), 4 * kGiB);
  EXPECT_EQ(parse_byte_size("25MB"), 25e6);
  EXPECT_EQ(parse_byte_size("1.5k"), 1536.0);
  EXPECT_FALSE(parse_byte_size("").has_value());
  EXPECT_FALSE(parse_byte_size("-5").has_value());
  EXPECT_FALSE(parse_byte_size("12Q").has_value());
}

TEST(Units, Conversions) {
  EXPECT_DOUBLE_EQ(gbps_to_bytes_per_s(100), 12.5e9);
  EXPECT_DOUBLE_EQ(gBps_to_bytes_per_s(25), 25e9);
  EXPECT_DOUBLE_EQ(us_to_s(5), 5e-6);
  EXPECT_DOUBLE_EQ(bucket_mb_to_bytes(25), 25 * 1048576.0);
}

TEST(Units, Precision) {
  EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
  EXPECT_FALSE(parse_precision("fp8").has_value());
  EXPECT_EQ(bytes_per_element(Precision::tf32), 4);
  EXPECT_EQ(bytes_per_element(Precision::fp16), 2);
  EXPECT_EQ(to_string(Precision::tf32), "tf32");
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(25 * kMiB), "25.00 MiB");
  EXPECT_EQ(format_seconds(0.0123), "12.300 ms");
  EXPECT_EQ(format_si(4.089e9), "4.09 G");
}

TEST(Units, DisplayUnitForAColumn) {
  EXPECT_EQ(seconds_unit_for(2.554).symbol, "ms");  // 2554.00 ms: four digits before the point at most
  EXPECT_EQ(seconds_unit_for(12.0).symbol, "s");
  EXPECT_EQ(seconds_unit_for(9e-6).symbol, "µs");
  EXPECT_DOUBLE_EQ(seconds_unit_for(0.28).scale, 1e-3);
  EXPECT_EQ(bytes_unit_for(12 * kGiB).symbol, "GiB");
  EXPECT_EQ(bytes_unit_for(682 * kMiB).symbol, "MiB");
  EXPECT_EQ(bytes_unit_for(1023).symbol, "B");
  EXPECT_DOUBLE_EQ(bytes_unit_for(2 * kKiB).scale, kKiB);
}
