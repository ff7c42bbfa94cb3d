// The input pipeline's steady state in closed form: a batch loads in batch × decode ÷ cores, the
// GPUs wait for whatever of that the iteration does not hide.
#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/plan/input_pipeline.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

TEST(InputPipeline, LoadTimeAndWait) {
  InputPipelineConfig c;
  c.decode_s_per_sample = 0.004;
  c.loader_threads = 4;
  c.host_cores = 48;
  const auto slow = input_pipeline_timing(c, 256, 8, 0.2);  // 256 × 4 ms / 4 threads = 256 ms
  EXPECT_DOUBLE_EQ(slow.load_s, 0.256);
  EXPECT_NEAR(slow.wait_s, 0.056, 1e-12);
  EXPECT_TRUE(slow.bound());
  const auto hidden = input_pipeline_timing(c, 256, 8, 0.3);
  EXPECT_EQ(hidden.wait_s, 0);
  EXPECT_FALSE(hidden.bound());
}

TEST(InputPipeline, LoadersShareTheHostCores) {
  InputPipelineConfig c;
  c.decode_s_per_sample = 0.001;
  c.loader_threads = 16;
  c.host_cores = 48;
  // 8 GPUs × 16 threads on 48 cores: each GPU's loaders get 6 cores.
  const auto t = input_pipeline_timing(c, 60, 8, 0.0);
  EXPECT_DOUBLE_EQ(t.cores_per_gpu, 6);
  EXPECT_DOUBLE_EQ(t.load_s, 0.01);
}

TEST(InputPipeline, ReadsAndChecks) {
  auto read = [](const Json& j) { return InputPipelineConfig::read(json_root(std::make_shared<const Json>(j), "s.json")); };
  const auto c = read(Json{{"decode_ms_per_sample", 2.5}, {"loader_threads", 8}});
  EXPECT_DOUBLE_EQ(c.decode_s_per_sample, 0.0025);
  EXPECT_EQ(c.loader_threads, 8);
  EXPECT_THROW(read(Json{{"loader_threads", 8}}), InputError);
  EXPECT_THROW(read(Json{{"decode_ms_per_sample", 1}, {"loader_threads", 0}}), InputError);
  EXPECT_THROW(read(Json{{"decode_ms_per_sample", 1}, {"loader_thread", 4}}), InputError);
}

}  // namespace
