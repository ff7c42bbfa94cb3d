// libFuzzer target: the ONNX model reader (protobuf parsing, graph structure, dimension binding,
// folding of integer shape arithmetic, ONNX shape inference, costing). Dynamic axes are bound as a
// scenario would bind them, so the fuzzer reaches inference and costing.
#include "fuzz_input.hpp"
#include "trainsim/workloads/onnx_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_text(data, size, [](const std::string& bytes) {
    trainsim::workloads::OnnxBindings bindings;
    bindings.batch = 2;
    bindings.sequence_length = 8;
    (void)trainsim::workloads::parse_onnx_model(bytes, "fuzz-input/model.onnx", bindings);
  });
}
