#pragma once
// The software between the hardware and the answer: TensorFlow's gRPC parameter server, Horovod's
// MPI all-reduce on host buffers, and the stragglers of synchronous SGD. Each constant carries the
// range its public sources span; a run can take every constant (or one) at the fast or the slow end
// of its range, which is how the band of a prediction is computed (simulator/README.md
// "Software stack constants and bands").

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/core/json_reader.hpp"

namespace trainsim::plan {

/// The stack constants, in the order of the `stack` object's documentation.
enum class StackKey {
  rpc_overhead,  ///< seconds of fixed work per RPC on each end (TensorFlow RecvTensor)
  rpc_rate,      ///< bytes per second one RPC stream (de)serialises and copies, end to end
  rpc_threads,   ///< threads polling a process's completion queue (they parse what it receives)
  iteration_cv,  ///< coefficient of variation of one GPU's iteration time
  tcp_stream,    ///< bytes per second one TCP stream reaches (Open MPI's TCP BTL: one per peer)
  core_memory,   ///< bytes per second one CPU core streams through memory
  cycle_wait,    ///< seconds Horovod waits per fused round for its negotiation cycle
  mpi_step,      ///< mean seconds one rank delays a step of Open MPI's all-reduce over TCP
};
inline constexpr std::size_t kStackKeys = 8;

/// Which end of its range a constant takes in a run.
enum class BandEnd { nominal, fast, slow };

/// One constant: its default (or the user's value) and its range, in base units.
struct StackConstant {
  double value = 0;
  double low = 0;
  double high = 0;
};

/// The software stack of a scenario (`stack` object; absent = the published defaults).
struct SoftwareStack {
  /// true under `"model": "published"`: these costs and their bands. false under `"ideal"`: none of
  /// these costs (the hardware-only model: line-rate gRPC and MPI, no stragglers). Without a
  /// `model` key the scenario reader decides by strategy (parameter servers and host-staged
  /// all-reduces: published; GPU collectives: ideal).
  bool modelled = false;
  bool model_set = false;  ///< the scenario gave `model`
  std::array<StackConstant, kStackKeys> constants{};
  /// How parameter servers and workers talk (`ps_rpc`): "auto" (gRPC between processes when the
  /// job spans several machines or dedicated server nodes, in process on one machine, as
  /// TensorFlow's local parameter server), "grpc" (a distributed job on one machine too) or
  /// "in_process" (no RPC costs).
  std::string ps_rpc = "auto";
  /// tf_cnn_benchmarks' `--variable_update` of a gRPC parameter-server job (`ps_variable_update`):
  /// "parameter_server" (its default: every worker reads the ps variables in the forward pass, so
  /// the reads follow the step's closing barrier) or "distributed_replicated" (each variable is read
  /// back after its own barrier, overlapping the backward pass).
  std::string ps_variable_update = "parameter_server";
  /// The run's end of the band, for every constant or only for `only`.
  BandEnd end = BandEnd::nominal;
  std::optional<StackKey> only;
  /// Keys the user set a value for (their ranges collapse to it unless `bands` widens them).
  std::vector<StackKey> user_set;

  /// The published defaults and ranges.
  SoftwareStack();
  /// The value this run uses: the default, or the fast or slow end of the range (0 when not modelled).
  double get(StackKey key) const;
  /// The constants of the stack that act on `strategy` (a strategy kind's name; host-staged rings
  /// named "ring_allreduce_host"): the ones whose range makes a band.
  std::vector<StackKey> acting_on(const std::string& strategy) const;
  /// True when some acting constant has a range wider than a point.
  bool has_band(const std::string& strategy) const;
  /// This stack with every constant (or only `key`) at `end`.
  SoftwareStack at(BandEnd end, std::optional<StackKey> key = std::nullopt) const;
};

/// The JSON key of a constant in the `stack` object ("rpc_overhead_us", ...).
std::string stack_key_name(StackKey key);
/// A short description with units for reports ("TensorFlow RPC overhead per call").
std::string stack_key_description(StackKey key);
/// Base units per unit of the constant's JSON key (1e-6 for "rpc_overhead_us").
double stack_key_unit(StackKey key);
/// The constant a JSON key names, if any; and every key, in table order.
std::optional<StackKey> stack_key_named(std::string_view name);
std::vector<std::string> stack_key_names();

/// Reads the scenario's `stack` object (`node` may be null: the defaults). Throws InputError at the
/// offending pointer: unknown keys, values outside the range a constant can take, bands whose low
/// end exceeds the high end or that do not contain the value.
/// `iteration_cv_default` (> 0), the spread of the platform's GPU clocks
/// (platforms::GpuSpec::clock_spread), replaces iteration_cv's default and widens its band's slow
/// end to it; a value or band the scenario gives still overrides it.
SoftwareStack read_software_stack(const std::optional<JsonNode>& node, double iteration_cv_default = 0);

/// The values `ps_variable_update` may take (SoftwareStack::ps_variable_update), in the order error
/// messages list them.
std::vector<std::string> ps_variable_updates();

/// The expected maximum of n independent standard normal variables (0 for n ≤ 1), by numerical
/// integration: how many standard deviations the slowest of n workers lags the mean.
double expected_max_of_normals(int n);

}  // namespace trainsim::plan
