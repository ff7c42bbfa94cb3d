#include "trainsim/plan/input_pipeline.hpp"

#include <limits>
#include <algorithm>

namespace trainsim::plan {

InputPipelineConfig InputPipelineConfig::read(const JsonNode& node) {
  node.allow_only({"decode_ms_per_sample", "loader_threads", "host_cores"});
  InputPipelineConfig c;
  c.decode_s_per_sample = node.at("decode_ms_per_sample").number_in(0, 1e6) * 1e-3;
  if (auto v = node.find("loader_threads")) {
    const std::int64_t n = v->int_at_least(1);
    if (n > 1024) throw v->error("must be ≤ 1024, got " + v->raw().dump());
    c.loader_threads = static_cast<int>(n);
  }
  if (auto v = node.find("host_cores")) {
    const std::int64_t n = v->int_at_least(1);
    if (n > 4096) throw v->error("must be ≤ 4096, got " + v->raw().dump());
    c.host_cores = static_cast<int>(n);
  }
  return c;
}

InputPipelineTiming input_pipeline_timing(const InputPipelineConfig& config, double batch, int gpus_per_node, double iteration_s) {
  InputPipelineTiming t;
  t.loader_threads = config.loader_threads;
  // The node's GPUs share its host cores; loader threads beyond a GPU's share add nothing.
  t.cores_per_gpu = std::min(static_cast<double>(config.loader_threads), static_cast<double>(config.host_cores) / std::max(1, gpus_per_node));
  t.load_s = batch * config.decode_s_per_sample / t.cores_per_gpu;
  t.compute_iteration_s = iteration_s;
  t.wait_s = std::max(0.0, t.load_s - iteration_s);
  return t;
}

Json InputPipelineTiming::to_json() const {
  return Json{{"loader_threads", loader_threads}, {"cores_per_gpu", cores_per_gpu}, {"load_s", load_s},
              {"compute_iteration_s", compute_iteration_s}, {"wait_s", wait_s}};
}

InputPipelineTiming InputPipelineTiming::from_json(const JsonNode& node) {
  node.allow_only({"loader_threads", "cores_per_gpu", "load_s", "compute_iteration_s", "wait_s"});
  InputPipelineTiming t;
  t.loader_threads = node.at("loader_threads").int_in(1, std::numeric_limits<int>::max());
  t.cores_per_gpu = node.at("cores_per_gpu").as_number();
  t.load_s = node.at("load_s").as_number();
  t.compute_iteration_s = node.at("compute_iteration_s").as_number();
  t.wait_s = node.at("wait_s").as_number();
  return t;
}

}  // namespace trainsim::plan
