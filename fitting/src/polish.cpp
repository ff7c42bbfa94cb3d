// Bounded Levenberg–Marquardt, written here with Eigen rather than taken from a library because it
// must work on the weighted, regularised residuals of detail::Objective and respect box bounds:
// a constant sitting on a bound whose gradient pushes it outward is frozen for the step (a simple
// active-set rule), every trial point is clamped into the box, and a step is accepted only when it
// lowers the smoothed cost. The caller compares exact costs and keeps the better of start and end.
#include <algorithm>
#include <cmath>
#include <limits>

#include "objective.hpp"

namespace trainsim::fitting::detail {
namespace {

double clamp_to(double v, const Bound& b) { return std::min(std::max(v, b.lower), b.upper); }

}  // namespace

PolishOutcome polish(Objective& objective, const std::vector<double>& start, unsigned max_iterations) {
  const std::size_t n = objective.dimension();
  const auto& bounds = objective.bounds();
  PolishOutcome out;
  out.x = start;
  for (std::size_t j = 0; j < n; ++j) out.x[j] = clamp_to(out.x[j], bounds[j]);
  out.cost = objective.cost(out.x.data());

  Eigen::VectorXd r, r_trial;
  if (!objective.residuals(out.x.data(), r)) return out;
  double f = r.squaredNorm();
  const Eigen::Index m = r.size();
  Eigen::MatrixXd jacobian(m, static_cast<Eigen::Index>(n));
  std::vector<double> x = out.x, trial(n);
  double mu = 1e-3;

  for (unsigned iteration = 0; iteration < max_iterations; ++iteration) {
    out.iterations = iteration + 1;
    // Forward differences, stepping inward at the upper bound.
    bool jacobian_ok = true;
    for (std::size_t j = 0; j < n && jacobian_ok; ++j) {
      const double width = bounds[j].upper - bounds[j].lower;
      double h = 1e-7 * std::max(std::abs(x[j]), 1e-3 * width);
      if (x[j] + h > bounds[j].upper) h = -h;
      trial = x;
      trial[j] = x[j] + h;
      Eigen::VectorXd shifted;
      if (!objective.residuals(trial.data(), shifted)) {
        jacobian_ok = false;
        break;
      }
      jacobian.col(static_cast<Eigen::Index>(j)) = (shifted - r) / h;
    }
    if (!jacobian_ok) break;
    const Eigen::VectorXd gradient = jacobian.transpose() * r;
    const Eigen::MatrixXd normal = jacobian.transpose() * jacobian;

    std::vector<Eigen::Index> free;
    for (std::size_t j = 0; j < n; ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      const bool at_lower = x[j] <= bounds[j].lower && gradient[jj] > 0;
      const bool at_upper = x[j] >= bounds[j].upper && gradient[jj] < 0;
      if (!at_lower && !at_upper) free.push_back(jj);
    }
    if (free.empty()) {
      out.converged = true;
      break;
    }
    const auto k = static_cast<Eigen::Index>(free.size());
    Eigen::MatrixXd a(k, k);
    Eigen::VectorXd g(k);
    for (Eigen::Index p = 0; p < k; ++p) {
      g[p] = gradient[free[static_cast<std::size_t>(p)]];
      for (Eigen::Index q = 0; q < k; ++q) a(p, q) = normal(free[static_cast<std::size_t>(p)], free[static_cast<std::size_t>(q)]);
    }
    bool accepted = false;
    double decrease = 0, step_norm = 0;
    for (int attempt = 0; attempt < 12 && !accepted; ++attempt) {
      Eigen::MatrixXd damped = a;
      for (Eigen::Index p = 0; p < k; ++p) damped(p, p) += mu * std::max(a(p, p), 1e-300) + 1e-300;
      const Eigen::VectorXd delta = damped.ldlt().solve(-g);
      trial = x;
      step_norm = 0;
      for (Eigen::Index p = 0; p < k; ++p) {
        const auto j = static_cast<std::size_t>(free[static_cast<std::size_t>(p)]);
        if (std::isfinite(delta[p])) trial[j] = clamp_to(x[j] + delta[p], bounds[j]);
        const double width = bounds[j].upper - bounds[j].lower;
        step_norm = std::max(step_norm, std::abs(trial[j] - x[j]) / width);
      }
      if (objective.residuals(trial.data(), r_trial)) {
        const double f_trial = r_trial.squaredNorm();
        if (f_trial < f) {
          decrease = f - f_trial;
          x = trial;
          r = r_trial;
          f = f_trial;
          mu = std::max(mu / 3.0, 1e-12);
          accepted = true;
          break;
        }
      }
      mu *= 4.0;
    }
    if (!accepted || decrease <= 1e-12 * f || step_norm <= 1e-12) {
      out.converged = true;
      break;
    }
  }
  const double cost = objective.cost(x.data());
  if (cost < out.cost) {
    out.cost = cost;
    out.x = x;
  }
  return out;
}

}  // namespace trainsim::fitting::detail
