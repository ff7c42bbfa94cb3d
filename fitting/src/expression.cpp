#include "trainsim/fitting/expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>

#include <muParser.h>

#include "trainsim/core/error.hpp"

namespace trainsim::fitting {
namespace {

double ceil_fn(double x) { return std::ceil(x); }
double floor_fn(double x) { return std::floor(x); }

// Every parser trainsim builds knows the same extra functions.
void add_functions(mu::Parser& parser) {
  parser.DefineFun("ceil", ceil_fn);
  parser.DefineFun("floor", floor_fn);
}

// muParser calls this for every identifier it does not know; giving each one storage lets us parse
// an expression before we know which identifiers are columns and which are constants.
double* collect_variable(const char* /*name*/, void* user_data) {
  auto* storage = static_cast<std::deque<double>*>(user_data);
  storage->push_back(0.0);
  return &storage->back();
}

[[noreturn]] void throw_parse_error(const mu::Parser::exception_type& e, const std::string& text,
                                    const std::string& source) {
  std::string message = e.GetMsg();
  // muParser appends " at position N." to some messages; the location carries it already.
  if (auto at = message.find(" at position "); at != std::string::npos) message.erase(at);
  else if (!message.empty() && message.back() == '.') message.pop_back();
  const int pos = e.GetPos();
  const std::string location = pos >= 0 ? "character " + std::to_string(pos + 1) : "";
  throw InputError(source, location, message + " in '" + text + "'");
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Splits `text` at the '+' and '-' of its top-level sum. A sign is binary when something other than
// an operator or '(' or ',' precedes it and it is not the exponent sign of a number (1e-9).
// A top-level comparison, logical operator or ternary makes the whole expression one term.
std::vector<Term> split_terms(const std::string& text) {
  std::vector<Term> terms;
  int depth = 0;
  std::size_t start = 0;
  int sign = 1;
  auto previous_significant = [&](std::size_t i) -> std::ptrdiff_t {
    std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) - 1;
    while (j >= 0 && std::isspace(static_cast<unsigned char>(text[static_cast<std::size_t>(j)]))) --j;
    return j;
  };
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    const auto e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    if (depth != 0) continue;
    if (std::string_view("?<>=!&|").find(c) != std::string_view::npos)
      return {Term{trim(text), 1, trim(text)}};
    if (c != '+' && c != '-') continue;
    const std::ptrdiff_t j = previous_significant(i);
    if (j < 0) continue;  // leading unary sign
    const char p = text[static_cast<std::size_t>(j)];
    if (std::string_view("+-*/^(,").find(p) != std::string_view::npos) continue;  // unary sign
    if ((p == 'e' || p == 'E') && static_cast<std::size_t>(j) + 1 == i) {
      // "1e-9": an exponent when the token before 'e' is a number, not an identifier.
      std::ptrdiff_t k = j - 1;
      while (k >= 0 && (std::isdigit(static_cast<unsigned char>(text[static_cast<std::size_t>(k)])) ||
                        text[static_cast<std::size_t>(k)] == '.'))
        --k;
      const bool has_digits = k < j - 1;
      const bool identifier = k >= 0 && is_identifier_char(text[static_cast<std::size_t>(k)]);
      if (has_digits && !identifier) continue;
    }
    terms.push_back(Term{trim(text.substr(start, i - start)), sign, ""});
    sign = c == '+' ? 1 : -1;
    start = i + 1;
  }
  terms.push_back(Term{trim(text.substr(start)), sign, ""});
  for (auto& term : terms) term.name = (term.sign < 0 ? "-" : "") + term.text;
  return terms;
}

}  // namespace

bool is_constant_name(std::string_view name) {
  if (name.size() < 2 || name[0] != 'c') return false;
  if (name.size() > 2 && name[1] == '0') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

Expression Expression::parse(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(source, "", "empty expression");
  Expression expression;
  expression.text_ = text;
  expression.source_ = source;
  std::deque<double> storage;
  std::vector<std::string> names;
  try {
    mu::Parser parser;
    add_functions(parser);
    parser.SetVarFactory(collect_variable, &storage);
    parser.SetExpr(text);
    parser.Eval();  // full syntax check (GetUsedVar alone does not check everything)
    for (const auto& [name, ptr] : parser.GetUsedVar()) names.push_back(name);
  } catch (const mu::Parser::exception_type& e) {
    throw_parse_error(e, text, source);
  }
  for (const auto& name : names) {
    if (is_constant_name(name)) expression.constants_.push_back(name);
    else if (name.size() > 1 && name[0] == 'c' &&
             std::all_of(name.begin() + 1, name.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      throw InputError(source, "", "constant '" + name + "' has a leading zero; write c" +
                                       std::to_string(std::stoul(name.substr(1))));
    else expression.variables_.push_back(name);
  }
  std::sort(expression.constants_.begin(), expression.constants_.end(), [](const std::string& a, const std::string& b) {
    return std::stoul(a.substr(1)) < std::stoul(b.substr(1));
  });
  std::sort(expression.variables_.begin(), expression.variables_.end());

  expression.terms_ = split_terms(text);
  // Each term must parse on its own; if the split ever produced something muParser rejects, the
  // expression is treated as a single term rather than failing.
  for (const auto& term : expression.terms_) {
    try {
      mu::Parser parser;
      add_functions(parser);
      std::deque<double> scratch;
      parser.SetVarFactory(collect_variable, &scratch);
      parser.SetExpr(term.text);
      parser.Eval();
    } catch (const mu::Parser::exception_type&) {
      expression.terms_ = {Term{text, 1, text}};
      break;
    }
  }
  return expression;
}

void Expression::set_term_names(const std::vector<std::string>& names) {
  TRAINSIM_CHECK(names.size() == terms_.size(), "one name per term");
  for (std::size_t i = 0; i < names.size(); ++i) terms_[i].name = names[i];
}

void parse_bounds_into(std::string_view text, BoundsMap& bounds) {
  const std::string source = "--bounds";
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string entry(text.substr(start, end - start));
    entry.erase(std::remove_if(entry.begin(), entry.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                entry.end());
    start = end + 1;
    if (entry.empty()) {
      if (end == text.size()) break;
      throw InputError(source, "", "empty entry in '" + std::string(text) + "'; expected NAME=LO:HI, e.g. c0=0:1");
    }
    const auto eq = entry.find('=');
    const auto colon = entry.find(':', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || colon == std::string::npos)
      throw InputError(source, "", "expected NAME=LO:HI (e.g. c0=0:1), got '" + entry + "'");
    const std::string name = entry.substr(0, eq);
    if (!is_constant_name(name))
      throw InputError(source, "", "'" + name + "' is not a constant name; constants are c0, c1, c2, …");
    auto number = [&](const std::string& s, const char* what) {
      double value = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
      if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value))
        throw InputError(source, "", name + ": expected a number for the " + what + " bound, got '" + s + "'");
      return value;
    };
    const double lower = number(entry.substr(eq + 1, colon - eq - 1), "lower");
    const double upper = number(entry.substr(colon + 1), "upper");
    if (!(lower < upper))
      throw InputError(source, "", name + ": the lower bound must be below the upper bound, got " + entry.substr(eq + 1));
    bounds[name] = Bound{lower, upper};
    if (end == text.size()) break;
  }
}

std::vector<Bound> resolve_bounds(const Expression& expression, const BoundsMap& bounds) {
  for (const auto& [name, bound] : bounds)
    if (std::find(expression.constants().begin(), expression.constants().end(), name) == expression.constants().end()) {
      std::string detail = "bounds given for " + name + ", which the expression does not use; its constants are";
      for (std::size_t i = 0; i < expression.constants().size(); ++i)
        detail += (i ? ", " : " ") + expression.constants()[i];
      if (expression.constants().empty()) detail += " none";
      throw InputError("--bounds", "", detail);
    }
  std::vector<Bound> out;
  for (const auto& name : expression.constants()) {
    auto it = bounds.find(name);
    if (it == bounds.end())
      throw InputError("--bounds", "", "constant " + name + " has no bounds; give them as --bounds " + name +
                                           "=LO:HI (differential evolution searches inside the bounds)");
    out.push_back(it->second);
  }
  return out;
}

struct ExpressionEvaluator::Impl {
  const Dataset* data = nullptr;
  std::deque<double> variable_storage;  // deque: stable addresses for muParser
  std::deque<double> constant_storage;
  std::vector<std::size_t> variable_columns;  // dataset column of each bound variable
  mu::Parser whole;
  std::vector<mu::Parser> terms;
  std::vector<double> term_signs;

  void bind(mu::Parser& parser, const Expression& expression, const std::string& text) {
    add_functions(parser);
    for (std::size_t i = 0; i < expression.variables().size(); ++i)
      parser.DefineVar(expression.variables()[i], &variable_storage[i]);
    for (std::size_t i = 0; i < expression.constants().size(); ++i)
      parser.DefineVar(expression.constants()[i], &constant_storage[i]);
    parser.SetExpr(text);
  }

  void load_row(std::size_t row) {
    for (std::size_t i = 0; i < variable_columns.size(); ++i) variable_storage[i] = data->value(row, variable_columns[i]);
  }
};

ExpressionEvaluator::ExpressionEvaluator(const Expression& expression, const Dataset& data)
    : impl_(std::make_unique<Impl>()) {
  impl_->data = &data;
  impl_->variable_storage.resize(expression.variables().size(), 1.0);
  impl_->constant_storage.resize(expression.constants().size(), 1.0);
  for (const auto& name : expression.variables()) {
    auto column = data.find_variable(name);
    TRAINSIM_CHECK(column.has_value(), "dataset lacks variable '" + name + "'");
    impl_->variable_columns.push_back(*column);
  }
  try {
    impl_->bind(impl_->whole, expression, expression.text());
    impl_->terms.resize(expression.terms().size());
    for (std::size_t i = 0; i < expression.terms().size(); ++i) {
      impl_->bind(impl_->terms[i], expression, expression.terms()[i].text);
      impl_->term_signs.push_back(expression.terms()[i].sign);
    }
  } catch (const mu::Parser::exception_type& e) {
    throw_parse_error(e, expression.text(), expression.source());
  }
}

ExpressionEvaluator::~ExpressionEvaluator() = default;

const Dataset& ExpressionEvaluator::data() const noexcept { return *impl_->data; }
std::size_t ExpressionEvaluator::term_count() const noexcept { return impl_->terms.size(); }

void ExpressionEvaluator::set_constants(std::span<const double> constants) {
  TRAINSIM_CHECK(constants.size() == impl_->constant_storage.size(), "one value per constant");
  for (std::size_t i = 0; i < constants.size(); ++i) impl_->constant_storage[i] = constants[i];
}

double ExpressionEvaluator::value(std::size_t row) {
  impl_->load_row(row);
  try {
    return impl_->whole.Eval();
  } catch (const mu::Parser::exception_type&) {
    return std::nan("");  // a run-time evaluation error is an unusable prediction, not bad input
  }
}

void ExpressionEvaluator::term_values(std::size_t row, std::span<double> out) {
  TRAINSIM_CHECK(out.size() == impl_->terms.size(), "one slot per term");
  impl_->load_row(row);
  for (std::size_t i = 0; i < out.size(); ++i) {
    try {
      out[i] = impl_->term_signs[i] * impl_->terms[i].Eval();
    } catch (const mu::Parser::exception_type&) {
      out[i] = std::nan("");
    }
  }
}

}  // namespace trainsim::fitting
