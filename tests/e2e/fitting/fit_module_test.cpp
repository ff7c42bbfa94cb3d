// pagmo2 lives in libtrainsim_fitting_de.so, opened on the first fit (fitting/src/de_module.hpp):
// commands that do not fit never load it, fits find it, and a missing or foreign module is an
// installation fault (exit 1, one message saying what is missing), not bad input.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trainsim_test/cli.hpp"

namespace {

namespace fs = std::filesystem;
using trainsim_test::CliResult;
using trainsim_test::run_program;

std::string good(const std::string& name) { return trainsim_test::test_data_dir() + "/good/fitting/" + name; }

// A quick fit (no bootstrap, no cross-validation, one DE run).
std::vector<std::string> fit_args() {
  return {"fit",          good("compare_measured.csv"), "--y",        "iteration_time_s", "--expression",
          "c0 + c1*log2(gpus)", "--bounds",            "c0=0:2,c1=0:1", "--bootstrap",     "0",
          "--restarts",   "1",                         "--regularization", "none",        "--no-baseline"};
}

// trainsim (or `binary`) run with extra environment variables.
CliResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& args,
                       const std::string& binary = trainsim_test::trainsim_binary()) {
  std::vector<std::string> argv = {"env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(binary);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

// glibc's loader lists every object it loads under LD_DEBUG=libs: commands that do not fit load
// neither the module nor pagmo, and a fit loads both (so the check can fail).
TEST(FitModule, OnlyFitsLoadPagmo) {
  const std::vector<std::vector<std::string>> no_fit = {
      {"--version"},
      {"platform", "list"},
      {"workload", "info", "resnet50"},
      {"collective", "--platform", "dgx-a100", "--nodes", "2", "--bytes", "1M"}};
  for (const auto& args : no_fit) {
    const CliResult r = run_with_env({"LD_DEBUG=libs"}, args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
    ASSERT_TRUE(contains(r.err, "libsimgrid")) << "LD_DEBUG=libs printed nothing for " << args[0];
    EXPECT_FALSE(contains(r.err, "libpagmo")) << args[0];
    EXPECT_FALSE(contains(r.err, "libtrainsim_fitting_de")) << args[0];
  }
  const CliResult fit = run_with_env({"LD_DEBUG=libs"}, fit_args());
  ASSERT_EQ(fit.exit_code, 0);
  EXPECT_TRUE(contains(fit.err, "libtrainsim_fitting_de"));
  EXPECT_TRUE(contains(fit.err, "libpagmo"));
}

TEST(FitModule, MissingModuleIsAnInstallationFault) {
  const std::string missing = trainsim_test::make_temp_dir("fit_module") + "/libtrainsim_fitting_de.so";
  const CliResult r = run_with_env({"TRAINSIM_FITTING_MODULE=" + missing}, fit_args());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "incomplete installation: the fitting module libtrainsim_fitting_de.so")) << r.err;
  EXPECT_TRUE(contains(r.err, "is not at " + missing + " (as TRAINSIM_FITTING_MODULE says)")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(FitModule, UnloadableModuleSaysWhy) {
  const std::string not_a_library = good("compare_measured.csv");
  const CliResult r = run_with_env({"TRAINSIM_FITTING_MODULE=" + not_a_library}, fit_args());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "the fitting module " + not_a_library + " (differential evolution, pagmo2) cannot be loaded: "))
      << r.err;
  EXPECT_TRUE(contains(r.err, "invalid ELF header")) << r.err;  // dlerror's reason
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(FitModule, ModuleFromAnotherBuildIsRefused) {
  const CliResult r = run_with_env({std::string("TRAINSIM_FITTING_MODULE=") + TRAINSIM_FAKE_DE_MODULE}, fit_args());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "inconsistent installation")) << r.err;
  EXPECT_TRUE(contains(r.err, "(interface 999, expected 1)")) << r.err;
}

// The search order: next to the executable first, then ../lib/trainsim/ (the installed layout),
// then the build tree. A foreign module placed in each of the first two places is the one found.
TEST(FitModule, FoundNextToTheExecutableThenInLibTrainsim) {
  for (const std::string where : {"bin", "lib/trainsim"}) {
    const fs::path root = trainsim_test::make_temp_dir("fit_module_layout");
    fs::create_directories(root / "bin");
    fs::create_directories(root / where);
    fs::copy_file(trainsim_test::trainsim_binary(), root / "bin" / "trainsim");
    const fs::path module = root / where / "libtrainsim_fitting_de.so";
    fs::copy_file(TRAINSIM_FAKE_DE_MODULE, module);
    const CliResult r = run_with_env({}, fit_args(), (root / "bin" / "trainsim").string());
    EXPECT_EQ(r.exit_code, 1) << where << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "the fitting module " + module.lexically_normal().string())) << where << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "(interface 999, expected 1)")) << where << ": " << r.err;
  }
}
