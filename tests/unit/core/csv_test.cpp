#include <gtest/gtest.h>

#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"

using trainsim::CsvTable;

TEST(Csv, ParsesQuotedFieldsAndLines) {
  auto t = CsvTable::parse("a,b,c\n1,\"x, y\",3\n\n4,\"say \"\"hi\"\"\",6\n", "d.csv");
  ASSERT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.cell(0, 1), "x, y");
  EXPECT_EQ(t.cell(1, 1), "say \"hi\"");
  EXPECT_EQ(t.line_of(1), 4u);
  EXPECT_EQ(t.number(1, t.column("c")), 6.0);
}

TEST(Csv, NonNumericCellNamesLineAndColumn) {
  auto t = CsvTable::parse("gpus,time\n1,0.5\n2,abc\n", "m.csv");
  try {
    t.number(1, 1);
    FAIL();
  } catch (const trainsim::InputError& e) {
    EXPECT_STREQ(e.what(), "m.csv: line 3: column 'time': expected a number, got 'abc'");
  }
}

TEST(Csv, RaggedRowIsAnError) {
  EXPECT_THROW(CsvTable::parse("a,b\n1,2,3\n", "r.csv"), trainsim::InputError);
  EXPECT_THROW(CsvTable::parse("a,b\n\"1,2\n", "r.csv"), trainsim::InputError);
  EXPECT_THROW(CsvTable::parse("", "r.csv"), trainsim::InputError);
}

TEST(Csv, MissingColumnSuggests) {
  auto t = CsvTable::parse("gpus,time_s\n1,2\n", "m.csv");
  try {
    t.column("time");
    FAIL();
  } catch (const trainsim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'time_s'?"), std::string::npos);
  }
}

TEST(Csv, EscapesFields) {
  EXPECT_EQ(trainsim::csv_escape("plain"), "plain");
  EXPECT_EQ(trainsim::csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(trainsim::csv_escape("q\""), "\"q\"\"\"");
}

// Excel's "CSV UTF-8" starts with a byte-order mark; it is not part of the first column's name.
TEST(Csv, ByteOrderMarkIsSkipped) {
  auto t = CsvTable::parse("\xEF\xBB\xBF" "dataset,gpus\r\nd,1\r\n", "bom.csv");
  EXPECT_EQ(t.columns().front(), "dataset");
  EXPECT_TRUE(t.find_column("dataset"));
  EXPECT_EQ(t.line_of(0), 2u);
  // Only at the very start: elsewhere the bytes are data.
  auto inner = CsvTable::parse("a\n\xEF\xBB\xBFx\n", "m.csv");
  EXPECT_EQ(inner.cell(0, 0), "\xEF\xBB\xBFx");
}

TEST(Csv, ColumnNamedTwiceIsAnErrorAtItsLine) {
  try {
    CsvTable::parse("\n\ngpus,value,value\n1,2,3\n", "d.csv");
    FAIL();
  } catch (const trainsim::InputError& e) {
    EXPECT_STREQ(e.what(), "d.csv: line 3: column 'value' appears twice in the header (columns 2 and 3); name each column once");
  }
  // Empty names (trailing commas of spreadsheet exports) name nothing a reader can ask for.
  EXPECT_NO_THROW(CsvTable::parse("a,,\n1,,\n", "t.csv"));
}
