#include <cmath>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/expression.hpp"
#include "trainsim/fitting/models.hpp"

using namespace trainsim;
using namespace trainsim::fitting;

TEST(Expression, ConstantsAndVariables) {
  const auto e = Expression::parse("c10*gpus + c2*x^c0 - c1/batch", "test");
  EXPECT_EQ(e.constants(), (std::vector<std::string>{"c0", "c1", "c2", "c10"}));
  EXPECT_EQ(e.variables(), (std::vector<std::string>{"batch", "gpus", "x"}));
}

TEST(Expression, SplitsTheTopLevelSum) {
  struct Case {
    std::string text;
    std::vector<std::string> terms;
    std::vector<int> signs;
  };
  const Case cases[] = {
      {"c0 + c1*x", {"c0", "c1*x"}, {1, 1}},
      {"-c0 + c1*(x - 1) - c2*1e-9*y", {"-c0", "c1*(x - 1)", "c2*1e-9*y"}, {1, 1, -1}},
      {"c0*x1e-3 - c1", {"c0*x1e", "3", "c1"}, {1, -1, -1}},  // x1e is an identifier: binary minus
      {"c0 + c1*2.5E+3*x", {"c0", "c1*2.5E+3*x"}, {1, 1}},
      {"(c0 + c1)*x", {"(c0 + c1)*x"}, {1}},
      {"c0*x^-2 + c1", {"c0*x^-2", "c1"}, {1, 1}},
      {"x > 2 ? c0 : c1 + x", {"x > 2 ? c0 : c1 + x"}, {1}},  // a ternary is one term
      {"min(c0, -c1) + c2", {"min(c0, -c1)", "c2"}, {1, 1}},
  };
  for (const auto& c : cases) {
    const auto e = Expression::parse(c.text, "test");
    ASSERT_EQ(e.terms().size(), c.terms.size()) << c.text;
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      EXPECT_EQ(e.terms()[i].text, c.terms[i]) << c.text;
      EXPECT_EQ(e.terms()[i].sign, c.signs[i]) << c.text;
    }
  }
}

TEST(Expression, TermsSumToTheValue) {
  const auto e = Expression::parse("c0 - c1*x^c2 + c3*log2(p) - ceil(log2(p))*c0 + floor(x/3)", "test");
  const auto data = Dataset::from_values("t", {"p", "x"}, "y", {{1, 3}, {8, 5}, {64, 7.5}}, {1, 1, 1});
  ExpressionEvaluator evaluator(e, data);
  const std::vector<double> c = {0.5, 2.0, 0.7, 0.1};
  evaluator.set_constants(c);
  for (std::size_t r = 0; r < data.size(); ++r) {
    std::vector<double> terms(evaluator.term_count());
    evaluator.term_values(r, terms);
    double sum = 0;
    for (double t : terms) sum += t;
    const double p = data.value(r, "p"), x = data.value(r, "x");
    const double expected = 0.5 - 2.0 * std::pow(x, 0.7) + 0.1 * std::log2(p) - std::ceil(std::log2(p)) * 0.5 + std::floor(x / 3);
    EXPECT_NEAR(evaluator.value(r), expected, 1e-12);
    EXPECT_NEAR(sum, expected, 1e-12);
  }
}

TEST(Expression, ParseErrorNamesThePosition) {
  try {
    Expression::parse("c0 + (c1*gpus", "--expression");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "--expression");
    EXPECT_NE(e.location().find("character"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c0 + (c1*gpus"), std::string::npos);
  }
  EXPECT_THROW(Expression::parse("c0 + * gpus", "x"), InputError);
  EXPECT_THROW(Expression::parse("   ", "x"), InputError);
  EXPECT_THROW(Expression::parse("c01*gpus", "x"), InputError);  // leading zero
}

TEST(Bounds, ParsesAndResolves) {
  BoundsMap bounds;
  parse_bounds_into("c0=0:1, c1=-2.5:1e3", bounds);
  parse_bounds_into("c2=0.5:1.5", bounds);
  parse_bounds_into("c0=0:2", bounds);  // later entries override
  const auto e = Expression::parse("c0 + c1*x + c2", "t");
  const auto resolved = resolve_bounds(e, bounds);
  ASSERT_EQ(resolved.size(), 3u);
  EXPECT_EQ(resolved[0].upper, 2.0);
  EXPECT_EQ(resolved[1].lower, -2.5);
  EXPECT_EQ(resolved[1].upper, 1000.0);
}

TEST(Bounds, RejectsBadText) {
  for (const std::string text : {"c0", "c0=1", "c0=a:1", "c0=2:1", "c0=1:1", "x=0:1", "c0=0:1,,c1=0:1"}) {
    BoundsMap bounds;
    EXPECT_THROW(parse_bounds_into(text, bounds), InputError) << text;
  }
}

TEST(Bounds, MissingAndUnusedConstantsAreErrors) {
  const auto e = Expression::parse("c0 + c1*x", "t");
  BoundsMap only_c0{{"c0", {0, 1}}};
  try {
    resolve_bounds(e, only_c0);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("c1 has no bounds"), std::string::npos) << error.what();
  }
  BoundsMap extra{{"c0", {0, 1}}, {"c1", {0, 1}}, {"c7", {0, 1}}};
  EXPECT_THROW(resolve_bounds(e, extra), InputError);
}

TEST(Models, EveryModelParsesWithNamedTermsAndBounds) {
  for (const auto& model : named_models()) {
    const Expression e = model_expression(model);
    EXPECT_EQ(e.terms().size(), model.term_names.size()) << model.name;
    std::vector<std::vector<double>> rows(3, std::vector<double>(e.variables().size(), 2.0));
    const auto data = Dataset::from_values("t", e.variables(), "y", rows, {1, 2, 3});
    EXPECT_NO_THROW(resolve_bounds(e, model.default_bounds(data))) << model.name;
  }
  EXPECT_THROW(find_model("ssgd_ps"), InputError);
}
