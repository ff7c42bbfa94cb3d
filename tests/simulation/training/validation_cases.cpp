#include "validation_cases.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "trainsim/core/csv.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim_test/fork.hpp"

namespace trainsim_validation {

using trainsim::Json;

namespace {

enum class Metric { seconds_per_iteration, samples_per_s };

struct Group {
  std::string label;
  std::string file;
  std::function<bool(const trainsim::CsvTable&, std::size_t)> selects;  // rows of this group (all GPU counts)
  Json scenario;   // base scenario; platform nodes/gpus_per_node set per point
  int gpus_per_node_max = 8;
  Metric metric;
};

std::string cell(const trainsim::CsvTable& t, std::size_t row, const char* column) { return t.cell(row, t.column(column)); }

Json base(const std::string& model, int batch, const std::string& preset, Json strategy) {
  return Json{{"name", model},
              {"workload", Json{{"model", model}, {"batch_per_gpu", batch}, {"precision", "fp32"}}},
              {"platform", Json{{"preset", preset}}},
              {"strategy", std::move(strategy)}};
}

std::vector<Group> groups() {
  std::vector<Group> out;
  // PyTorch DDP benchmark (2019): DDP's defaults, 25 MiB buckets with a 1 MiB first bucket, overlap.
  for (const char* model : {"resnet50", "resnet101"}) {
    out.push_back(Group{std::string("PyTorch DDP, DGX-1 V100, ") + model + ", batch 32", "pytorch_ddp_2019.csv",
                        [model](const trainsim::CsvTable& t, std::size_t r) {
                          return cell(t, r, "model") == model && cell(t, r, "strategy").rfind("ring_allreduce_nccl", 0) == 0;
                        },
                        base(model, 32, "dgx1-v100",
                             Json{{"kind", "ring_allreduce"}, {"bucket_MB", 25}, {"first_bucket_MB", 1}, {"overlap", true}}),
                        8, Metric::seconds_per_iteration});
  }
  // TensorFlow tf_cnn_benchmarks (2017) on DGX-1 P100, variable_update=replicated with NCCL:
  // one all-reduce per variable (no fusion), issued as gradients appear.
  struct Tf {
    const char* model;
    int batch;
  };
  for (Tf tf : {Tf{"alexnet", 512}, Tf{"vgg16", 64}, Tf{"vgg16", 32}}) {
    out.push_back(Group{std::string("TensorFlow replicated NCCL, DGX-1 P100, ") + tf.model + ", batch " + std::to_string(tf.batch),
                        "tf_benchmarks_2017.csv",
                        [tf](const trainsim::CsvTable& t, std::size_t r) {
                          return cell(t, r, "dataset") == "tf_benchmarks_2017_dgx1" && cell(t, r, "strategy") == "replicated_nccl" &&
                                 cell(t, r, "model") == tf.model && cell(t, r, "batch_per_gpu") == std::to_string(tf.batch);
                        },
                        base(tf.model, tf.batch, "dgx1-p100", Json{{"kind", "ring_allreduce"}, {"bucket_MB", 0}, {"overlap", true}}),
                        8, Metric::samples_per_s});
  }
  return out;
}

double predict(const Group& g, int gpus, double calibration_sps) {
  Json doc = g.scenario;
  const int per_node = std::min(gpus, g.gpus_per_node_max);
  doc["platform"]["nodes"] = (gpus + per_node - 1) / per_node;
  doc["platform"]["gpus_per_node"] = per_node;
  doc["calibration"] = Json{{"single_gpu_samples_per_s", calibration_sps}};
  const std::string answer = trainsim_test::run_forked([&] {
    const auto scenario = trainsim::plan::read_scenario(doc, "validation:" + g.label);
    return trainsim::engine::simulate_iteration(scenario, {}).to_json().dump();
  });
  const auto result = trainsim::plan::IterationResult::from_json(trainsim::parse_json_text(answer, "simulated result"));
  return g.metric == Metric::seconds_per_iteration ? result.iteration_time_s : result.samples_per_s;
}

}  // namespace

double Point::error_percent() const { return 100.0 * std::fabs(predicted - measured) / measured; }

double Report::mape_percent() const {
  double sum = 0;
  for (const auto& p : points) sum += p.error_percent();
  return points.empty() ? 0 : sum / points.size();
}

std::string Report::markdown() const {
  std::string out = "| group | GPUs | measured | predicted | error |\n|---|---:|---:|---:|---:|\n";
  char line[256];
  for (const auto& p : points) {
    std::snprintf(line, sizeof line, "| %s | %d | %.4g | %.4g | %.1f %% |\n", p.group.c_str(), p.gpus, p.measured, p.predicted, p.error_percent());
    out += line;
  }
  std::snprintf(line, sizeof line, "| **mean (MAPE)** | | | | **%.1f %%** |\n", mape_percent());
  return out + line;
}

Report run_validation(const std::string& validation_dir) {
  Report report;
  for (const Group& g : groups()) {
    const auto table = trainsim::CsvTable::read(validation_dir + "/" + g.file);
    double one_gpu = 0;
    std::vector<std::pair<int, double>> multi;
    for (std::size_t r = 0; r < table.row_count(); ++r) {
      if (!g.selects(table, r)) continue;
      const int gpus = static_cast<int>(table.number(r, table.column("gpus")));
      const double value = table.number(r, table.column("value"));
      if (gpus == 1)
        one_gpu = value;
      else
        multi.emplace_back(gpus, value);
    }
    if (one_gpu <= 0 || multi.empty()) throw std::runtime_error("validation group without data: " + g.label);
    const int batch = g.scenario["workload"]["batch_per_gpu"];
    const double calibration_sps = g.metric == Metric::seconds_per_iteration ? batch / one_gpu : one_gpu;
    for (const auto& [gpus, measured] : multi) report.points.push_back(Point{g.label, gpus, measured, predict(g, gpus, calibration_sps)});
  }
  return report;
}

}  // namespace trainsim_validation
