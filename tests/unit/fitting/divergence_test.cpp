#include <cmath>

#include <gtest/gtest.h>

#include "trainsim/core/error.hpp"
#include "trainsim/fitting/divergence.hpp"
#include "trainsim_test/files.hpp"

using namespace trainsim;
using namespace trainsim::fitting;

namespace {

CsvTable good(const std::string& name) { return CsvTable::read(trainsim_test::test_data_dir() + "/good/fitting/" + name); }

CompareRequest quick() {
  CompareRequest r;
  r.fit.options.bootstrap_samples = 0;
  return r;
}

}  // namespace

// The measured curve has a linear term five times the simulated one (tests/data/good/fitting/README.md).
TEST(Divergence, FindsTheGpuCountAndTheTermResponsible) {
  const auto report = compare_measured_simulated(good("compare_measured.csv"), good("compare_simulated.csv"), quick());
  ASSERT_TRUE(report.divergence_gpus.has_value());
  EXPECT_EQ(*report.divergence_gpus, 32.0);
  ASSERT_TRUE(report.responsible_term.has_value());
  EXPECT_EQ(report.terms[*report.responsible_term].name, "linear");
  EXPECT_NEAR(report.terms[*report.responsible_term].ratio, 5.0, 0.5);
  ASSERT_EQ(report.curve.size(), 7u);  // the measured GPU counts
  for (const auto& p : report.curve) {
    EXPECT_FALSE(p.simulated_from_fit);  // every measured GPU count is in the simulated sweep
    EXPECT_EQ(std::abs(p.relative_difference) > 0.10, p.gpus >= 32) << p.gpus;
  }
  EXPECT_EQ(report.simulated_curve.size(), 9u);
}

TEST(Divergence, UsesTheSimulatedFitWhereTheSweepLacksAConfiguration) {
  // Simulated rows at odd GPU counts only: the measured counts must come from the simulated fit.
  const std::string sim = "gpus,iteration_time_s\n3,0.7347\n5,0.7892\n12,0.8456\n24,0.8868\n48,0.9504\n96,1.0364\n";
  const auto report = compare_measured_simulated(good("compare_measured.csv"), CsvTable::parse(sim, "sim.csv"), quick());
  for (const auto& p : report.curve) EXPECT_TRUE(p.simulated_from_fit);
}

TEST(Divergence, IdenticalCurvesDoNotDiverge) {
  const auto report = compare_measured_simulated(good("compare_simulated.csv"), good("compare_simulated.csv"), quick());
  EXPECT_FALSE(report.divergence_gpus.has_value());
  for (const auto& t : report.terms)
    if (std::isfinite(t.ratio)) {
      EXPECT_NEAR(t.ratio, 1.0, 1e-9) << t.name;
    }
}

TEST(Divergence, JsonAndSelfContainedHtml) {
  const auto report = compare_measured_simulated(good("compare_measured.csv"), good("compare_simulated.csv"), quick());
  const Json json = divergence_json(report);
  EXPECT_EQ(json["divergence_gpus"], 32.0);
  EXPECT_EQ(json["responsible_term"]["name"], "linear");
  EXPECT_EQ(json["terms"].size(), 4u);
  EXPECT_EQ(json["curve"].size(), 7u);
  EXPECT_TRUE(json["measured"].contains("constants"));
  const std::string html = divergence_html(report);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  std::size_t svgs = 0;
  for (auto p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, 2u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The only URL is the SVG namespace name, which browsers never fetch.
  std::string rest = html;
  for (auto p = rest.find("http://www.w3.org/2000/svg"); p != std::string::npos; p = rest.find("http://www.w3.org/2000/svg"))
    rest.erase(p, 26);
  EXPECT_EQ(rest.find("http://"), std::string::npos);
  EXPECT_EQ(divergence_html(report), html);
}

TEST(Divergence, BadRequests) {
  CompareRequest r = quick();
  r.threshold = 0;
  EXPECT_THROW(compare_measured_simulated(good("compare_measured.csv"), good("compare_simulated.csv"), r), InputError);
  const auto no_gpus = CsvTable::parse("nodes,iteration_time_s\n1,1\n2,1.1\n4,1.2\n8,1.3\n16,1.5\n", "nogpus.csv");
  try {
    compare_measured_simulated(no_gpus, good("compare_simulated.csv"), quick());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "nogpus.csv");
    EXPECT_NE(e.detail().find("'gpus'"), std::string::npos);
  }
}

// The verdict names the term, its ratio at the divergence point, the GPU count and what to check.
TEST(Divergence, VerdictIsOneActionableSentence) {
  const auto report = compare_measured_simulated(good("compare_measured.csv"), good("compare_simulated.csv"), quick());
  EXPECT_EQ(report.verdict, divergence_verdict(report));
  EXPECT_EQ(report.verdict.rfind("The linear term is ", 0), 0u) << report.verdict;
  EXPECT_NE(report.verdict.find("× larger in the measurements from 32 GPUs on, where the measured iteration_time_s is "),
            std::string::npos) << report.verdict;
  EXPECT_NE(report.verdict.find("above the simulated one: per-step latency and synchronisation cost more in reality"),
            std::string::npos) << report.verdict;
  EXPECT_EQ(report.verdict.back(), '.');
  EXPECT_EQ(report.verdict.find(". "), std::string::npos) << "one sentence: " << report.verdict;
  EXPECT_EQ(divergence_json(report)["verdict"], report.verdict);
  EXPECT_NE(divergence_html(report).find("<strong>Verdict:</strong> <span class=\"verdict\">The linear term is "),
            std::string::npos);
  EXPECT_NE(divergence_text(report).find("verdict: The linear term"), std::string::npos);
}

TEST(Divergence, VerdictOfAgreeingCurvesSaysSo) {
  const auto report = compare_measured_simulated(good("compare_simulated.csv"), good("compare_simulated.csv"), quick());
  EXPECT_EQ(report.verdict.rfind("Measured and simulated scaling agree within 10% at every measured GPU count", 0), 0u)
      << report.verdict;
}

// A communication term larger in the measurements: the simulated network is faster than the real one.
TEST(Divergence, VerdictReadsACommunicationTerm) {
  std::string measured = "gpus,model_bytes,iteration_time_s\n", simulated = measured;
  for (int p : {1, 2, 4, 8, 16, 32, 64}) {
    const double comm = 2.0 * (p - 1) / p;
    measured += std::to_string(p) + ",1e9," + std::to_string(0.5 + 0.3 * comm) + "\n";
    simulated += std::to_string(p) + ",1e9," + std::to_string(0.5 + 0.1 * comm) + "\n";
  }
  CompareRequest request = quick();
  request.fit.expression = "c0 + c1*2*(gpus-1)/gpus*model_bytes*1e-9";
  request.fit.bounds = {"c0=0:2,c1=0:2"};
  const auto report = compare_measured_simulated(CsvTable::parse(measured, "m.csv"), CsvTable::parse(simulated, "s.csv"), request);
  ASSERT_TRUE(report.divergence_gpus.has_value());
  EXPECT_NE(report.verdict.find("× larger in the measurements from "), std::string::npos) << report.verdict;
}
