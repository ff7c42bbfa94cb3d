#pragma once
// Fitted expressions: a muParser formula over variables named by CSV columns and constants c0…ck,
// split into the additive terms of its top-level sum (the "intrinsic operation terms" whose share
// of the prediction the report shows at every point).
//
//   c0 + c1*(flops_per_sample*batch_per_gpu*1e-12)^c2 - c4*log2(gpus)
//   └t0┘ └──────────────── t1 ─────────────────────┘   └──── t2 (sign −1) ─┘
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/fitting/dataset.hpp"

namespace trainsim::fitting {

/// One additive term of the top-level sum: value = sign · (text evaluated).
struct Term {
  std::string text;  ///< the term without its leading binary sign, e.g. "c3*model_bytes*1e-9"
  int sign = 1;      ///< +1 or −1 (a binary minus before the term)
  std::string name;  ///< a readable name ("compute"); the text itself for user expressions
};

/// A parsed expression. Constants are the identifiers c0, c1, … (no leading zeros); every other
/// identifier is a variable that must be a CSV column. Built-in functions are muParser's (sin, cos,
/// exp, ln, log2, log10, sqrt, abs, min, max, sum, avg, rint, sign, `^`, comparisons, `?:`) plus
/// ceil and floor.
class Expression {
public:
  /// Parses `text`; `source` names where it came from in errors ("--expression", "model ssgd_ps").
  /// Throws InputError(source, "character N", what is wrong) when it does not parse.
  static Expression parse(const std::string& text, const std::string& source);

  /// The expression as written.
  const std::string& text() const noexcept { return text_; }
  /// Where it came from ("--expression", "model NAME"), for messages.
  const std::string& source() const noexcept { return source_; }
  /// Constant names sorted by index (c0, c1, c2, c10).
  const std::vector<std::string>& constants() const noexcept { return constants_; }
  /// Variable names in alphabetical order.
  const std::vector<std::string>& variables() const noexcept { return variables_; }
  /// The additive terms of the top-level sum; one term when the top level is not a sum.
  const std::vector<Term>& terms() const noexcept { return terms_; }
  /// Gives the terms readable names (same count as terms(); TRAINSIM_CHECKed).
  void set_term_names(const std::vector<std::string>& names);

private:
  std::string text_;
  std::string source_;
  std::vector<std::string> constants_;
  std::vector<std::string> variables_;
  std::vector<Term> terms_;
};

/// True for c0, c1, … (the names reserved for fitted constants).
bool is_constant_name(std::string_view name);

/// Closed search interval of one constant.
struct Bound {
  double lower = 0.0;
  double upper = 0.0;
};

/// Bounds by constant name.
using BoundsMap = std::map<std::string, Bound>;

/// Parses "c0=0:1,c1=0:10" (numbers may be negative or in e-notation) into `bounds`, overriding
/// earlier entries. Throws InputError("--bounds", "", ...) for a malformed entry, a non-constant
/// name or lower ≥ upper.
void parse_bounds_into(std::string_view text, BoundsMap& bounds);

/// The bounds of every constant of `expression`, in constants() order. Throws InputError
/// ("--bounds") naming the first constant without bounds, or a bound given for a constant that the
/// expression does not use (a likely typo).
std::vector<Bound> resolve_bounds(const Expression& expression, const BoundsMap& bounds);

/// Evaluates an expression row by row on a dataset. Holds compiled muParser byte code bound to
/// internal storage, so it is neither copyable nor thread-safe; the dataset must outlive it.
class ExpressionEvaluator {
public:
  /// TRAINSIM_CHECKs that `data` has every variable of `expression` (Dataset::from_csv guarantees
  /// it when given expression.variables()).
  ExpressionEvaluator(const Expression& expression, const Dataset& data);
  ~ExpressionEvaluator();
  ExpressionEvaluator(const ExpressionEvaluator&) = delete;
  ExpressionEvaluator& operator=(const ExpressionEvaluator&) = delete;

  /// The dataset the evaluator reads rows from.
  const Dataset& data() const noexcept;
  /// Number of additive terms (Expression::terms().size()).
  std::size_t term_count() const noexcept;
  /// Sets the constants (Expression::constants() order) used by the next evaluations.
  void set_constants(std::span<const double> constants);
  /// The expression's value at `row` (may be NaN or ±inf, e.g. log2 of a negative).
  double value(std::size_t row);
  /// The signed value of every term at `row` into `out` (size term_count()); they sum to value().
  void term_values(std::size_t row, std::span<double> out);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::fitting
