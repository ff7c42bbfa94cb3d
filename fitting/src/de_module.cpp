// libtrainsim_fitting_de.so: the only code that calls pagmo2 (de_module.hpp says why it is a
// module). One entry point runs one DE run exactly as fit.cpp used to run it in-process, so fits
// are unchanged to the bit.
#include "de_module.hpp"

#include <utility>

#include <pagmo/algorithms/de.hpp>
#include <pagmo/algorithms/sade.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>

namespace {

using trainsim::fitting::detail::DeRequest;
using trainsim::fitting::detail::DeResponse;

// pagmo user-defined problem: the decision vector is the constants, inside their bounds. pagmo
// copies problems, so the request (which outlives the run) is referred to, not copied.
struct DeProblem {
  const DeRequest* request = nullptr;

  pagmo::vector_double fitness(const pagmo::vector_double& x) const { return {request->fitness(x.data())}; }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const { return {request->lower, request->upper}; }
};

}  // namespace

extern "C" unsigned trainsim_fitting_de_abi() { return trainsim::fitting::detail::de_module_abi; }
extern "C" std::uint64_t trainsim_fitting_de_layout() { return trainsim::fitting::detail::de_module_layout(); }

extern "C" void trainsim_fitting_de_run(const DeRequest& request, DeResponse& response) {
  pagmo::problem problem{DeProblem{&request}};
  pagmo::population population{problem, request.population_size, request.seed_population};
  if (request.self_adaptive) {
    pagmo::sade algorithm{request.generations, 2u, 1u, request.tolerance, request.tolerance, false,
                          request.seed_algorithm};
    population = algorithm.evolve(population);
  } else {
    pagmo::de algorithm{request.generations, 0.8, 0.9, 2u, request.tolerance, request.tolerance, request.seed_algorithm};
    population = algorithm.evolve(population);
  }
  response.x = population.champion_x();
  response.fitness = population.champion_f()[0];
  response.evaluations = population.get_problem().get_fevals();
}
