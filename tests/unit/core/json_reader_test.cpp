#include <gtest/gtest.h>

#include "trainsim/core/json_reader.hpp"
#include "trainsim_test/errors.hpp"

using trainsim::InputError;
using trainsim::parse_json_text;

namespace {
using trainsim_test::error_of;
}  // namespace

TEST(JsonReader, ReadsNestedValuesWithPointers) {
  auto root = parse_json_text(R"({"platform": {"nodes": 4, "network": {"bandwidth_Gbps": 100.5}}, "a/b": [1, 2]})", "s.json");
  EXPECT_EQ(root.at("platform").at("nodes").int_at_least(1), 4);
  EXPECT_DOUBLE_EQ(root.at("platform").at("network").at("bandwidth_Gbps").positive_number(), 100.5);
  EXPECT_EQ(root.at("a/b").element(1).pointer(), "/a~1b/1");
  EXPECT_FALSE(root.find("missing").has_value());
}

TEST(JsonReader, RangeErrorNamesFileAndPointer) {
  auto root = parse_json_text(R"({"platform": {"nodes": 0}})", "scenarios/x.json");
  auto e = error_of([&] { root.at("platform").at("nodes").int_at_least(1); });
  EXPECT_STREQ(e.what(), "scenarios/x.json: /platform/nodes: must be ≥ 1, got 0");
  EXPECT_EQ(e.location(), "/platform/nodes");
}

// A count stored as int is bounded before the cast: 2^31 aborted later, 2^32 + 1 became 1.
TEST(JsonReader, IntInBoundsBeforeNarrowing) {
  auto root = parse_json_text(R"({"a": 2147483648, "b": 4294967297, "c": 7, "d": 7.0})", "s.json");
  EXPECT_EQ(root.at("c").int_in(1, 65536), 7);
  EXPECT_EQ(root.at("d").int_in(7, 7), 7);
  EXPECT_STREQ(error_of([&] { (void)root.at("a").int_in(1, 65536); }).what(),
               "s.json: /a: must be ≤ 65536, got 2147483648");
  EXPECT_STREQ(error_of([&] { (void)root.at("b").int_in(0, 2147483647); }).what(),
               "s.json: /b: must be ≤ 2147483647, got 4294967297");
  EXPECT_EQ(error_of([&] { (void)root.at("c").int_in(8, 9); }).location(), "/c");
}

TEST(JsonReader, TypeErrorsSayWhatWasExpected) {
  auto root = parse_json_text(R"({"n": "four", "f": 2.5, "b": 1})", "t.json");
  EXPECT_NE(std::string(error_of([&] { root.at("n").as_number(); }).what()).find("expected a number, got string \"four\""),
            std::string::npos);
  EXPECT_NE(std::string(error_of([&] { root.at("f").as_int(); }).what()).find("expected an integer"), std::string::npos);
  EXPECT_NE(std::string(error_of([&] { root.at("b").as_bool(); }).what()).find("expected true or false"), std::string::npos);
  EXPECT_EQ(root.at("f").as_number(), 2.5);
}

TEST(JsonReader, UnknownKeySuggestsNearest) {
  auto root = parse_json_text(R"({"platfrom": {}})", "s.json");
  auto e = error_of([&] { root.allow_only({"name", "workload", "platform", "strategy"}); });
  EXPECT_EQ(e.location(), "/platfrom");
  EXPECT_NE(std::string(e.what()).find("did you mean 'platform'?"), std::string::npos);
}

TEST(JsonReader, MissingKeyIsReportedAtTheObject) {
  auto root = parse_json_text(R"({"workload": {}})", "s.json");
  auto e = error_of([&] { root.at("workload").at("model"); });
  EXPECT_STREQ(e.what(), "s.json: /workload: missing required key 'model'");
}

TEST(JsonReader, SyntaxErrorGivesLineAndColumn) {
  auto e = error_of([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}", "bad.json"); });
  EXPECT_EQ(e.source(), "bad.json");
  EXPECT_EQ(e.location(), "line 3, column 8");
}

TEST(JsonReader, OneOfSuggests) {
  auto root = parse_json_text(R"({"kind": "ring_allreduc"})", "s.json");
  auto e = error_of([&] { root.at("kind").one_of({"ring_allreduce", "parameter_server"}); });
  EXPECT_NE(std::string(e.what()).find("did you mean 'ring_allreduce'?"), std::string::npos);
}

TEST(JsonReader, KeepsDocumentOrder) {
  auto root = parse_json_text(R"({"z": 1, "a": 2, "m": 3})", "s.json");
  auto members = root.members();
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(members[0].first, "z");
  EXPECT_EQ(members[2].first, "m");
}

TEST(JsonReader, MissingFileIsAnInputError) {
  auto e = error_of([] { trainsim::read_json_file("/nonexistent/file.json"); });
  EXPECT_EQ(e.source(), "/nonexistent/file.json");
}
