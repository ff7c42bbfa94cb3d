#include <gtest/gtest.h>

#include "trainsim/workloads/iteration_graph.hpp"

using namespace trainsim;
using namespace trainsim::workloads;

namespace {

LayerCost layer(const std::string& name, OpClass op, std::int64_t params, double flops, double in, double out) {
  LayerCost l;
  l.name = name;
  l.type = "test";
  l.op_class = op;
  l.params = params;
  l.flops_fwd = flops;
  l.flops_bwd_input = op == OpClass::data ? 0 : flops;
  l.flops_bwd_weight = params > 0 ? flops : 0;
  l.input_elements = in;
  l.output_elements = out;
  l.saved_elements = out;
  return l;
}

// data → a (1 Mi params) → relu → b (3 Mi params) → c (0.5 Mi params)
Workload toy() {
  Workload w;
  w.name = "toy";
  w.layers = {layer("data", OpClass::data, 0, 0, 0, 100),
              layer("a", OpClass::matmul, 1 << 20, 1000, 100, 200),
              layer("relu", OpClass::elementwise, 0, 200, 200, 200),
              layer("b", OpClass::matmul, 3 << 20, 3000, 200, 50),
              layer("c", OpClass::matmul, 1 << 19, 500, 50, 10)};
  return w;
}

}  // namespace

TEST(IterationGraph, ForwardAndBackwardScaleWithBatch) {
  IterationOptions o;
  o.batch = 8;
  const auto g = expand_iteration(toy(), o);
  ASSERT_EQ(g.forward.size(), 5u);
  EXPECT_DOUBLE_EQ(g.forward[1].flops, 8 * 1000.0);
  // fp32: (in + out)·batch·4 + params·4
  EXPECT_DOUBLE_EQ(g.forward[1].bytes, (100 + 200) * 8 * 4.0 + (1 << 20) * 4.0);
  ASSERT_EQ(g.backward.size(), 4u);  // data has no backward
  EXPECT_EQ(g.backward.front().layer, "c");
  EXPECT_EQ(g.backward.back().layer, "a");
  EXPECT_DOUBLE_EQ(g.backward[0].flops, 8 * 1000.0);  // c: input + weight gradient, 500 each
  EXPECT_EQ(g.backward[0].kernels, 2);
  EXPECT_EQ(g.backward[2].kernels, 1);  // relu: input gradient only
}

TEST(IterationGraph, BucketsFollowBackwardOrderAndCapacity) {
  IterationOptions o;
  o.bucket_bytes = 10.0 * kMiB;  // c (2 MiB) + b (12 MiB) overflow → b alone
  const auto g = expand_iteration(toy(), o);
  ASSERT_EQ(g.buckets.size(), 3u);
  EXPECT_EQ(g.buckets[0].layers, std::vector<std::string>{"c"});
  EXPECT_EQ(g.buckets[1].layers, std::vector<std::string>{"b"});
  EXPECT_EQ(g.buckets[2].layers, std::vector<std::string>{"a"});
  EXPECT_EQ(g.backward[g.buckets[1].ready_after].layer, "b");
  EXPECT_DOUBLE_EQ(g.gradient_bytes, ((1 << 20) + (3 << 20) + (1 << 19)) * 4.0);
  double sum = 0;
  for (const auto& b : g.buckets) sum += b.bytes;
  EXPECT_DOUBLE_EQ(sum, g.gradient_bytes);
}

TEST(IterationGraph, LargeBucketHoldsEverythingAndZeroMeansPerLayer) {
  IterationOptions o;
  o.bucket_bytes = 100.0 * kMiB;
  EXPECT_EQ(expand_iteration(toy(), o).buckets.size(), 1u);
  o.bucket_bytes = 0;
  EXPECT_EQ(expand_iteration(toy(), o).buckets.size(), 3u);
}

TEST(IterationGraph, FirstBucketCapacity) {
  IterationOptions o;
  o.bucket_bytes = 100.0 * kMiB;
  o.first_bucket_bytes = 1.0 * kMiB;  // c (2 MiB) alone first, then the rest together
  const auto g = expand_iteration(toy(), o);
  ASSERT_EQ(g.buckets.size(), 2u);
  EXPECT_EQ(g.buckets[0].layers, std::vector<std::string>{"c"});
  EXPECT_EQ(g.buckets[1].layers.size(), 2u);
}

TEST(IterationGraph, HalfPrecisionHalvesGradientBytes) {
  IterationOptions o;
  o.precision = Precision::fp16;
  const auto g = expand_iteration(toy(), o);
  EXPECT_DOUBLE_EQ(g.gradient_bytes, ((1 << 20) + (3 << 20) + (1 << 19)) * 2.0);
}

TEST(IterationGraph, OptimizerUpdateIsMemoryTrafficOverParameters) {
  IterationOptions o;
  o.optimizer = Optimizer::adam;
  const auto g = expand_iteration(toy(), o);
  const double params = (1 << 20) + (3 << 20) + (1 << 19);
  EXPECT_DOUBLE_EQ(g.update.bytes, 7 * 4.0 * params);
  o.optimizer = Optimizer::sgd;
  EXPECT_DOUBLE_EQ(expand_iteration(toy(), o).update.bytes, 3 * 4.0 * params);
}

TEST(IterationGraph, JsonDumpNamesBucketBoundaries) {
  const auto j = expand_iteration(toy(), IterationOptions{}).to_json();
  EXPECT_EQ(j["model"], "toy");
  EXPECT_EQ(j["buckets"].size(), 1u);
  EXPECT_EQ(j["buckets"][0]["ready_after"], "a");
  EXPECT_EQ(j["backward"].size(), 4u);
}
