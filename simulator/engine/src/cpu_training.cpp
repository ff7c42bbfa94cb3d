// A CPU iteration (plan/cpu_threading.hpp) on SimGrid:
//
//   host "cpu": the node's physical cores (SimGrid's multi-core CPU model: an execution of k
//               threads takes k cores; more threads than cores share them fairly)
//   host "dram" ── link "memory" (the node's memory bandwidth, max-min shared) ── host "cpu"
//
//   pool actor p (one per inter-op pool): take the first ready op in graph order ─ serial part on
//   one thread ─ then at once: the parallel part on `threads` threads, and the op's bytes as a flow
//   over the memory link lasting at least bytes / (threads × core bandwidth) ─ the op ends when
//   both have ─ its successors become ready.
//
// The plan fixes every op's work; contention for cores and for memory bandwidth between ops that
// run at the same time is what SimGrid adds.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/trace.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim/plan/cpu_threading.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

// Work is given to SimGrid in seconds of one core: a core runs 1e9 units per second.
constexpr double kCoreSpeed = 1e9;

struct CpuRun {
  const plan::CpuPlan& plan;
  sg4::Host* cpu = nullptr;
  sg4::Host* dram = nullptr;
  sg4::MutexPtr mutex;
  sg4::ConditionVariablePtr changed;
  std::set<int> ready;               // op indices; the first in graph order goes first
  std::vector<int> waiting_for;      // unfinished dependencies per op
  std::vector<std::vector<int>> successors;
  std::vector<double> start_s, end_s;
  std::vector<int> pool_of;
  std::size_t finished = 0;
};

void run_op(const plan::CpuOp& op, CpuRun& run) {
  if (op.serial_s > 0) sg4::this_actor::execute(op.serial_s * kCoreSpeed);
  sg4::ExecPtr compute;
  sg4::CommPtr memory;
  if (op.parallel_s > 0) {
    compute = sg4::Exec::init()->set_flops_amount(op.parallel_s / op.threads * kCoreSpeed)->set_thread_count(op.threads)->set_host(run.cpu);
    compute->start();
  }
  if (op.bytes >= 1) {
    memory = sg4::Comm::sendto_init(run.dram, run.cpu)->set_payload_size(static_cast<std::uint64_t>(op.bytes));
    memory->start();
    // The op's threads cannot draw more than their cores' bandwidth. SimGrid 3.32 ignores
    // set_rate() on host-to-host comms (sendto), so the cap is a lower bound on the op's memory
    // time instead: it waits at least bytes / cap, while its flow competes for the shared link.
    sg4::this_actor::sleep_for(op.bytes / op.bandwidth_cap_Bps);
  }
  if (compute) compute->wait();
  if (memory) memory->wait();
}

void pool_actor(CpuRun& run, int pool) {
  const std::size_t n = run.plan.ops.size();
  std::unique_lock lock(*run.mutex);
  while (run.finished < n) {
    if (run.ready.empty()) {
      run.changed->wait(lock);
      continue;
    }
    const int op = *run.ready.begin();
    run.ready.erase(run.ready.begin());
    lock.unlock();
    run.start_s[static_cast<std::size_t>(op)] = sg4::Engine::get_clock();
    run.pool_of[static_cast<std::size_t>(op)] = pool;
    run_op(run.plan.ops[static_cast<std::size_t>(op)], run);
    run.end_s[static_cast<std::size_t>(op)] = sg4::Engine::get_clock();
    lock.lock();
    ++run.finished;
    for (int next : run.successors[static_cast<std::size_t>(op)])
      if (--run.waiting_for[static_cast<std::size_t>(next)] == 0) run.ready.insert(next);
    run.changed->notify_all();
  }
}

void write_cpu_trace(const plan::CpuPlan& plan, const CpuRun& run, const std::string& path) {
  TraceWriter trace;
  trace.name_process(0, plan.platform.describe());
  for (int p = 0; p < plan.pools; ++p) trace.name_thread(0, p, fmt::format("pool {} ({} threads)", p, plan.threads_per_pool));
  for (std::size_t i = 0; i < plan.ops.size(); ++i)
    trace.complete(0, run.pool_of[i], plan.ops[i].name, plan.ops[i].op_class, run.start_s[i], run.end_s[i] - run.start_s[i]);
  write_output(path, trace.dump());
}

}  // namespace

IterationResult simulate_cpu_iteration(const plan::Scenario& scenario, const SimulateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const workloads::Workload workload = plan::load_scenario_workload(scenario);
  const plan::CpuPlan plan = plan::build_cpu_plan(scenario, workload);
  if (options.on_cpu_plan) options.on_cpu_plan(plan);

  static int argc = 1;
  static char name[] = "trainsim";
  static char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  // Memory flows take bytes / bandwidth, shared max-min, with no TCP factors (SimGrid 3.32's
  // default LV08 would scale them as if they were network flows).
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  auto* zone = sg4::create_full_zone("cpu-node");
  CpuRun run{plan, nullptr, nullptr, sg4::Mutex::create(), sg4::ConditionVariable::create(), {}, {}, {}, {}, {}, {}, 0};
  run.cpu = zone->create_host("cpu", kCoreSpeed);
  run.cpu->set_core_count(plan.platform.physical_cores());
  run.dram = zone->create_host("dram", kCoreSpeed);
  auto* link = zone->create_link("memory", plan.platform.memory_bandwidth_Bps())->set_latency(0);
  zone->add_route(run.dram->get_netpoint(), run.cpu->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(link)}, true);
  zone->seal();

  const std::size_t n = plan.ops.size();
  run.waiting_for.assign(n, 0);
  run.successors.resize(n);
  run.start_s.assign(n, 0);
  run.end_s.assign(n, 0);
  run.pool_of.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d : plan.ops[i].deps) run.successors[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
    run.waiting_for[i] = static_cast<int>(plan.ops[i].deps.size());
    if (run.waiting_for[i] == 0) run.ready.insert(static_cast<int>(i));
  }
  for (int p = 0; p < plan.pools; ++p) sg4::Actor::create("pool-" + std::to_string(p), run.cpu, [&run, p] { pool_actor(run, p); });
  engine.run();
  TRAINSIM_CHECK(run.finished == n, "the CPU iteration ended with ops left (a dependency cycle in the plan)");

  IterationResult result;
  result.name = scenario.name;
  result.gpus = 1;
  result.nodes = 1;
  result.global_batch = plan.batch;
  result.iteration_time_s = n > 0 ? *std::max_element(run.end_s.begin(), run.end_s.end()) : 0.0;
  result.samples_per_s = plan.batch / result.iteration_time_s;
  result.single_gpu_samples_per_s = result.samples_per_s;
  result.scaling_efficiency = 1;
  result.breakdown.compute_s = result.iteration_time_s;
  result.strategy = "cpu";
  result.network_model = "none";
  result.calibration_factor = plan.calibration_factor;
  result.variables.batch_per_gpu = plan.batch;
  result.variables.flops_per_sample = workload.forward_flops();
  result.variables.model_bytes = workload.weight_bytes(plan.precision);
  result.variables.params = workload.params();
  result.variables.precision = std::string(to_string(plan.precision));
  result.variables.single_gpu_time_s = result.iteration_time_s;
  result.variables.dataset_samples = scenario.workload.dataset_samples;

  plan::CpuReport report;
  report.cpu = plan.platform.cpu.name;
  report.sockets = plan.platform.sockets;
  report.physical_cores = plan.platform.physical_cores();
  report.logical_cores = plan.platform.logical_cores();
  report.inter_op_pools = plan.pools;
  report.intra_op_threads = plan.threads_per_pool;
  report.mode = plan.threading.mode == plan::CpuMode::training ? "training" : "inference";
  report.average_width = plan.average_width();
  double core_seconds = 0, op_seconds = 0, thread_seconds = 0, bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = plan.ops[i];
    const double span = run.end_s[i] - run.start_s[i];
    core_seconds += op.serial_s + op.parallel_s;
    op_seconds += span;
    thread_seconds += span * op.threads;
    bytes += op.bytes;
    report.ops.push_back(plan::CpuOpUse{op.name, op.threads, run.start_s[i], run.end_s[i]});
  }
  if (result.iteration_time_s > 0) {
    report.core_utilisation = std::min(1.0, core_seconds / (report.physical_cores * result.iteration_time_s));
    report.mean_concurrent_ops = op_seconds / result.iteration_time_s;
    report.memory_busy_fraction = bytes / plan.platform.memory_bandwidth_Bps() / result.iteration_time_s;
  }
  report.mean_threads_per_op = op_seconds > 0 ? thread_seconds / op_seconds : 0;
  result.bound.kind = plan::BoundKind::compute;
  result.bound.share = 1;
  result.bound.sentence = fmt::format("The iteration is bound by the CPU: {} pool{} × {} thread{} keep {:.0f} % of the {} cores busy.",
                                      plan.pools, plan.pools == 1 ? "" : "s", plan.threads_per_pool, plan.threads_per_pool == 1 ? "" : "s",
                                      100 * report.core_utilisation, report.physical_cores);
  result.cpu = std::move(report);
  if (!options.trace_path.empty()) write_cpu_trace(plan, run, options.trace_path);
  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace trainsim::engine
