// Accuracy against published measurements (DESIGN.md's protocol): calibrated on one GPU only.
#include <gtest/gtest.h>

#include <iostream>

#include "trainsim_test/cli.hpp"
#include "validation_cases.hpp"

TEST(Validation, PyTorchDdpAndTensorFlowDgx1PointsWithinTenPercentMape) {
  const auto report = trainsim_validation::run_validation(trainsim_test::test_data_dir() + "/validation");
  std::cout << report.markdown();
  EXPECT_GE(report.points.size(), 15u);
  EXPECT_LE(report.mape_percent(), 10.0);
}
