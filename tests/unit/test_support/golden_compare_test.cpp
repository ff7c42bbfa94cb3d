#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "trainsim_test/golden_compare.hpp"

namespace {

using nlohmann::json;
using trainsim_test::compare_json;
using trainsim_test::JsonDifference;
using Kind = JsonDifference::Kind;

TEST(CompareJson, IdenticalDocumentsHaveNoDifference) {
  const auto doc = json::parse(R"({"a": 1, "b": [1.5, "x", true, null], "c": {"d": 0.0}})");
  EXPECT_TRUE(compare_json(doc, doc).empty());
}

TEST(CompareJson, IntegerAndFloatOfTheSameValueAgree) {
  EXPECT_TRUE(compare_json(json::parse(R"({"n": 8192})"), json::parse(R"({"n": 8192.0})")).empty());
}

TEST(CompareJson, ChangeWithinRelativeToleranceIsReportedButAccepted) {
  const auto d = compare_json(json::parse(R"({"t": 1.0})"), json::parse(R"({"t": 1.0000000005})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, Kind::number);
  EXPECT_EQ(d[0].pointer, "/t");
  EXPECT_TRUE(d[0].within_tolerance);
  EXPECT_NEAR(d[0].relative_change, 5e-10, 1e-15);
  EXPECT_TRUE(trainsim_test::all_within_tolerance(d));
}

TEST(CompareJson, ChangeBeyondRelativeToleranceFails) {
  const auto d = compare_json(json::parse(R"({"a": {"t": -2.0}})"), json::parse(R"({"a": {"t": -2.00000001}})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].pointer, "/a/t");
  EXPECT_FALSE(d[0].within_tolerance);
  EXPECT_NEAR(d[0].relative_change, -5e-9, 1e-14);  // relative to |expected|, signed by the change
  EXPECT_FALSE(trainsim_test::all_within_tolerance(d));
}

TEST(CompareJson, AbsoluteFloorCoversValuesNearZero) {
  const auto tiny = compare_json(json::parse(R"([2.220446049250313e-16])"), json::parse(R"([0.0])"));
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_TRUE(tiny[0].within_tolerance);
  const auto large = compare_json(json::parse(R"([0.0])"), json::parse(R"([1e-6])"));
  ASSERT_EQ(large.size(), 1u);
  EXPECT_FALSE(large[0].within_tolerance);
  EXPECT_TRUE(std::isinf(large[0].relative_change));
  EXPECT_DOUBLE_EQ(large[0].absolute_change, 1e-6);
}

TEST(CompareJson, ToleranceIsAdjustable) {
  trainsim_test::Tolerance loose;
  loose.relative = 1e-3;
  const auto d = compare_json(json::parse("[100.0]"), json::parse("[100.05]"), loose);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].within_tolerance);
  EXPECT_FALSE(compare_json(json::parse("[100.0]"), json::parse("[100.2]"), loose)[0].within_tolerance);
}

TEST(CompareJson, IntegersMustBeEqual) {
  const auto d = compare_json(json::parse(R"({"gpus": 10000000000})"), json::parse(R"({"gpus": 10000000001})"));
  ASSERT_EQ(d.size(), 1u);  // 1e-10 relative, but a count is exact
  EXPECT_FALSE(d[0].within_tolerance);
}

TEST(CompareJson, MissingAndAddedKeysAreStructureDifferences) {
  const auto d = compare_json(json::parse(R"({"a": 1, "b": 2})"), json::parse(R"({"b": 2, "c": 3})"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].kind, Kind::structure);
  EXPECT_EQ(d[0].pointer, "/a");
  EXPECT_EQ(d[0].expected, "1");
  EXPECT_EQ(d[0].actual, "(absent)");
  EXPECT_EQ(d[1].pointer, "/c");
  EXPECT_EQ(d[1].expected, "(absent)");
  EXPECT_FALSE(trainsim_test::all_within_tolerance(d));
}

TEST(CompareJson, ArrayLengthAndElementsAreCompared) {
  const auto d = compare_json(json::parse(R"({"l": [1.0, 2.0, 3.0]})"), json::parse(R"({"l": [1.0, 2.5]})"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].pointer, "/l/1");
  EXPECT_EQ(d[0].field, "/l/*");
  EXPECT_EQ(d[1].kind, Kind::structure);
  EXPECT_EQ(d[1].pointer, "/l");
  EXPECT_EQ(d[1].expected, "array of 3");
  EXPECT_EQ(d[1].actual, "array of 2");
}

TEST(CompareJson, StringsBooleansAndTypesMustMatchExactly) {
  const auto d = compare_json(json::parse(R"({"s": "ring", "b": true, "t": "1"})"),
                              json::parse(R"({"s": "tree", "b": false, "t": 1})"));
  ASSERT_EQ(d.size(), 3u);  // keys in sorted order: b, s, t
  EXPECT_EQ(d[0].pointer, "/b");
  EXPECT_EQ(d[0].kind, Kind::value);
  EXPECT_EQ(d[1].pointer, "/s");
  EXPECT_EQ(d[1].kind, Kind::value);
  EXPECT_EQ(d[1].expected, "\"ring\"");
  EXPECT_EQ(d[2].pointer, "/t");
  EXPECT_EQ(d[2].kind, Kind::structure);
}

TEST(CompareJson, PointerEscapesSlashAndTilde) {
  const auto d = compare_json(json::parse(R"({"a/b~c": 1.0})"), json::parse(R"({"a/b~c": 2.0})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].pointer, "/a~1b~0c");
}

TEST(CompareJson, DescriptionNamesPointerValuesAndChange) {
  const auto d = compare_json(json::parse(R"({"breakdown_s": {"compute": 2.0}})"),
                              json::parse(R"({"breakdown_s": {"compute": 2.5}})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].describe(), "/breakdown_s/compute: expected 2.0, actual 2.5, change +2.500e-01 relative");
}

TEST(GeneralisePointer, ArrayIndicesBecomeStars) {
  EXPECT_EQ(trainsim_test::generalise_pointer("/busiest_links/3/bytes"), "/busiest_links/*/bytes");
  EXPECT_EQ(trainsim_test::generalise_pointer("/a/10/b/0"), "/a/*/b/*");
  EXPECT_EQ(trainsim_test::generalise_pointer("/x1/2a"), "/x1/2a");
  EXPECT_EQ(trainsim_test::generalise_pointer(""), "");
}

TEST(ChangeSummary, KeepsTheLargestChangePerFieldOverCases) {
  trainsim_test::ChangeSummary summary;
  summary.add("small", compare_json(json::parse(R"({"l": [{"t": 1.0}, {"t": 1.0}]})"),
                                    json::parse(R"({"l": [{"t": 1.001}, {"t": 1.0}]})")));
  summary.add("large", compare_json(json::parse(R"({"l": [{"t": 1.0}], "n": 3})"),
                                    json::parse(R"({"l": [{"t": 0.9}], "n": 3})")));
  summary.add("later_small",
              compare_json(json::parse(R"({"l": [{"t": 1.0}]})"), json::parse(R"({"l": [{"t": 1.01}]})")));
  ASSERT_EQ(summary.fields().size(), 1u);
  const auto& t = summary.fields().at("/l/*/t");
  EXPECT_EQ(t.count, 3u);
  EXPECT_EQ(t.case_name, "large");
  EXPECT_NEAR(t.difference.relative_change, -0.1, 1e-12);
  EXPECT_NE(summary.describe().find("/l/*/t  -1.000e-01 relative (3 changes; largest in large at /l/0/t"),
            std::string::npos)
      << summary.describe();
}

TEST(ChangeSummary, StructureChangesRankAboveNumbers) {
  trainsim_test::ChangeSummary summary;
  summary.add("number", compare_json(json::parse(R"({"x": 1.0})"), json::parse(R"({"x": 3.0})")));
  summary.add("removed", compare_json(json::parse(R"({"x": 1.0})"), json::parse(R"({})")));
  EXPECT_EQ(summary.fields().at("/x").case_name, "removed");
}

TEST(GoldenChangelogEntry, HasDateReasonCasesAndTable) {
  trainsim_test::ChangeSummary summary;
  summary.add("quickstart",
              compare_json(json::parse(R"({"s": "a|b", "t": 1.0})"), json::parse(R"({"s": "a|c", "t": 1.5})")));
  const std::string entry =
      trainsim_test::golden_changelog_entry("2026-11-26 13:40 UTC", "ring cost fixed", {"quickstart"}, 132, summary);
  EXPECT_EQ(entry,
            "## 2026-11-26 13:40 UTC\n\n"
            "Reason: ring cost fixed\n\n"
            "Cases rewritten (1 of 132): quickstart\n\n"
            "Largest change per field over the rewritten cases:\n\n"
            "| field | changes | largest change | expected → actual | case |\n"
            "|---|---|---|---|---|\n"
            "| `/s` | 1 | value | `\"a\\|b\"` → `\"a\\|c\"` | quickstart |\n"
            "| `/t` | 1 | +5.000e-01 relative | `1.0` → `1.5` | quickstart |\n\n");
}

}  // namespace
