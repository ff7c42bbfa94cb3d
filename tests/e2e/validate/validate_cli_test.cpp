// `trainsim validate` end to end on the real binary: what it writes, what it skips and says so, bad
// input (exit 2 naming the file and the line or pointer), determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>

#include "browser_check.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim/fitting/models.hpp"
#include "trainsim_test/cli.hpp"

using trainsim_test::run_trainsim;

namespace {

using trainsim_test::read_file;

std::string good(const std::string& name) { return trainsim_test::test_data_dir() + "/good/validate/" + name; }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the published CSVs end lines with CRLF
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST(ValidateCli, HelpNamesTheOutputs) {
  const auto r = run_trainsim({"validate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--systems"), std::string::npos);
  EXPECT_NE(r.out.find("simulated.csv"), std::string::npos);
}

// PyTorch DDP's ResNet-50 and ResNet-101 groups are simulated; ResNeXt-50 is not in the zoo and the
// TensorFlow VGG-16 rows come without their one-GPU row: both are reported and skipped.
TEST(ValidateCli, WritesTheOutputsAndSkipsWhatItCannotCalibrate) {
  const auto dir = trainsim_test::make_temp_dir("validate");
  const auto r = run_trainsim({"validate", good("measured.csv"), good("no_one_gpu.csv"), "--systems", good("systems.json"),
                               "--out", dir, "--jobs", "2", "--bootstrap", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| PyTorch DDP, DGX-1 V100, resnet50, batch 32 | 16 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped PyTorch DDP, DGX-1 V100, resnext50_32x4d, batch 32: model 'resnext50_32x4d' is not in the zoo"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped TensorFlow replicated NCCL, DGX-1 P100, vgg16, batch 64: no one-GPU row to calibrate on"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 groups validated, 2 skipped"), std::string::npos) << r.out;

  // simulated.csv: the measured columns first, one row per row of the simulated groups (one-GPU rows too).
  const auto measured = lines(read_file(good("measured.csv")));
  const auto simulated = lines(read_file(dir + "/simulated.csv"));
  ASSERT_EQ(simulated.size(), 1u + 10u);
  EXPECT_EQ(simulated[0].rfind(measured[0] + ",", 0), 0u) << simulated[0];
  for (const char* column : {"iteration_time_s", "model_bytes", "intra_node_bandwidth_GBps", "network_latency_us",
                             "compute_s", "exposed_communication_s", "single_gpu_time_s"})
    EXPECT_NE(simulated[0].find(column), std::string::npos) << column;

  EXPECT_EQ(lines(read_file(dir + "/errors.csv")).size(), 1u + 8u);  // multi-GPU points only
  // The excess columns: a point's iteration time less the group's measured one-GPU iteration (the
  // metric is seconds per iteration here: ResNet-50 0.1 s and ResNet-101 0.171 s on one GPU).
  const auto errors = trainsim::CsvTable::read(dir + "/errors.csv");
  for (std::size_t row = 0; row < errors.row_count(); ++row) {
    const double one_gpu = errors.cell(row, errors.column("group")).find("resnet101") != std::string::npos ? 0.171 : 0.1;
    EXPECT_NEAR(errors.number(row, errors.column("measured_excess_s")),
                errors.number(row, errors.column("measured")) - one_gpu, 1e-6) << row;
    EXPECT_NEAR(errors.number(row, errors.column("simulated_excess_s")),
                errors.number(row, errors.column("simulated")) - one_gpu, 1e-4) << row;  // 4 significant digits
  }
  const std::string mape = read_file(dir + "/mape.csv");
  EXPECT_NE(mape.find("dataset,pytorch_ddp_benchmark,,8,"), std::string::npos) << mape;
  EXPECT_NE(mape.find("\nall,,,8,"), std::string::npos) << mape;
  const std::string skipped = read_file(dir + "/skipped.csv");
  EXPECT_EQ(lines(skipped).size(), 1u + 2u) << skipped;

  // compare ran on the pair: its files, and its sections in the report.
  for (const char* file : {"measured.csv", "simulated.csv", "divergence.json", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/compare/pytorch_ddp_benchmark-allreduce/" + file)) << file;
  const std::string html = read_file(dir + "/report.html");
  for (const char* part : {"Speed-up over one GPU: pytorch_ddp_benchmark", "Constants", "Skipped groups",
                           "no one-GPU row to calibrate on", "MAPE Paleo"})
    EXPECT_NE(html.find(part), std::string::npos) << part;
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// validate's simulated.csv is simulated output like a sweep's: every built-in model fits it (fast
// DE settings: the fit runs; its quality is not the point).
TEST(ValidateCli, EveryModelFitsTheSimulatedCsv) {
  const auto dir = trainsim_test::make_temp_dir("validate-fit");
  const auto r = run_trainsim({"validate", good("measured.csv"), "--systems", good("systems.json"), "--out", dir, "--jobs", "2",
                               "--bootstrap", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& model : trainsim::fitting::named_models()) {
    const std::string y = model.name.find("epoch") != std::string::npos ? "epoch_time_s"
                          : model.name == "gustafson"                    ? "samples_per_s"
                                                                         : "iteration_time_s";
    const auto fit = run_trainsim({"fit", dir + "/simulated.csv", "--y", y, "--model", model.name, "--restarts", "1",
                                   "--generations", "20", "--lambda", "0", "--bootstrap", "0", "--no-baseline"});
    EXPECT_EQ(fit.exit_code, 0) << model.name << ": " << fit.err;
  }
}

TEST(ValidateCli, SameInputsGiveByteIdenticalOutputs) {
  std::vector<std::string> dirs;
  for (int run = 0; run < 2; ++run) {
    dirs.push_back(trainsim_test::make_temp_dir("validate-det"));
    const auto r = run_trainsim({"validate", good("measured.csv"), "--systems", good("systems.json"), "--out", dirs.back(),
                                 "--jobs", "2", "--bootstrap", "20"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  for (const char* file : {"simulated.csv", "errors.csv", "mape.csv", "skipped.csv", "report.html",
                           "compare/pytorch_ddp_benchmark-allreduce/divergence.json"})
    EXPECT_EQ(read_file(dirs[0] + "/" + file), read_file(dirs[1] + "/" + file)) << file;
}

namespace {

// Measured rows against the simulated default and band: MAPE, rows inside, median half-width.
struct BandTally {
  double ape = 0;
  int rows = 0, inside = 0;
  std::vector<double> half_widths;

  void add(double measured, double simulated, double low, double high) {
    ++rows;
    ape += std::abs(simulated - measured) / measured;
    inside += low <= measured && measured <= high;
    half_widths.push_back((high - low) / 2 / simulated);
  }
  double mape_percent() const { return 100 * ape / rows; }
  double median_half_width() const {
    std::vector<double> sorted = half_widths;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
};

// The parameter-server rows of tests/data/validation (every multi-GPU row whose strategy is a
// TensorFlow parameter server: DGX-1, GCE K80, p2.8xlarge and the distributed AWS runs) against
// the published stack at its defaults and its band (simulator/README.md "Software stack constants
// and bands", whose table these figures fill): the error at the defaults, how many measured values
// the band contains, and the band's median half-width as a share of the default.
// Checked on the output of the shipped systems' validation below: one run of `trainsim validate`
// serves both.
void expect_parameter_server_rows_inside_the_stack_band(const std::string& dir) {
  SCOPED_TRACE("parameter-server rows inside the stack band");

  // errors.csv holds the measured value of every multi-GPU row; its group names the model and the
  // batch ("TensorFlow parameter server on the CPU, GCE 8× K80, resnet50, batch 64").
  const auto errors = trainsim::CsvTable::read(dir + "/errors.csv");
  std::map<std::string, double> measured;  // dataset|model|batch|gpus → samples/s
  for (std::size_t row = 0; row < errors.row_count(); ++row) {
    const std::string group = errors.cell(row, errors.column("group"));
    if (group.find("parameter server") == std::string::npos) continue;
    const std::string batch = group.substr(group.rfind("batch ") + 6);
    const std::string head = group.substr(0, group.rfind(", batch "));
    const std::string model = head.substr(head.rfind(", ") + 2);
    measured[errors.cell(row, errors.column("dataset")) + "|" + model + "|" + batch + "|" +
             errors.cell(row, errors.column("gpus"))] = errors.number(row, errors.column("measured"));
  }
  const auto simulated = trainsim::CsvTable::read(dir + "/simulated.csv");
  BandTally tally;
  for (std::size_t row = 0; row < simulated.row_count(); ++row) {
    const auto cell = [&](const char* column) { return simulated.cell(row, simulated.column(column)); };
    if (cell("strategy").find("parameter_server") == std::string::npos || cell("gpus") == "1") continue;
    const std::string key = cell("dataset") + "|" + cell("model") + "|" + cell("batch_per_gpu") + "|" + cell("gpus");
    ASSERT_TRUE(measured.count(key)) << key;
    const double m = measured[key];
    const double s = std::stod(cell("samples_per_s"));
    ASSERT_FALSE(cell("samples_per_s_low").empty()) << key << ": the published stack gives every row a band";
    const double low = std::stod(cell("samples_per_s_low"));
    const double high = std::stod(cell("samples_per_s_high"));
    EXPECT_LE(low, s) << key;
    EXPECT_GE(high, s) << key;
    tally.add(m, s, low, high);
  }
  ASSERT_EQ(tally.rows, 62);
  std::cout << "parameter-server rows: " << tally.rows << ", MAPE " << tally.mape_percent() << " %, inside the band "
            << tally.inside << ", median half-width " << 100 * tally.median_half_width() << " %\n";
  // 4.1 % and 50 of 62 (80 %) today (2026-11-27): stragglers at the K80's clock spread and gRPC's
  // bytes parsed by the receiving process (7.8 % and 49 before; 40 while every read waited for the
  // last push). What the band still misses is listed in simulator/README.md: K80 rows just slower
  // than the band's slow end, DGX-1 rows above perfect scaling.
  EXPECT_LE(tally.mape_percent(), 6.0);
  EXPECT_LE(tally.median_half_width(), 0.35);
  EXPECT_GE(tally.inside, 50);
}

}  // namespace

// scenarios/README.md's accuracy table, through the command it shows: the shipped systems on the
// published measurements. Thresholds, not pinned numbers (the strategy models keep improving); the
// table itself is regenerated with `cmake --build build --target validation_report`.
TEST(Validation, ShippedSystemsOnThePublishedMeasurementsWithinThresholds) {
  const auto dir = trainsim_test::make_temp_dir("validation");
  const std::string data = trainsim_test::test_data_dir() + "/validation/";
  const auto r = run_trainsim({"validate", data + "nccl_allreduce.csv", data + "nvidia_dle_resnet50.csv",
                               data + "pytorch_ddp_2019.csv", data + "tf_benchmarks_2017.csv", "--systems",
                               trainsim_test::source_dir() + "/scenarios/validation/systems.json", "--out", dir, "--jobs",
                               "2", "--bootstrap", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // every simulation succeeded
  std::cout << read_file(dir + "/accuracy.md");

  // Every dataset of the published measurements is validated (nccl-tests timings excepted: `collective`).
  std::map<std::string, std::pair<double, double>> mape;  // dataset → (trainsim, Paleo)
  double overall = 0, overall_paleo = 0;
  const auto table = trainsim::CsvTable::read(dir + "/mape.csv");
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const std::string level = table.cell(row, table.column("level"));
    const double m = table.number(row, table.column("mape_percent"));
    const double p = table.number(row, table.column("paleo_mape_percent"));
    if (level == "dataset") mape[table.cell(row, table.column("dataset"))] = {m, p};
    if (level == "all") overall = m, overall_paleo = p;
  }
  for (const char* dataset : {"pytorch_ddp_benchmark", "nvidia_dle_resnet50_v1.5", "tf_benchmarks_2017_dgx1",
                              "tf_benchmarks_2017_gce_k80", "tf_benchmarks_2017_p2_8xlarge"}) {
    ASSERT_TRUE(mape.count(dataset)) << dataset;
    EXPECT_LE(mape[dataset].first, 20.0) << dataset;
  }
  // The distributed parameter-server runs place whole variables round robin and sum a worker's
  // eight towers on its host before one push and one pull per node, as tf_cnn_benchmarks'
  // distributed_replicated mode did (replica_device_setter, VariableMgrDistributedReplicated), with
  // the source's server counts (systems.json servers_at), each variable read after its own
  // barrier: 6.6 % today (12.5 % before stragglers took the K80's clock spread and each process
  // parsed what it receives; 27.4 % before the per-worker aggregation)
  // (simulator/README.md, Software stack constants and bands).
  ASSERT_TRUE(mape.count("tf_benchmarks_2017_aws_distributed"));
  EXPECT_LE(mape["tf_benchmarks_2017_aws_distributed"].first, 12.0);
  EXPECT_LE(mape["pytorch_ddp_benchmark"].first, 10.0);
  // The PyTorch DDP and TensorFlow (DGX-1, K80) datasets stay ≤ 10 % as collectives gain NCCL's
  // mechanisms (they map to the textbook ring_allreduce, simulator/README.md "Bucket size").
  for (const char* dataset : {"tf_benchmarks_2017_dgx1", "tf_benchmarks_2017_gce_k80", "tf_benchmarks_2017_p2_8xlarge"})
    EXPECT_LE(mape[dataset].first, 10.0) << dataset;
  EXPECT_LE(overall, 9.0);
  EXPECT_LT(overall, overall_paleo) << "the simulation should beat Paleo's scaling rules over all points";

  // The groups of the first validation (PyTorch DDP and TensorFlow's replicated NCCL on DGX-1) stay ≤ 10 %.
  const auto errors = trainsim::CsvTable::read(dir + "/errors.csv");
  double sum = 0;
  std::size_t points = 0;
  for (std::size_t row = 0; row < errors.row_count(); ++row) {
    const std::string group = errors.cell(row, errors.column("group"));
    if (group.rfind("PyTorch DDP, DGX-1 V100,", 0) == 0 || group.rfind("TensorFlow replicated NCCL, DGX-1 P100,", 0) == 0)
      sum += errors.number(row, errors.column("error_percent")), ++points;
  }
  EXPECT_EQ(points, 17u);
  EXPECT_LE(sum / points, 10.0);

  // The excess columns in images per second: iteration = batch × GPUs / throughput, so the two
  // excesses differ by batch × GPUs × (1/simulated − 1/measured); the GCE K80 ResNet-50 group
  // (51.9 images/s on one die, 99 on two) pays 2·64/99 − 64/51.9 = 59.8 ms at 2 GPUs.
  bool k80_row = false;
  for (std::size_t row = 0; row < errors.row_count(); ++row) {
    if (errors.cell(row, errors.column("metric")) != "samples_per_s") continue;
    const std::string group = errors.cell(row, errors.column("group"));
    const double batch = std::stod(group.substr(group.rfind("batch ") + 6));
    const double gpus = errors.number(row, errors.column("gpus"));
    const double measured = errors.number(row, errors.column("measured"));
    const double simulated = errors.number(row, errors.column("simulated"));
    const double expected = batch * gpus * (1 / simulated - 1 / measured);
    EXPECT_NEAR(errors.number(row, errors.column("simulated_excess_s")) - errors.number(row, errors.column("measured_excess_s")),
                expected, 2e-3 * batch * gpus / simulated) << group << " at " << gpus;  // 4 significant digits
    if (group == "TensorFlow parameter server on the CPU, GCE 8× K80, resnet50, batch 64" && gpus == 2) {
      k80_row = true;
      EXPECT_NEAR(errors.number(row, errors.column("measured_excess_s")), 2 * 64 / 99.0 - 64 / 51.9, 1e-4);
    }
  }
  EXPECT_TRUE(k80_row);
  expect_parameter_server_rows_inside_the_stack_band(dir);

  // The whole report (six datasets, eight comparisons) holds its layout in a browser.
  const std::string browser = trainsim_test::find_program("chromium");
  ASSERT_FALSE(browser.empty()) << "chromium not installed (Debian package chromium; .ci/setup installs it)";
  const auto check = trainsim_test::check_report_in_browser(browser, dir + "/report.html", dir);
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_GE(trainsim_test::count_of(check.counts, "verdicts"), 14) << check.counts;  // list + sections
  EXPECT_EQ(check.problems, "") << "layout problems in " << dir << "/report.html";
}

// Every parameter-server and host-staged row of tests/data/validation against the published
// stack at its defaults and its band, through the shipped systems (one `trainsim validate` run):
// TensorFlow's parameter servers of May 2017 (tf_benchmarks_2017.csv, 62 multi-GPU rows),
// Horovod's host-staged MPI all-reduce (horovod_2017.csv, 6), and Inception-v3 with distributed
// parameter servers on up to 128 nodes (cscs_distributed_tf_2017.csv, 21: Piz Daint, one P100 per
// node on Aries, a cluster of single-K80 p2.xlarge instances and one of 8-K80 p2.8xlarge
// instances, the source's ps-task count and variable update per size, systems.json servers_at).
// Together they are held to MAPE ≤ 12 %, the measured value inside the band on ≥ 80 % of the rows
// and a median half-width ≤ 35 % (simulator/README.md "Software stack constants and bands");
// each source's rows to their own figures below.
TEST(Validation, ParameterServerAndHostStagedRowsWithinTheirBands) {
  const auto dir = trainsim_test::make_temp_dir("validation-stack");
  const std::string data = trainsim_test::test_data_dir() + "/validation/";
  const std::vector<std::string> files{"tf_benchmarks_2017.csv", "horovod_2017.csv", "cscs_distributed_tf_2017.csv"};
  std::vector<std::string> args{"validate"};
  for (const auto& f : files) args.push_back(data + f);
  args.insert(args.end(), {"--systems", trainsim_test::source_dir() + "/scenarios/validation/systems.json", "--out",
                           dir, "--jobs", "2", "--bootstrap", "0"});
  const auto r = run_trainsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::cout << read_file(dir + "/accuracy.md");

  // A row: dataset, system, model, batch, GPUs and strategy, as the measured file and simulated.csv name it.
  const auto key_of = [](const trainsim::CsvTable& t, std::size_t row) {
    std::string key;
    for (const char* c : {"dataset", "system", "model", "batch_per_gpu", "gpus", "strategy"})
      key += t.cell(row, t.column(c)) + "|";
    return key;
  };
  std::map<std::string, double> measured;
  for (const auto& f : files) {
    const auto t = trainsim::CsvTable::read(data + f);
    for (std::size_t row = 0; row < t.row_count(); ++row) measured[key_of(t, row)] = t.number(row, t.column("value"));
  }
  const auto simulated = trainsim::CsvTable::read(dir + "/simulated.csv");
  std::map<std::string, BandTally> by_source;  // dataset (file) → its rows
  std::map<std::string, BandTally> by_system;  // the CSCS systems → their rows
  BandTally all, cscs_up_to_32_nodes_p2_xlarge;
  for (std::size_t row = 0; row < simulated.row_count(); ++row) {
    const auto cell = [&](const char* column) { return simulated.cell(row, simulated.column(column)); };
    if (cell("gpus") == "1" || cell("samples_per_s_low").empty()) continue;  // the stack acts on these rows only
    const std::string key = key_of(simulated, row);
    ASSERT_TRUE(measured.count(key)) << key;
    const double m = measured[key], s = std::stod(cell("samples_per_s"));
    const double low = std::stod(cell("samples_per_s_low")), high = std::stod(cell("samples_per_s_high"));
    EXPECT_LE(low, s) << key;
    EXPECT_GE(high, s) << key;
    const std::string dataset = cell("dataset");
    const std::string source = dataset.rfind("tf_benchmarks_2017", 0) == 0 ? "tf_benchmarks"
                               : dataset.rfind("horovod", 0) == 0          ? "horovod"
                                                                           : "cscs";
    by_source[source].add(m, s, low, high);
    all.add(m, s, low, high);
    if (source == "cscs") {
      by_system[cell("system")].add(m, s, low, high);
      if (cell("system") == "AWS p2.xlarge cluster" && std::stod(cell("nodes")) <= 32)
        cscs_up_to_32_nodes_p2_xlarge.add(m, s, low, high);
    }
    std::cout << key << " measured " << m << ", simulated " << s << " [" << low << ", " << high << "]\n";
  }
  const auto print = [](const std::string& name, const BandTally& t) {
    std::cout << name << ": " << t.rows << " rows, MAPE " << t.mape_percent() << " %, inside the band " << t.inside
              << ", median half-width " << 100 * t.median_half_width() << " %\n";
  };
  for (const auto& [name, t] : by_source) print(name, t);
  for (const auto& [name, t] : by_system) print(name, t);
  print("all", all);
  ASSERT_EQ(by_source["tf_benchmarks"].rows, 62);
  ASSERT_EQ(by_source["horovod"].rows, 6);
  ASSERT_EQ(by_source["cscs"].rows, 21);
  // All 89 rows: 7.7 % MAPE, 75 inside (84 %), median half-width 7.2 % today (2026-11-27).
  EXPECT_LE(all.mape_percent(), 12.0);
  EXPECT_GE(all.inside, 72);  // 80 % of 89, rounded up
  EXPECT_LE(all.median_half_width(), 0.35);
  // Horovod: 10.7 %, 5 of 6, 32 %; mpi_step_us's default and band are the median and range of what
  // these rows imply one at a time, so this holds the model to its own identification, not to
  // unseen runs. Inception-v3 on 16 GPUs, hidden behind its backward pass in the measurement, is
  // 22 % too slow and outside the band.
  EXPECT_LE(by_source["horovod"].mape_percent(), 12.0);
  EXPECT_GE(by_source["horovod"].inside, 5);
  // CSCS: Piz Daint 15.0 %, every row inside (its reads at the step's start overlap the forward
  // pass; 22.5 % while they waited for the last push and nothing overlapped them); p2.8xlarge
  // 6.4 %; p2.xlarge within 7 % up to 32 nodes. What the model misses is where both single-GPU-node
  // curves flatten: Piz Daint at 128 nodes and p2.xlarge at 64 and 128 are 57-140 % too fast
  // (scenarios/README.md, "Scaling out to 128 nodes").
  EXPECT_LE(by_system["Piz Daint"].mape_percent(), 16.0);
  EXPECT_LE(by_system["AWS p2.8xlarge cluster"].mape_percent(), 12.0);
  EXPECT_LE(cscs_up_to_32_nodes_p2_xlarge.mape_percent(), 8.0);
}

// A dataset no entry of SYSTEMS.json maps is reported and skipped (documented behaviour), not fatal:
// the other groups are validated.
TEST(ValidateCli, DatasetWithoutSystemMappingIsReportedAndSkipped) {
  const auto dir = trainsim_test::make_temp_dir("validate-unmapped");
  const auto r = run_trainsim({"validate", good("unmapped.csv"), good("measured.csv"), "--systems", good("systems.json"),
                               "--out", dir, "--jobs", "2", "--bootstrap", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string reason = "no system mapping for dataset 'tf_benchmarks_2017_gce_k80', system 'GCE n1-standard-32-k80x8', "
                             "gpu 'K80 (one GK210 die)' in " + good("systems.json");
  EXPECT_NE(r.out.find("skipped tf_benchmarks_2017_gce_k80 / GCE n1-standard-32-k80x8, parameter_server_cpu, resnet50, "
                       "batch 64: " + reason), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir + "/skipped.csv").find(reason), std::string::npos);
  EXPECT_NE(read_file(dir + "/report.html").find("no system mapping for dataset"), std::string::npos);
  EXPECT_NE(r.out.find("2 groups validated, 2 skipped"), std::string::npos) << r.out;  // and ResNeXt
}

// A row trainsim cannot simulate (16 GPUs in a DGX-1 node of 8) is skipped alone, named by its file
// and line on stderr, stdout, skipped.csv and the report; the group's other rows are validated, and
// a repeated row is a warning, counted once.
TEST(ValidateCli, RowItCannotSimulateIsSkippedAtItsLine) {
  const auto dir = trainsim_test::make_temp_dir("validate-row");
  const std::string header = "dataset,system,gpus,nodes,strategy,model,batch_per_gpu,precision,metric,value\n";
  const std::string row = "pytorch_ddp_benchmark,DGX-1 (V100) cluster,";
  const std::string tail = ",ring_allreduce_nccl (bucket 25MB),resnet50,32,fp32,seconds_per_iteration_p50,";
  std::ofstream(dir + "/m.csv") << header << row << "1,1" << tail << "0.1\n" << row << "8,1" << tail << "0.104\n"
                                << row << "16,1" << tail << "0.11\n" << row << "8,1" << tail << "0.104\n";
  const auto r = run_trainsim({"validate", dir + "/m.csv", "--systems", good("systems.json"), "--out", dir + "/out",
                               "--jobs", "2", "--bootstrap", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string where = dir + "/m.csv: line 4: 16 GPUs on 1 node (columns 'gpus', 'nodes')";
  EXPECT_NE(r.err.find("trainsim: warning: skipped row " + where), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/m.csv: line 5: repeats line 3 (8 GPUs on 1 node, value 0.104); counted once"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("1 groups validated, 0 skipped (1 more row skipped)"), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir + "/out/skipped.csv").find(where), std::string::npos);
  EXPECT_NE(read_file(dir + "/out/report.html").find(dir + "/m.csv: line 4: 16 GPUs on 1 node"), std::string::npos);  // quotes escaped
  EXPECT_NE(read_file(dir + "/out/mape.csv").find("\nall,,,1,"), std::string::npos);  // the 8-GPU point, once
}

// Bad input: exit 2 before anything runs, one message naming the file and the CSV line or JSON
// pointer. {good} = tests/data/good/validate, {bad} = tests/data/bad/validate, {dir} = a temporary
// folder holding the inline files of the case.
struct BadCase {
  const char* name;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> files;  // written into {dir} first
  std::vector<std::string> fragments;                      // each must appear in stderr
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class ValidateBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(ValidateBadInput, ExitsTwoNamingTheFileAndThePlace) {
  const BadCase& c = GetParam();
  const std::string dir = trainsim_test::make_temp_dir("validate-bad");
  auto expand = [&](std::string s) {
    const std::pair<std::string, std::string> vars[] = {{"{good}", trainsim_test::test_data_dir() + "/good/validate"},
                                                        {"{bad}", trainsim_test::test_data_dir() + "/bad/validate"},
                                                        {"{dir}", dir},
                                                        {"{dirname}", std::filesystem::path(dir).filename().string()}};
    for (const auto& [key, value] : vars)
      for (auto at = s.find(key); at != std::string::npos; at = s.find(key)) s.replace(at, key.size(), value);
    return s;
  };
  for (const auto& [name, text] : c.files) std::ofstream(dir + "/" + name) << text;
  std::vector<std::string> args{"validate"};
  for (const auto& a : c.args) args.push_back(expand(a));
  const auto r = run_trainsim(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  for (const auto& f : c.fragments) EXPECT_NE(r.err.find(expand(f)), std::string::npos) << "missing '" << f << "' in: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/simulated.csv"));
}

const std::string kHeader = "dataset,system,gpus,nodes,strategy,model,batch_per_gpu,precision,metric,value\n";
const std::string kRow = "pytorch_ddp_benchmark,DGX-1 (V100) cluster,";
const std::string kTail = ",ring_allreduce_nccl (bucket 25MB),resnet50,32,fp32,seconds_per_iteration_p50,";
std::string system_with(const std::string& entry_fields) {
  return R"j({"systems": [{"dataset": "pytorch_ddp_benchmark", "system": "DGX-1 (V100) cluster", )j" + entry_fields + "}]}";
}
const std::string kStrategies = R"j("strategies": {"ring_allreduce_nccl (bucket 25MB)": {"strategy": {"kind": "ring_allreduce"}}})j";

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidateBadInput,
    ::testing::Values(
        BadCase{"missing_column", {"{bad}/missing_column.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"}, {},
                {"{bad}/missing_column.csv: line 1: missing required column 'batch_per_gpu'", "needs the columns dataset,"}},
        BadCase{"unknown_preset", {"{good}/measured.csv", "--systems", "{bad}/unknown_preset.json", "--out", "{dir}/out"}, {},
                {"{bad}/unknown_preset.json: /systems/1/platform/preset: unknown platform preset 'dgx1-p10'; did you mean "
                 "'dgx1-p100'?"}},
        BadCase{"unknown_system_key", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", system_with(R"j("platfrom": {"preset": "dgx1-v100"}, )j" + kStrategies)}},
                {"{dir}/s.json: /systems/0/platfrom: unknown key 'platfrom'; did you mean 'platform'?"}},
        BadCase{"unknown_strategy_kind", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", system_with(R"j("platform": {"preset": "dgx1-v100"}, "strategies": {"x": {"strategy": {"kind": "rign_allreduce"}}})j")}},
                {"{dir}/s.json: /systems/0/strategies/x/strategy/kind: unknown value 'rign_allreduce'"}},
        BadCase{"model_in_template", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", system_with(R"j("platform": {"preset": "dgx1-v100"}, "workload": {"model": "vgg16"}, )j" + kStrategies)}},
                {"{dir}/s.json: /systems/0/workload/model: comes from the measured CSV"}},
        BadCase{"nodes_in_template", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", system_with(R"j("platform": {"preset": "dgx1-v100", "nodes": 2}, )j" + kStrategies)}},
                {"{dir}/s.json: /systems/0/platform/nodes: comes from the measured CSV's nodes and gpus columns"}},
        BadCase{"system_mapped_twice", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", R"j({"systems": [{"dataset": "d", "system": "s", "platform": {"preset": "dgx1-v100"}, "strategies": {}},
                                            {"dataset": "d", "system": "s", "platform": {"preset": "dgx1-v100"}, "strategies": {}}]})j"}},
                {"{dir}/s.json: /systems/1: dataset 'd', system 's' is already mapped at /systems/0"}},
        BadCase{"servers_at_zero", {"{good}/measured.csv", "--systems", "{dir}/s.json", "--out", "{dir}/out"},
                {{"s.json", system_with(R"j("platform": {"preset": "dgx1-v100"}, "strategies": {"x": {"strategy": {"kind": "parameter_server"}, "servers_at": [{"model": "resnet50", "nodes": 8, "servers": 0}]}})j")}},
                {"{dir}/s.json: /systems/0/strategies/x/servers_at/0/servers: must be ≥ 1, got 0"}},
        BadCase{"gpus_not_an_integer", {"{dir}/m.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"m.csv", kHeader + kRow + "1,1" + kTail + "0.1\n" + kRow + "2.5,1" + kTail + "0.1\n"}},
                {"{dir}/m.csv: line 3: column 'gpus': expected an integer ≥ 1, got '2.5'"}},
        BadCase{"gpus_over_nodes", {"{dir}/m.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"m.csv", kHeader + kRow + "1,1" + kTail + "0.1\n" + kRow + "3,2" + kTail + "0.1\n"}},
                {"{dir}/m.csv: line 3: 3 GPUs do not divide evenly over 2 nodes"}},
        BadCase{"value_not_positive", {"{dir}/m.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"m.csv", kHeader + kRow + "1,1" + kTail + "0\n"}},
                {"{dir}/m.csv: line 2: column 'value': expected a measurement > 0, got '0'"}},
        // Two files, one point, two values: an error naming both, whichever file comes first.
        BadCase{"conflict_across_files", {"{dir}/a.csv", "{dir}/b.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"a.csv", kHeader + kRow + "1,1" + kTail + "0.1\n" + kRow + "2,1" + kTail + "0.11\n"},
                 {"b.csv", kHeader + kRow + "1,1" + kTail + "0.2\n"}},
                {"{dir}/b.csv: line 2: measures the same point as {dir}/a.csv: line 2 (1 GPU on 1 node, same group)"}},
        BadCase{"conflict_across_files_reversed", {"{dir}/b.csv", "{dir}/a.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"a.csv", kHeader + kRow + "1,1" + kTail + "0.1\n" + kRow + "2,1" + kTail + "0.11\n"},
                 {"b.csv", kHeader + kRow + "1,1" + kTail + "0.2\n"}},
                {"{dir}/a.csv: line 2: measures the same point as {dir}/b.csv: line 2"}},
        BadCase{"samples_per_s_above_ceiling", {"{dir}/m.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"m.csv", "dataset,system,gpus,nodes,strategy,model,batch_per_gpu,precision,metric,value\n" + kRow +
                               "1,1,ring_allreduce_nccl (bucket 25MB),resnet50,32,fp32,samples_per_s,2e9\n"}},
                {"{dir}/m.csv: line 2: column 'value': 2e9 samples_per_s is not a plausible measurement; expected at most 1000000000"}},
        BadCase{"same_file_by_two_names", {"{dir}/m.csv", "{dir}/../" + std::string("{dirname}") + "/m.csv", "--systems", "{good}/systems.json", "--out", "{dir}/out"},
                {{"m.csv", kHeader + kRow + "1,1" + kTail + "0.1\n"}},
                {"given twice on the command line (measured files 1 and 2, the same file)"}},
        BadCase{"out_is_a_file", {"{good}/measured.csv", "--systems", "{good}/systems.json", "--out", "{dir}/f"},
                {{"f", "a file\n"}}, {"{dir}/f"}}),
    [](const ::testing::TestParamInfo<BadCase>& p) { return std::string(p.param.name); });
