#pragma once
// A prediction's band over the software stack constants' ranges (plan/software_stack.hpp), trainsim::study:
// the app's simulate and the study's sweeps and validate use it.

#include "trainsim/engine/training.hpp"
#include "trainsim/plan/scenario.hpp"

namespace trainsim::study {

/// Simulates `scenario` with `options`, and, when an acting stack constant has a range, the same
/// scenario with every constant at its fast and at its slow end and with each acting constant
/// alone at its slow end, each in a child process (SimGrid runs one simulation per process), before
/// the nominal run in this one: sets result.band. A child that fails leaves the band unset.
engine::IterationResult simulate_with_band(const plan::Scenario& scenario, const engine::SimulateOptions& options);

/// The stack's name for a scenario's strategy: its kind, "ring_allreduce_host" for host staging.
std::string stack_strategy(const plan::Scenario& scenario);

}  // namespace trainsim::study
