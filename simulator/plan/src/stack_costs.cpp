// The software stack's costs on a training plan: what TensorFlow's gRPC runtime, Horovod over MPI
// and the stragglers of synchronous SGD add to the hardware's time (simulator/README.md "Software
// stack constants and bands").

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/software_stack.hpp"
#include "trainsim/plan/training_plan.hpp"

namespace trainsim::plan {

namespace {

// The RPCs of one bucket to each server: how many (one per variable, or per variable's slice under
// sharding).
struct ServerRpcs {
  std::vector<int> count;
};

ServerRpcs bucket_rpcs(const TrainingPlan& plan, const PlannedBucket& bucket,
                       const std::vector<double>& bytes_per_server) {
  ServerRpcs rpcs;
  rpcs.count.assign(bytes_per_server.size(), 0);
  if (plan.placed_variables.empty()) {  // sharded: every variable of the bucket sends a slice to every server
    for (std::size_t i = 0; i < bytes_per_server.size(); ++i)
      if (bytes_per_server[i] > 0) rpcs.count[i] = static_cast<int>(bucket.layers.size());
    return rpcs;
  }
  std::unordered_map<std::string, int> in_bucket;
  for (const std::string& layer : bucket.layers) in_bucket.emplace(layer, 0);
  for (const PlacedVariable& v : plan.placed_variables) {
    if (in_bucket.count(v.layer) == 0 || v.bytes <= 0) continue;
    ++rpcs.count.at(static_cast<std::size_t>(v.server));
  }
  return rpcs;
}

// TensorFlow's gRPC parameter server (TF 1.x, tensorflow/core/distributed_runtime/rpc): every
// variable's gradient reaches its ps task as one RecvTensor RPC per worker, and every updated
// variable comes back the same way, so each push and pull costs, per RPC, a fixed overhead on each
// end (rendezvous look-up, TensorProto header, a closure on the compute pool) and a per-byte parse
// and copy by the receiving process (the sender hands gRPC the tensor's buffer uncopied,
// tensor_coding.cc) at `rpc_GBps`, the rate the cited benchmarks measured between one pair of
// processes. gRPC keeps one channel (one HTTP/2 connection, one TCP stream) per pair of tasks, so
// a pair's RPCs stream one after another, while a process parses different peers' channels on up
// to `rpc_threads` threads at once: server i spends W·(b_i/rate)/min(threads, W) +
// W·n_i·overhead/threads on a push of W workers, W·n_i·overhead/threads on a pull; a worker on a
// pull max(Σ_i (n_i·overhead + b_i/rate)/threads, its largest channel's), on a push its fixed
// costs and its largest channel. server_throughput_GBps, where
// set, replaces the servers' per-byte part by the user's measured rate.
void charge_grpc(TrainingPlan& plan, const SoftwareStack& stack) {
  const double rpc_s = stack.get(StackKey::rpc_overhead);
  const double rate = stack.get(StackKey::rpc_rate);
  const double threads = stack.modelled ? stack.get(StackKey::rpc_threads) : 1;
  // The step's closing barrier's token queues (tf_cnn_benchmarks' add_sync_queues_and_barrier
  // 'sync_queues_step_end_': one queue per worker on a ps task): every worker enqueues a token
  // into each other worker's queue and dequeues its own, about two RPCs per pair of workers served
  // on the ps tasks' threads, then one round trip.
  if (stack.modelled) {
    int workers = 0;
    for (const CommOp& op : plan.ops)
      if (op.kind == CommKind::push) workers = std::max(workers, op.ranks);
    const double servers = static_cast<double>(plan.servers.size());
    plan.barrier_s = rpc_s * (2.0 * workers * std::max(0, workers - 1) / (threads * servers) + 2);
  }
  for (CommOp& op : plan.ops) {
    if (op.kind != CommKind::push && op.kind != CommKind::pull) continue;
    const ServerRpcs rpcs = bucket_rpcs(plan, plan.buckets.at(op.bucket), op.bytes_per_server);
    const double workers = op.ranks;
    op.server_software_s.assign(op.bytes_per_server.size(), 0.0);
    // The bytes are parsed and copied by the receiving process (a push: the server; a pull: the
    // worker), on the threads that poll its completion queue; the sender hands the tensor's buffer
    // to gRPC without a copy (tensor_coding.cc, EncodeTensorToByteBuffer), so its side of the bytes
    // is the channel's stream. The fixed costs fall on both ends.
    const bool push = op.kind == CommKind::push;
    double worker_s = 0, largest_s = 0;
    for (std::size_t i = 0; i < op.bytes_per_server.size(); ++i) {
      const double bytes = op.bytes_per_server[i];
      if (bytes == 0) continue;
      const double per_byte = stack.modelled ? bytes / rate : 0;
      const double fixed = stack.modelled ? rpcs.count[i] * rpc_s : 0;
      // A server receives its workers' channels at once, up to its threads; it sends them at once.
      double server_bytes_s = push ? workers * per_byte / std::min(threads, workers) : 0;
      if (plan.server_throughput_Bps > 0) server_bytes_s = workers * bytes / plan.server_throughput_Bps;
      op.server_software_s[i] = server_bytes_s + workers * fixed / threads;
      worker_s += (fixed + (push ? 0 : per_byte)) / threads;
      largest_s = std::max(largest_s, fixed + per_byte);
    }
    // A worker receives from its servers at once, up to its threads; one channel is one stream.
    if (stack.modelled) op.worker_software_s = std::max(worker_s, largest_s);
    // Synchronous training reads a variable back only after every worker's gradient of it is
    // applied, and only that: tf_cnn_benchmarks' distributed_replicated mode (tensorflow/benchmarks
    // at 9165a70, the hash TensorFlow's 2017 benchmark page names; variable_mgr.py,
    // VariableMgrDistributedReplicated.append_apply_gradients_ops) builds, for each variable i,
    // apply_gradients on its ps task -> add_sync_queues_and_barrier('replicate_variable_i') ->
    // read_value on the worker CPU -> assign to every GPU's copy. The graph's only other barrier
    // is the step's end (TrainingPlan::barrier_s), so a variable's read overlaps the pushes,
    // barriers and reads of the others and the rest of the backward pass. Its barrier's queues
    // sit on one ps task and the enqueues and the dequeue run there as ops of the workers' graph
    // partitions: what crosses the network is two small messages in sequence (the apply's control
    // edge to the queues' task, the dequeue's back to the worker), two RPC overheads.
    //
    // tf_cnn_benchmarks' default, `--variable_update=parameter_server`
    // (VariableMgrDistributedFetchFromPS), keeps no copy on the workers: each tower reads the ps
    // variables in its forward pass (through a caching device, once per worker and step), the
    // gradients go to the ps tasks' applies, and the step closes with the token-queue barrier. So
    // the reads of a step start after every worker's pushes and that barrier, and nothing of the
    // previous step hides them: a pull after all pushes. They are the step's first operations, all
    // issued at once, and a layer's forward needs only its own variables: the engine runs them at
    // the iteration's start, in forward order, and each layer group's forward waits for its read
    // (ComputeProfile::forward_groups_s), so the forward of the first layers hides the later reads.
    if (stack.modelled && op.kind == CommKind::pull) {
      if (stack.ps_variable_update == "parameter_server")
        op.after_all_pushes = true;
      else
        op.variable_barrier_s = 2 * rpc_s;
    }
    if (std::all_of(op.server_software_s.begin(), op.server_software_s.end(), [](double s) { return s == 0; }))
      op.server_software_s.clear();
  }
}

// The steps of Open MPI's all-reduce of `bytes` among `ranks` processes, as its fixed decision
// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, unchanged from 1.x through 4.0) chooses for a
// commutative sum: below 10,000 bytes recursive doubling (log2 n exchanges, two more when n is
// not a power of two); up to n segments of 1 MiB the ring (2(n-1) steps of one block each);
// larger the segmented ring (coll_base_allreduce.c, allreduce_intra_ring_segmented), whose
// reduce-scatter runs once per phase of about 1 MiB of a block, S / (n · 1 MiB) phases rounded to
// the nearest (n-1 steps each), before
// an allgather of n-1 steps. The ring is over the communicator's ranks in order, so with
// `mpirun -H a:4,b:4` (Horovod's documented launch) consecutive ranks share a node.
double open_mpi_allreduce_steps(double bytes, int ranks) {
  if (ranks < 2) return 0;
  const double n = ranks;
  if (bytes < 10000) {
    const double pof2 = std::exp2(std::floor(std::log2(n)));
    return std::log2(pof2) + (pof2 < n ? 2 : 0);
  }
  const double segment = 1 << 20;
  if (n * segment >= bytes) return 2 * (n - 1);
  // num_phases = count / (n · segcount), one more when the rest exceeds half of n · segcount.
  const double whole = std::floor(bytes / (n * segment));
  const double phases = whole + (bytes - whole * n * segment > n * segment / 2 ? 1 : 0);
  return (phases + 1) * (n - 1);
}

// Horovod over MPI on host buffers (HOROVOD_GPU_ALLREDUCE unset): each fused round waits for the
// background thread's negotiation cycle, copies the tensors into the fusion buffer and the result
// out of it (memcpy on one core per rank), and MPI_Allreduce sums on the CPU (one core per rank,
// at a core's streaming rate) over Open MPI's TCP BTL, one TCP connection per peer, so a node's
// ring hop is one stream. Each step of the MPI all-reduce waits for the slowest of its n ranks:
// a rank's step costs a random delay of mean `mpi_step_us` beyond its transfer and reduction
// (software_stack.cpp: the TCP BTL's rendezvous, a rank waiting for a core it shares with
// TensorFlow), taken as exponential (a wait for a descheduled rank to run again has no memory),
// so a step costs the expected maximum of n such delays, mpi_step · H_n (the n-th harmonic number:
// 3.38 at 16 ranks, 4.74 at 64). A fused round of S bytes pays that open_mpi_allreduce_steps
// times: about 2n steps below n MiB, S/1 MiB + n above. This is what makes the host-staged
// all-reduce scale badly with the rank count: the bytes per node stay 2(n-1)/n · S while the
// steps and the wait in each grow with n.
void charge_horovod(TrainingPlan& plan, const SoftwareStack& stack) {
  if (!stack.modelled) return;
  const double core_Bps = stack.get(StackKey::core_memory);
  for (CommOp& op : plan.ops) {
    if (op.kind != CommKind::all_reduce || op.transport != Transport::host) continue;
    op.stream_Bps = stack.get(StackKey::tcp_stream);
    op.reduce_Bps = core_Bps;
    double slowest_of_ranks = 0;  // H_n
    for (int k = 1; k <= op.ranks; ++k) slowest_of_ranks += 1.0 / k;
    op.software_s = stack.get(StackKey::cycle_wait) + 2 * op.bytes / core_Bps +
                    stack.get(StackKey::mpi_step) * slowest_of_ranks * open_mpi_allreduce_steps(op.bytes, op.ranks);
  }
}

}  // namespace

void apply_stack_costs(TrainingPlan& plan, const Scenario& scenario) {
  const SoftwareStack& stack = scenario.stack;
  if (!plan.servers.empty()) {
    // TensorFlow's local parameter server (one machine, no cluster) keeps its variables in the
    // same process: no RPC. A distributed job talks gRPC between its tasks, on one machine too.
    const bool dedicated = std::any_of(plan.servers.begin(), plan.servers.end(),
                                       [](const PlannedServer& s) { return s.host == ServerHost::server_node; });
    const bool grpc = stack.ps_rpc == "grpc" || (stack.ps_rpc == "auto" && (plan.nodes > 1 || dedicated));
    if (grpc) {
      charge_grpc(plan, stack);
    } else if (plan.server_throughput_Bps > 0) {
      SoftwareStack bare = stack;
      bare.modelled = false;  // only the user's server rate
      charge_grpc(plan, bare);
    }
  }
  charge_horovod(plan, stack);
  // Synchronous SGD waits for the slowest GPU every iteration: with independent per-iteration
  // times of mean μ and standard deviation cv·μ, the expected maximum of n is μ·(1 + cv·E[max of n
  // standard normals]).
  if (stack.modelled && plan.gpus > 1)
    plan.straggler_s = stack.get(StackKey::iteration_cv) * expected_max_of_normals(plan.gpus) * plan.compute_s(0);
}

}  // namespace trainsim::plan
