// A CPU iteration (plan/cpu_threading.hpp) on SimGrid:
//
//   host "cpu": the node's physical cores (SimGrid's multi-core CPU model: an execution of k
//               threads takes k cores); more runnable threads than cores pace every parallel op
//               by its slowest thread (see pace_now)
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
#include <map>
#include <set>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/engine/trace.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim/plan/cpu_threading.hpp"
#include "trainsim/platforms/simgrid_builder.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

// Work is given to SimGrid in seconds of one core: the builder's core runs this many units per second.
constexpr double kCoreSpeed = platforms::kCpuCoreSpeed;

// One running phase of an op (its serial part on one thread, or its parallel part on k threads),
// as a SimGrid execution that its owner (the pool actor running the op) restarts with its remaining
// work whenever its pace changes. Another actor that changes the pace only wakes the owner, with
// a message on the op's mailbox: SimGrid 3.32 does not survive one actor cancelling an exec that
// another actor waits on (ASan: use after free in ActivityImpl's release from EngineImpl::run),
// whereas cancelling an exec nobody waits on is what its own examples do.
struct Phase {
  sg4::ExecPtr exec;
  sg4::Host* host = nullptr;  // where it runs: the node's cores, or the shared intra-op pool's
  sg4::CommPtr wake;      // the owner's pending receive on `mailbox`
  sg4::Mailbox* mailbox = nullptr;
  int threads = 1;        // software threads the phase runs on
  int pace = 1;           // threads per core where its slowest thread runs (see pace_now)
  double amount = 0;      // work of `exec`, summed over its SimGrid threads
  bool listening = false; // the owner waits on `wake` (set and read only in actor code, which
  bool woken = false;     // SimGrid runs one actor at a time): a wake-up was sent to `wake`
};

struct CpuRun {
  explicit CpuRun(const plan::CpuPlan& p)
      : plan(p), mutex(sg4::Mutex::create()), changed(sg4::ConditionVariable::create()) {}
  const plan::CpuPlan& plan;
  sg4::Host* cpu = nullptr;
  sg4::Host* dram = nullptr;
  sg4::Host* pool = nullptr;  // the shared intra-op pool's cores (TensorFlow, ONNX Runtime), else nullptr
  sg4::MutexPtr mutex;
  sg4::ConditionVariablePtr changed;
  std::set<int> ready;               // op indices; the first in graph order goes first
  std::vector<int> waiting_for;      // unfinished dependencies per op
  std::vector<std::vector<int>> successors;
  std::vector<double> start_s, end_s;
  std::vector<int> pool_of;
  std::size_t finished = 0;
  int runnable = 0;                  // software threads that want a core now, over every running op
  bool shared = false;               // one intra-op pool shared by the inter-op pools (its threads counted once)
  std::map<int, Phase> phases;       // by op index: the phase each running op is in
  std::vector<sg4::Mailbox*> mailboxes;  // by op index: where its owner is woken (see repace)
};

// Oversubscription. A parallel op is a barrier-synchronised region whose work the library splits
// evenly over its k threads (OpenMP static schedule, MKL-DNN's blocking, Eigen's equal shards): it
// ends when its slowest thread does. With R runnable threads on P physical cores the most loaded
// core holds ⌈R/P⌉ of them, as SMT siblings (which share one core's FMA units) or, past the
// hardware threads, in OS time slices; its thread gets 1/⌈R/P⌉ of the core, so the whole region
// runs at that pace while the threads that finish early wait at the barrier. SimGrid's fluid
// sharing would instead give a region its average share of the cores (R/P), missing the
// straggler. Hence the pace, recomputed whenever R changes.
int pace_now(const CpuRun& run) {
  const int cores = run.plan.platform.physical_cores();
  return std::max(1, (run.runnable + cores - 1) / cores);
}

// A phase of `threads` threads at `pace` advances like ⌈threads/pace⌉ threads at full speed: the
// cores its fast threads leave idle at the barrier are free for the other pools. One thread at
// pace p runs at 1/p of a core (a bound; SimGrid 3.32 ignores bounds on multi-thread execs).
sg4::ExecPtr start_exec(Phase& phase, double amount) {
  const int lanes = std::max(1, (phase.threads + phase.pace - 1) / phase.pace);
  auto exec = sg4::Exec::init()->set_flops_amount(amount / lanes)->set_thread_count(lanes)->set_host(phase.host);
  if (phase.threads == 1 && phase.pace > 1) exec->set_bound(kCoreSpeed / phase.pace);
  exec->start();
  phase.amount = amount;
  return exec;
}

// Wakes the owner of every running phase whose pace differs from the pace the threads now
// runnable give; the owner restarts it (run_phase). Zero bytes on the loopback, with no latency:
// the owner wakes at this same simulated instant.
void repace(CpuRun& run) {
  // Sending is a simcall, during which other actors run and may end their phases: look each one
  // up again.
  std::vector<int> ops;
  for (const auto& [op, phase] : run.phases) ops.push_back(op);
  for (int op : ops) {
    auto it = run.phases.find(op);
    if (it == run.phases.end()) continue;
    Phase& phase = it->second;
    if (!phase.listening || phase.woken || phase.pace == pace_now(run)) continue;
    phase.woken = true;
    phase.mailbox->put_init(&run, 0)->detach();  // the payload is never read
  }
}

// Runs `core_seconds` of work on `threads` threads, paced as above. The owner waits for whichever
// comes first, its exec or a wake-up; then, and before its first wait (the pace may have changed
// while it was in the simcalls that start the exec and the receive, when nobody could wake it), it
// cancels its own exec if the pace is no longer the exec's and starts one with the work left at
// the pace of now. When the exec ends first, a wake-up already on its way is received (it
// completes at this instant), otherwise the pending receive is withdrawn.
void run_phase(CpuRun& run, int op, int threads, double core_seconds, sg4::Host* host) {
  Phase& phase = run.phases[op];
  phase.host = host;
  phase.threads = threads;
  phase.pace = pace_now(run);
  phase.mailbox = run.mailboxes[static_cast<std::size_t>(op)];
  phase.exec = start_exec(phase, core_seconds * kCoreSpeed);
  void* message = nullptr;
  while (true) {
    phase.wake = phase.mailbox->get_async<void>(&message);
    phase.listening = true;
    phase.woken = false;
    // An exec whose work is done may not have been finished by the engine yet (it does so after
    // the actors of this instant have run): let it end rather than cancel it.
    const double ratio = phase.exec->get_remaining_ratio();
    const int pace = pace_now(run);
    if (pace != phase.pace && ratio > 1e-12) {
      phase.pace = pace;  // before the simcalls, so that an actor running meanwhile sees it
      phase.exec->cancel();
      phase.exec = start_exec(phase, ratio * phase.amount);
    }
    // No pace change is lost: the exec runs at the pace of now, or a wake-up is on its way.
    TRAINSIM_CHECK(phase.woken || phase.pace == pace_now(run) || phase.exec->get_remaining_ratio() <= 1e-12,
                   "a CPU phase waits at a stale pace");
    if (sg4::Activity::wait_any({phase.exec, phase.wake}) == 0) break;
  }
  phase.listening = false;
  if (phase.woken)
    phase.wake->wait();
  else
    phase.wake->cancel();
  run.phases.erase(op);
}

void set_runnable(CpuRun& run, int delta) {
  run.runnable += delta;
  repace(run);
}

// A pool's OpenMP team: the threads of its ops. After a parallel region they do not sleep at once
// but spin at the barrier for the runtime's block time (Intel OpenMP's KMP_BLOCKTIME, 200 ms by
// default), so an idle pool's threads still want their cores until it runs out.
struct Team {
  bool live = false;     // its threads are working or spinning, counted in `runnable`
  double idle_since = -1;
};

void run_op(int index, CpuRun& run, Team& team) {
  const plan::CpuOp& op = run.plan.ops[static_cast<std::size_t>(index)];
  const auto& platform = run.plan.platform;
  if (op.serial_s > 0) {
    // The pool's own thread does the serial part; when the team is live it is one of its threads.
    // With a shared intra-op pool, the inter-op thread does it while the pool's threads wait
    // (they are counted once, for the whole run).
    const bool counted = !team.live && !run.shared;
    if (counted) set_runnable(run, 1);
    run_phase(run, index, 1, op.serial_s, run.cpu);
    if (counted) set_runnable(run, -1);
  }
  if (!team.live && !run.shared) {
    set_runnable(run, run.plan.threads_per_pool);
    team.live = true;
  }
  // Threads sharing a core evict each other's L2 working set (SMT siblings share the core's L2;
  // time-sliced threads find it refilled by the other): each of the op's threads reloads its
  // working set once per co-runner. Past the hardware threads, every barrier of the region also
  // costs the OS context switches of the threads ahead on the same hardware thread (Intel's
  // OpenMP runtime yields in its barrier waits when oversubscribed: kmp_wait_release.h).
  const int pace = pace_now(run);
  const int hardware_threads = platform.logical_cores();
  const int time_slices = std::max(0, (run.runnable + hardware_threads - 1) / hardware_threads - 1);
  const double reload_bytes = (pace - 1) * op.threads * op.working_set_bytes;
  const double bytes = op.bytes + reload_bytes;
  sg4::CommPtr memory;
  if (bytes >= 1) {
    memory = sg4::Comm::sendto_init(run.dram, run.cpu)->set_payload_size(static_cast<std::uint64_t>(bytes));
    memory->start();
  }
  // The op's threads cannot draw more than their cores' bandwidth. SimGrid 3.32 ignores
  // set_rate() on host-to-host comms (sendto), so the cap is a lower bound on the op's memory
  // time instead: it waits at least bytes / cap, while its flow competes for the shared link.
  const double memory_floor_s = bytes >= 1 ? bytes / op.bandwidth_cap_Bps : 0.0;
  const double start = sg4::Engine::get_clock();
  if (op.parallel_s > 0) run_phase(run, index, op.threads, op.parallel_s, run.pool ? run.pool : run.cpu);
  if (time_slices > 0) sg4::this_actor::sleep_for(time_slices * run.plan.threading.context_switch_s);
  const double left = memory_floor_s - (sg4::Engine::get_clock() - start);
  if (left > 0) sg4::this_actor::sleep_for(left);
  if (memory) memory->wait();
}

void pool_actor(CpuRun& run, int pool) {
  const std::size_t n = run.plan.ops.size();
  const double spin_s = run.plan.threading.spin_wait_s;
  Team team;
  std::unique_lock lock(*run.mutex);
  while (run.finished < n) {
    if (run.ready.empty()) {
      if (!team.live || run.shared) {
        run.changed->wait(lock);
        continue;
      }
      if (team.idle_since < 0) team.idle_since = sg4::Engine::get_clock();
      if (run.changed->wait_until(lock, team.idle_since + spin_s) == std::cv_status::timeout && run.ready.empty()) {
        team.live = false;  // the block time ran out: the team sleeps
        set_runnable(run, -run.plan.threads_per_pool);
      }
      continue;
    }
    team.idle_since = -1;
    const int op = *run.ready.begin();
    run.ready.erase(run.ready.begin());
    lock.unlock();
    run.start_s[static_cast<std::size_t>(op)] = sg4::Engine::get_clock();
    run.pool_of[static_cast<std::size_t>(op)] = pool;
    run_op(op, run, team);
    run.end_s[static_cast<std::size_t>(op)] = sg4::Engine::get_clock();
    lock.lock();
    ++run.finished;
    for (int next : run.successors[static_cast<std::size_t>(op)])
      if (--run.waiting_for[static_cast<std::size_t>(next)] == 0) run.ready.insert(next);
    run.changed->notify_all();
  }
  if (team.live && !run.shared) set_runnable(run, -run.plan.threads_per_pool);
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
  const workloads::Workload workload = plan::load_scenario_workload(scenario);
  return simulate_cpu_plan(plan::build_cpu_plan(scenario, workload), options);
}

IterationResult simulate_cpu_plan(const plan::CpuPlan& plan, const SimulateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (options.on_cpu_plan) options.on_cpu_plan(plan);

  // The node as every simulation builds its platform (one engine per process, the builder's
  // max-min network: memory flows take bytes / bandwidth, shared max-min, with no TCP factors).
  // A shared intra-op pool (TensorFlow, ONNX Runtime) is a host of its own whose cores the ops
  // running at once share; past the physical cores its threads pace every region (pace_now).
  const bool shared = plan.threading.shared_intra_pool();
  Simulation sim(plan.platform, shared ? std::min(plan.threads_per_pool, plan.platform.physical_cores()) : 0);
  CpuRun run(plan);
  run.cpu = sim.cpu_host();
  run.dram = sim.memory_host();
  run.pool = sim.shared_pool_host();
  run.shared = shared;
  // The shared pool's threads (and ONNX Runtime's spinning inter-op threads) want cores from the
  // start: they spin between ops.
  if (shared) run.runnable = plan.threading.spinning_threads(plan.threads_per_pool);

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
  for (std::size_t i = 0; i < n; ++i) run.mailboxes.push_back(sg4::Mailbox::by_name("wake-" + std::to_string(i)));
  for (int p = 0; p < plan.pools; ++p) sg4::Actor::create("pool-" + std::to_string(p), run.cpu, [&run, p] { pool_actor(run, p); });
  sim.run();
  TRAINSIM_CHECK(run.finished == n, "the CPU iteration ended with ops left (a dependency cycle in the plan)");

  IterationResult result;
  result.name = plan.name;
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
  result.variables.flops_per_sample = plan.flops_per_sample;
  result.variables.model_bytes = plan.weight_bytes;
  result.variables.params = plan.params;
  result.variables.precision = std::string(to_string(plan.precision));
  result.variables.single_gpu_time_s = result.iteration_time_s;
  result.variables.dataset_samples = plan.dataset_samples;

  plan::CpuReport report;
  report.cpu = plan.platform.cpu.name;
  report.sockets = plan.platform.sockets;
  report.physical_cores = plan.platform.physical_cores();
  report.logical_cores = plan.platform.logical_cores();
  report.inter_op_pools = plan.pools;
  report.intra_op_threads = plan.threads_per_pool;
  report.mode = plan::to_string(plan.threading.mode);
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
  // The node's memory, as GPU scenarios check theirs (a batch of 1e9 ran for 594 simulated hours
  // without a word). A catalog CPU has no DIMM sizes: assume one 64 GiB DIMM in every memory
  // channel, about the most these servers are sold with, so the warning errs on the side of
  // silence; a CPU object gives `memory_GiB` (or nothing, and gets no check).
  if (const double socket_memory = plan.platform.cpu.socket_memory_bytes(); socket_memory > 0) {
    const double dram = plan.platform.sockets * socket_memory;
    const bool training = plan.threading.mode == plan::CpuMode::training;
    // Training keeps every activation for backward plus gradients; inference holds a layer's input
    // and output at a time (plan.activation_bytes_per_sample says which).
    const double needed = plan.weight_bytes * (training ? 2.0 : 1.0) + double(plan.batch) * plan.activation_bytes_per_sample;
    const std::string assumed = plan.platform.cpu.memory_bytes > 0
                                    ? std::string("as described")
                                    : fmt::format("64 GiB in each of its {} memory channels",
                                                  plan.platform.sockets * plan.platform.cpu.memory_channels);
    if (needed > dram)
      result.warnings.push_back(plan::Warning{
          "memory", fmt::format("the configuration does not fit in the node's memory: needs about {} (weights{} and {} "
                                "of activations for "
                                "batch {}), {} {} has about {} ({})",
                                format_bytes(needed), training ? ", gradients" : "",
                                format_bytes(double(plan.batch) * plan.activation_bytes_per_sample), plan.batch,
                                plan.platform.sockets == 1 ? "one" : std::to_string(plan.platform.sockets) + " ×",
                                plan.platform.cpu.name, format_bytes(dram), assumed)});
  }
  if (!options.trace_path.empty()) write_cpu_trace(plan, run, options.trace_path);
  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace trainsim::engine
