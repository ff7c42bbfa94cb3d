// Oracle test of the CPU engine's oversubscription pacing (engine/src/cpu_training.cpp), in a
// forked child: a running op whose pace changes is restarted by its own pool with exactly the
// work it has left.
#include <gtest/gtest.h>

#include "trainsim/engine/training.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim_test/files.hpp"
#include "trainsim_test/fork.hpp"

using namespace trainsim;
using namespace trainsim::plan;

namespace {

// Two independent matrix products, `wide` and `narrow`, on one 24-core socket (48 hardware
// threads): two pools of 24 threads, idle threads sleep at once (spin_wait_ms 0), a small serial
// share so that both ops' parallel parts overlap.
Json two_pools_scenario() {
  return Json{{"name", "pacing oracle"},
              {"workload", Json{{"file", trainsim_test::test_data_dir() + "/good/workloads/two_matmuls.json"}, {"batch_per_gpu", 1024}}},
              {"platform", Json{{"preset", "cpu-2s-xeon-8160"}, {"sockets", 1}}},
              {"threading", Json{{"mode", "inference"}, {"inter_op_pools", 2}, {"intra_op_threads", 24}, {"spin_wait_ms", 0},
                                 {"serial_fraction", 0.005}}}};
}

}  // namespace

// Timeline (P = 24 cores; pace = ⌈threads wanting a core / P⌉):
//   0:   both pools start their op's serial part on one thread each (2 threads: pace 1).
//   sB:  narrow's serial part ends; its 24 threads join (25 threads: pace 2): narrow's parallel
//        part runs on 24/2 = 12 cores' worth, and wide's serial thread now gets half a core, so
//        wide's serial part ends at a0 = sB + 2 (sA − sB).
//   a0:  wide's 24 threads join (48 threads: still pace 2): 12 cores' worth.
//   tB:  narrow ends (sB + WB/12); its team sleeps (24 threads: pace 1): wide is restarted with
//        what it has left, WA − 12 (tB − a0), on all 24 cores.
// Both ops are compute-bound here (checked), so their ends are these closed forms.
TEST(CpuPacing, ARunningOpIsRestartedWithTheWorkItHasLeftWhenThePaceChanges) {
  const Json doc = two_pools_scenario();
  const Json out = Json::parse(trainsim_test::run_forked([&] {
    Json plan_json;
    engine::SimulateOptions options;
    options.on_cpu_plan = [&](const CpuPlan& plan) { plan_json = plan.to_json(); };
    const Scenario s = read_scenario(doc, "oracle.json");
    const auto r = engine::simulate_iteration(s, options);
    Json ends;
    for (const auto& op : r.cpu->ops) ends[op.name] = op.end_s;
    return Json{{"plan", plan_json}, {"ends", ends}, {"memory_Bps", s.cpu->memory_bandwidth_Bps()}}.dump();
  }));
  const Json& wide = out.at("plan").at("ops").at(0);
  const Json& narrow = out.at("plan").at("ops").at(1);
  ASSERT_EQ(wide.at("name"), "wide");
  ASSERT_EQ(narrow.at("name"), "narrow");
  ASSERT_EQ(wide.at("threads"), 24);
  ASSERT_EQ(narrow.at("threads"), 24);
  const double sA = wide.at("serial_s"), sB = narrow.at("serial_s");
  const double WA = wide.at("parallel_s"), WB = narrow.at("parallel_s");
  const double a0 = sB + 2 * (sA - sB);
  const double tB = sB + WB / 12;
  ASSERT_LT(sB, sA);
  ASSERT_LT(a0, tB) << "the parallel parts must overlap for the oracle";
  // Memory cannot bind: every byte of both ops, with a full L2 reload per thread, over the socket's
  // bandwidth fits between a0 and tB (the op's memory floor, bytes over 24 cores' bandwidth, is
  // smaller still).
  const double bytes = wide.at("bytes").get<double>() + narrow.at("bytes").get<double>() +
                       24 * (wide.at("working_set_bytes").get<double>() + narrow.at("working_set_bytes").get<double>());
  ASSERT_LT(bytes / out.at("memory_Bps").get<double>(), tB - a0);

  const double expected_wide = tB + (WA - 12 * (tB - a0)) / 24;
  const double ends_narrow = out.at("ends").at("narrow"), ends_wide = out.at("ends").at("wide");
  EXPECT_NEAR(ends_narrow, tB, 1e-9 * tB);
  EXPECT_NEAR(ends_wide, expected_wide, 1e-9 * expected_wide);
  // Neither left at its first pace (a0 + WA/12) nor restarted with all its work.
  EXPECT_LT(ends_wide, a0 + WA / 12 - 1e-4);
}
