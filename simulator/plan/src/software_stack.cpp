#include "trainsim/plan/software_stack.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "trainsim/core/error.hpp"

namespace trainsim::plan {

namespace {

// One row per constant: its key and unit in JSON, the factor from that unit to base units, the
// published default and range (base units), the values a user may give, and whether a larger
// value makes the iteration slower. The sources are in simulator/README.md "Software stack
// constants and bands"; in short:
//  - rpc_overhead_us: no public figure isolates TensorFlow 1.x's fixed cost per RecvTensor; gRPC's
//    C++ unary ping-pong is tens of µs on its performance dashboard, and TensorFlow adds a
//    rendezvous look-up, the TensorProto header and a closure on its compute pool per call
//    (tensorflow/core/distributed_runtime/rpc/grpc_worker_service.cc, RecvTensorHandlerRaw). The
//    default is the geometric middle of 30–300 µs, the band that range.
//  - rpc_GBps: RecvTensor rates between one pair of TensorFlow processes, 2016–2017
//    (tensorflow/tensorflow issues #6116, #6256, PR #11261): 0.2, 0.57, 0.8, 0.9 GB/s on
//    Xeon E5 machines, and 0.1–0.2 GB/s on K40m machines before the gRPC upgrade of August 2017;
//    the default is the median of the five (0.57), the band 0.2–0.9 (the K40m figure was measured
//    on older hosts than any the validation data ran on).
//  - rpc_threads: the threads polling a process's gRPC completion queue, on which gRPC reads its
//    sockets and the bytes a process receives are parsed into tensors. TensorFlow's releases of
//    2017, which the validation data and the runs cited beside it used, polled a worker service's
//    queue on one thread (grpc_worker_service.cc, GrpcWorkerService::HandleRPCsLoop, with a TODO
//    to add more) and a client's on one (GrpcWorkerCache's polling thread); later releases serve on
//    GrpcWorkerServiceOptions::num_serving_threads = 8. Default 8, band 1–8: measured TensorFlow 1.1
//    runs parse far faster than one thread at rpc_GBps would (tests/data/validation's
//    cscs_distributed_tf_2017.csv: on Piz Daint 2 ps tasks took 8 single-GPU workers' pushes and
//    pulls, about 380 MB each way per ps task and step, within 40 ms of the one-GPU step; one thread
//    at 0.57 GB/s would add 0.67 s each way), so one polling thread is the band's slow end.
//  - iteration_cv: the spread (σ/μ) of one GPU's iteration time, across iterations and across the
//    job's GPUs. The default is PyTorch's DDP benchmark (pytorch/pytorch
//    benchmarks/distributed/ddp/README.md): p50 and p95 seconds per iteration on one V100, a p95
//    0.8 % above p50, σ/μ ≈ 0.5 % for a normal. The slow end is GPU Boost: a GPU under load clocks
//    itself anywhere between its base and its boost clock by its own power and thermal headroom
//    (NVIDIA Tesla K80 board specification BD-07317-001, "NVIDIA GPU Boost on Tesla K80": 562 to
//    875 MHz, 300 W for two GK210 dies, passively cooled), so the GPUs of one job do not run at one
//    speed; a clock spread uniformly over the K80's range has σ = (875 − 562)/√12 MHz, 10.3 % of the
//    boost clock, which is the default on the K80 (GpuSpec::clock_spread: two dies under one
//    power limit); single-GPU boards such as the P100 keep 0.5 %. Band 0.2 % (a dedicated,
//    fixed-clock GPU) to the larger of 10 % (about the K80's spread) and the default.
//  - tcp_stream_Gbps: one TCP stream on 10–40 GbE with the kernels of 2016–2018 reaches
//    10–35 Gb/s (ESnet fasterdata host tuning: about 20 Gb/s per stream on 40 GbE untuned);
//    Open MPI's TCP BTL opens one connection per peer (btl_tcp_links = 1).
//  - core_memory_GBps: one core of a Xeon E5 v3/v4 streams 6–14 GB/s (single-thread STREAM);
//    Horovod's reduction (MPI_SUM on host buffers) and its fusion-buffer memcpy run on one core per
//    rank.
//  - cycle_wait_ms: Horovod's background thread negotiates every HOROVOD_CYCLE_TIME (5 ms by
//    default, horovod/common/operations.cc): a fused round waits half a cycle on average, between
//    0.5 ms and one whole cycle.
//  - mpi_step_us: the mean delay one rank adds to a step of Open MPI's ring all-reduce over TCP
//    beyond its transfer and reduction (coll_base_allreduce.c: each step waits for the previous
//    block, reduces it, then sends it with a blocking send). A block above the TCP BTL's 64 KiB
//    eager limit goes by rendezvous (ob1: the receiver must match it and acknowledge before the
//    data follows), and a receiver matches only while it is inside MPI: Horovod's MPI ranks share
//    their cores with TensorFlow's thread pools, so a step also waits for a descheduled rank to run
//    again. A step waits for the slowest of its n ranks (stack_costs.cpp: mean · H_n). No public
//    figure isolates it; Horovod's published host-staged runs (tests/data/validation/
//    horovod_2017.csv: TCP Horovod with the all-reduce on the CPU, 16 and 64 P100s over 25 and 40
//    GbE) pin it: with every other constant at its default, the value that reproduces each row is
//    227 and 291 us (VGG-16, ResNet-101 on 16 GPUs), 166, 304 and 404 us (Inception-v3, ResNet-101,
//    VGG-16 on 64); Inception-v3 on 16 GPUs is faster than the model without any. The default is
//    their median (290 us), the band their range (160-400 us). For scale: the rendezvous round
//    trip of 2017 kernels on 10-40 GbE is ~0.1 ms, a CFS minimum time slice on a many-core host 3 ms.
struct Row {
  StackKey key;
  const char* name;
  const char* description;
  double unit;
  double value, low, high;  // in the JSON unit
  double min_allowed, max_allowed;
  bool slower_when_higher;
};

constexpr std::array<Row, kStackKeys> kRows{{
    {StackKey::rpc_overhead, "rpc_overhead_us", "TensorFlow's fixed cost per RPC", 1e-6, 95, 30, 300, 0, 1e5, true},
    {StackKey::rpc_rate, "rpc_GBps", "TensorFlow's per-channel RPC rate", 1e9, 0.57, 0.2, 0.9, 1e-3, 1e3, false},
    {StackKey::rpc_threads, "rpc_threads", "threads polling a TensorFlow process's completion queue", 1, 8, 1, 8, 1,
     1024, false},
    {StackKey::iteration_cv, "iteration_cv", "the spread of a GPU's iteration time (stragglers)", 1, 0.005, 0.002, 0.10,
     0, 1, true},
    {StackKey::tcp_stream, "tcp_stream_Gbps", "one TCP stream's rate (Open MPI over TCP)", 1e9 / 8, 20, 10, 35, 0.01,
     1e4, false},
    {StackKey::core_memory, "core_memory_GBps", "one core's memory streaming rate (MPI reduction, fusion copies)", 1e9,
     10, 6, 14, 0.01, 1e4, false},
    {StackKey::cycle_wait, "cycle_wait_ms", "Horovod's negotiation wait per fused round", 1e-3, 2.5, 0.5, 5, 0, 1e4,
     true},
    {StackKey::mpi_step, "mpi_step_us", "one rank's mean delay per step of Open MPI's all-reduce over TCP", 1e-6, 290,
     160, 400, 0, 1e6, true},
}};

const Row& row(StackKey key) {
  return kRows.at(static_cast<std::size_t>(key));
}

}  // namespace

SoftwareStack::SoftwareStack() {
  for (const Row& r : kRows)
    constants.at(static_cast<std::size_t>(r.key)) = {r.value * r.unit, r.low * r.unit, r.high * r.unit};
}

double SoftwareStack::get(StackKey key) const {
  if (!modelled) return 0;
  const StackConstant& c = constants.at(static_cast<std::size_t>(key));
  if (end == BandEnd::nominal || (only && *only != key)) return c.value;
  const bool slow = end == BandEnd::slow;
  return slow == row(key).slower_when_higher ? c.high : c.low;
}

std::vector<StackKey> SoftwareStack::acting_on(const std::string& strategy) const {
  if (!modelled) return {};
  std::vector<StackKey> keys{StackKey::iteration_cv};
  if (strategy == "parameter_server")
    keys.insert(keys.begin(), {StackKey::rpc_overhead, StackKey::rpc_rate, StackKey::rpc_threads});
  if (strategy == "ring_allreduce_host")
    keys.insert(keys.begin(), {StackKey::tcp_stream, StackKey::core_memory, StackKey::cycle_wait, StackKey::mpi_step});
  return keys;
}

bool SoftwareStack::has_band(const std::string& strategy) const {
  for (StackKey k : acting_on(strategy)) {
    const StackConstant& c = constants.at(static_cast<std::size_t>(k));
    if (c.high > c.low) return true;
  }
  return false;
}

SoftwareStack SoftwareStack::at(BandEnd e, std::optional<StackKey> key) const {
  SoftwareStack s = *this;
  s.end = e;
  s.only = key;
  return s;
}

std::string stack_key_name(StackKey key) {
  return row(key).name;
}
std::string stack_key_description(StackKey key) {
  return row(key).description;
}
double stack_key_unit(StackKey key) {
  return row(key).unit;
}
std::optional<StackKey> stack_key_named(std::string_view name) {
  for (const Row& r : kRows)
    if (name == r.name) return r.key;
  return std::nullopt;
}
std::vector<std::string> stack_key_names() {
  std::vector<std::string> names;
  for (const Row& r : kRows) names.emplace_back(r.name);
  return names;
}

std::vector<std::string> ps_variable_updates() {
  return {"parameter_server", "distributed_replicated"};
}

SoftwareStack read_software_stack(const std::optional<JsonNode>& node, double iteration_cv_default) {
  SoftwareStack stack;
  if (iteration_cv_default > 0) {
    StackConstant& cv = stack.constants.at(static_cast<std::size_t>(StackKey::iteration_cv));
    cv.value = iteration_cv_default;
    cv.high = std::max(cv.high, iteration_cv_default);
  }
  if (!node) return stack;
  node->require_object();
  std::vector<std::string> allowed{"model", "bands", "ps_rpc", "ps_variable_update"};
  for (const Row& r : kRows) allowed.emplace_back(r.name);
  node->allow_only(allowed);
  if (auto m = node->find("model")) {
    stack.modelled = m->one_of({"published", "ideal"}) == "published";
    stack.model_set = true;
  }
  if (auto r = node->find("ps_rpc")) stack.ps_rpc = r->one_of({"auto", "grpc", "in_process"});
  if (auto r = node->find("ps_variable_update")) stack.ps_variable_update = r->one_of(ps_variable_updates());
  for (const Row& r : kRows) {
    auto v = node->find(r.name);
    if (!v) continue;
    const double x = v->number_in(r.min_allowed, r.max_allowed);
    StackConstant& c = stack.constants.at(static_cast<std::size_t>(r.key));
    c = {x * r.unit, x * r.unit, x * r.unit};  // a measured value: no band unless `bands` gives one
    stack.user_set.push_back(r.key);
  }
  if (auto bands = node->find("bands")) {
    bands->require_object();
    std::vector<std::string> names;
    for (const Row& r : kRows) names.emplace_back(r.name);
    bands->allow_only(names);
    for (const Row& r : kRows) {
      auto b = bands->find(r.name);
      if (!b) continue;
      b->require_array();
      if (b->size() != 2)
        throw b->error(fmt::format("must be [low, high] in the unit of {}, got {} values", r.name, b->size()));
      const double low = b->element(0).number_in(r.min_allowed, r.max_allowed);
      const double high = b->element(1).number_in(r.min_allowed, r.max_allowed);
      StackConstant& c = stack.constants.at(static_cast<std::size_t>(r.key));
      const double value = c.value / r.unit;
      if (low > high) throw b->error(fmt::format("low end {:g} is above the high end {:g}", low, high));
      if (value < low || value > high)
        throw b->error(fmt::format("[{:g}, {:g}] does not contain the value {:g} of {} it is the range of", low, high,
                                   value, r.name));
      c.low = low * r.unit;
      c.high = high * r.unit;
    }
  }
  return stack;
}

double expected_max_of_normals(int n) {
  if (n <= 1) return 0;
  // E[max] = ∫ x · n · φ(x) · Φ(x)^(n−1) dx, by the trapezoid rule on [−10, 10] (the integrand is
  // below 1e-20 outside it for any n this product simulates).
  const double step = 1e-3;
  double sum = 0;
  for (double x = -10; x <= 10; x += step) {
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * n * pdf * std::pow(cdf, n - 1) * step;
  }
  return sum;
}

}  // namespace trainsim::plan
