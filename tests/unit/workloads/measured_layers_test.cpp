// The zoo's ResNet-50 and VGG16-bn against the gradient tensors measured on the real torchvision
// models (tests/data/validation/layer_backward_times: one row per parameter tensor, fp32 bytes,
// listed from the last layer back). Agreement tensor by tensor shows the layer structure, not just
// the total, is torchvision's.
#include <algorithm>

#include <gtest/gtest.h>

#include "trainsim/core/csv.hpp"
#include "trainsim/workloads/workload.hpp"
#include "trainsim_test/files.hpp"

namespace {

using trainsim::workloads::LayerCost;
using trainsim::workloads::load_workload;

std::vector<double> measured_tensor_bytes(const std::string& file) {
  const auto table = trainsim::CsvTable::read(trainsim_test::test_data_dir() + "/validation/layer_backward_times/" + file);
  const std::size_t column = table.column("param_bytes");
  std::vector<double> bytes;
  for (std::size_t row = 0; row < table.row_count(); ++row) bytes.push_back(table.number(row, column));
  return bytes;
}

// A layer's parameter tensors in the order their gradients appear in backward, 4 bytes each:
// batch norm β then γ; convolution (with `conv_bias`) and linear bias then weight, the bias being
// one value per output channel / feature.
std::vector<double> zoo_tensor_bytes_backward(const std::string& model, bool conv_bias) {
  const auto w = load_workload(model);
  std::vector<double> bytes;
  for (auto it = w.layers.rbegin(); it != w.layers.rend(); ++it) {
    const LayerCost& l = *it;
    if (l.params == 0) continue;
    const double p = static_cast<double>(l.params);
    if (l.type == "batchnorm") {
      bytes.insert(bytes.end(), {2 * p, 2 * p});  // β, γ: params/2 each, 4 bytes
    } else if (l.type == "linear" || (l.type == "conv2d" && conv_bias)) {
      const double bias = static_cast<double>(l.type == "linear" ? l.output_shape.back() : l.output_shape.front());
      bytes.insert(bytes.end(), {4 * bias, 4 * (p - bias)});
    } else {
      bytes.push_back(4 * p);
    }
  }
  return bytes;
}

TEST(MeasuredLayers, Vgg16BnTensorsInBackwardOrder) {
  EXPECT_EQ(zoo_tensor_bytes_backward("vgg16_bn", true), measured_tensor_bytes("vgg16_bn_v100_b32.csv"));
}

TEST(MeasuredLayers, Resnet50Tensors) {
  auto zoo = zoo_tensor_bytes_backward("resnet50", false);
  auto measured = measured_tensor_bytes("resnet50_v100_b32.csv");
  // The first and last tensors are fixed (fc bias and weight; conv1's weight); the order inside a
  // bottleneck depends on when autograd reaches the downsample branch, so compare as multisets.
  ASSERT_EQ(zoo.size(), measured.size());
  EXPECT_EQ(zoo.front(), measured.front());
  EXPECT_EQ(zoo.back(), measured.back());
  std::sort(zoo.begin(), zoo.end());
  std::sort(measured.begin(), measured.end());
  EXPECT_EQ(zoo, measured);
}

}  // namespace
