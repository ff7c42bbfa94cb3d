// Collective options and names: pure data, no SimGrid.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainsim/plan/collective_options.hpp"

namespace plan = trainsim::plan;

TEST(Representation, NamesRoundTripAndUnknownNamesAreRejected) {
  const auto names = plan::representation_names();
  EXPECT_EQ(names, (std::vector<std::string>{"auto", "coarse", "lockstep", "step"}));
  for (const auto& name : names) {
    const auto r = plan::parse_representation(name);
    ASSERT_TRUE(r.has_value()) << name;
    EXPECT_EQ(plan::to_string(*r), name);
  }
  EXPECT_FALSE(plan::parse_representation("automatic").has_value());
  EXPECT_FALSE(plan::parse_representation("").has_value());
}

TEST(BusBandwidthFactor, IsNcclTestsFactorPerOperation) {
  EXPECT_DOUBLE_EQ(plan::bus_bandwidth_factor(plan::CollectiveOp::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(plan::bus_bandwidth_factor(plan::CollectiveOp::reduce_scatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(plan::bus_bandwidth_factor(plan::CollectiveOp::all_gather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(plan::bus_bandwidth_factor(plan::CollectiveOp::broadcast, 16), 1.0);
}

TEST(CollectiveNames, OfAlgorithmsAndOperations) {
  EXPECT_EQ(plan::to_string(plan::Algorithm::halving_doubling), "halving_doubling");
  EXPECT_EQ(plan::to_string(plan::Algorithm::tree), "tree");
  EXPECT_EQ(plan::to_string(plan::Algorithm::nvls_tree), "nvls_tree");
  EXPECT_EQ(plan::to_string(plan::Algorithm::collnet_direct), "collnet_direct");
  EXPECT_EQ(plan::to_string(plan::Algorithm::collnet_chain), "collnet_chain");
  EXPECT_EQ(plan::to_string(plan::CollectiveOp::reduce_scatter), "reduce_scatter");
}
