#include "trainsim/engine/training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>

#include <simgrid/s4u.hpp>

#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/collectives.hpp"
#include "trainsim/engine/simulation.hpp"
#include "trainsim/engine/trace.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

// CUDA context, cuDNN/cuBLAS workspaces and caching-allocator slack: about 1 GiB on current stacks.
constexpr double kFrameworkReserveBytes = 1.0 * kGiB;

// A GPU's work for one iteration, cut at bucket boundaries.
//   segments[0]            forward
//   segments[1 .. K]       backward up to bucket k−1's last gradient
//   segments[K+1]          the rest of backward
//   update_s               optimizer step
struct GpuPlan {
  std::vector<double> segments_s;
  double update_s = 0;
  double slowdown = 1;                 // time multiplier from heterogeneity
  const workloads::IterationGraph* graph = nullptr;
  const IterationTimes* times = nullptr;
};

// Deterministic random numbers: mt19937_64's output sequence is fixed by the standard; the
// distributions are written here because std::normal_distribution is implementation-defined.
class Random {
public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double normal() {
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

private:
  std::mt19937_64 engine_;
};

std::vector<double> gpu_slowdowns(const Scenario& s) {
  const int n = s.gpus();
  const auto& h = s.heterogeneity;
  std::vector<double> slow(static_cast<std::size_t>(n), 1.0);
  for (const auto& [node, speed] : h.node_speed)
    for (int local = 0; local < s.platform.gpus_per_node; ++local) slow[node * s.platform.gpus_per_node + local] /= speed;
  for (const auto& [rank, speed] : h.gpu_speed) slow[rank] /= speed;
  if (h.jitter_sigma > 0 || h.straggler_probability > 0) {
    Random random(h.seed);
    for (int r = 0; r < n; ++r) {
      // Mean-one lognormal: exp(σZ − σ²/2).
      if (h.jitter_sigma > 0) slow[r] *= std::exp(h.jitter_sigma * random.normal() - 0.5 * h.jitter_sigma * h.jitter_sigma);
      if (h.straggler_probability > 0 && random.uniform() < h.straggler_probability) slow[r] *= h.straggler_slowdown;
    }
  }
  return slow;
}

Algorithm algorithm_of(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::hierarchical_allreduce: return Algorithm::hierarchical;
    case StrategyKind::tree_allreduce: return Algorithm::tree;
    case StrategyKind::halving_doubling: return Algorithm::halving_doubling;
    default: return Algorithm::ring;
  }
}

// Shared state of the actors of one run. SimGrid runs actors one at a time in one OS thread, so
// plain members are safe.
struct Run {
  const Scenario& scenario;
  Simulation& sim;
  std::vector<GpuPlan> plans;
  std::vector<workloads::GradientBucket> buckets;  // of the GPU with the largest batch (same layers everywhere)
  std::vector<sg4::SemaphorePtr> bucket_ready;      // released once per GPU when its bucket is ready
  sg4::SemaphorePtr backward_done;                  // released once per GPU at the end of backward
  sg4::SemaphorePtr communication_done;             // released once per GPU when all buckets are reduced
  std::vector<std::vector<double>> segment_end_s;   // per GPU
  std::vector<double> end_s;                        // per GPU, iteration end
  std::vector<BucketTiming> timings;
  std::vector<sg4::Host*> servers;
  bool communicate = true;
};

void execute_seconds(double seconds) {
  if (seconds <= 0) return;
  sg4::this_actor::execute(seconds * sg4::this_actor::get_host()->get_speed());
}

void gpu_actor(Run& run, int rank) {
  const GpuPlan& plan = run.plans[rank];
  const std::size_t k = run.buckets.size();
  auto& ends = run.segment_end_s[rank];
  for (std::size_t segment = 0; segment < plan.segments_s.size(); ++segment) {
    execute_seconds(plan.segments_s[segment]);
    ends.push_back(sg4::Engine::get_clock());
    if (segment >= 1 && segment <= k && run.communicate) run.bucket_ready[segment - 1]->release();
  }
  if (run.communicate) {
    run.backward_done->release();
    run.communication_done->acquire();
  }
  execute_seconds(plan.update_s);
  run.end_s[rank] = sg4::Engine::get_clock();
}

void communicator_actor(Run& run) {
  const int n = run.sim.gpu_count();
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  const StrategyConfig& strategy = run.scenario.strategy;
  CollectiveOptions options;
  options.representation = parse_representation(strategy.representation).value_or(Representation::automatic);

  if (!strategy.overlap)
    for (int i = 0; i < n; ++i) run.backward_done->acquire();
  for (std::size_t b = 0; b < run.buckets.size(); ++b) {
    if (strategy.overlap)
      for (int i = 0; i < n; ++i) run.bucket_ready[b]->acquire();
    BucketTiming timing;
    timing.bytes = run.buckets[b].bytes;
    timing.ready_s = sg4::Engine::get_clock();
    timing.start_s = timing.ready_s;
    if (strategy.kind == StrategyKind::parameter_server) {
      ParameterServerOptions ps;
      ps.aggregate_flops_per_byte = 1.0 / bytes_per_element(run.scenario.workload.precision);  // one add per element
      push_to_servers(run.sim, ranks, run.servers, timing.bytes, ps);
      pull_from_servers(run.sim, ranks, run.servers, timing.bytes);
    } else {
      all_reduce(run.sim, ranks, timing.bytes, algorithm_of(strategy.kind), options);
    }
    timing.end_s = sg4::Engine::get_clock();
    run.timings.push_back(timing);
  }
  for (int i = 0; i < n; ++i) run.communication_done->release();
}

// Where the parameter-server shards live. Colocated: server i on worker node i's host CPU (CPU
// aggregation) or on the first GPU of node i (GPU aggregation, competing with that GPU's own
// compute), wrapping around when there are more servers than nodes. Dedicated: extra CPU nodes.
std::vector<sg4::Host*> parameter_servers(const Scenario& s, const Simulation& sim) {
  const int count = s.strategy.servers;
  if (s.strategy.placement == ServerPlacement::dedicated) return sim.server_hosts();
  std::vector<sg4::Host*> servers;
  const int nodes = std::max(1, sim.gpu_count() / sim.gpus_per_node());
  for (int i = 0; i < count; ++i) {
    const int node = i % nodes;
    if (s.strategy.aggregation == Aggregation::gpu || sim.node_cpus().empty())
      servers.push_back(sim.gpu(node * sim.gpus_per_node() + (i / nodes) % sim.gpus_per_node()));
    else
      servers.push_back(sim.node_cpus().at(static_cast<std::size_t>(node)));
  }
  return servers;
}

}  // namespace

MemoryUsage memory_per_gpu(const Scenario& scenario, const workloads::Workload& workload) {
  MemoryUsage m;
  const double params = static_cast<double>(workload.params());
  const Precision p = scenario.workload.precision;
  const bool half = bytes_per_element(p) == 2;
  const double batch = scenario.batch_of(0);  // the largest: a strong-scaling remainder goes to the first ranks
  m.weights = params * bytes_per_element(p) + (half ? params * 4.0 : 0.0);  // + fp32 master weights
  m.gradients = params * bytes_per_element(p);
  switch (scenario.workload.optimizer) {
    case workloads::Optimizer::sgd: m.optimizer_state = 0; break;
    case workloads::Optimizer::momentum: m.optimizer_state = params * 4.0; break;
    case workloads::Optimizer::adam: m.optimizer_state = params * 8.0; break;
  }
  m.activations = workload.activation_bytes(p) * batch;
  m.framework = kFrameworkReserveBytes;
  m.total = m.weights + m.gradients + m.optimizer_state + m.activations + m.framework;
  m.available = scenario.platform.gpu.memory_bytes;
  return m;
}

Json IterationResult::to_json() const {
  Json j;
  j["name"] = name;
  j["point"] = point;
  j["gpus"] = gpus;
  j["nodes"] = nodes;
  j["global_batch"] = global_batch;
  j["iteration_time_s"] = iteration_time_s;
  j["samples_per_s"] = samples_per_s;
  j["scaling_efficiency"] = scaling_efficiency;
  j["single_gpu_samples_per_s"] = single_gpu_samples_per_s;
  j["breakdown_s"] = Json{{"compute", breakdown.compute_s},
                          {"communication", breakdown.communication_s},
                          {"exposed_communication", breakdown.exposed_communication_s},
                          {"idle", breakdown.idle_s}};
  j["network_bytes"] = network_bytes;
  Json links = Json::array();
  for (const auto& l : busiest_links) links.push_back(Json{{"name", l.name}, {"bytes", l.bytes}, {"busy_fraction", l.busy_fraction}});
  j["busiest_links"] = links;
  j["memory_per_gpu_bytes"] = Json{{"weights", memory.weights},       {"gradients", memory.gradients},
                                   {"optimizer_state", memory.optimizer_state}, {"activations", memory.activations},
                                   {"framework", memory.framework},   {"total", memory.total},
                                   {"available", memory.available}};
  j["fits_in_memory"] = memory.fits();
  j["strategy"] = strategy;
  j["network_model"] = network_model;
  j["calibration_factor"] = calibration_factor;
  Json b = Json::array();
  for (const auto& t : buckets) b.push_back(Json{{"bytes", t.bytes}, {"ready_s", t.ready_s}, {"start_s", t.start_s}, {"end_s", t.end_s}});
  j["buckets"] = b;
  j["sim_wall_s"] = sim_wall_s;
  return j;
}

IterationResult simulate_iteration(const Scenario& input, const SimulateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const workloads::Workload workload = load_scenario_workload(input);

  const bool ps = input.strategy.kind == StrategyKind::parameter_server;
  SimulationOptions sim_options;
  if (ps && input.strategy.placement == ServerPlacement::dedicated) sim_options.server_nodes = input.strategy.servers;
  Simulation sim(input.platform, sim_options);
  // A SimGrid XML platform says how many GPUs it has only once SimGrid has built it.
  Scenario scenario = input;
  if (scenario.platform.simgrid_xml) {
    scenario.platform.nodes = sim.gpu_count() / sim.gpus_per_node();
    check_against_platform(scenario);
  }
  const int n = scenario.gpus();
  TRAINSIM_CHECK(sim.gpu_count() == n, "the built platform has a different GPU count than the scenario");
  const auto& gpu = scenario.platform.gpu;

  workloads::IterationOptions expand;
  expand.precision = scenario.workload.precision;
  expand.bucket_bytes = scenario.strategy.bucket_bytes;
  expand.first_bucket_bytes = scenario.strategy.first_bucket_bytes;
  expand.optimizer = scenario.workload.optimizer;

  // Calibration: κ so that one GPU running the same scenario (its whole batch) reproduces the
  // measured throughput. One GPU has no communication, so its iteration is its compute.
  const double single_batch = scenario.workload.scaling == Scaling::weak ? static_cast<double>(scenario.workload.batch_per_gpu)
                                                                          : static_cast<double>(scenario.workload.global_batch);
  expand.batch = single_batch;
  const auto single_graph = workloads::expand_iteration(workload, expand);
  const double single_model_s = iteration_times(single_graph, gpu, scenario.compute).total_s();
  if (!(single_model_s > 0))
    throw InputError(scenario.source, "/workload", "the workload '" + workload.name + "' does no computation: nothing to simulate");
  double kappa = 1.0;
  if (scenario.single_gpu_samples_per_s) kappa = (single_batch / *scenario.single_gpu_samples_per_s) / single_model_s;

  // At most two batch sizes exist (strong scaling spreads a remainder). Per batch: its graph, its
  // task times and their sums per segment (forward, backward up to each bucket, the rest).
  struct BatchPlan {
    workloads::IterationGraph graph;
    IterationTimes times;
    std::vector<double> segments_s;
  };
  std::map<double, BatchPlan> batches;
  for (int r = 0; r < n; ++r) {
    const double batch = scenario.batch_of(r);
    if (batches.count(batch)) continue;
    expand.batch = batch;
    BatchPlan b;
    b.graph = workloads::expand_iteration(workload, expand);
    b.times = iteration_times(b.graph, gpu, scenario.compute, kappa);
    b.segments_s.push_back(b.times.forward_total_s());
    std::size_t next = 0;
    for (const auto& bucket : b.graph.buckets) {
      double segment = 0;
      for (; next <= bucket.ready_after; ++next) segment += b.times.backward_s[next];
      b.segments_s.push_back(segment);
    }
    double tail = 0;
    for (; next < b.times.backward_s.size(); ++next) tail += b.times.backward_s[next];
    b.segments_s.push_back(tail);
    batches.emplace(batch, std::move(b));
  }

  const std::vector<double> slowdowns = gpu_slowdowns(scenario);

  Run run{scenario, sim, {}, {}, {}, nullptr, nullptr, {}, {}, {}, {}, true};
  run.communicate = n > 1 || scenario.strategy.kind == StrategyKind::parameter_server;
  if (ps) run.servers = parameter_servers(scenario, sim);
  run.segment_end_s.resize(static_cast<std::size_t>(n));
  run.end_s.assign(static_cast<std::size_t>(n), 0.0);
  run.buckets = batches.rbegin()->second.graph.buckets;
  for (int r = 0; r < n; ++r) {
    const BatchPlan& b = batches.at(scenario.batch_of(r));
    GpuPlan plan;
    plan.graph = &b.graph;
    plan.times = &b.times;
    plan.slowdown = slowdowns[r];
    for (double segment : b.segments_s) plan.segments_s.push_back(segment * plan.slowdown);
    plan.update_s = b.times.update_s * plan.slowdown;
    run.plans.push_back(std::move(plan));
  }
  for (std::size_t b = 0; b < run.buckets.size(); ++b) run.bucket_ready.push_back(sg4::Semaphore::create(0));
  run.backward_done = sg4::Semaphore::create(0);
  run.communication_done = sg4::Semaphore::create(0);

  for (int r = 0; r < n; ++r) sg4::Actor::create("gpu-" + std::to_string(r), sim.gpu(r), [&run, r] { gpu_actor(run, r); });
  if (run.communicate) sg4::Actor::create("communicator", sim.gpu(0), [&run] { communicator_actor(run); });
  sim.run();

  IterationResult result;
  result.name = scenario.name;
  result.gpus = n;
  result.nodes = scenario.platform.nodes;
  result.global_batch = scenario.global_batch();
  result.iteration_time_s = *std::max_element(run.end_s.begin(), run.end_s.end());
  result.samples_per_s = result.global_batch / result.iteration_time_s;
  result.single_gpu_samples_per_s = single_batch / (kappa * single_model_s);
  result.scaling_efficiency = result.samples_per_s / (n * result.single_gpu_samples_per_s);
  double max_compute = 0, sum_compute = 0;
  for (const auto& plan : run.plans) {
    const double c = std::accumulate(plan.segments_s.begin(), plan.segments_s.end(), 0.0) + plan.update_s;
    max_compute = std::max(max_compute, c);
    sum_compute += c;
  }
  result.breakdown.compute_s = max_compute;
  result.breakdown.exposed_communication_s = std::max(0.0, result.iteration_time_s - max_compute);
  result.breakdown.idle_s = std::max(0.0, max_compute - sum_compute / n);  // round-off makes equal GPUs −0
  for (const auto& t : run.timings) result.breakdown.communication_s += t.end_s - t.start_s;
  result.buckets = run.timings;
  const LinkReport links = sim.link_report(options.busiest_links);
  result.network_bytes = links.total_network_bytes;
  for (const auto& l : links.busiest) result.busiest_links.push_back(LinkLoad{l.name, l.bytes, l.busy_fraction});
  result.memory = memory_per_gpu(scenario, workload);
  result.strategy = std::string(to_string(scenario.strategy.kind));
  result.network_model = platforms::to_string(scenario.platform.network.model);
  result.calibration_factor = kappa;

  if (!options.trace_path.empty()) {
    TraceWriter trace;
    for (int node = 0; node < scenario.platform.nodes; ++node) trace.name_process(node, "node " + std::to_string(node));
    for (int r = 0; r < n; ++r) {
      const GpuPlan& plan = run.plans[r];
      const int node = r / scenario.platform.gpus_per_node;
      trace.name_thread(node, r, "GPU " + std::to_string(r));
      const auto& ends = run.segment_end_s[r];
      // Forward: layers back to back from 0.
      double clock = 0;
      for (std::size_t i = 0; i < plan.graph->forward.size(); ++i) {
        const double d = plan.times->forward_s[i] * plan.slowdown;
        if (d > 0) trace.complete(node, r, plan.graph->forward[i].layer, "forward", clock, d);
        clock += d;
      }
      // Backward: segment s starts where segment s−1 ended.
      std::size_t task = 0;
      for (std::size_t s = 1; s < ends.size(); ++s) {
        clock = ends[s - 1];
        const std::size_t last = s <= plan.graph->buckets.size() ? plan.graph->buckets[s - 1].ready_after + 1 : plan.times->backward_s.size();
        for (; task < last; ++task) {
          const double d = plan.times->backward_s[task] * plan.slowdown;
          if (d > 0) trace.complete(node, r, plan.graph->backward[task].layer, "backward", clock, d);
          clock += d;
        }
      }
      trace.complete(node, r, "optimizer", "update", run.end_s[r] - plan.update_s, plan.update_s);
    }
    const int comm_pid = scenario.platform.nodes;
    trace.name_process(comm_pid, "communication");
    trace.name_thread(comm_pid, 0, std::string(to_string(scenario.strategy.kind)));
    for (std::size_t b = 0; b < run.timings.size(); ++b) {
      const auto& t = run.timings[b];
      trace.complete(comm_pid, 0, "bucket " + std::to_string(b) + " (" + format_bytes(t.bytes) + ")", "communication", t.start_s,
                     t.end_s - t.start_s);
    }
    write_file_atomically(options.trace_path, trace.dump());
  }

  result.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace trainsim::engine
