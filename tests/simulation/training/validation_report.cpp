// Prints the validation table recorded in README.md (not a test: `build/tests/simulation/validation_report`).
#include <iostream>

#include "trainsim_test/cli.hpp"
#include "validation_cases.hpp"

int main() {
  const auto report = trainsim_validation::run_validation(trainsim_test::test_data_dir() + "/validation");
  std::cout << report.markdown();
  return 0;
}
