#include <gtest/gtest.h>

#include "trainsim_test/cli.hpp"

using trainsim_test::run_trainsim;

TEST(Cli, HelpExitsZero) {
  auto r = run_trainsim({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("trainsim"), std::string::npos);
}

TEST(Cli, VersionExitsZero) {
  auto r = run_trainsim({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("0.1.0"), std::string::npos);
}

TEST(Cli, UnknownCommandExitsTwo) {
  auto r = run_trainsim({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.err.empty());
}

TEST(Cli, NoCommandExitsTwo) {
  auto r = run_trainsim({});
  EXPECT_EQ(r.exit_code, 2);
}
