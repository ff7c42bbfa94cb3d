#pragma once
// Built-in named expressions: the S-SGD generic expression (fitting/README.md; per iteration and per
// epoch, ring all-reduce and parameter server), Paleo's scaling rules, Amdahl, Gustafson, and a
// gpus-only scaling curve for comparing sweeps. Each names its terms and has default bounds, so
// `trainsim fit --model NAME` works without --bounds.
#include <functional>
#include <string>
#include <vector>

#include "trainsim/fitting/dataset.hpp"
#include "trainsim/fitting/expression.hpp"

namespace trainsim::fitting {

/// One built-in model.
struct NamedModel {
  std::string name;
  std::string description;              ///< one line: what it models and what y is
  std::string expression;               ///< muParser text over CSV columns and c0…ck
  std::vector<std::string> term_names;  ///< one per additive term of `expression`
  /// Default search bounds; may depend on the data (e.g. scaled by the largest y).
  std::function<BoundsMap(const Dataset&)> default_bounds;
};

/// Every built-in model, in a fixed order.
const std::vector<NamedModel>& named_models();

/// The model called `name`; InputError("--model", "", "unknown model …; did you mean …") otherwise.
const NamedModel& find_model(const std::string& name);

/// The model's expression, parsed, with its term names.
Expression model_expression(const NamedModel& model);

}  // namespace trainsim::fitting
