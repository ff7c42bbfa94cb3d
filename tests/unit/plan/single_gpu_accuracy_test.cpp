// The single-GPU compute model against measured iterations (tests/data/validation/single_gpu):
// uncalibrated iteration time, calibrated on one precision and batch of a model, memory against
// PyTorch's peak reserved memory. The figures are printed and held to the accuracy targets.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "trainsim/core/csv.hpp"
#include "trainsim/plan/gpu_memory.hpp"
#include "trainsim/plan/training_plan.hpp"
#include "trainsim/platforms/gpu_catalog.hpp"
#include "trainsim_test/files.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

struct Row {
  std::string gpu, model, precision, optimizer;
  int batch = 0;
  double iteration_s = 0, peak_reserved_bytes = 0;
};

std::vector<Row> rows(const std::string& file = "h100_training_2026.csv") {
  const CsvTable t = CsvTable::read(trainsim_test::test_data_dir() + "/validation/single_gpu/" + file);
  auto value = [&t](std::size_t i, const char* column) { return t.cell(i, t.column(column)); };
  std::vector<Row> out;
  for (std::size_t i = 0; i < t.row_count(); ++i) {
    // BERT-large (in the H200 set) has no zoo model.
    if (value(i, "status") != "ok" || value(i, "model") == "bert_large") continue;
    Row r;
    r.gpu = value(i, "gpu");
    r.model = value(i, "model") == "bert_base" ? "bert_base_mlm" : value(i, "model");
    r.precision = value(i, "precision");
    r.optimizer = value(i, "optimizer") == "adamw" ? "adam" : "momentum";
    r.batch = std::stoi(value(i, "batch_per_gpu"));
    r.iteration_s = t.number(i, t.column("iteration_s"));
    r.peak_reserved_bytes = t.number(i, t.column("peak_reserved_bytes"));
    out.push_back(r);
  }
  return out;
}

Json scenario(const Row& r, std::optional<double> samples_per_s = std::nullopt) {
  Json s{{"name", "single gpu"},
         {"workload",
          Json{{"model", r.model}, {"batch_per_gpu", r.batch}, {"precision", r.precision}, {"optimizer", r.optimizer}}},
         {"platform", Json{{"preset", "dgx-h100"}, {"gpu", r.gpu}, {"nodes", 1}, {"gpus_per_node", 1}}},
         {"strategy", Json{{"kind", "ring_allreduce"}}}};
  if (samples_per_s) s["calibration"] = Json{{"single_gpu_samples_per_s", *samples_per_s}};
  return s;
}

TrainingPlan plan_of(const Json& document) {
  const Scenario s = read_scenario(document, "single_gpu.json");
  return build_training_plan(s, load_scenario_workload(s));
}

}  // namespace

TEST(SingleGpuAccuracy, UncalibratedIterationTimeOnTheH100Rows) {
  double sum_abs = 0;
  std::map<std::string, std::pair<double, int>> by_precision;
  const auto all = rows();
  for (const Row& r : all) {
    const double predicted = plan_of(scenario(r)).single_gpu_iteration_s;
    if (std::getenv("TRAINSIM_LAYERS")) {
      const Scenario s = read_scenario(scenario(r), "x.json");
      const auto times =
          iteration_times(workloads::expand_iteration(load_scenario_workload(s), s.iteration_options(r.batch)),
                          s.platform.gpu, s.compute);
      const auto graph = workloads::expand_iteration(load_scenario_workload(s), s.iteration_options(r.batch));
      double by_kind[3] = {0, 0, 0};
      auto add = [&](const workloads::ComputeTask& t) {
        for (const auto& k : t.launches) {
          workloads::ComputeTask one;
          one.launches = {k};
          by_kind[static_cast<int>(k.kind)] += task_time_s(one, s.platform.gpu, s.workload.precision, s.compute);
        }
      };
      for (const auto& t : graph.forward) add(t);
      for (const auto& t : graph.backward) add(t);
      add(graph.update);
      std::printf("  gemm %.4f attention %.4f memory %.4f\n", by_kind[0], by_kind[1], by_kind[2]);
      std::printf("  gpu %.4f host %.4f fwd %.4f bwd %.4f update %.4f\n", times.gpu_s, times.host_s,
                  times.forward_total_s(), times.backward_total_s(), times.update_s);
    }
    const double error = (predicted - r.iteration_s) / r.iteration_s;
    std::printf("%-14s %-5s %4d  measured %8.4f s  predicted %8.4f s  %+6.1f %%\n", r.model.c_str(),
                r.precision.c_str(), r.batch, r.iteration_s, predicted, 100 * error);
    sum_abs += std::abs(error);
    by_precision[r.precision].first += error;
    by_precision[r.precision].second += 1;
  }
  const double mape = sum_abs / static_cast<double>(all.size());
  std::printf("MAPE %.1f %%\n", 100 * mape);
  EXPECT_LE(mape, 0.15);
  for (const auto& [precision, sum] : by_precision) {
    const double mean = sum.first / sum.second;
    std::printf("%s mean error %+.1f %%\n", precision.c_str(), 100 * mean);
    EXPECT_LE(std::abs(mean), 0.10) << precision;
  }
}

// The same measurement on an H200 (single_gpu/h200_training_2026.csv, taken after the model was
// built on the H100 rows: out of sample), with four more CNNs. Held to its figures within 2
// points either way, so that a change of the model shows: the model is fast on fp32 and tf32
// here, most at batch 256 of the models the H100 set lacks (Inception-v3, AlexNet, ResNet-101,
// GoogLeNet: 15–40 %), and slow at small batches (bf16 BERT-base up to +38 %).
TEST(SingleGpuAccuracy, UncalibratedIterationTimeOnTheH200RowsOutOfSample) {
  double sum_abs = 0;
  std::map<std::string, std::pair<double, int>> by_precision;
  const auto all = rows("h200_training_2026.csv");
  ASSERT_EQ(all.size(), 43u);
  for (const Row& r : all) {
    const double error = (plan_of(scenario(r)).single_gpu_iteration_s - r.iteration_s) / r.iteration_s;
    std::printf("%-14s %-5s %4d  measured %8.4f s  %+6.1f %%\n", r.model.c_str(), r.precision.c_str(), r.batch,
                r.iteration_s, 100 * error);
    sum_abs += std::abs(error);
    by_precision[r.precision].first += error;
    by_precision[r.precision].second += 1;
  }
  const double mape = sum_abs / static_cast<double>(all.size());
  std::printf("MAPE %.1f %%\n", 100 * mape);
  EXPECT_NEAR(mape, 0.210, 0.02);
  const std::map<std::string, double> expected{{"fp32", -0.161}, {"tf32", -0.115}, {"bf16", -0.042}};
  for (const auto& [precision, sum] : by_precision) {
    std::printf("%s mean error %+.1f %%\n", precision.c_str(), 100 * sum.first / sum.second);
    EXPECT_NEAR(sum.first / sum.second, expected.at(precision), 0.02) << precision;
  }
}

// Per-layer times of ResNet-50 and VGG-16 (tf32, batch 64) against the measured leaf modules.
TEST(SingleGpuAccuracy, LayerTimesByType) {
  const CsvTable t =
      CsvTable::read(trainsim_test::test_data_dir() + "/validation/single_gpu/h100_layer_times_2026.csv");
  const auto& gpu = platforms::gpu_by_name("H100-SXM");
  for (const std::string model : {"resnet50", "vgg16"}) {
    const auto w = workloads::load_workload(model);
    workloads::IterationOptions o;
    o.batch = 64;
    o.precision = Precision::tf32;
    const auto g = workloads::expand_iteration(w, o);
    const ComputeModelOptions options;
    std::map<std::string, double> fwd, bwd;
    for (const auto& task : g.forward) fwd[task.layer] = task_time_s(task, gpu, o.precision, options);
    for (const auto& task : g.backward) bwd[task.layer] = task_time_s(task, gpu, o.precision, options);
    std::map<std::string, std::array<double, 4>> by_type;
    for (std::size_t i = 0; i < t.row_count(); ++i) {
      if (t.cell(i, t.column("model")) != model) continue;
      std::string layer = t.cell(i, t.column("layer"));
      const std::string type = t.cell(i, t.column("type"));
      if (!fwd.count(layer)) continue;
      auto& a = by_type[type];
      a[0] += t.number(i, t.column("forward_s"));
      a[1] += fwd[layer];
      a[2] += t.number(i, t.column("backward_s"));
      a[3] += bwd[layer];
      if (std::getenv("TRAINSIM_LAYERS"))
        std::printf("%s %-24s fwd %8.1f us model %8.1f   bwd %8.1f us model %8.1f\n", model.c_str(), layer.c_str(),
                    1e6 * t.number(i, t.column("forward_s")), 1e6 * fwd[layer],
                    1e6 * t.number(i, t.column("backward_s")), 1e6 * bwd[layer]);
    }
    for (const auto& [type, a] : by_type)
      std::printf("%-9s %-18s forward %7.2f ms (model %7.2f)  backward %7.2f ms (model %7.2f)\n", model.c_str(),
                  type.c_str(), 1e3 * a[0], 1e3 * a[1], 1e3 * a[2], 1e3 * a[3]);
  }
}

// Peak reserved memory (torch.cuda.max_memory_reserved) against the model's.
TEST(SingleGpuAccuracy, MemoryAgainstPeakReserved) {
  double sum_abs = 0;
  const auto all = rows();
  for (const Row& r : all) {
    const Scenario s = read_scenario(scenario(r), "single_gpu.json");
    const auto m = estimate_gpu_memory(load_scenario_workload(s), s.iteration_options(r.batch));
    const double error = (m.peak_reserved() - r.peak_reserved_bytes) / r.peak_reserved_bytes;
    std::printf("%-14s %-5s %4d  reserved %6.2f GB  predicted %6.2f GB (allocated %6.2f)  %+6.1f %%\n", r.model.c_str(),
                r.precision.c_str(), r.batch, r.peak_reserved_bytes / 1e9, m.peak_reserved() / 1e9,
                m.peak_allocated() / 1e9, 100 * error);
    sum_abs += std::abs(error);
  }
  const double mape = sum_abs / static_cast<double>(all.size());
  std::printf("memory MAPE %.1f %%\n", 100 * mape);
  EXPECT_LE(mape, 0.10);
}

// Calibrated on one row of a model (its precision and batch, given as calibration.precision and
// calibration.batch_per_gpu), the model's other rows: every row takes its turn as the calibration
// point. Printed beside it: one factor on the whole iteration (the calibration before the
// host/engine attribution), for comparison.
TEST(SingleGpuAccuracy, CalibratedOnOnePrecisionAndBatch) {
  const auto all = rows();
  std::map<std::string, std::vector<Row>> by_model;
  for (const Row& r : all) by_model[r.model].push_back(r);
  std::map<std::string, double> uncalibrated;
  for (const Row& r : all)
    uncalibrated[r.model + r.precision + std::to_string(r.batch)] = plan_of(scenario(r)).single_gpu_iteration_s;
  auto model_s = [&](const Row& r) { return uncalibrated.at(r.model + r.precision + std::to_string(r.batch)); };
  // Sums of absolute errors: [attributed, one factor] × [another batch, another precision].
  double pair_sum[2][2] = {{0, 0}, {0, 0}};
  int pairs[2] = {0, 0};
  double sum = 0, sum_one_factor = 0, worst = 0;
  int choices = 0;
  for (const auto& [model, group] : by_model) {
    if (group.size() < 2) continue;
    for (const Row& c : group) {
      const double one_factor = c.iteration_s / model_s(c);
      double abs_sum = 0, abs_sum_one_factor = 0;
      int n = 0;
      for (const Row& r : group) {
        if (&r == &c) continue;
        Json doc = scenario(r, c.batch / c.iteration_s);
        doc["calibration"]["precision"] = c.precision;
        doc["calibration"]["batch_per_gpu"] = c.batch;
        const double error = std::abs(plan_of(doc).single_gpu_iteration_s - r.iteration_s) / r.iteration_s;
        const double error_one_factor = std::abs(one_factor * model_s(r) - r.iteration_s) / r.iteration_s;
        const int kind = r.precision == c.precision ? 0 : 1;
        pair_sum[0][kind] += error;
        pair_sum[1][kind] += error_one_factor;
        ++pairs[kind];
        abs_sum += error;
        abs_sum_one_factor += error_one_factor;
        ++n;
      }
      const double mape = abs_sum / n;
      std::printf("%-14s calibrated on %-5s %4d: its other rows %5.1f %% (one factor: %5.1f %%)\n", model.c_str(),
                  c.precision.c_str(), c.batch, 100 * mape, 100 * abs_sum_one_factor / n);
      worst = std::max(worst, mape);
      sum += mape;
      sum_one_factor += abs_sum_one_factor / n;
      ++choices;
    }
  }
  const double mean = sum / choices;
  std::printf("calibrated MAPE %.1f %% (mean over calibration choices; one factor: %.1f %%), worst choice %.1f %%\n",
              100 * mean, 100 * sum_one_factor / choices, 100 * worst);
  std::printf("another batch, same precision (%d pairs): %.1f %% (one factor %.1f %%)\n", pairs[0],
              100 * pair_sum[0][0] / pairs[0], 100 * pair_sum[1][0] / pairs[0]);
  std::printf("another precision (%d pairs): %.1f %% (one factor %.1f %%)\n", pairs[1], 100 * pair_sum[0][1] / pairs[1],
              100 * pair_sum[1][1] / pairs[1]);
  EXPECT_LE(mean, 0.10);
}

namespace {

// The measured rows of a file of h100_*_2026.csv with the zoo's names.
std::string zoo_name(const std::string& measured) {
  if (measured == "gpt2_small") return "gpt2";
  return measured;
}

Json measured_scenario(const std::string& model, const std::string& precision, int batch, bool checkpointing,
                       int accumulation_steps = 1) {
  Row r;
  r.gpu = "H100-SXM";
  r.model = zoo_name(model);
  r.precision = precision;
  r.optimizer = model == "resnet50" ? "momentum" : "adam";
  r.batch = batch;
  Json s = scenario(r);
  if (checkpointing) s["workload"]["activation_checkpointing"] = true;
  if (accumulation_steps > 1) s["workload"]["accumulation_steps"] = accumulation_steps;
  return s;
}

// The single-GPU memory estimate of a measured row: per-block checkpointing is every layer.
MemoryEstimate measured_memory(const std::string& model, const std::string& precision, int batch, bool checkpointing) {
  const Scenario s = read_scenario(measured_scenario(model, precision, batch, checkpointing), "memory.json");
  const auto w = load_scenario_workload(s);
  return estimate_gpu_memory(w, s.iteration_options(batch), data_parallel_memory(s, w, {}, checkpointing ? 1 : 0));
}

CsvTable validation_table(const char* file) {
  return CsvTable::read(trainsim_test::test_data_dir() + "/validation/single_gpu/" + file);
}

}  // namespace

// Hugging Face's per-block gradient checkpointing (gradient_checkpointing_enable) against
// `activation_checkpointing: true` (our transformer layers are the blocks): what it costs in time
// (the ratio to the same run without it) and what it leaves reserved.
TEST(SingleGpuAccuracy, CheckpointingTimeAndMemory) {
  const CsvTable t = validation_table("h100_recompute_2026.csv");
  auto cell = [&t](std::size_t i, const char* column) { return t.cell(i, t.column(column)); };
  std::map<std::string, double> measured_without;
  double worst_ratio = 0, memory_abs = 0;
  int memory_rows = 0;
  for (std::size_t i = 0; i < t.row_count(); ++i) {
    ASSERT_EQ(cell(i, "status"), "ok");
    const std::string model = cell(i, "model"), precision = cell(i, "precision");
    const int batch = std::stoi(cell(i, "batch_per_gpu"));
    const bool checkpointing = cell(i, "checkpointing") == "1";
    const std::string key = model + precision + std::to_string(batch);
    const double measured_s = t.number(i, t.column("iteration_s"));
    if (!checkpointing) {
      measured_without[key] = measured_s;
      continue;
    }
    const Json with = measured_scenario(model, precision, batch, true);
    const double ratio = plan_of(with).single_gpu_iteration_s /
                         plan_of(measured_scenario(model, precision, batch, false)).single_gpu_iteration_s;
    const double measured_ratio = measured_s / measured_without.at(key);
    const double reserved = measured_memory(model, precision, batch, true).peak_reserved();
    const double measured_reserved = t.number(i, t.column("peak_reserved_bytes"));
    const double memory_error = (reserved - measured_reserved) / measured_reserved;
    std::printf(
        "%-11s %-4s %3d  time with/without measured %.3f model %.3f (%+5.1f %%)  reserved %6.2f GB model "
        "%6.2f GB (%+5.1f %%)\n",
        model.c_str(), precision.c_str(), batch, measured_ratio, ratio, 100 * (ratio / measured_ratio - 1),
        measured_reserved / 1e9, reserved / 1e9, 100 * memory_error);
    worst_ratio = std::max(worst_ratio, std::abs(ratio / measured_ratio - 1));
    memory_abs += std::abs(memory_error);
    ++memory_rows;
  }
  ASSERT_EQ(memory_rows, 4);
  std::printf("worst time ratio error %.1f %%, reserved memory MAPE %.1f %%\n", 100 * worst_ratio,
              100 * memory_abs / memory_rows);
  EXPECT_LE(worst_ratio, 0.12);
  EXPECT_LE(memory_abs / memory_rows, 0.12);
}

// The largest micro-batch that trains (two optimizer steps, measured by doubling then bisection)
// against `largest_batch`, without and with per-block checkpointing.
TEST(SingleGpuAccuracy, LargestBatchWithAndWithoutCheckpointing) {
  const CsvTable t = validation_table("h100_largest_batch_2026.csv");
  auto cell = [&t](std::size_t i, const char* column) { return t.cell(i, t.column(column)); };
  double sum_abs = 0;
  for (std::size_t i = 0; i < t.row_count(); ++i) {
    const bool checkpointing = cell(i, "checkpointing") == "1";
    const TrainingPlan p = plan_of(measured_scenario(cell(i, "model"), cell(i, "precision"), 8, checkpointing));
    ASSERT_TRUE(p.largest_batch.has_value());
    const double model = static_cast<double>(checkpointing ? p.largest_batch->with_checkpointing
                                                           : p.largest_batch->without_checkpointing);
    const double measured = t.number(i, t.column("largest_fitting"));
    const double error = (model - measured) / measured;
    std::printf("%-11s %-4s checkpointing %d  largest batch measured %4.0f model %4.0f (%+5.1f %%)\n",
                cell(i, "model").c_str(), cell(i, "precision").c_str(), checkpointing ? 1 : 0, measured, model,
                100 * error);
    EXPECT_LE(std::abs(error), 0.10);
    sum_abs += std::abs(error);
  }
  std::printf("largest batch MAPE %.1f %%\n", 100 * sum_abs / static_cast<double>(t.row_count()));
  EXPECT_LE(sum_abs / static_cast<double>(t.row_count()), 0.06);
}

// One optimizer step over k micro-batches (loss / k, a backward each, one step), two runs: how the
// step grows with k (4 against 2 micro-batches: both add into stored gradients; the one-step rows
// time a single iteration with more spread), and the uncalibrated error at k = 4.
TEST(SingleGpuAccuracy, AccumulationSteps) {
  const CsvTable t = validation_table("h100_accumulation_2026.csv");
  auto cell = [&t](std::size_t i, const char* column) { return t.cell(i, t.column(column)); };
  std::map<std::pair<std::string, std::string>, std::map<int, double>> measured;  // (run, model) → k → s
  std::map<std::string, std::pair<std::string, int>> settings;
  for (std::size_t i = 0; i < t.row_count(); ++i) {
    const std::string model = cell(i, "model");
    measured[{cell(i, "run"), model}][std::stoi(cell(i, "accumulation_steps"))] = t.number(i, t.column("step_s"));
    settings[model] = {cell(i, "precision"), std::stoi(cell(i, "batch_per_gpu"))};
  }
  std::map<std::string, std::map<int, double>> model_s;
  for (const auto& [model, setting] : settings)
    for (const int k : {2, 4})
      model_s[model][k] =
          plan_of(measured_scenario(model, setting.first, setting.second, false, k)).single_gpu_iteration_s;
  double worst_growth = 0;
  for (const auto& [key, steps] : measured) {
    const auto& [run, model] = key;
    const auto& [precision, batch] = settings.at(model);
    const double growth = model_s[model][4] / model_s[model][2], measured_growth = steps.at(4) / steps.at(2);
    std::printf(
        "run %s %-11s %-4s %3d  4 vs 2 micro-batches measured %.3f model %.3f (%+5.1f %%)  "
        "k = 4 uncalibrated %+5.1f %%\n",
        run.c_str(), model.c_str(), precision.c_str(), batch, measured_growth, growth,
        100 * (growth / measured_growth - 1), 100 * (model_s[model][4] / steps.at(4) - 1));
    worst_growth = std::max(worst_growth, std::abs(growth / measured_growth - 1));
  }
  ASSERT_EQ(measured.size(), 6u);
  std::printf("worst growth error %.1f %%\n", 100 * worst_growth);
  EXPECT_LE(worst_growth, 0.12);
}

// Peak memory of two optimizer steps at four batches, with and without per-block checkpointing:
// allocated and reserved against the model's (the recomputation's allocator slack was set from
// these rows).
TEST(SingleGpuAccuracy, MemoryByBatch) {
  const CsvTable t = validation_table("h100_memory_by_batch_2026.csv");
  auto cell = [&t](std::size_t i, const char* column) { return t.cell(i, t.column(column)); };
  double allocated_abs = 0, reserved_abs = 0;
  int rows = 0;
  for (std::size_t i = 0; i < t.row_count(); ++i) {
    if (cell(i, "status") != "ok") continue;
    const int batch = std::stoi(cell(i, "batch_per_gpu"));
    const bool checkpointing = cell(i, "checkpointing") == "1";
    const MemoryEstimate m = measured_memory(cell(i, "model"), cell(i, "precision"), batch, checkpointing);
    const double allocated = t.number(i, t.column("peak_allocated_bytes"));
    const double reserved = t.number(i, t.column("peak_reserved_bytes"));
    std::printf("%-11s ck %d %4d  allocated %6.2f model %6.2f (%+5.1f %%)  reserved %6.2f model %6.2f (%+5.1f %%)\n",
                cell(i, "model").c_str(), checkpointing ? 1 : 0, batch, allocated / 1e9, m.peak_allocated() / 1e9,
                100 * (m.peak_allocated() / allocated - 1), reserved / 1e9, m.peak_reserved() / 1e9,
                100 * (m.peak_reserved() / reserved - 1));
    allocated_abs += std::abs(m.peak_allocated() / allocated - 1);
    reserved_abs += std::abs(m.peak_reserved() / reserved - 1);
    ++rows;
  }
  ASSERT_EQ(rows, 15);
  std::printf("allocated MAPE %.1f %%, reserved MAPE %.1f %%\n", 100 * allocated_abs / rows, 100 * reserved_abs / rows);
  EXPECT_LE(allocated_abs / rows, 0.08);
  EXPECT_LE(reserved_abs / rows, 0.08);
}
