// `trainsim workload list | info | export` end to end, and every bad-input file of
// tests/data/bad/workloads/ (exit code 2, one message naming the file, the JSON pointer and the layer).
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <ostream>
#include <nlohmann/json.hpp>

#include "trainsim_test/cli.hpp"

namespace {

using nlohmann::json;
using trainsim_test::run_trainsim;
using trainsim_test::test_data_dir;

TEST(WorkloadCli, InfoJsonReportsResnet50) {
  const auto r = run_trainsim({"workload", "info", "resnet50", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);  // nothing but the JSON on stdout
  EXPECT_EQ(report.at("params").get<std::int64_t>(), 25557032);
  EXPECT_EQ(report.at("batch").get<int>(), 1);
  EXPECT_EQ(report.at("precision").get<std::string>(), "fp32");
  EXPECT_GT(report.at("forward_flops").get<double>(), 8.1e9);
  EXPECT_GT(report.at("backward_flops").get<double>(), report.at("forward_flops").get<double>());
  EXPECT_GT(report.at("activation_bytes").get<double>(), 0);
  const json& layers = report.at("layers");
  ASSERT_GT(layers.size(), 100u);
  EXPECT_EQ(layers.at(1).at("name").get<std::string>(), "conv1");
  EXPECT_EQ(layers.at(1).at("output_shape"), json::array({64, 112, 112}));
  EXPECT_EQ(layers.at(1).at("op_class").get<std::string>(), "conv");
  std::int64_t params = 0;
  for (const auto& l : layers) params += l.at("params").get<std::int64_t>();
  EXPECT_EQ(params, 25557032);
}

TEST(WorkloadCli, BatchAndPrecisionScaleTheReport) {
  const auto one = run_trainsim({"workload", "info", "resnet-50", "--json", "-"});
  const auto batch = run_trainsim({"workload", "info", "resnet-50", "--batch", "32", "--precision", "fp16", "--json", "-"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const json a = json::parse(one.out), b = json::parse(batch.out);
  EXPECT_DOUBLE_EQ(b.at("forward_flops").get<double>(), 32 * a.at("forward_flops").get<double>());
  EXPECT_DOUBLE_EQ(b.at("activation_bytes").get<double>(), 16 * a.at("activation_bytes").get<double>());
  EXPECT_DOUBLE_EQ(b.at("weight_bytes").get<double>(), a.at("weight_bytes").get<double>() / 2);
  EXPECT_EQ(b.at("params"), a.at("params"));
}

TEST(WorkloadCli, InfoPrintsAnAlignedTableWithTotals) {
  const auto r = run_trainsim({"workload", "info", "cnn", "--batch", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layer"), std::string::npos);
  EXPECT_NE(r.out.find("fwd FLOPs"), std::string::npos);
  EXPECT_NE(r.out.find("32x26x26"), std::string::npos);  // conv1's output shape
  EXPECT_NE(r.out.find("1,199,882"), std::string::npos);
  EXPECT_NE(r.out.find("total"), std::string::npos);
  // Aligned: every table row starts its "type" column at the same offset.
  std::istringstream lines(r.out);
  std::string line, header;
  std::set<std::size_t> type_columns;
  while (std::getline(lines, line)) {
    if (line.rfind("layer ", 0) == 0) header = line;
    if (line.rfind("conv1 ", 0) == 0 || line.rfind("relu1 ", 0) == 0 || line.rfind("fc2 ", 0) == 0)
      type_columns.insert(line.find_first_not_of(' ', line.find(' ')));
  }
  ASSERT_FALSE(header.empty());
  type_columns.insert(header.find("type"));
  EXPECT_EQ(type_columns.size(), 1u) << r.out;
}

TEST(WorkloadCli, ListShowsEveryModel) {
  const auto r = run_trainsim({"workload", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* model : {"alexnet", "vgg16", "resnet152", "inception_v3", "googlenet", "nin", "mlp", "autoencoder", "cnn",
                            "bert_base", "bert_large", "gpt2", "gpt2_xl"})
    EXPECT_NE(r.out.find(model), std::string::npos) << model;
  const auto j = run_trainsim({"workload", "list", "--json", "-"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(json::parse(j.out).size(), 21u);
}

TEST(WorkloadCli, PaleoFilesRunUnchanged) {
  const auto r = run_trainsim({"workload", "info", test_data_dir() + "/good/workloads/paleo/alexnet.json", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("params").get<std::int64_t>(), 61100840);
  const auto nin = run_trainsim({"workload", "info", test_data_dir() + "/good/workloads/paleo/nin.json", "--json", "-"});
  ASSERT_EQ(nin.exit_code, 0) << nin.err;
  EXPECT_EQ(json::parse(nin.out).at("params").get<std::int64_t>(), 7595176);
}

TEST(WorkloadCli, ExportedZooModelReadsBackIdentically) {
  const std::string dir = trainsim_test::make_temp_dir("workload_export");
  const std::string file = dir + "/bert.json";
  const auto exported = run_trainsim({"workload", "export", "bert-base", "--out", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto from_file = run_trainsim({"workload", "info", file, "--json", "-"});
  const auto from_zoo = run_trainsim({"workload", "info", "bert_base", "--json", "-"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  json a = json::parse(from_file.out), b = json::parse(from_zoo.out);
  EXPECT_EQ(a.at("params").get<std::int64_t>(), 109482240);
  EXPECT_EQ(a.at("source").get<std::string>(), file);
  a.erase("source");
  b.erase("source");
  EXPECT_EQ(a, b);
}

TEST(WorkloadCli, OutputIsDeterministic) {
  const auto a = run_trainsim({"workload", "info", "inception_v3", "--json", "-"});
  const auto b = run_trainsim({"workload", "info", "inception_v3", "--json", "-"});
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(WorkloadCli, UsageErrorsExitTwo) {
  auto r = run_trainsim({"workload", "info", "resnet5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'resnet50'"), std::string::npos) << r.err;
  r = run_trainsim({"workload", "info", "resnet50", "--batch", "0"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_trainsim({"workload", "info", "resnet50", "--precision", "fp64"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_trainsim({"workload", "export", "gpt3"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_trainsim({"workload"});
  EXPECT_EQ(r.exit_code, 2);
}

// One row per file of tests/data/bad/workloads/: the pointer and the words the message must hold.
struct BadFile {
  const char* file;
  const char* pointer;
  const char* layer;   // "" when the error is about the file, not a layer
  const char* detail;
};
void PrintTo(const BadFile& c, std::ostream* os) { *os << c.file; }

class BadWorkloadFile : public testing::TestWithParam<BadFile> {};

TEST_P(BadWorkloadFile, ExitsTwoNamingFilePointerAndLayer) {
  const BadFile& c = GetParam();
  const std::string path = test_data_dir() + "/bad/workloads/" + c.file;
  const auto r = run_trainsim({"workload", "info", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one message: " << r.err;
  EXPECT_NE(r.err.find(path + ": " + c.pointer + ":"), std::string::npos) << r.err;
  if (*c.layer != '\0') {
    EXPECT_NE(r.err.find(std::string("layer '") + c.layer + "'"), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find(c.detail), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadWorkloadFile,
    testing::Values(BadFile{"cycle.json", "/layers/1/parents", "conv_a", "cycle through layers 'conv_a' → 'conv_b' → 'relu_c' → 'conv_a'"},
                    BadFile{"unknown_type.json", "/layers/1/type", "conv1", "unknown layer type 'conv3d'; did you mean 'conv2d'?"},
                    BadFile{"missing_parent.json", "/layers/2/parents/0", "relu1", "unknown parent 'conv9'"},
                    BadFile{"add_shape_mismatch.json", "/layers/3/parents", "sum", "add needs inputs of the same shape"},
                    BadFile{"concat_mismatch.json", "/layers/3/parents", "join", "concat over axis 0 needs all other dimensions equal"},
                    BadFile{"zero_size.json", "/layers/1/out_channels", "conv1", "must be ≥ 1, got 0"},
                    BadFile{"negative_size.json", "/layers/0/shape/1", "data", "must be ≥ 1, got -224"},
                    BadFile{"wrong_type.json", "/layers/1/out_features", "fc1", "expected an integer, got string"},
                    BadFile{"misspelt_key.json", "/layers/1/kernal", "conv1", "unknown key 'kernal'; did you mean 'kernel'?"},
                    BadFile{"duplicate_name.json", "/layers/2/name", "conv1", "duplicate layer name"},
                    BadFile{"window_too_large.json", "/layers/1", "conv1", "window (7) does not fit the input height 5"},
                    BadFile{"heads_not_dividing.json", "/layers/1/heads", "attn", "must divide the model dimension 100"},
                    BadFile{"bad_tied_weight.json", "/layers/2/tied_to", "lm_head", "does not match the weight [100, 32]"},
                    BadFile{"layers_not_array.json", "/layers", "", "expected an array"},
                    BadFile{"invalid_json.json", "line 1, column 69", "", "invalid JSON"},
                    BadFile{"paleo_unknown_parent.json", "/layers/conv1/parents/0", "conv1", "unknown parent 'dta'; did you mean 'data'?"},
                    BadFile{"paleo_channel_mismatch.json", "/layers/conv1/filter", "conv1", "declares 5 input channels"},
                    BadFile{"paleo_unknown_type.json", "/layers/lrn/type", "lrn", "unknown Paleo layer type 'LRN'"}),
    [](const testing::TestParamInfo<BadFile>& p) {
      std::string name = p.param.file;
      name = name.substr(0, name.find('.'));
      return name;
    });

TEST(BadWorkloadFiles, EveryFileHasACase) {
  // A file added to tests/data/bad/workloads/ without a row above would go untested.
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test_data_dir() + "/bad/workloads")) files += entry.is_regular_file();
  EXPECT_EQ(files, 18u);
}

}  // namespace
