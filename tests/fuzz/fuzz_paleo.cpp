// libFuzzer target: the Paleo network reader (blocks and model-parallel splits included).
#include "fuzz_input.hpp"
#include "trainsim/workloads/layer_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_json(data, size, [](const trainsim::JsonNode& root) {
    (void)trainsim::workloads::parse_paleo_graph(root, trainsim_fuzz::kSource);
  });
}
