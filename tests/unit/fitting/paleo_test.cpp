// Paleo's scaling rules against their closed forms (Qi et al., ICLR 2017, section 4).
#include <gtest/gtest.h>

#include "trainsim/fitting/paleo.hpp"

using namespace trainsim::fitting;

TEST(Paleo, OneGpuExchangesNothing) {
  for (auto scheme : {PaleoScheme::one_to_all, PaleoScheme::tree, PaleoScheme::butterfly})
    EXPECT_DOUBLE_EQ(paleo_iteration_time_s(scheme, 0.25, 1e9, 1, 1e9), 0.25);
}

TEST(Paleo, SchemesFollowTheirClosedForms) {
  // S = 100 MB over 10 GB/s: t(S) = 10 ms.
  const double t1 = 0.1, s = 100e6, beta = 10e9, t = 0.01;
  EXPECT_NEAR(paleo_iteration_time_s(PaleoScheme::one_to_all, t1, s, 8, beta), t1 + 2 * 7 * t, 1e-12);
  EXPECT_NEAR(paleo_iteration_time_s(PaleoScheme::tree, t1, s, 8, beta), t1 + 2 * 3 * t, 1e-12);
  EXPECT_NEAR(paleo_iteration_time_s(PaleoScheme::butterfly, t1, s, 8, beta), t1 + 3 * t, 1e-12);
  // ⌈log2 6⌉ = 3: a non-power of two rounds the steps up.
  EXPECT_NEAR(paleo_iteration_time_s(PaleoScheme::butterfly, t1, s, 6, beta), t1 + 3 * t, 1e-12);
}

TEST(Paleo, StrategyKindsMapToSchemes) {
  EXPECT_EQ(paleo_scheme_for("parameter_server"), PaleoScheme::one_to_all);
  EXPECT_EQ(paleo_scheme_for("tree_allreduce"), PaleoScheme::tree);
  EXPECT_EQ(paleo_scheme_for("ring_allreduce"), PaleoScheme::butterfly);
  EXPECT_EQ(paleo_scheme_for("hierarchical_allreduce"), PaleoScheme::butterfly);
  EXPECT_EQ(to_string(PaleoScheme::one_to_all), "one-to-all");
}
