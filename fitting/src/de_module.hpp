#pragma once
// Differential evolution as a module loaded on first use (private to fitting/).
//
// Loading libpagmo and what it brings (Boost.Serialization, TBB) costs a process 60–110 ms of CPU
// before main: libpagmo's static initialisers copy its benchmark problems' data tables and
// register its classes with Boost.Serialization (tests/README.md, Performance). Only fitting uses pagmo, so
// the pagmo calls live in a shared module, libtrainsim_fitting_de.so, that de_loader.cpp opens
// with dlopen the first time a fit runs: `trainsim collective`, `simulate`, `platform`, … never
// load it.
//
// Both sides are built from this tree by the same compiler, so the interface is C++ (std::function,
// std::vector; exceptions thrown by the cost function cross it as they would a function call);
// only the entry points are extern "C", for dlsym. The ABI number guards against a module left
// over from another build.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trainsim::fitting::detail {

/// Bumped whenever DeRequest, DeResponse or the entry points change.
inline constexpr unsigned de_module_abi = 1;

/// One differential-evolution run, as pagmo takes it.
struct DeRequest {
  std::function<double(const double*)> fitness;  ///< finite for every x inside the bounds
  std::vector<double> lower, upper;              ///< the box, one entry per constant
  unsigned population_size = 0;                  ///< individuals (≥ 7)
  unsigned generations = 0;                      ///< generation budget (≥ 1)
  double tolerance = 0;                          ///< pagmo's ftol and xtol
  bool self_adaptive = true;                     ///< pagmo::sade (jDE) when true, pagmo::de otherwise
  unsigned seed_population = 0;
  unsigned seed_algorithm = 0;
};

/// The champion of the final population.
struct DeResponse {
  std::vector<double> x;
  double fitness = 0;
  std::uint64_t evaluations = 0;  ///< fitness evaluations, the initial population's included
};

/// The build's layout of the interface: the structs' sizes and the flags that change the standard
/// library's objects (AddressSanitizer, libstdc++'s debug mode). A module built from this tree
/// with other flags returns another value and is refused, even with the same ABI number.
inline constexpr std::uint64_t de_module_layout() {
  std::uint64_t flags = 0;
#if defined(__SANITIZE_ADDRESS__)
  flags |= 1;
#endif
#if defined(_GLIBCXX_DEBUG)
  flags |= 2;
#endif
  return (std::uint64_t(sizeof(DeRequest)) << 32) | (std::uint64_t(sizeof(DeResponse)) << 8) | flags;
}

/// Runs DE (the module's trainsim_fitting_de_run, loaded on first call). Throws RunError when the
/// module cannot be found or loaded (an incomplete installation, not bad input: the message names
/// every path tried and how to point trainsim at the module).
DeResponse run_de_module(const DeRequest& request);

/// Where the module is looked for, in order: $TRAINSIM_FITTING_MODULE alone when set; else next
/// to the running executable, in ../lib/trainsim/ beside it (cmake --install), and where the build
/// tree put it (tests and benchmarks run from their own folders).
std::vector<std::string> de_module_candidates();

}  // namespace trainsim::fitting::detail

/// The module's entry points (defined in de_module.cpp, looked up by dlsym).
extern "C" unsigned trainsim_fitting_de_abi();
extern "C" std::uint64_t trainsim_fitting_de_layout();
extern "C" void trainsim_fitting_de_run(const trainsim::fitting::detail::DeRequest& request,
                                        trainsim::fitting::detail::DeResponse& response);
