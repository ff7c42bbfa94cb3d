// libFuzzer target: the platform reader (presets with overrides, full descriptions, topology
// shapes) and what is derived from a valid spec: its JSON and its network summary.
#include "fuzz_input.hpp"
#include "trainsim/platforms/platform_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_json(data, size, [](const trainsim::JsonNode& root) {
    const trainsim::platforms::PlatformSpec spec = trainsim::platforms::read_platform_spec(root);
    (void)trainsim::platforms::to_json(spec);
    (void)trainsim::platforms::summarize_network(spec);
  });
}
