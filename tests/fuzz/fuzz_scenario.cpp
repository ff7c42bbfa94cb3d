// libFuzzer target: the scenario reader. It reads the document only: the workload a scenario names
// is not loaded (the zoo is slow to build and the layer-graph target fuzzes that reader).
#include "fuzz_input.hpp"
#include "trainsim/plan/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_json(data, size, [](const trainsim::JsonNode& root) {
    (void)trainsim::plan::read_scenario(root.raw(), trainsim_fuzz::kSource);
  });
}
