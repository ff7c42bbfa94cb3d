#include "trainsim/engine/training.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "grouped_flows.hpp"
#include "link_analysis.hpp"

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/engine/collectives.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/engine/trace.hpp"
#include "trainsim/plan/analysis.hpp"
#include "trainsim/plan/nccl_tuner.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

using plan::CommKind;
using plan::CommTrigger;
using plan::TrainingPlan;

struct OpTiming {
  double start_s = 0;
  double end_s = 0;
  bool exposed = false;  // ended after every GPU finished backward
};

// Shared state of the actors of one run. SimGrid runs actors one at a time in one OS thread, so
// plain members are safe.
struct Run {
  const TrainingPlan& plan;
  Simulation& sim;
  std::vector<sg4::Host*> servers;                  // parallel to plan.servers
  std::vector<sg4::SemaphorePtr> bucket_ready;      // released once per GPU when its bucket is ready
  sg4::SemaphorePtr backward_done;                  // released once per GPU at the end of backward
  sg4::SemaphorePtr communication_done;             // released once per GPU when every operation is done
  std::vector<std::vector<double>> segment_end_s;   // per GPU
  std::vector<double> end_s;                        // per GPU, iteration end
  std::vector<OpTiming> op_timings;                 // parallel to plan.ops
  int backward_finished = 0;                        // GPUs past their last backward segment
  ExposedTraffic exposed;                           // link bytes of the operations that may be exposed
  std::unique_ptr<GroupedFlows> grouped;            // the parameter servers' coarse executor, when used
  std::vector<std::vector<int>> compute_groups;     // every GPU actor's ranks: its exec runs on the first one's host
  std::vector<int> kernels_on;                      // per group's first rank: collective kernels holding its SMs now
  std::vector<char> kernel_overlapped;              // per group's first rank: a kernel held SMs during the current segment
  std::vector<double> kernel_slowdown_s;            // per GPU: compute time lost to collective kernels' SMs
  // zero_stage 3: per gate (TrainingPlan::gates), released once per GPU actor when its all-gather
  // is done, and once per GPU when that GPU begins the compute after it. Parameter servers whose
  // step reads the variables (read_at_start): one gate per bucket in forward order, opened by the
  // bucket's read; the forward's layer groups wait for them, and nothing gates the backward.
  std::vector<sg4::SemaphorePtr> gate_open;
  std::vector<sg4::SemaphorePtr> gate_passed;
  bool backward_gates = false;       // zero_stage 3: the backward's groups wait for their all-gathers too
  sg4::SemaphorePtr update_done;     // released once per GPU after its optimizer step
  sg4::SemaphorePtr iteration_done;  // released once per GPU actor after the post-update operations
};

void execute_seconds(double seconds) {
  if (seconds <= 0) return;
  sg4::this_actor::execute(seconds * sg4::this_actor::get_host()->get_speed());
}

// The participants' hosts of a push or pull: GPUs, or the nodes' CPUs under worker aggregation.
std::vector<sg4::Host*> worker_hosts(const Run& run, const plan::CommOp& op) {
  std::vector<sg4::Host*> hosts;
  for (int w = op.first_rank; w < op.first_rank + op.ranks; ++w)
    hosts.push_back(op.endpoints == plan::CommEndpoints::node_hosts ? run.sim.node_cpus().at(static_cast<std::size_t>(w)) : run.sim.gpu(w));
  return hosts;
}

// Executes one operation of the plan (blocking, inside an actor).
void run_op(Run& run, const plan::CommOp& op, const ParameterServerOptions& ps, const CollectiveOptions& options) {
  std::vector<int> ranks(static_cast<std::size_t>(op.ranks));
  std::iota(ranks.begin(), ranks.end(), op.first_rank);
  switch (op.kind) {
    case CommKind::all_reduce:
      if (op.transport == plan::Transport::host) {
        // Horovod's fusion-buffer copies and negotiation wait come before the MPI ring.
        if (op.software_s > 0) sg4::this_actor::sleep_for(op.software_s);
        host_ring_all_reduce(run.sim, ranks, op.bytes, run.plan.host_memory_bandwidth_Bps, op.reduce_Bps,
                             op.stream_Bps);
      } else {
        CollectiveOptions o = options;
        o.launch_s = op.launch_s;
        o.step_overhead_s += op.step_overhead_s;
        o.channels = op.channels;
        o.nccl_protocol = op.protocol;  // nccl_allreduce: the tuner chose it
        all_reduce(run.sim, ranks, op.bytes * op.wire_factor, op.algorithm, o);
      }
      break;
    case CommKind::push:
    case CommKind::pull: {
      ParameterServerOptions with_costs = ps;
      with_costs.server_software_s = &op.server_software_s;
      with_costs.worker_software_s = op.worker_software_s;
      if (op.kind == CommKind::push)
        push_to_servers(run.sim, worker_hosts(run, op), run.servers, op.bytes_per_server, with_costs);
      else
        pull_from_servers(run.sim, worker_hosts(run, op), run.servers, op.bytes_per_server, with_costs);
      break;
    }
    case CommKind::device_to_host: copy_to_hosts(run.sim, ranks, op.bytes, ps.grouped); break;
    case CommKind::host_sum: compute_on_hosts(run.sim, ranks, op.host_seconds); break;
    case CommKind::host_to_device: copy_from_hosts(run.sim, ranks, op.bytes, ps.grouped); break;
    case CommKind::reduce_scatter:
    case CommKind::all_gather: {
      CollectiveOptions o = options;
      if (op.bytes > 0 && op.ranks > 1 && op.launch_s > 0) sg4::this_actor::sleep_for(op.launch_s);
      if (op.node_local)
        node_local_collective(run.sim, ranks, op.bytes, op.kind == CommKind::reduce_scatter, o);
      else if (op.kind == CommKind::reduce_scatter)
        reduce_scatter(run.sim, ranks, op.bytes, o);
      else
        all_gather(run.sim, ranks, op.bytes, o);
      break;
    }
  }
}

// The GPUs `ranks` (same profile and slowdown) computing one iteration. A GPU host runs nothing
// but its own compute when no parameter server aggregates on GPUs, so GPUs that compute alike
// finish every segment at the same instants: one actor plays them all (one SimGrid actor and
// exec per group instead of per GPU: 65,536 actors exceed Linux's default 65,530 memory maps,
// each actor's stack being one or two) and records every rank's times.
void gpu_actor(Run& run, const std::vector<int>& ranks) {
  const plan::GpuPlan& gpu = run.plan.gpu_plans[static_cast<std::size_t>(ranks.front())];
  const plan::ComputeProfile& profile = run.plan.profiles[gpu.profile];
  const std::size_t k = run.plan.buckets.size();
  const bool communicate = !run.plan.ops.empty();
  const auto first = static_cast<std::size_t>(ranks.front());
  double lost_s = 0;
  // zero_stage 3: wait until gate g's parameters are gathered, then say every GPU passed it.
  auto pass_gate = [&run, &ranks](std::size_t g) {
    const double before = sg4::Engine::get_clock();
    run.gate_open[g]->acquire();
    // A read's wait is exposed communication (a stage 3 gather's is left to the backward's window).
    if (!run.backward_gates && sg4::Engine::get_clock() > before)
      run.exposed.waits.emplace_back(before, sg4::Engine::get_clock());
    for (std::size_t i = 0; i < ranks.size(); ++i) run.gate_passed[g]->release();
  };
  const bool gated = !run.gate_open.empty();
  for (std::size_t segment = 0; segment < profile.segments_s.size(); ++segment) {
    const double begin = sg4::Engine::get_clock();
    run.kernel_overlapped[first] = run.kernels_on[first] > 0;
    if (gated && segment == 0 && !profile.forward_groups_s.empty()) {
      // The forward in layer groups, each after its all-gather or read: waits are not compute.
      execute_seconds(profile.accumulation_s * gpu.slowdown);
      for (std::size_t g = 0; g < profile.forward_groups_s.size(); ++g) {
        pass_gate(g);
        execute_seconds(profile.forward_groups_s[g] * gpu.slowdown);
      }
    } else if (gated && segment == 0 && !run.backward_gates) {
      // Reads without the forward's layer groups (a plan edited without them): every read first.
      for (std::size_t g = 0; g < k; ++g) pass_gate(g);
      execute_seconds(profile.segments_s[segment] * gpu.slowdown);
    } else {
      if (run.backward_gates && segment >= 1 && segment <= k) pass_gate(k + segment - 1);
      execute_seconds(profile.segments_s[segment] * gpu.slowdown);
    }
    const double now = sg4::Engine::get_clock();
    // A segment overlapped by a collective's kernel runs at that kernel's compute share for the
    // overlap: what it took beyond its planned time is the loss. Segments no kernel overlapped
    // count nothing (their clock difference differs from the plan by round-off only).
    if (run.kernel_overlapped[first]) lost_s += std::max(0.0, (now - begin) - profile.segments_s[segment] * gpu.slowdown);
    for (int r : ranks) run.segment_end_s[static_cast<std::size_t>(r)].push_back(now);
    if (segment >= 1 && segment <= k && communicate)
      for (std::size_t i = 0; i < ranks.size(); ++i) run.bucket_ready[segment - 1]->release();
  }
  run.backward_finished += static_cast<int>(ranks.size());
  if (communicate) {
    for (std::size_t i = 0; i < ranks.size(); ++i) run.backward_done->release();
    for (std::size_t i = 0; i < ranks.size(); ++i) run.communication_done->acquire();
  }
  execute_seconds(profile.update.seconds * gpu.slowdown);
  if (run.update_done) {
    // Stages 1–2: the updated shards are all-gathered before the next iteration may begin.
    for (std::size_t i = 0; i < ranks.size(); ++i) run.update_done->release();
    run.iteration_done->acquire();
  }
  const double end = sg4::Engine::get_clock();
  for (int r : ranks) {
    run.end_s[static_cast<std::size_t>(r)] = end;
    run.kernel_slowdown_s[static_cast<std::size_t>(r)] = lost_s;
  }
}

// The SMs an all-reduce's kernel holds (op.kernel_sms of the GPU's SMs) while it runs, from
// the launch to the end of the collective: on the host of every GPU actor among the operation's
// participants, an exec that SimGrid shares with that actor's compute. SimGrid 3.32's Cas01 CPU
// model shares a host max-min among its execs in proportion to 1 / sharing penalty, and
// Exec::set_priority(p) sets the penalty to 1 / p (src/s4u/s4u_Exec.cpp, src/surf/cpu_cas01.cpp;
// every GPU host has one core, so each exec may take the whole host). With compute at priority 1
// and this exec at c / (S − c), compute runs at (S − c) / S of the GPU's speed while both run, and
// at full speed when this one is cancelled. The exec's work never runs out within a collective;
// only the communicator, its owner, waits on it or cancels it. A grouped actor stands for GPUs
// that all take part in the same collectives, so one exec on its host slows all of them alike.
struct HeldSms {
  std::vector<sg4::ExecPtr> execs;
  std::vector<std::size_t> firsts;  // the group (its first rank) each exec slows
};

HeldSms hold_sms(Run& run, const plan::CommOp& op) {
  HeldSms kernels;
  const bool gpu_collective =
      op.kind == CommKind::all_reduce || op.kind == CommKind::reduce_scatter || op.kind == CommKind::all_gather;
  if (!gpu_collective || op.kernel_sms <= 0 || op.compute_share >= 1) return kernels;
  const auto inside = [&op](int r) { return r >= op.first_rank && r < op.first_rank + op.ranks; };
  for (const std::vector<int>& group : run.compute_groups) {
    const auto in = std::count_if(group.begin(), group.end(), inside);
    TRAINSIM_CHECK(in == 0 || in == static_cast<std::ptrdiff_t>(group.size()),
                   "a GPU actor's group lies partly inside an all-reduce whose kernel holds SMs");
    if (in == 0) continue;
    const int first = group.front();
    sg4::Host* host = run.sim.gpu(first);
    sg4::ExecPtr exec = sg4::this_actor::exec_init(host->get_speed() * 1e9);  // 1e9 s of work: never finishes first
    exec->set_host(host);
    exec->set_priority((1 - op.compute_share) / op.compute_share);
    exec->start();
    kernels.execs.push_back(std::move(exec));
    kernels.firsts.push_back(static_cast<std::size_t>(first));
    ++run.kernels_on[static_cast<std::size_t>(first)];
    run.kernel_overlapped[static_cast<std::size_t>(first)] = 1;
  }
  return kernels;
}

void release_sms(Run& run, const HeldSms& kernels) {
  for (const sg4::ExecPtr& exec : kernels.execs) exec->cancel();
  for (std::size_t first : kernels.firsts) --run.kernels_on[first];
}

void communicator_actor(Run& run) {
  const TrainingPlan& plan = run.plan;
  CollectiveOptions options;
  options.representation = parse_representation(plan.representation).value_or(Representation::automatic);
  options.hd_order = plan.hd_order;
  ParameterServerOptions ps;
  ps.aggregate_flops_per_byte = plan.aggregate_flops_per_byte;
  std::vector<bool> bucket_waited(plan.buckets.size(), false);
  bool backward_waited = false;
  bool update_waited = false;
  for (const plan::CommOp& op : plan.ops) {
    TRAINSIM_CHECK(op.after_op == op.id - 1, "the engine runs operations one at a time, in plan order");
    switch (op.trigger) {
      case CommTrigger::update_done:
        if (!update_waited) {
          // Every operation before this one is done: the GPUs may step the optimizer.
          for (int i = 0; i < plan.gpus; ++i) run.communication_done->release();
          for (int i = 0; i < plan.gpus; ++i) run.update_done->acquire();
        }
        update_waited = true;
        break;
      case CommTrigger::gate_passed:
        for (int i = 0; i < plan.gpus; ++i) run.gate_passed.at(static_cast<std::size_t>(op.trigger_gate))->acquire();
        break;
      case CommTrigger::bucket_ready:
        if (!bucket_waited[op.bucket])
          for (int i = 0; i < op.ranks; ++i) run.bucket_ready[op.bucket]->acquire();
        bucket_waited[op.bucket] = true;
        break;
      case CommTrigger::backward_done:
        if (!backward_waited)
          for (int i = 0; i < plan.gpus; ++i) run.backward_done->acquire();
        backward_waited = true;
        break;
      case CommTrigger::previous_op: break;
    }
    OpTiming& timing = run.op_timings[static_cast<std::size_t>(op.id)];
    timing.start_s = sg4::Engine::get_clock();
    const HeldSms kernels = hold_sms(run, op);
    run_op(run, op, ps, options);
    release_sms(run, kernels);
    timing.end_s = sg4::Engine::get_clock();
    // An operation that ended while some GPU was still in backward lies wholly before the exposed
    // window (which opens when the last GPU's backward ends): only its total bytes matter.
    std::vector<LinkBytes> bytes = run.sim.take_recent_bytes();
    if (run.backward_finished == plan.gpus) run.exposed.ops.push_back({timing.start_s, timing.end_s, std::move(bytes)});
    if (op.opens_gate >= 0)
      for (std::size_t i = 0; i < run.compute_groups.size(); ++i)
        run.gate_open.at(static_cast<std::size_t>(op.opens_gate))->release();
  }
  if (update_waited)
    for (std::size_t i = 0; i < run.compute_groups.size(); ++i) run.iteration_done->release();
  else
    for (int i = 0; i < plan.gpus; ++i) run.communication_done->release();
}

// The bytes a push, pull or host copy puts on each link, from the routes of its flows
// (parameter-server chains run concurrently, so Simulation::take_recent_bytes cannot tell them apart).
std::vector<LinkBytes> server_op_bytes(Run& run, const plan::CommOp& op) {
  std::vector<LinkBytes> out;
  std::unordered_map<const sg4::Link*, std::size_t> index;
  auto add_route = [&](sg4::Host* from, sg4::Host* to, double bytes) {
    if (bytes == 0 || from == to) return;
    for (const sg4::Link* l : run.sim.route(from, to).links) {
      auto [it, added] = index.try_emplace(l, out.size());
      if (added) out.push_back({l, 0});
      out[it->second].bytes += bytes;
    }
  };
  switch (op.kind) {
    case CommKind::push:
    case CommKind::pull: {
      const std::vector<sg4::Host*> workers = worker_hosts(run, op);
      for (std::size_t i = 0; i < run.servers.size(); ++i)
        for (sg4::Host* w : workers)
          if (op.kind == CommKind::push)
            add_route(w, run.servers[i], op.bytes_per_server.at(i));
          else
            add_route(run.servers[i], w, op.bytes_per_server.at(i));
      break;
    }
    case CommKind::device_to_host:
    case CommKind::host_to_device:
      for (int r = op.first_rank; r < op.first_rank + op.ranks; ++r) {
        sg4::Host* gpu = run.sim.gpu(r);
        sg4::Host* cpu = run.sim.node_cpus().at(static_cast<std::size_t>(run.sim.node_of(r)));
        if (op.kind == CommKind::device_to_host)
          add_route(gpu, cpu, op.bytes);
        else
          add_route(cpu, gpu, op.bytes);
      }
      break;
    case CommKind::host_sum:
    case CommKind::all_reduce:
    case CommKind::reduce_scatter:
    case CommKind::all_gather: break;
  }
  return out;
}

// Every route a push, pull or copy of the plan will take, so that the coarse executor solves links
// crossed by the same routes as one constraint. Operations with the same kind, participants and
// servers take the same routes and are listed once (sharded pushes would otherwise list W × S
// pairs per variable).
std::vector<std::pair<sg4::Host*, sg4::Host*>> server_routes(const Run& run) {
  std::vector<std::pair<sg4::Host*, sg4::Host*>> routes;
  std::set<std::pair<sg4::Host*, sg4::Host*>> seen;
  std::set<std::tuple<CommKind, int, int, plan::CommEndpoints, std::vector<bool>>> listed;
  auto add = [&](sg4::Host* from, sg4::Host* to) {
    if (seen.insert({from, to}).second) routes.emplace_back(from, to);
  };
  for (const plan::CommOp& op : run.plan.ops) {
    if (op.kind == CommKind::device_to_host || op.kind == CommKind::host_to_device) {
      if (!listed.emplace(op.kind, op.first_rank, op.ranks, op.endpoints, std::vector<bool>{}).second) continue;
      for (int r = op.first_rank; r < op.first_rank + op.ranks; ++r) {
        sg4::Host* gpu = run.sim.gpu(r);
        sg4::Host* cpu = run.sim.node_cpus().at(static_cast<std::size_t>(run.sim.node_of(r)));
        if (op.kind == CommKind::device_to_host)
          add(gpu, cpu);
        else
          add(cpu, gpu);
      }
      continue;
    }
    if (op.kind != CommKind::push && op.kind != CommKind::pull) continue;
    std::vector<bool> servers_used;
    for (double b : op.bytes_per_server) servers_used.push_back(b != 0);
    if (!listed.emplace(op.kind, op.first_rank, op.ranks, op.endpoints, std::move(servers_used)).second) continue;
    for (sg4::Host* w : worker_hosts(run, op))
      for (std::size_t i = 0; i < run.servers.size(); ++i) {
        if (op.bytes_per_server.at(i) == 0 || w == run.servers[i]) continue;
        if (op.kind == CommKind::push)
          add(w, run.servers[i]);
        else
          add(run.servers[i], w);
      }
  }
  return routes;
}

// A bucket's parameter-server chain, plan.ops[first, last): its first operation waits for its
// trigger, each later one for the one before it. `reads` is where the step's read of its
// variables begins (a pull with CommOp::after_all_pushes; `last` where there is none).
struct ServerChain {
  std::size_t first = 0;
  std::size_t reads = 0;
  std::size_t last = 0;
};

std::vector<ServerChain> server_chains(const TrainingPlan& plan) {
  std::vector<ServerChain> chains;
  for (std::size_t first = 0; first < plan.ops.size();) {
    std::size_t last = first + 1;
    while (last < plan.ops.size() && plan.ops[last].trigger == CommTrigger::previous_op) {
      TRAINSIM_CHECK(plan.ops[last].after_op == static_cast<int>(last) - 1, "a chained operation follows the one before it");
      ++last;
    }
    TRAINSIM_CHECK(plan.ops[first].trigger != CommTrigger::previous_op,
                   "a parameter-server chain starts with its trigger");
    std::size_t reads = first;
    while (reads < last && !plan.ops[reads].after_all_pushes) ++reads;
    chains.push_back({first, reads, last});
    first = last;
  }
  return chains;
}

// Whether operation i is part of a step's read (from its chain's after_all_pushes pull on), which
// the engine runs at the iteration's start.
std::vector<bool> read_at_start(const TrainingPlan& plan) {
  std::vector<bool> reads(plan.ops.size(), false);
  if (plan.servers.empty()) return reads;
  for (const ServerChain& c : server_chains(plan))
    for (std::size_t i = c.reads; i < c.last; ++i) reads[i] = true;
  return reads;
}

void run_timed(Run& run, std::size_t i, const ParameterServerOptions& ps, const CollectiveOptions& options) {
  OpTiming& timing = run.op_timings[i];
  timing.start_s = sg4::Engine::get_clock();
  run_op(run, run.plan.ops[i], ps, options);
  timing.end_s = sg4::Engine::get_clock();
  timing.exposed = run.backward_finished == run.plan.gpus;
}

// The step's read of a chain's variables, plan.ops[reads, last), at the iteration's start: the
// previous step's pushes and its barrier are done (steady state), and the forward of the bucket's
// layers waits for it (its gate, forward group K − 1 − bucket).
sg4::ActorPtr start_reads(Run& run, const ServerChain& chain, const ParameterServerOptions& ps,
                          const CollectiveOptions& options) {
  const std::size_t bucket = run.plan.ops[chain.reads].bucket;
  auto body = [&run, chain, bucket, ps, &options] {
    for (std::size_t i = chain.reads; i < chain.last; ++i) {
      run_timed(run, i, ps, options);
      run.op_timings[i].exposed = true;  // the link analysis counts it where the forward waited (ExposedTraffic::waits)
    }
    const std::size_t gate = run.plan.buckets.size() - 1 - bucket;
    for (std::size_t g = 0; g < run.compute_groups.size(); ++g) run.gate_open.at(gate)->release();
  };
  return sg4::Actor::create("read-" + std::to_string(bucket), run.sim.gpu(0), body);
}

// A chain's gradient side, plan.ops[first, reads): waits for its trigger, then runs in order.
sg4::ActorPtr start_pushes(Run& run, const ServerChain& chain, const ParameterServerOptions& ps,
                           const CollectiveOptions& options) {
  auto body = [&run, chain, ps, &options] {
    const plan::CommOp& trigger = run.plan.ops[chain.first];
    if (trigger.trigger == CommTrigger::bucket_ready)
      for (int i = 0; i < run.plan.gpus; ++i) run.bucket_ready[trigger.bucket]->acquire();
    for (std::size_t i = chain.first; i < chain.reads; ++i) {
      // The variable's own barrier (its token queues) between its push and its read.
      if (run.plan.ops[i].variable_barrier_s > 0) sg4::this_actor::sleep_for(run.plan.ops[i].variable_barrier_s);
      run_timed(run, i, ps, options);
    }
  };
  return sg4::Actor::create("bucket-" + std::to_string(run.plan.ops[chain.first].bucket), run.sim.gpu(0), body);
}

// The link analysis spreads an operation's bytes evenly over its span; operations that overlap
// share links, so overlapping exposed ones are merged into one span carrying all their bytes
// (attributed from their routes: Simulation::take_recent_bytes cannot tell concurrent chains apart).
void record_exposed_server_traffic(Run& run) {
  run.sim.take_recent_bytes();  // attributed from the routes below instead
  std::vector<const plan::CommOp*> exposed;
  for (const plan::CommOp& op : run.plan.ops)
    if (run.op_timings[static_cast<std::size_t>(op.id)].exposed) exposed.push_back(&op);
  auto timing_of = [&run](const plan::CommOp* op) -> const OpTiming& { return run.op_timings[static_cast<std::size_t>(op->id)]; };
  std::stable_sort(exposed.begin(), exposed.end(),
                   [&](const plan::CommOp* a, const plan::CommOp* b) { return timing_of(a).start_s < timing_of(b).start_s; });
  for (std::size_t i = 0; i < exposed.size();) {
    OpTraffic span{timing_of(exposed[i]).start_s, timing_of(exposed[i]).end_s, {}};
    std::unordered_map<const sg4::Link*, std::size_t> index;
    for (; i < exposed.size() && (span.bytes.empty() || timing_of(exposed[i]).start_s < span.end_s); ++i) {
      span.end_s = std::max(span.end_s, timing_of(exposed[i]).end_s);
      for (const LinkBytes& lb : server_op_bytes(run, *exposed[i])) {
        auto [it, added] = index.try_emplace(lb.link, span.bytes.size());
        if (added) span.bytes.push_back({lb.link, 0});
        span.bytes[it->second].bytes += lb.bytes;
      }
    }
    run.exposed.ops.push_back(std::move(span));
  }
}

// Parameter servers: each bucket's push and then its pull run in an actor of their own,
// concurrently with the other buckets' (TensorFlow sends every variable's gradient as its own
// RPC as soon as it is computed), so the servers receive at once and share their NICs and CPUs
// max-min fairly; a server that owns more bytes finishes later.
void server_communicator_actor(Run& run) {
  const TrainingPlan& plan = run.plan;
  ParameterServerOptions ps;
  ps.aggregate_flops_per_byte = plan.aggregate_flops_per_byte;
  ServerSoftware software(plan.servers.size());
  ps.software = &software;
  // The plan chose the representation (plan::resolve_server_representation, simulator/README.md
  // "Parameter-server representations"): coarse groups flows into fluids at their max-min rates,
  // copies included; flow level runs one SimGrid flow per worker and server.
  TRAINSIM_CHECK(plan.server_representation != plan::ServerRepresentation::automatic,
                 "the plan resolves its parameter servers' representation");
  if (plan.server_representation == plan::ServerRepresentation::coarse) {
    run.grouped = std::make_unique<GroupedFlows>(run.sim, server_routes(run));
    ps.grouped = run.grouped.get();
  }
  const CollectiveOptions options;
  const std::vector<ServerChain> chains = server_chains(plan);
  std::vector<sg4::ActorPtr> actors;
  // The step's reads first: the forward waits for them, also where the pushes wait for the backward.
  // They are issued in forward order (the plan's buckets are in backward order), as TensorFlow's
  // executor takes its ready Recv nodes in graph order: the first layers' variables come first
  // through the workers' and servers' software queues (ServerSoftware, first come first served).
  for (auto c = chains.rbegin(); c != chains.rend(); ++c)
    if (c->reads < c->last) actors.push_back(start_reads(run, *c, ps, options));
  if (!plan.overlap)
    for (int i = 0; i < plan.gpus; ++i) run.backward_done->acquire();
  for (const ServerChain& c : chains)
    if (c.first < c.reads) actors.push_back(start_pushes(run, c, ps, options));
  for (auto& a : actors) a->join();
  // The synchronous barrier closes the step: every worker waits there for the others once all its
  // operations are done (tf_cnn_benchmarks' 'sync_queues_step_end_'), before the next step's reads.
  if (plan.barrier_s > 0) sg4::this_actor::sleep_for(plan.barrier_s);
  if (run.grouped) run.grouped->account_bytes();
  record_exposed_server_traffic(run);
  for (int i = 0; i < plan.gpus; ++i) run.communication_done->release();
}

sg4::Host* server_host(const Simulation& sim, const plan::PlannedServer& server) {
  switch (server.host) {
    case plan::ServerHost::node_cpu: return sim.node_cpus().at(static_cast<std::size_t>(server.index));
    case plan::ServerHost::gpu: return sim.gpu(server.index);
    case plan::ServerHost::server_node: return sim.server_hosts().at(static_cast<std::size_t>(server.index));
  }
  return nullptr;
}

// GPUs grouped by (profile, slowdown) in rank order, one actor per group; one per GPU where servers
// aggregate on GPU hosts (a GPU's host is then shared with its server's work, so that GPU computes
// apart). Servers on node CPUs or server nodes leave every GPU host to its own compute, as
// all-reduce plans do (copies to and from host memory are flows, which take no GPU host's speed):
// a 65,536-GPU parameter-server job is then a handful of GPU actors, not 65,536.
std::vector<std::vector<int>> gpu_groups(const TrainingPlan& plan) {
  const bool servers_on_gpus = std::any_of(plan.servers.begin(), plan.servers.end(),
                                           [](const plan::PlannedServer& s) { return s.host == plan::ServerHost::gpu; });
  std::vector<std::vector<int>> groups;
  std::map<std::pair<std::size_t, double>, std::size_t> group_of;
  for (int r = 0; r < plan.gpus; ++r) {
    const plan::GpuPlan& g = plan.gpu_plans[static_cast<std::size_t>(r)];
    const std::size_t next = groups.size();
    const std::size_t at = !servers_on_gpus ? group_of.try_emplace({g.profile, g.slowdown}, next).first->second : next;
    if (at == groups.size()) groups.emplace_back();
    groups[at].push_back(r);
  }
  return groups;
}

// Every SimGrid actor's stack is a memory map and a guard page (two maps), and Linux allows a
// process vm.max_map_count of them (65,530 by default): past that SimGrid aborts ("Failed to
// protect stack"). GPUs that compute apart (each its own slowdown under heterogeneity jitter or
// stragglers, or beside a server on its GPU) are an actor each, so such a run is refused up front.
// Refusals name `source` at `servers_at` (servers on GPU hosts) or `heterogeneity_at` (GPUs of their own slowdowns).
void check_gpu_actors(const TrainingPlan& plan, std::size_t actors, const std::string& source, const std::string& servers_at,
                      const std::string& heterogeneity_at) {
  long long max_maps = 65530;
  if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    long long v = 0;
    if (std::fscanf(f, "%lld", &v) == 1 && v > 0) max_maps = v;
    std::fclose(f);
  }
  // Two maps per actor; the rest of the process (libraries, heap arenas, the platform) and the
  // communication's own actors keep well within 8,192.
  const long long limit = std::max(0LL, (max_maps - 8192) / 2);
  if (static_cast<long long>(actors) <= limit) return;
  const bool servers_on_gpus = std::any_of(plan.servers.begin(), plan.servers.end(),
                                           [](const plan::PlannedServer& s) { return s.host == plan::ServerHost::gpu; });
  throw InputError(source, servers_on_gpus ? servers_at : heterogeneity_at,
                   fmt::format("{} GPUs compute apart ({}), one SimGrid actor each, and each actor's stack takes two of the "
                               "{} memory maps Linux allows this process (vm.max_map_count): at most {} such GPUs (simulator/README.md, "
                               "Troubleshooting and limits); use fewer GPUs, {}, or raise the limit (sysctl vm.max_map_count)",
                               actors,
                               servers_on_gpus ? "parameter servers aggregate on GPU hosts" : "each with its own slowdown",
                               max_maps, limit,
                               servers_on_gpus ? "aggregation \"cpu\"" : "no per-GPU jitter or stragglers"));
}

// A bucket's communication: from its first operation's start to its last one's end.
// A step's read (`reads`, read_at_start) is the bucket's read interval, apart.
std::vector<BucketTiming> bucket_timings(const TrainingPlan& plan, const std::vector<OpTiming>& ops,
                                         const std::vector<bool>& reads) {
  std::vector<BucketTiming> out;
  std::vector<bool> seen;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const plan::CommOp& op = plan.ops[i];
    if (out.size() <= op.bucket) {
      out.resize(op.bucket + 1);
      seen.resize(op.bucket + 1, false);
    }
    BucketTiming& t = out[op.bucket];
    t.bytes = plan.buckets[op.bucket].bytes;
    if (reads[i]) {
      if (!t.has_read()) t.read_start_s = ops[i].start_s;
      t.read_end_s = ops[i].end_s;
      continue;
    }
    if (!seen[op.bucket]) t.ready_s = t.start_s = ops[i].start_s;
    seen[op.bucket] = true;
    t.end_s = ops[i].end_s;
  }
  return out;
}

void write_trace(const TrainingPlan& plan, const Run& run, const std::vector<BucketTiming>& buckets, const std::string& path) {
  TraceWriter trace;
  for (int node = 0; node < plan.nodes; ++node) trace.name_process(node, "node " + std::to_string(node));
  for (int r = 0; r < plan.gpus; ++r) {
    const plan::GpuPlan& gpu = plan.gpu_plans[static_cast<std::size_t>(r)];
    const plan::ComputeProfile& profile = plan.profiles[gpu.profile];
    const int node = gpu.node;
    trace.name_thread(node, r, "GPU " + std::to_string(r));
    const auto& ends = run.segment_end_s[static_cast<std::size_t>(r)];
    // Forward: the earlier micro-batches (accumulation), then layers back to back.
    if (profile.accumulation_s > 0)
      trace.complete(node, r, "micro-batches 1–" + std::to_string(plan.accumulation_steps - 1), "accumulation", 0,
                     profile.accumulation_s * gpu.slowdown);
    double clock = profile.accumulation_s * gpu.slowdown;
    for (const auto& task : profile.forward) {
      const double d = task.seconds * gpu.slowdown;
      if (d > 0) trace.complete(node, r, task.layer, "forward", clock, d);
      clock += d;
    }
    // Backward: segment s starts where segment s−1 ended.
    std::size_t task = 0;
    for (std::size_t s = 1; s < ends.size(); ++s) {
      clock = ends[s - 1];
      const std::size_t last = s <= plan.buckets.size() ? plan.buckets[s - 1].ready_after + 1 : profile.backward.size();
      for (; task < last; ++task) {
        const double d = profile.backward[task].seconds * gpu.slowdown;
        if (d > 0) trace.complete(node, r, profile.backward[task].layer, "backward", clock, d);
        clock += d;
      }
    }
    const double update_s = profile.update.seconds * gpu.slowdown;
    trace.complete(node, r, "optimizer", "update", run.end_s[static_cast<std::size_t>(r)] - update_s, update_s);
  }
  const int comm_pid = plan.nodes;
  trace.name_process(comm_pid, "communication");
  trace.name_thread(comm_pid, 0, plan.strategy);
  if (std::any_of(buckets.begin(), buckets.end(), [](const BucketTiming& t) { return t.has_read(); }))
    trace.name_thread(comm_pid, 1, "reads of the variables");
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const auto& t = buckets[b];
    trace.complete(comm_pid, 0, "bucket " + std::to_string(b) + " (" + format_bytes(t.bytes) + ")", "communication", t.start_s,
                   t.end_s - t.start_s);
    if (t.has_read())
      trace.complete(comm_pid, 1, "read bucket " + std::to_string(b), "communication", t.read_start_s,
                     t.read_end_s - t.read_start_s);
  }
  write_file_atomically(path, trace.dump());
}

// Runs `plan` on the built platform `sim` (the plan's, with its NCCL fabric latency).
IterationResult execute_plan(const TrainingPlan& plan, Simulation& sim, const SimulateOptions& options,
                             std::chrono::steady_clock::time_point wall_start) {
  TRAINSIM_CHECK(sim.gpu_count() == plan.gpus, "the built platform has a different GPU count than the plan");
  if (options.on_plan) options.on_plan(plan);

  const std::size_t n = static_cast<std::size_t>(plan.gpus);
  Run run{plan,    sim, {}, {}, nullptr, nullptr, {}, {},    {},      0,      {},
          nullptr, {},  {}, {}, {},      {},      {}, false, nullptr, nullptr};
  for (const auto& server : plan.servers) run.servers.push_back(server_host(sim, server));
  run.segment_end_s.resize(n);
  run.end_s.assign(n, 0.0);
  run.op_timings.resize(plan.ops.size());
  run.kernel_slowdown_s.assign(n, 0.0);
  run.kernels_on.assign(n, 0);
  run.kernel_overlapped.assign(n, 0);
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) run.bucket_ready.push_back(sg4::Semaphore::create(0));
  run.backward_done = sg4::Semaphore::create(0);
  run.communication_done = sg4::Semaphore::create(0);
  const std::vector<bool> reads = read_at_start(plan);
  const bool read_gates = std::find(reads.begin(), reads.end(), true) != reads.end();
  const int gates = read_gates ? static_cast<int>(plan.buckets.size()) : plan.gates();
  run.backward_gates = plan.zero_stage == 3;
  for (int g = 0; g < gates; ++g) {
    run.gate_open.push_back(sg4::Semaphore::create(0));
    run.gate_passed.push_back(sg4::Semaphore::create(0));
  }
  if (plan.has_post_update_ops()) {
    run.update_done = sg4::Semaphore::create(0);
    run.iteration_done = sg4::Semaphore::create(0);
  }

  std::vector<std::vector<int>>& groups = run.compute_groups;
  groups = gpu_groups(plan);
  for (const std::vector<int>& ranks : groups)
    sg4::Actor::create("gpu-" + std::to_string(ranks.front()), sim.gpu(ranks.front()), [&run, &ranks] { gpu_actor(run, ranks); });
  if (!plan.ops.empty() && !plan.servers.empty())
    sg4::Actor::create("communicator", sim.gpu(0), [&run] { server_communicator_actor(run); });
  else if (!plan.ops.empty())
    sg4::Actor::create("communicator", sim.gpu(0), [&run] { communicator_actor(run); });
  sim.run();

  // What was measured; the plan's analysis makes it a result (plan::analyse_iteration).
  plan::MeasuredIteration measured;
  measured.end_s = run.end_s;
  measured.kernel_slowdown_s = run.kernel_slowdown_s;
  measured.buckets = bucket_timings(plan, run.op_timings, reads);
  for (const auto& ends : run.segment_end_s) run.exposed.begin_s = std::max(run.exposed.begin_s, ends.back());
  // The forward's waits of every GPU actor, as one union of intervals.
  std::vector<std::pair<double, double>>& waits = run.exposed.waits;
  std::sort(waits.begin(), waits.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& w : waits)
    if (!merged.empty() && w.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, w.second);
    else
      merged.push_back(w);
  waits = std::move(merged);
  for (const OpTiming& t : run.op_timings) run.exposed.end_s = std::max(run.exposed.end_s, t.end_s);  // PS ops end in any order
  LinkFindings links =
      analyse_links(sim, plan, run.servers, run.exposed, plan::measured_iteration_s(measured), options.busiest_links);
  measured.network_bytes = links.network_bytes;
  measured.busiest_links = std::move(links.busiest);
  measured.connections = std::move(links.connections);
  if (!options.trace_path.empty()) write_trace(plan, run, measured.buckets, options.trace_path);
  IterationResult result = plan::analyse_iteration(plan, std::move(measured));
  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace

/// Where build_and_execute keeps the process's simulation (never read). External linkage and
/// volatile, so that the compiler keeps the store and the pointer stays where LeakSanitizer looks.
Simulation* volatile kept_simulation = nullptr;

namespace {

// Builds the plan's platform (TrainingPlan::effective_platform, with its dedicated server nodes)
// and runs the plan on it; an XML platform of another GPU count than the plan's is refused at
// `source`'s /platform/nodes.
IterationResult build_and_execute(const TrainingPlan& plan, const SimulateOptions& options, const std::string& source,
                                  std::chrono::steady_clock::time_point wall_start) {
  if (options.before_build) options.before_build();
  const platforms::PlatformSpec spec = plan.effective_platform();
  auto sim = std::make_unique<Simulation>(spec, SimulationOptions{plan.server_nodes(), options.full_network_solve});
  if (sim->gpu_count() != plan.gpus)
    throw InputError(source, "/platform/nodes",
                     fmt::format("the SimGrid XML platform {} has {} GPUs; the plan runs {}",
                                 spec.simgrid_xml.value_or(spec.name), sim->gpu_count(), plan.gpus));
  IterationResult result = execute_plan(plan, *sim, options, wall_start);
  // The process's one simulation (SimGrid's engine is process-global, so no second one can follow)
  // is kept, reachable, until the process ends instead of being torn down here: freeing the
  // platform's zones, hosts and links and the route caches object by object took 13 % of a
  // 65,536-GPU iteration (perf, 2026-11-27). Reachable from a static pointer, it is not a leak
  // to LeakSanitizer or valgrind's definite-loss check; a run that throws still frees it.
  kept_simulation = sim.release();
  return result;
}

}  // namespace

IterationResult simulate_iteration(const plan::Scenario& scenario, const SimulateOptions& options) {
  if (scenario.cpu) return simulate_cpu_iteration(scenario, options);
  const auto wall_start = std::chrono::steady_clock::now();
  // The plan is pure data, built before the platform (an XML platform's GPUs are counted from its
  // file): a run past the documented limits is refused before anything is built.
  const TrainingPlan plan = plan::build_training_plan(scenario, plan::load_scenario_workload(scenario));
  plan::check_simulation_size(plan, scenario);
  check_gpu_actors(plan, gpu_groups(plan).size(), scenario.source, "/strategy/aggregation", "/heterogeneity");
  return build_and_execute(plan, options, scenario.source, wall_start);
}

IterationResult simulate_plan(const TrainingPlan& plan, const SimulateOptions& options, const std::string& source) {
  const auto wall_start = std::chrono::steady_clock::now();
  plan::check_simulation_size(plan, source);
  check_gpu_actors(plan, gpu_groups(plan).size(), source, "/servers", "/gpu_plans");
  return build_and_execute(plan, options, source, wall_start);
}

}  // namespace trainsim::engine
