// Every input reader against 100,000-deep nesting and huge counts: each answers with an
// InputError at the right place, never a crash, a hang or an exhausted memory. The fuzz targets
// (tests/fuzz) have seeds for the same; this runs in every build.
#include <gtest/gtest.h>

#include <string>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/platforms/platform_spec.hpp"
#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim_test/errors.hpp"

namespace {

using trainsim::InputError;
using trainsim::Json;

using trainsim_test::error_of;

std::string deep(const std::string& open, int levels) {
  std::string out;
  for (int i = 0; i < levels; ++i) out += open;
  return out;
}

void read_scenario_text(const std::string& text) { (void)trainsim::plan::read_scenario(trainsim::parse_json_text(text, "s.json").raw(), "s.json"); }
void read_platform_text(const std::string& text) { (void)trainsim::platforms::read_platform_spec(trainsim::parse_json_text(text, "p.json")); }
void read_layer_graph_text(const std::string& text) { (void)trainsim::workloads::parse_layer_graph(trainsim::parse_json_text(text, "l.json"), "l.json"); }
void read_paleo_text(const std::string& text) { (void)trainsim::workloads::parse_paleo_graph(trainsim::parse_json_text(text, "pa.json"), "pa.json"); }

TEST(ReaderLimits, HundredThousandDeepNestingIsAnInputErrorInEveryReader) {
  const std::string arrays = deep("[", 100000);
  const std::string members = deep("{\"layers\":", 100000);
  for (const auto& read : {read_scenario_text, read_platform_text, read_layer_graph_text, read_paleo_text}) {
    for (const std::string& text : {arrays, "{\"name\": " + arrays, members}) {
      const InputError e = error_of([&] { read(text); });
      EXPECT_NE(e.detail().find("nested deeper than 256"), std::string::npos) << e.what();
      EXPECT_EQ(e.location().rfind("line 1, column ", 0), 0u) << e.what();
    }
  }
  // A CSV has no nesting, but a 100,000-field line is just a wide row: read, not a crash (and its
  // header's duplicate-name check stays linear).
  std::string header;
  for (int i = 0; i < 100000; ++i) {  // piecewise: GCC 12 misreports "c" + string as -Wrestrict
    header += 'c';
    header += std::to_string(i);
    header += ',';
  }
  const trainsim::CsvTable csv = trainsim::CsvTable::parse(header + "\n", "v.csv");
  EXPECT_EQ(csv.columns().size(), 100001u);
  const InputError twice = error_of([&] { trainsim::CsvTable::parse(header + "c7\n", "v.csv"); });
  EXPECT_NE(twice.detail().find("column 'c7' appears twice in the header (columns 8 and 100001)"), std::string::npos) << twice.what();
}

const char* kScenario = R"({
  "workload": { "model": "resnet18", "batch_per_gpu": 32 },
  "platform": { "preset": "dgx-a100", "nodes": 2 },
  "strategy": { "kind": "parameter_server", "servers": 2 }
})";

// The scenario with `path` (a JSON pointer) set to `value`: the error's pointer and detail.
InputError scenario_error(const std::string& pointer, const Json& value) {
  Json document = Json::parse(kScenario);
  document[Json::json_pointer(pointer)] = value;
  return error_of([&] { (void)trainsim::plan::read_scenario(document, "s.json"); });
}

TEST(ReaderLimits, HugeCountsInAScenarioAreInputErrorsAtTheirPointer) {
  struct Case {
    std::string pointer;
    Json value;
  };
  const Json max_u64 = Json(std::uint64_t(18446744073709551615ull));
  for (const Case& c : {Case{"/platform/nodes", max_u64}, Case{"/platform/nodes", 1e18}, Case{"/platform/gpus_per_node", 1e12},
                        Case{"/workload/batch_per_gpu", max_u64}, Case{"/workload/batch_per_gpu", 1e300},
                        Case{"/strategy/servers", max_u64}, Case{"/strategy/servers", 100000000},
                        Case{"/strategy/partition_MB", 1e-300}, Case{"/platform/network/bandwidth_Gbps", 1e300},
                        Case{"/platform/network/bandwidth_Gbps", 1e-300}, Case{"/platform/network/latency_us", 1e300},
                        Case{"/platform/gpu_board", Json{{"gpus", 1000000}}},
                        Case{"/heterogeneity", Json{{"gpu_speed", Json{{"3", 1e-300}}}}}}) {
    const InputError e = scenario_error(c.pointer, c.value);
    EXPECT_EQ(e.source(), "s.json") << c.pointer;
    EXPECT_EQ(e.location().rfind(c.pointer, 0), 0u) << c.pointer << ": " << e.what();
    EXPECT_EQ(e.detail().find("-1"), std::string::npos) << e.what();  // never a wrapped-around number
  }
}

TEST(ReaderLimits, HugeCountsInALayerGraphAreInputErrors) {
  for (const char* layer : {R"({"name": "fc", "type": "linear", "out_features": 18446744073709551615})",
                                   R"({"name": "fc", "type": "linear", "out_features": 1e18})",
                                   R"({"name": "c", "type": "conv2d", "out_channels": 1e15, "kernel": 3})"}) {
    const std::string text = std::string(R"({"name": "huge", "layers": [{"name": "data", "type": "input", "shape": [3, 32, 32]}, )") + layer +
                             R"(, {"name": "loss", "type": "loss"}]})";
    const InputError e = error_of([&] { read_layer_graph_text(text); });
    EXPECT_EQ(e.source(), "l.json");
    EXPECT_EQ(e.location().rfind("/layers/1", 0), 0u) << e.what();
  }
  const std::string shape = R"({"name": "huge", "layers": [{"name": "data", "type": "input", "shape": [1e9, 1e9, 1e9]}]})";
  EXPECT_EQ(error_of([&] { read_layer_graph_text(shape); }).location().rfind("/layers/0", 0), 0u);
}

TEST(ReaderLimits, HugeTopologiesAreInputErrors) {
  for (const std::string& text :
       {std::string(R"({"preset": "dgx-a100", "nodes": 1e18})"),
        std::string(R"({"preset": "dgx-a100", "nodes": 8, "network": {"topology": "torus", "torus": {"dimensions": [1000000, 1000000, 1000000, 1000000]}}})"),
        std::string(R"({"preset": "dgx-a100", "gpu_board": {"gpus": 3}})")}) {
    const InputError e = error_of([&] { read_platform_text(text); });
    EXPECT_EQ(e.source(), "p.json");
    EXPECT_FALSE(e.location().empty()) << e.what();
  }
}

}  // namespace
