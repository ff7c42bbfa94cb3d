#include <gtest/gtest.h>

#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim_test/errors.hpp"

namespace {

using trainsim::EnumNames;

enum class Colour { red, green, blue };
constexpr EnumNames<Colour, 3> kColours{{{{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}}}};

TEST(EnumNames, EveryValueReadsBackAndNamesKeepTheTablesOrder) {
  for (Colour c : {Colour::red, Colour::green, Colour::blue}) EXPECT_EQ(kColours.parse(kColours.name(c)), c);
  EXPECT_EQ(kColours.names(), (std::vector<std::string>{"red", "green", "blue"}));
  EXPECT_FALSE(kColours.parse("Red").has_value());  // names are exact, as the readers' were
  EXPECT_FALSE(kColours.parse("").has_value());
  static_assert(kColours.name(Colour::blue) == "blue");
  static_assert(*kColours.parse("green") == Colour::green);
}

TEST(EnumNames, ReadGivesOneOfsMessageWithTheSuggestion) {
  const auto root = trainsim::parse_json_text(R"({"colour": "gren", "other": 3})", "c.json");
  EXPECT_EQ(kColours.read(trainsim::parse_json_text(R"({"colour": "blue"})", "c.json").at("colour")), Colour::blue);
  const auto e = trainsim_test::error_of([&] { kColours.read(root.at("colour")); });
  EXPECT_STREQ(e.what(), "c.json: /colour: unknown value 'gren'; did you mean 'green'?");
  const auto t = trainsim_test::error_of([&] { kColours.read(root.at("other")); });
  EXPECT_EQ(t.location(), "/other");
}

TEST(EnumNames, PrecisionTableIsTheOneTheReadersUse) {
  for (const auto& name : trainsim::precision_names())
    EXPECT_EQ(trainsim::to_string(*trainsim::parse_precision(name)), name);
  EXPECT_EQ(trainsim::precision_names(), (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16"}));
  EXPECT_FALSE(trainsim::parse_precision("fp64").has_value());
}

}  // namespace
