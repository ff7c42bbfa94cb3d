// Finds and opens libtrainsim_fitting_de.so on the first fit (de_module.hpp says why pagmo2 is
// not linked into trainsim).
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "de_module.hpp"
#include "trainsim/core/error.hpp"

namespace trainsim::fitting::detail {
namespace {

namespace fs = std::filesystem;

using AbiFunction = unsigned (*)();
using LayoutFunction = std::uint64_t (*)();
using RunFunction = void (*)(const DeRequest&, DeResponse&);

constexpr const char* kEnvironment = "TRAINSIM_FITTING_MODULE";

std::string join(const std::vector<std::string>& paths) {
  std::string out;
  for (std::size_t i = 0; i < paths.size(); ++i) out += (i ? ", " : "") + paths[i];
  return out;
}

// The module's run function. Throws RunError naming what is missing: a module that is not there,
// one whose own libraries (libpagmo, …) are not, or one from another build.
RunFunction open_module() {
  const std::vector<std::string> candidates = de_module_candidates();
  const std::string hint = std::getenv(kEnvironment) && *std::getenv(kEnvironment)
                               ? std::string(" (as ") + kEnvironment + " says)"
                               : std::string("; reinstall trainsim (cmake --install) or set ") + kEnvironment +
                                     " to the module's path";
  for (const std::string& path : candidates) {
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    // An absolute path: dlopen looks a bare file name up in the loader's search path, not here.
    const std::string absolute = fs::absolute(path, ec).string();
    void* handle = dlopen((ec ? path : absolute).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      throw RunError("incomplete installation: the fitting module " + path +
                     " (differential evolution, pagmo2) cannot be loaded: " + (why ? why : "dlopen failed") +
                     "; the libraries it needs (pagmo2, Boost.Serialization, TBB) must be installed, or rebuild trainsim");
    }
    // The handle is kept for the life of the process: fits may run again, and pagmo's static
    // objects must outlive every population.
    auto abi = reinterpret_cast<AbiFunction>(dlsym(handle, "trainsim_fitting_de_abi"));
    auto run = reinterpret_cast<RunFunction>(dlsym(handle, "trainsim_fitting_de_run"));
    if (!abi || !run || abi() != de_module_abi)
      throw RunError("inconsistent installation: the fitting module " + path +
                     " is not the one this trainsim was built with (interface " + std::to_string(abi ? abi() : 0) +
                     ", expected " + std::to_string(de_module_abi) + "); rebuild or reinstall trainsim");
    auto layout = reinterpret_cast<LayoutFunction>(dlsym(handle, "trainsim_fitting_de_layout"));
    if (!layout || layout() != de_module_layout())
      throw RunError("inconsistent installation: the fitting module " + path +
                     " was built with other flags than this trainsim (sanitizers, debug standard library or "
                     "another interface layout); rebuild or reinstall trainsim");
    return run;
  }
  throw RunError(std::string("incomplete installation: the fitting module ") +
                 TRAINSIM_FITTING_DE_FILE_NAME + " (differential evolution, pagmo2), which every fit needs, is not at " +
                 join(candidates) + hint);
}

}  // namespace

std::vector<std::string> de_module_candidates() {
  const char* from_environment = std::getenv(kEnvironment);
  if (from_environment && *from_environment) return {from_environment};
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path executable = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = executable.parent_path();
    out.push_back((dir / TRAINSIM_FITTING_DE_FILE_NAME).string());
    out.push_back((dir.parent_path() / "lib" / "trainsim" / TRAINSIM_FITTING_DE_FILE_NAME).string());
  }
  // The build tree's module only for executables of that build tree (tests, benchmarks): an
  // installed trainsim without its module must not pick up a build tree's, which may since have
  // been rebuilt or moved.
  const fs::path built = TRAINSIM_FITTING_DE_BUILD_PATH;
  const fs::path build_dir = built.parent_path();
  const auto inside_build = [&] {
    if (ec || build_dir.empty()) return false;
    auto e = executable.begin();
    for (auto b = build_dir.begin(); b != build_dir.end(); ++b, ++e)
      if (e == executable.end() || *e != *b) return false;
    return true;
  };
  if (inside_build() && std::find(out.begin(), out.end(), built.string()) == out.end()) out.push_back(built.string());
  return out;
}

DeResponse run_de_module(const DeRequest& request) {
  // Opened once per process (a function-local static: thread-safe; a failed open throws and is
  // retried by the next fit).
  static const RunFunction run = open_module();
  DeResponse response;
  run(request, response);
  return response;
}

}  // namespace trainsim::fitting::detail
