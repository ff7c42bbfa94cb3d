// ONNX models as workloads. The file is parsed with Debian's libonnx (the protobuf classes of
// onnx.proto) and its shapes come from ONNX's own shape inference (with data propagation, so the
// Shape → Gather → Concat → Reshape chains torch.onnx.export writes for dynamic axes resolve). The
// steps, each of which may reject the model with an error naming the node:
//
//   parse ─▶ structure (producers, unknown values, cycles, control flow, unknown operators)
//         ─▶ bind dynamic dimensions (batch, sequence, image side, named dims) ─▶ infer shapes
//         ─▶ one layer per node that computes on floating-point tensors, costed from its shapes
//
// Cost conventions follow the layer-graph format's (layer_costs.cpp): a multiply-add is 2 FLOPs;
// Conv = 2·|output|·(Cin/groups)·kh·kw; Gemm/MatMul = 2·|output|·K; backward = the forward again
// for each operand that needs a gradient (input gradient, weight gradient); elementwise,
// normalisation and pooling ops cost a fixed number of FLOPs per element (the same constants as
// layer_costs.cpp). Parameters are the floating-point initializers of rank ≥ 1 that nodes read,
// each counted once (a tied weight read by two nodes counts once), except BatchNormalization's
// running mean and variance (buffers, not parameters, as torchvision counts them). Rank-0
// initializers are the scalar constants torch folds (the attention scale, an epsilon).
// Nodes whose outputs are all integer or boolean (shape arithmetic, masks' indices) compute no
// floating-point work and make no layer; Constant nodes neither.
#include "trainsim/workloads/onnx_import.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::workloads {
namespace {

// Sizes as in the layer-graph format (layer_spec.hpp): dimensions below 2^31, counts below 2^53.
constexpr std::int64_t kMaxDim = 2147483647;
constexpr double kMaxElements = 9007199254740992.0;

// What a node's layer costs, by operator.
enum class Kind {
  conv,            // Conv
  conv_transpose,  // ConvTranspose
  gemm,            // Gemm
  matmul,          // MatMul
  gather,          // Gather: an embedding when it reads a parameter table, else indexing
  norm,            // BatchNormalization, LayerNormalization, InstanceNormalization, ...
  elementwise,     // a fixed number of FLOPs per output element
  pool,            // MaxPool, AveragePool, LpPool: kernel elements per output element
  reduce,          // GlobalAveragePool, Reduce*: one FLOP per input element
  loss,            // SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss
  view,            // no FLOPs, nothing saved: reshapes, transposes, copies, indexing
};

struct OpInfo {
  Kind kind;
  double flops_per_element = 0;  // elementwise: forward FLOPs per output element
};

// FLOPs per element, the same constants as layer_costs.cpp's (its comments give the reasons).
constexpr double kRelu = 1, kLeaky = 2, kTranscendental = 4, kSilu = 5, kGelu = 8, kDropout = 2, kSoftmax = 5,
                 kNorm = 5, kLoss = 6;

const std::map<std::string, OpInfo, std::less<>>& operators() {
  static const std::map<std::string, OpInfo, std::less<>> table{
      {"Conv", {Kind::conv}},
      {"ConvTranspose", {Kind::conv_transpose}},
      {"Gemm", {Kind::gemm}},
      {"MatMul", {Kind::matmul}},
      {"Gather", {Kind::gather}},
      {"BatchNormalization", {Kind::norm}},
      {"LayerNormalization", {Kind::norm}},
      {"InstanceNormalization", {Kind::norm}},
      {"LpNormalization", {Kind::norm}},
      {"MeanVarianceNormalization", {Kind::norm}},
      {"LRN", {Kind::norm}},
      {"Relu", {Kind::elementwise, kRelu}},
      {"LeakyRelu", {Kind::elementwise, kLeaky}},
      {"PRelu", {Kind::elementwise, kLeaky}},
      {"Elu", {Kind::elementwise, kTranscendental}},
      {"Selu", {Kind::elementwise, kTranscendental}},
      {"Celu", {Kind::elementwise, kTranscendental}},
      {"Sigmoid", {Kind::elementwise, kTranscendental}},
      {"HardSigmoid", {Kind::elementwise, kLeaky}},
      {"HardSwish", {Kind::elementwise, kLeaky + 1}},
      {"Tanh", {Kind::elementwise, kTranscendental}},
      {"Softplus", {Kind::elementwise, kTranscendental}},
      {"Softsign", {Kind::elementwise, kLeaky}},
      {"Mish", {Kind::elementwise, kSilu + kTranscendental}},
      {"Gelu", {Kind::elementwise, kGelu}},
      {"Erf", {Kind::elementwise, kTranscendental}},
      {"Exp", {Kind::elementwise, kTranscendental}},
      {"Log", {Kind::elementwise, kTranscendental}},
      {"Sin", {Kind::elementwise, kTranscendental}},
      {"Cos", {Kind::elementwise, kTranscendental}},
      {"Sqrt", {Kind::elementwise, 1}},
      {"Reciprocal", {Kind::elementwise, 1}},
      {"Neg", {Kind::elementwise, 1}},
      {"Abs", {Kind::elementwise, 1}},
      {"Sign", {Kind::elementwise, 1}},
      {"Floor", {Kind::elementwise, 1}},
      {"Ceil", {Kind::elementwise, 1}},
      {"Round", {Kind::elementwise, 1}},
      {"Clip", {Kind::elementwise, 1}},
      {"Add", {Kind::elementwise, 1}},
      {"Sub", {Kind::elementwise, 1}},
      {"Mul", {Kind::elementwise, 1}},
      {"Div", {Kind::elementwise, 1}},
      {"Pow", {Kind::elementwise, 1}},
      {"Max", {Kind::elementwise, 1}},
      {"Min", {Kind::elementwise, 1}},
      {"Sum", {Kind::elementwise, 1}},
      {"Mean", {Kind::elementwise, 1}},
      {"Where", {Kind::elementwise, 1}},
      {"Dropout", {Kind::elementwise, kDropout}},
      {"Softmax", {Kind::elementwise, kSoftmax}},
      {"LogSoftmax", {Kind::elementwise, kSoftmax}},
      {"Hardmax", {Kind::elementwise, 1}},
      {"Resize", {Kind::elementwise, 1}},
      {"Upsample", {Kind::elementwise, 1}},
      {"MaxPool", {Kind::pool}},
      {"AveragePool", {Kind::pool}},
      {"LpPool", {Kind::pool}},
      {"GlobalAveragePool", {Kind::reduce}},
      {"GlobalMaxPool", {Kind::reduce}},
      {"GlobalLpPool", {Kind::reduce}},
      {"ReduceMean", {Kind::reduce}},
      {"ReduceSum", {Kind::reduce}},
      {"ReduceMax", {Kind::reduce}},
      {"ReduceMin", {Kind::reduce}},
      {"ReduceProd", {Kind::reduce}},
      {"ReduceL1", {Kind::reduce}},
      {"ReduceL2", {Kind::reduce}},
      {"ReduceSumSquare", {Kind::reduce}},
      {"ReduceLogSumExp", {Kind::reduce}},
      {"CumSum", {Kind::reduce}},
      {"SoftmaxCrossEntropyLoss", {Kind::loss}},
      {"NegativeLogLikelihoodLoss", {Kind::loss}},
      // Views and copies: no arithmetic, and backward needs no saved tensor.
      {"Reshape", {Kind::view}},
      {"Flatten", {Kind::view}},
      {"Squeeze", {Kind::view}},
      {"Unsqueeze", {Kind::view}},
      {"Transpose", {Kind::view}},
      {"Identity", {Kind::view}},
      {"Slice", {Kind::view}},
      {"Split", {Kind::view}},
      {"Concat", {Kind::view}},
      {"Expand", {Kind::view}},
      {"Tile", {Kind::view}},
      {"Pad", {Kind::view}},
      {"Cast", {Kind::view}},
      {"CastLike", {Kind::view}},
      {"GatherElements", {Kind::view}},
      {"GatherND", {Kind::view}},
      {"ScatterND", {Kind::view}},
      {"ScatterElements", {Kind::view}},
      {"DepthToSpace", {Kind::view}},
      {"SpaceToDepth", {Kind::view}},
      {"Trilu", {Kind::view}},
      {"ConstantOfShape", {Kind::view}},
      {"Shape", {Kind::view}},
      {"Size", {Kind::view}},
      {"Range", {Kind::view}},
      {"Equal", {Kind::view}},
      {"Less", {Kind::view}},
      {"Greater", {Kind::view}},
      {"LessOrEqual", {Kind::view}},
      {"GreaterOrEqual", {Kind::view}},
      {"Not", {Kind::view}},
      {"And", {Kind::view}},
      {"Or", {Kind::view}},
      {"ArgMax", {Kind::view}},
      {"ArgMin", {Kind::view}},
      {"NonZero", {Kind::view}},
      {"OneHot", {Kind::view}},
      {"TopK", {Kind::view}},
      {"Constant", {Kind::view}},
  };
  return table;
}

bool is_floating(int elem_type) {
  using T = onnx::TensorProto;
  return elem_type == T::FLOAT || elem_type == T::FLOAT16 || elem_type == T::BFLOAT16 || elem_type == T::DOUBLE;
}

// A value's type and shape as inference left it.
struct ValueType {
  int elem_type = 0;
  std::vector<std::int64_t> dims;
  bool known = false;  // every dimension has a value
};

double elements(const std::vector<std::int64_t>& dims) {
  double n = 1;
  for (const std::int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

ValueType value_type(const onnx::TypeProto& type) {
  ValueType v;
  if (!type.has_tensor_type()) return v;
  v.elem_type = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return v;
  v.known = true;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) {
      v.known = false;
      v.dims.push_back(-1);
    } else {
      v.dims.push_back(d.dim_value());
    }
  }
  return v;
}

class OnnxReader {
 public:
  OnnxReader(std::string source, const OnnxBindings& bindings) : source_(std::move(source)), bindings_(bindings) {}

  Workload read(std::string_view bytes) {
    if (bytes.size() > kMaxOnnxBytes) throw error("larger than 2 GiB − 1 bytes, protobuf's limit for one message");
    if (!model_.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      throw error(
          "not a valid ONNX model: the protobuf does not parse (the file is truncated, or is not an ONNX model)");
    if (!model_.has_graph() || model_.graph().node_size() == 0)
      throw error("the model has no graph nodes (a truncated file, or not an ONNX model)");
    check_opset();
    onnx::GraphProto& graph = *model_.mutable_graph();
    if (static_cast<std::size_t>(graph.node_size()) > kMaxOnnxNodes)
      throw error("the graph has " + std::to_string(graph.node_size()) + " nodes, more than the " +
                  std::to_string(kMaxOnnxNodes) + " trainsim reads");
    name_nodes();
    check_operators();
    sort_nodes();
    const double batch = bind_inputs();
    // Shape arithmetic that ONNX 1.12's inference does not evaluate (Slice and Range with computed
    // bounds) is folded into constants, then shapes are inferred again, until nothing changes.
    for (int round = 0;; ++round) {
      infer_shapes();
      collect_types();
      if (round == kMaxFoldRounds || !fold_integer_nodes()) break;
    }
    return build(batch);
  }

 private:
  [[nodiscard]] InputError error(const std::string& detail) const { return InputError(source_, "", detail); }
  [[nodiscard]] InputError node_error(int i, const std::string& detail) const {
    return InputError(
        source_, "",
        "node '" + names_[static_cast<std::size_t>(i)] + "' (" + model_.graph().node(i).op_type() + "): " + detail);
  }

  void check_opset() {
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ <= 0)
      throw error("the model declares no opset for the default ONNX domain (opset_import; a truncated file?)");
    const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
    if (opset_ > newest)
      throw error("the model uses ONNX opset " + std::to_string(opset_) + "; this build's libonnx knows opsets up to " +
                  std::to_string(newest) + " (export with opset_version=" + std::to_string(newest) + " or lower)");
  }

  // Layer names: the node's name, or Op_index when it has none; made unique with "#k".
  void name_nodes() {
    const auto& graph = model_.graph();
    std::set<std::string> used;
    for (const auto& in : graph.input()) used.insert(in.name());
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& n = graph.node(i);
      std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
      std::string name = base;
      for (int k = 2; used.count(name); ++k) name = base + "#" + std::to_string(k);
      used.insert(name);
      names_.push_back(name);
    }
  }

  // Every operator is one trainsim costs, in the default domain, without subgraphs; otherwise one
  // error listing every unknown operator with its count and first node.
  void check_operators() {
    const auto& graph = model_.graph();
    struct Unknown {
      int count = 0;
      int first = 0;
    };
    std::map<std::string, Unknown> unknown;
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& n = graph.node(i);
      for (const auto& a : n.attribute())
        if (a.has_g() || a.graphs_size() > 0)
          throw node_error(i, "control flow (a subgraph in attribute '" + a.name() +
                                  "') is not supported: export the model without data-dependent control flow "
                                  "(torch.jit.trace rather than script)");
      const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
      const std::string key = default_domain ? n.op_type() : n.domain() + "." + n.op_type();
      if (default_domain && operators().count(n.op_type())) continue;
      auto [it, inserted] = unknown.emplace(key, Unknown{0, i});
      ++it->second.count;
    }
    if (unknown.empty()) return;
    std::vector<std::string> known = onnx_operator_names();
    std::string detail = "operators trainsim does not cost: ";
    bool first = true;
    for (const auto& [op, u] : unknown) {
      detail += (first ? "" : "; ") + op + " (" + std::to_string(u.count) + (u.count == 1 ? " node" : " nodes") +
                ", first '" + names_[static_cast<std::size_t>(u.first)] + "'";
      const std::string bare = op.substr(op.rfind('.') == std::string::npos ? 0 : op.rfind('.') + 1);
      if (auto near = nearest_name(bare, known); near && *near != bare) detail += "; did you mean " + *near + "?";
      detail += ")";
      first = false;
    }
    detail +=
        ". Export with standard ONNX operators (torch.onnx.export with operator_export_type ONNX and no custom "
        "domains), or "
        "describe the model in the layer-graph format; workloads/README.md (ONNX models) lists the operators ONNX "
        "import costs";
    throw error(detail);
  }

  // Kahn's algorithm over value names: the nodes in an order where every input is produced
  // first (the file's order when it is already one). Rejects a value produced twice, an input
  // nothing produces, and cycles, naming the nodes on one.
  void sort_nodes() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    const int n = graph.node_size();
    std::set<std::string> given;
    for (const auto& t : graph.initializer()) given.insert(t.name());
    for (const auto& in : graph.input()) given.insert(in.name());
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
      for (const auto& out : graph.node(i).output()) {
        if (out.empty()) continue;
        if (given.count(out)) throw node_error(i, "its output '" + out + "' is also a graph input or initializer");
        auto [it, inserted] = producer.emplace(out, i);
        if (!inserted)
          throw node_error(i, "its output '" + out + "' is also produced by node '" +
                                  names_[static_cast<std::size_t>(it->second)] + "'");
      }
    std::vector<std::vector<int>> consumers(static_cast<std::size_t>(n));
    std::vector<int> pending(static_cast<std::size_t>(n), 0);
    std::vector<std::vector<int>> parents(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      for (const auto& in : graph.node(i).input()) {
        if (in.empty() || given.count(in)) continue;
        auto it = producer.find(in);
        if (it == producer.end())
          throw node_error(i, "its input '" + in + "' is produced by no node, initializer or graph input");
        consumers[static_cast<std::size_t>(it->second)].push_back(i);
        parents[static_cast<std::size_t>(i)].push_back(it->second);
        ++pending[static_cast<std::size_t>(i)];
      }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < n; ++i)
      if (pending[static_cast<std::size_t>(i)] == 0) ready.push(i);
    std::vector<int> order;
    while (!ready.empty()) {
      const int v = ready.top();
      ready.pop();
      order.push_back(v);
      for (const int c : consumers[static_cast<std::size_t>(v)])
        if (--pending[static_cast<std::size_t>(c)] == 0) ready.push(c);
    }
    if (static_cast<int>(order.size()) < n) report_cycle(pending, parents);
    // Reorder the nodes (and their names) so that shape inference sees producers first.
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    std::vector<std::string> names;
    for (const int i : order) {
      *sorted.Add() = graph.node(i);
      names.push_back(names_[static_cast<std::size_t>(i)]);
    }
    graph.mutable_node()->Swap(&sorted);
    names_ = std::move(names);
  }

  // Walks back from a node left unsorted through unsorted parents until a node repeats: the
  // nodes from its first visit on form a cycle.
  [[noreturn]] void report_cycle(const std::vector<int>& pending, const std::vector<std::vector<int>>& parents) const {
    int v = 0;
    while (pending[static_cast<std::size_t>(v)] == 0) ++v;
    std::vector<int> path;
    std::map<int, std::size_t> seen;
    while (!seen.count(v)) {
      seen[v] = path.size();
      path.push_back(v);
      for (const int p : parents[static_cast<std::size_t>(v)])
        if (pending[static_cast<std::size_t>(p)] > 0) {
          v = p;
          break;
        }
    }
    // `path` runs from consumer to producer: read it backwards for the forward direction.
    std::string cycle;
    for (std::size_t k = path.size(); k-- > seen[v];) cycle += "'" + names_[static_cast<std::size_t>(path[k])] + "' → ";
    cycle += "'" + names_[static_cast<std::size_t>(path.back())] + "'";
    throw InputError(source_, "",
                     "node '" + names_[static_cast<std::size_t>(v)] + "' (" + model_.graph().node(v).op_type() +
                         "): the graph has a cycle: " + cycle);
  }

  // What binding the graph inputs' dimensions found so far.
  struct InputBinding {
    std::optional<std::int64_t> static_batch;     // the first static dimension 0
    bool dynamic_batch = false;                   // some dimension 0 took the bound batch
    bool used_sequence = false;                   // some dimension took sequence_length
    bool used_image = false;                      // some dimension took image_size
    std::map<std::string, std::int64_t> symbols;  // dim_param → value, so one name gets one value
  };

  // Dimension 1 of a rank-2 or rank-3 input takes sequence_length; 2 and 3 of a rank-4 one, image_size.
  static bool sequence_dimension(int k, int rank) { return k == 1 && (rank == 2 || rank == 3); }
  static bool image_dimension(int k, int rank) { return (k == 2 || k == 3) && rank == 4; }

  // The value of dynamic dimension k (named `symbol`, or unnamed) of a graph input of rank `rank`:
  // its binding by name, the value the name already took, the batch, the sequence length or the
  // image size, in that order. The error (at `where`) says which binding would resolve it.
  std::int64_t dynamic_dimension(const std::string& symbol, int k, int rank, const std::string& where,
                                 InputBinding& b) const {
    if (!symbol.empty() && bindings_.dims.count(symbol)) return bindings_.dims.at(symbol);
    if (!symbol.empty() && b.symbols.count(symbol)) return b.symbols.at(symbol);
    if (k == 0) {
      b.dynamic_batch = true;
      return bindings_.batch;
    }
    if (sequence_dimension(k, rank) && bindings_.sequence_length) {
      b.used_sequence = true;
      return *bindings_.sequence_length;
    }
    if (image_dimension(k, rank) && bindings_.image_size) {
      b.used_image = true;
      return *bindings_.image_size;
    }
    const std::string named = symbol.empty() ? "" : " '" + symbol + "'";
    std::string hint = sequence_dimension(k, rank)
                           ? "give sequence_length (workload.sequence_length, or --sequence-length)"
                       : image_dimension(k, rank) ? "give image_size (workload.image_size, or --image-size)"
                                                  : "give its value in workload.onnx_dims (or --dim)";
    if (!symbol.empty() && !sequence_dimension(k, rank) && !image_dimension(k, rank))
      hint += " as {\"" + symbol + "\": N}";
    throw error(where + ": unresolved dynamic dimension" + named + "; " + hint);
  }

  // Checks the static dimensions of one graph input and gives its dynamic ones a value.
  void bind_input(onnx::ValueInfoProto& input, InputBinding& b) const {
    if (!input.type().has_tensor_type())
      throw error("graph input '" + input.name() +
                  "' is not a tensor (sequences, maps and optionals are not supported)");
    auto* tensor = input.mutable_type()->mutable_tensor_type();
    if (!tensor->has_shape()) throw error("graph input '" + input.name() + "' has no shape; export it with its rank");
    const int rank = tensor->shape().dim_size();
    for (int k = 0; k < rank; ++k) {
      auto* d = tensor->mutable_shape()->mutable_dim(k);
      const std::string where = "graph input '" + input.name() + "', dimension " + std::to_string(k);
      if (d->has_dim_value()) {
        if (d->dim_value() < 1 || d->dim_value() > kMaxDim)
          throw error(where + ": size " + std::to_string(d->dim_value()) + " is not in [1, " + std::to_string(kMaxDim) +
                      "]");
        if (k == 0) b.static_batch = b.static_batch.value_or(d->dim_value());
        continue;
      }
      const std::string symbol = d->has_dim_param() ? d->dim_param() : "";
      const std::int64_t value = dynamic_dimension(symbol, k, rank, where, b);
      if (!symbol.empty()) b.symbols[symbol] = value;
      d->clear_dim_param();
      d->set_dim_value(value);
    }
  }

  // Gives every dynamic dimension of the graph inputs a value; returns the batch the totals are
  // divided by (the bound batch, or the file's static one).
  double bind_inputs() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    std::set<std::string> initializers;
    for (const auto& t : graph.initializer()) initializers.insert(t.name());
    InputBinding b;
    for (auto& input : *graph.mutable_input())
      if (!initializers.count(input.name())) bind_input(input, b);
    if (bindings_.sequence_length && !b.used_sequence)
      throw InputError("model", "",
                       "'" + source_ +
                           "' has no dynamic sequence dimension (dimension 1 of a rank-2 or rank-3 input) for a "
                           "sequence_length; export it with dynamic_axes");
    if (bindings_.image_size && !b.used_image)
      throw InputError("model", "",
                       "'" + source_ +
                           "' has no dynamic image dimensions (dimensions 2 and 3 of a rank-4 input) for an "
                           "image_size; export it with dynamic_axes");
    if (b.dynamic_batch) return static_cast<double>(bindings_.batch);
    return static_cast<double>(b.static_batch.value_or(1));
  }

  void infer_shapes() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    graph.clear_value_info();  // stale or symbolic: inference recomputes every value's type
    for (auto& out : *graph.mutable_output())
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/true);
      onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      std::string what = e.what();
      // ONNX's messages name the node as "(op_type:X, node name: Y)"; keep them as they are.
      throw error("ONNX shape inference failed: " + what);
    }
  }

  void collect_types() {
    const auto& graph = model_.graph();
    types_.clear();
    initializer_names_.clear();
    for (const auto& t : graph.initializer()) {
      ValueType v;
      v.elem_type = t.data_type();
      v.known = true;
      for (const auto d : t.dims()) {
        if (d < 0 || d > kMaxDim)
          throw error("initializer '" + t.name() + "' has a dimension " + std::to_string(d) + " outside [0, 2^31)");
        v.dims.push_back(d);
      }
      types_[t.name()] = v;
      initializer_names_.insert(t.name());
    }
    for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()})
      for (const auto& vi : *list)
        if (!initializer_names_.count(vi.name())) types_[vi.name()] = value_type(vi.type());
  }

  // ---- Folding integer shape arithmetic ----
  // torch.onnx.export computes the sizes of dynamic axes at run time: Shape → Gather → Unsqueeze
  // → Concat → Slice / Range / Reshape. ONNX 1.12 propagates some of it (data propagation) but
  // not into Slice's or Range's bounds, so a model with a dynamic sequence leaves the position
  // ids and causal masks without shapes. With every input dimension bound these values are
  // constants: evaluate the integer nodes whose inputs are known and turn their outputs into
  // initializers. Only small integer tensors are evaluated (kMaxFoldElements).

  static constexpr int kMaxFoldRounds = 16;
  static constexpr std::size_t kMaxFoldElements = 1 << 20;    // per tensor
  static constexpr std::size_t kMaxFoldedElements = 1 << 24;  // all folded tensors together (128 MiB)

  struct IntTensor {
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> values;
    int elem_type = onnx::TensorProto::INT64;
  };

  static std::optional<IntTensor> int_tensor(const onnx::TensorProto& t) {
    using TP = onnx::TensorProto;
    if (t.data_type() != TP::INT64 && t.data_type() != TP::INT32) return std::nullopt;
    if (t.data_location() == TP::EXTERNAL || t.has_segment()) return std::nullopt;
    IntTensor r;
    r.elem_type = t.data_type();
    double n = 1;
    for (const auto d : t.dims()) {
      if (d < 0) return std::nullopt;
      r.dims.push_back(d);
      n *= static_cast<double>(d);
    }
    if (n > static_cast<double>(kMaxFoldElements)) return std::nullopt;
    const auto count = static_cast<std::size_t>(n);
    if (t.has_raw_data()) {
      const std::size_t width = t.data_type() == TP::INT64 ? 8 : 4;
      if (t.raw_data().size() != count * width) return std::nullopt;
      for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t u = 0;
        for (std::size_t b = 0; b < width; ++b)
          u |= static_cast<std::uint64_t>(static_cast<unsigned char>(t.raw_data()[i * width + b])) << (8 * b);
        r.values.push_back(width == 8 ? static_cast<std::int64_t>(u)
                                      : static_cast<std::int32_t>(static_cast<std::uint32_t>(u)));
      }
    } else if (t.data_type() == TP::INT64) {
      r.values.assign(t.int64_data().begin(), t.int64_data().end());
    } else {
      r.values.assign(t.int32_data().begin(), t.int32_data().end());
    }
    if (r.values.size() != count) return std::nullopt;
    return r;
  }

  // A node's inputs among the integer values known so far.
  struct KnownInputs {
    const onnx::NodeProto& node;
    const std::map<std::string, IntTensor>& known;
    // Input k's value; null when the node has no input k or its value is not known.
    const IntTensor* operator()(int k) const {
      if (k >= node.input_size() || node.input(k).empty()) return nullptr;
      auto it = known.find(node.input(k));
      return it == known.end() ? nullptr : &it->second;
    }
  };

  static std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    return std::nullopt;
  }

  // A rank-1 INT64 tensor of `v`.
  static IntTensor int_vector(std::vector<std::int64_t> v) {
    IntTensor t;
    t.dims = {static_cast<std::int64_t>(v.size())};
    t.values = std::move(v);
    return t;
  }

  static bool rank1(const IntTensor* t) { return t && t->dims.size() <= 1; }

  // Constant: a tensor, one integer or a list of integers.
  static std::optional<IntTensor> evaluate_constant(const onnx::NodeProto& n) {
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) return int_tensor(a.t());
      if (a.name() == "value_int") return IntTensor{{}, {a.i()}, onnx::TensorProto::INT64};
      if (a.name() == "value_ints") return int_vector(std::vector<std::int64_t>(a.ints().begin(), a.ints().end()));
    }
    return std::nullopt;
  }

  // Shape (the dimensions from start to end) and Size (their product) of an input of known shape.
  std::optional<IntTensor> evaluate_shape(const onnx::NodeProto& n) const {
    const ValueType* t = n.input_size() > 0 ? type_of(n.input(0)) : nullptr;
    if (!t || !t->known) return std::nullopt;
    if (n.op_type() == "Size")
      return IntTensor{{}, {static_cast<std::int64_t>(elements(t->dims))}, onnx::TensorProto::INT64};
    const auto rank = static_cast<std::int64_t>(t->dims.size());
    std::int64_t start = int_attribute(n, "start", 0), end = int_attribute(n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<std::int64_t>(start, 0, rank);
    end = std::clamp<std::int64_t>(end, start, rank);
    return int_vector(std::vector<std::int64_t>(t->dims.begin() + start, t->dims.begin() + end));
  }

  // Identity, and Cast to another integer type.
  std::optional<IntTensor> evaluate_cast(const onnx::NodeProto& n, const IntTensor* x) const {
    if (!x) return std::nullopt;
    IntTensor r = *x;
    if (n.op_type() == "Cast") {
      const std::int64_t to = int_attribute(n, "to", 0);
      if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32) return std::nullopt;
      r.elem_type = static_cast<int>(to);
    }
    return r;
  }

  // Squeeze: drops the listed axes (every axis of size 1 when none is listed).
  static IntTensor squeezed(const IntTensor& x, const std::vector<std::int64_t>& axes) {
    IntTensor r = x;
    r.dims.clear();
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    for (std::int64_t k = 0; k < rank; ++k) {
      const bool listed =
          std::any_of(axes.begin(), axes.end(), [&](std::int64_t a) { return a == k || a + rank == k; });
      if (!(listed || (axes.empty() && x.dims[static_cast<std::size_t>(k)] == 1)))
        r.dims.push_back(x.dims[static_cast<std::size_t>(k)]);
    }
    return r;
  }

  // Unsqueeze: inserts an axis of size 1 at each listed position of the result.
  static std::optional<IntTensor> unsqueezed(const IntTensor& x, const std::vector<std::int64_t>& axes) {
    const auto rank = static_cast<std::int64_t>(x.dims.size() + axes.size());
    std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
    for (std::int64_t a : axes) {
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) return std::nullopt;
      inserted[static_cast<std::size_t>(a)] = true;
    }
    IntTensor r = x;
    r.dims.clear();
    std::size_t next = 0;
    for (std::int64_t k = 0; k < rank; ++k) {
      if (inserted[static_cast<std::size_t>(k)])
        r.dims.push_back(1);
      else if (next < x.dims.size())
        r.dims.push_back(x.dims[next++]);
      else
        return std::nullopt;
    }
    return r;
  }

  // Squeeze and Unsqueeze, their axes an attribute (opset < 13) or the second input.
  static std::optional<IntTensor> evaluate_squeeze(const onnx::NodeProto& n, const KnownInputs& in) {
    const IntTensor* x = in(0);
    if (!x) return std::nullopt;
    std::vector<std::int64_t> axes;
    if (auto a = ints_attribute(n, "axes"))
      axes = *a;
    else if (const IntTensor* given = in(1))
      axes = given->values;
    else if (n.op_type() == "Unsqueeze")
      return std::nullopt;
    if (n.op_type() == "Squeeze") return squeezed(*x, axes);
    return unsqueezed(*x, axes);
  }

  // Gather along axis 0 of a vector.
  std::optional<IntTensor> evaluate_gather(const onnx::NodeProto& n, const KnownInputs& in) const {
    const IntTensor *x = in(0), *idx = in(1);
    if (!rank1(x) || !idx || x->dims.size() != 1 || int_attribute(n, "axis", 0) != 0) return std::nullopt;
    IntTensor r;
    r.elem_type = x->elem_type;
    r.dims = idx->dims;
    for (std::int64_t i : idx->values) {
      if (i < 0) i += static_cast<std::int64_t>(x->values.size());
      if (i < 0 || i >= static_cast<std::int64_t>(x->values.size())) return std::nullopt;
      r.values.push_back(x->values[static_cast<std::size_t>(i)]);
    }
    return r;
  }

  // Concat of vectors.
  static std::optional<IntTensor> evaluate_concat(const onnx::NodeProto& n, const KnownInputs& in) {
    std::vector<std::int64_t> v;
    for (int k = 0; k < n.input_size(); ++k) {
      const IntTensor* x = in(k);
      if (!x || x->dims.size() != 1) return std::nullopt;
      v.insert(v.end(), x->values.begin(), x->values.end());
    }
    if (v.size() > kMaxFoldElements) return std::nullopt;
    return int_vector(std::move(v));
  }

  // Add, Sub, Mul and Div of two vectors or scalars (one of them may broadcast).
  static std::optional<IntTensor> evaluate_arithmetic(const std::string& op, const IntTensor* a, const IntTensor* b) {
    if (!rank1(a) || !rank1(b)) return std::nullopt;
    const std::size_t count = std::max(a->values.size(), b->values.size());
    if ((a->values.size() != count && a->values.size() != 1) || (b->values.size() != count && b->values.size() != 1))
      return std::nullopt;
    IntTensor r;
    r.elem_type = a->elem_type;
    r.dims = a->values.size() == count ? a->dims : b->dims;
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t x = a->values[a->values.size() == 1 ? 0 : i], y = b->values[b->values.size() == 1 ? 0 : i];
      if (std::abs(x) > kMaxDim || std::abs(y) > kMaxDim) return std::nullopt;  // no overflow in the products
      if (op == "Div" && y == 0) return std::nullopt;
      r.values.push_back(op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y);
    }
    return r;
  }

  // Range of scalars start, limit and delta.
  static std::optional<IntTensor> evaluate_range(const KnownInputs& in) {
    const IntTensor *start = in(0), *limit = in(1), *delta = in(2);
    if (!start || !limit || !delta || start->values.size() != 1 || limit->values.size() != 1 ||
        delta->values.size() != 1)
      return std::nullopt;
    const std::int64_t s0 = start->values[0], l0 = limit->values[0], d0 = delta->values[0];
    if (d0 == 0 || std::abs(s0) > kMaxDim || std::abs(l0) > kMaxDim) return std::nullopt;
    const double count = std::max(0.0, std::ceil(static_cast<double>(l0 - s0) / static_cast<double>(d0)));
    if (count > static_cast<double>(kMaxFoldElements)) return std::nullopt;
    std::vector<std::int64_t> v;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i) v.push_back(s0 + i * d0);
    IntTensor r = int_vector(std::move(v));
    r.elem_type = start->elem_type;
    return r;
  }

  // Slice of a vector with scalar starts and ends, along axis 0 with step 1.
  static std::optional<IntTensor> evaluate_slice(const KnownInputs& in) {
    const IntTensor* x = in(0);
    if (!x || x->dims.size() != 1) return std::nullopt;
    const IntTensor *st = in(1), *en = in(2);
    if (!(st && en && st->values.size() == 1 && en->values.size() == 1)) return std::nullopt;
    std::int64_t begin = st->values[0], end = en->values[0];
    if (const IntTensor* ax = in(3); ax && (ax->values.size() != 1 || (ax->values[0] != 0 && ax->values[0] != -1)))
      return std::nullopt;
    if (const IntTensor* sp = in(4); sp && (sp->values.size() != 1 || sp->values[0] != 1)) return std::nullopt;
    const auto len = static_cast<std::int64_t>(x->values.size());
    if (begin < 0) begin += len;
    if (end < 0) end += len;
    begin = std::clamp<std::int64_t>(begin, 0, len);
    end = std::clamp<std::int64_t>(end, begin, len);
    IntTensor r = int_vector(std::vector<std::int64_t>(x->values.begin() + begin, x->values.begin() + end));
    r.elem_type = x->elem_type;
    return r;
  }

  // The value of one integer node's output from its inputs' values (nullopt: not evaluated).
  std::optional<IntTensor> evaluate(const onnx::NodeProto& n, const std::map<std::string, IntTensor>& known) const {
    const KnownInputs in{n, known};
    const std::string& op = n.op_type();
    if (op == "Constant") return evaluate_constant(n);
    if (op == "Shape" || op == "Size") return evaluate_shape(n);
    if (op == "Identity" || op == "Cast") return evaluate_cast(n, in(0));
    if (op == "Unsqueeze" || op == "Squeeze") return evaluate_squeeze(n, in);
    if (op == "Gather") return evaluate_gather(n, in);
    if (op == "Concat") return evaluate_concat(n, in);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return evaluate_arithmetic(op, in(0), in(1));
    if (op == "Range") return evaluate_range(in);
    if (op == "Slice") return evaluate_slice(in);
    return std::nullopt;
  }

  // One pass over the nodes: integer outputs whose value can be evaluated become initializers and
  // their nodes go. True when anything was folded.
  bool fold_integer_nodes() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    std::map<std::string, IntTensor> known;
    for (const auto& t : graph.initializer())
      if (auto v = int_tensor(t)) known[t.name()] = std::move(*v);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    std::vector<std::string> kept_names;
    bool folded = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& n = graph.node(i);
      std::optional<IntTensor> value;
      if (n.output_size() == 1 && !n.output(0).empty()) {
        const ValueType* out = type_of(n.output(0));
        const bool integer_out =
            n.op_type() == "Constant" || n.op_type() == "Shape" || n.op_type() == "Size" ||
            (out && (out->elem_type == onnx::TensorProto::INT64 || out->elem_type == onnx::TensorProto::INT32));
        if (integer_out) value = evaluate(n, known);
      }
      if (value && (folded_elements_ += value->values.size()) > kMaxFoldedElements) value.reset();
      if (!value) {
        *kept.Add() = n;
        kept_names.push_back(names_[static_cast<std::size_t>(i)]);
        continue;
      }
      onnx::TensorProto* t = graph.add_initializer();
      t->set_name(n.output(0));
      t->set_data_type(value->elem_type);
      for (const auto d : value->dims) t->add_dims(d);
      if (value->elem_type == onnx::TensorProto::INT64) {
        for (const auto v : value->values) t->add_int64_data(v);
      } else {
        for (const auto v : value->values) t->add_int32_data(static_cast<std::int32_t>(v));
      }
      known[n.output(0)] = std::move(*value);
      folded = folded || n.op_type() != "Constant";
    }
    graph.mutable_node()->Swap(&kept);
    names_ = std::move(kept_names);
    return folded;
  }

  const ValueType* type_of(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? nullptr : &it->second;
  }

  // A floating-point input's known shape; the error names the node when inference left it open.
  const ValueType& float_shape(int i, const std::string& value) const {
    const ValueType* t = type_of(value);
    if (!t || !t->known) throw node_error(i, "ONNX could not infer the shape of '" + value + "'");
    return *t;
  }

  bool is_parameter(const std::string& value) const {
    if (!initializer_names_.count(value)) return false;
    const ValueType& t = types_.at(value);
    return is_floating(t.elem_type) && !t.dims.empty();
  }

  std::int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) const {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return fallback;
  }

  // What build() carries from node to node.
  struct GraphWalk {
    std::unordered_map<std::string, std::string> layer_of;  // value → the layer that produced it
    std::set<std::string> counted;                          // parameters already counted
    double total_params = 0;
    std::vector<std::vector<std::string>> layer_outputs;  // per layer of the workload, the values it produces
    std::set<std::string> saved;                          // values some backward reads
  };

  // The per-sample shape drops the batch when it leads.
  static std::vector<std::int64_t> per_sample(const std::vector<std::int64_t>& dims, double batch) {
    if (!dims.empty() && static_cast<double>(dims.front()) == batch)
      return std::vector<std::int64_t>(dims.begin() + 1, dims.end());
    return dims;
  }

  // A graph input (not an initializer) as a data layer.
  void add_input_layer(const onnx::ValueInfoProto& input, double batch, GraphWalk& walk, Workload& w) const {
    const ValueType& t = types_.at(input.name());
    LayerCost l;
    l.name = input.name();
    l.type = "input";
    l.op_class = OpClass::data;
    l.output_shape = per_sample(t.dims, batch);
    l.output_elements = elements(t.dims) / batch;
    walk.layer_of[input.name()] = l.name;
    walk.layer_outputs.push_back({input.name()});
    w.layers.push_back(std::move(l));
  }

  // A node's floating-point outputs: whether there is one, the first one's shape, all their elements.
  struct FloatOutputs {
    bool any = false;
    std::vector<std::int64_t> first_dims;
    double elements = 0;
  };

  // Node i's floating-point outputs, each of a known shape within the limits (or the error says
  // which is not).
  FloatOutputs float_outputs(int i, const onnx::NodeProto& n) const {
    FloatOutputs r;
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      const ValueType* t = type_of(out);
      if (!t) throw node_error(i, "ONNX could not infer the type of its output '" + out + "'");
      if (!is_floating(t->elem_type)) continue;
      if (!t->known)
        throw node_error(i,
                         "ONNX could not infer the shape of its output '" + out + "' (got " + dims_text(t->dims) + ")");
      for (const auto d : t->dims)
        if (d < 0 || d > kMaxDim)
          throw node_error(i, "its output '" + out + "' has shape " + dims_text(t->dims) +
                                  ": a dimension outside [0, " + std::to_string(kMaxDim) + "]");
      const double e = elements(t->dims);
      if (e > kMaxElements) throw node_error(i, "its output '" + out + "' has more than 2^53 elements");
      if (!r.any) r.first_dims = t->dims;
      r.any = true;
      r.elements += e;
    }
    return r;
  }

  // What a node's inputs bring to its layer.
  struct NodeInputs {
    std::vector<bool> param_input;  // per input: a parameter, or derived from parameters only
    bool input_grad = false;        // some activation input carries a gradient
    double params = 0;              // the parameters this node counts first
    bool has_params() const { return std::find(param_input.begin(), param_input.end(), true) != param_input.end(); }
  };

  // Node n's inputs: the layers producing them become `l`'s parents, floating-point activations add
  // to its input elements, parameters not counted before to its parameters (BatchNormalization's
  // running statistics are buffers, not parameters).
  NodeInputs read_node_inputs(const onnx::NodeProto& n, GraphWalk& walk, LayerCost& l) const {
    NodeInputs r;
    r.param_input.assign(static_cast<std::size_t>(n.input_size()), false);
    std::set<std::string> parent_set;
    for (int k = 0; k < n.input_size(); ++k) {
      const std::string& in = n.input(k);
      if (in.empty()) continue;
      if (auto it = walk.layer_of.find(in); it != walk.layer_of.end() && parent_set.insert(it->second).second)
        l.parents.push_back(it->second);
      const bool bn_buffer = n.op_type() == "BatchNormalization" && k >= 3;
      if (param_derived_.count(in)) r.param_input[static_cast<std::size_t>(k)] = true;
      if (is_parameter(in) && !bn_buffer) {
        r.param_input[static_cast<std::size_t>(k)] = true;
        if (walk.counted.insert(in).second) r.params += elements(types_.at(in).dims);
        continue;
      }
      if (needs_grad_.count(in)) r.input_grad = true;
      const ValueType* t = type_of(in);
      if (t && t->known && is_floating(t->elem_type) && !initializer_names_.count(in))
        l.input_elements += elements(t->dims);
    }
    return r;
  }

  // Node i as a layer of `w`, unless it computes no floating-point value (a constant, shape
  // arithmetic on integers). Costs are per sample.
  void add_node_layer(int i, double batch, GraphWalk& walk, Workload& w) {
    const onnx::NodeProto& n = model_.graph().node(i);
    if (n.op_type() == "Constant") return;
    const FloatOutputs outputs = float_outputs(i, n);
    if (!outputs.any) return;  // shape arithmetic on integers: no floating-point work

    LayerCost l;
    l.name = names_[static_cast<std::size_t>(i)];
    l.type = n.op_type();
    l.output_shape = per_sample(outputs.first_dims, batch);
    const NodeInputs inputs = read_node_inputs(n, walk, l);
    const bool has_params = inputs.has_params();
    cost_node(i, n, l, outputs.elements, inputs.param_input, inputs.input_grad);
    if (has_params || inputs.input_grad) save_for_backward(n, inputs.param_input, walk.saved);
    // Views share their input's storage (torch's reshape, flatten, transpose, squeeze): a saved
    // view costs nothing beyond the tensor it views.
    static const std::set<std::string, std::less<>> views{"Reshape",   "Flatten",  "Squeeze", "Unsqueeze",
                                                          "Transpose", "Identity", "Expand"};
    if (views.count(n.op_type()) && n.input_size() > 0 && n.output_size() > 0)
      alias_[n.output(0)] = storage_of(n.input(0));
    walk.total_params += inputs.params;
    if (walk.total_params > kMaxElements)
      throw node_error(i, "the model has more than 2^53 parameters up to this node");
    l.params = static_cast<std::int64_t>(inputs.params);
    // Per sample.
    l.flops_fwd /= batch;
    l.flops_bwd_input /= batch;
    l.flops_bwd_weight /= batch;
    l.input_elements /= batch;
    l.output_elements = outputs.elements / batch;
    // A view of a parameter alone (a tied weight transposed for the LM head) is still a weight.
    const bool weight_view = operators().at(n.op_type()).kind == Kind::view && has_params && !inputs.input_grad;
    for (const auto& out : n.output())
      if (!out.empty()) {
        walk.layer_of[out] = l.name;
        if (weight_view) param_derived_.insert(out);
        if (has_params || inputs.input_grad) needs_grad_.insert(out);
      }
    walk.layer_outputs.emplace_back(n.output().begin(), n.output().end());
    w.layers.push_back(std::move(l));
  }

  // Saved activations: each value some backward reads, counted once, at the layer producing it.
  void count_saved_activations(const GraphWalk& walk, double batch, Workload& w) const {
    for (std::size_t k = 0; k < w.layers.size(); ++k) {
      double e = 0;
      for (const auto& out : walk.layer_outputs[k])
        if (walk.saved.count(out)) {
          const ValueType* t = type_of(out);
          if (t && t->known && is_floating(t->elem_type)) e += elements(t->dims);
        }
      w.layers[k].saved_elements = e / batch;
    }
  }

  Workload build(double batch) {
    const auto& graph = model_.graph();
    Workload w;
    w.name = graph.name().empty() ? std::filesystem::path(source_).stem().string() : graph.name();
    w.source = source_;
    GraphWalk walk;
    for (const auto& input : graph.input())
      if (!initializer_names_.count(input.name())) add_input_layer(input, batch, walk, w);
    for (int i = 0; i < graph.node_size(); ++i) add_node_layer(i, batch, walk, w);
    count_saved_activations(walk, batch, w);
    return w;
  }

  // The value whose storage `value` shares (itself unless it is a view).
  std::string storage_of(const std::string& value) const {
    auto it = alias_.find(value);
    return it == alias_.end() ? value : it->second;
  }

  // The values the backward of node `n` reads, following autograd's derivative formulas
  // (PyTorch's derivatives.yaml): a product keeps each activation operand the other operand's
  // gradient needs; Relu, Sigmoid, Tanh, Softmax, Exp and Sqrt keep their output; Erf, Pow, GELU,
  // the normalisations and max pooling keep their input; sums, views, average pooling and
  // products by constants keep nothing. Parameters are not activations and are not counted.
  void save_for_backward(const onnx::NodeProto& n, const std::vector<bool>& param_input,
                         std::set<std::string>& saved_values) const {
    struct Saver {
      const OnnxReader& reader;
      std::set<std::string>& into;
      void insert(const std::string& value) const { into.insert(reader.storage_of(value)); }
    } saved{*this, saved_values};
    static const std::set<std::string, std::less<>> keeps_output{
        "Relu", "Sigmoid", "Tanh", "Softmax",    "LogSoftmax", "Exp",       "Sqrt",
        "Elu",  "Selu",    "Celu", "Reciprocal", "Dropout",    "ReduceMax", "ReduceMin"};
    static const std::set<std::string, std::less<>> keeps_input{"Erf",
                                                                "Pow",
                                                                "Gelu",
                                                                "LeakyRelu",
                                                                "PRelu",
                                                                "Log",
                                                                "Softplus",
                                                                "Softsign",
                                                                "Mish",
                                                                "HardSwish",
                                                                "HardSigmoid",
                                                                "Abs",
                                                                "Clip",
                                                                "Sin",
                                                                "Cos",
                                                                "MaxPool",
                                                                "LpPool",
                                                                "GlobalMaxPool",
                                                                "ReduceMax",
                                                                "ReduceMin",
                                                                "ReduceL2",
                                                                "ReduceL1",
                                                                "ReduceProd",
                                                                "ReduceLogSumExp",
                                                                "ReduceSumSquare",
                                                                "Max",
                                                                "Min",
                                                                "SoftmaxCrossEntropyLoss",
                                                                "NegativeLogLikelihoodLoss",
                                                                "BatchNormalization",
                                                                "LayerNormalization",
                                                                "InstanceNormalization",
                                                                "LpNormalization",
                                                                "MeanVarianceNormalization",
                                                                "LRN"};
    auto activation = [&](int k) {
      return k < n.input_size() && !n.input(k).empty() && !param_input[static_cast<std::size_t>(k)] &&
             !initializer_names_.count(n.input(k));
    };
    auto needs = [&](int k) {
      return k < n.input_size() && !n.input(k).empty() &&
             (param_input[static_cast<std::size_t>(k)] || needs_grad_.count(n.input(k)) > 0);
    };
    const std::string& op = n.op_type();
    if (keeps_output.count(op)) {
      if (n.output_size() > 0) saved.insert(n.output(0));
      if (op == "ReduceMax" || op == "ReduceMin") saved.insert(n.input(0));
      return;
    }
    if (keeps_input.count(op)) {
      if (activation(0)) saved.insert(n.input(0));
      return;
    }
    const Kind kind = operators().at(op).kind;
    const bool product =
        kind == Kind::conv || kind == Kind::conv_transpose || kind == Kind::gemm || kind == Kind::matmul || op == "Mul";
    if (product) {
      // d(a·b)/da needs b and d(a·b)/db needs a.
      for (int k = 0; k < std::min(n.input_size(), 2); ++k)
        if (activation(k) && needs(1 - k)) saved.insert(n.input(k));
      return;
    }
    if (op == "Div" && activation(1)) {
      // d(a/b)/db = −a/b²: both operands (the quotient is recomputed from them).
      if (activation(0)) saved.insert(n.input(0));
      saved.insert(n.input(1));
    }
  }

  // Forward and backward FLOPs, class and saved elements of one node (for the whole batch).
  void cost_node(int i, const onnx::NodeProto& n, LayerCost& l, double out_elements,
                 const std::vector<bool>& param_input, bool input_grad) const {
    const OpInfo& op = operators().find(n.op_type())->second;
    auto grad = [&](int k) {  // does operand k need a gradient (a parameter, or an activation that carries one)?
      if (k >= n.input_size() || n.input(k).empty()) return false;
      return param_input[static_cast<std::size_t>(k)] || needs_grad_.count(n.input(k)) > 0;
    };
    auto any_param = [&] { return std::find(param_input.begin(), param_input.end(), true) != param_input.end(); };
    switch (op.kind) {
      case Kind::conv:
      case Kind::conv_transpose: {
        if (n.input_size() < 2) throw node_error(i, n.op_type() + " needs an input and a weight");
        const ValueType& wt = float_shape(i, n.input(1));
        if (wt.dims.size() < 3)
          throw node_error(i, "its weight '" + n.input(1) + "' has shape " + dims_text(wt.dims) +
                                  "; expected [Cout, Cin/groups, k...]");
        // Conv: W is [Cout, Cin/g, k...], each output element a dot product of Cin/g·Πk terms.
        // ConvTranspose: W is [Cin, Cout/g, k...], each input element scattered to Cout/g·Πk outputs.
        const double taps = elements(std::vector<std::int64_t>(wt.dims.begin() + 1, wt.dims.end()));
        const double anchor = op.kind == Kind::conv ? out_elements : elements(float_shape(i, n.input(0)).dims);
        l.op_class = OpClass::conv;
        l.flops_fwd = 2 * anchor * taps;
        l.flops_bwd_input = grad(0) ? l.flops_fwd : 0;
        l.flops_bwd_weight = grad(1) ? l.flops_fwd : 0;
        return;
      }
      case Kind::gemm:
      case Kind::matmul: {
        if (n.input_size() < 2) throw node_error(i, n.op_type() + " needs two inputs");
        const ValueType& a = float_shape(i, n.input(0));
        if (a.dims.empty()) throw node_error(i, "its input '" + n.input(0) + "' is a scalar");
        // K: the contracted dimension, read from A (Gemm may transpose it).
        std::int64_t k = a.dims.back();
        if (op.kind == Kind::gemm && int_attribute(n, "transA", 0) != 0) k = a.dims.front();
        // A product of two activations (attention's QKᵀ and PV) is batched and small-K: the
        // attention class; one with a parameter operand is a layer's GEMM.
        l.op_class = any_param() ? OpClass::matmul : OpClass::attention;
        l.flops_fwd = 2 * out_elements * static_cast<double>(k);
        // dA = dY·Bᵀ and dB = Aᵀ·dY each cost the forward again.
        l.flops_bwd_input = grad(0) ? l.flops_fwd : 0;
        const double db = grad(1) ? l.flops_fwd : 0;
        if (param_input[1])
          l.flops_bwd_weight = db;
        else
          l.flops_bwd_input += db;
        if (op.kind == Kind::gemm && grad(2) && param_input.size() > 2 && param_input[2])
          l.flops_bwd_weight += out_elements;
        return;
      }
      case Kind::gather:
        if (param_input[0]) {
          // An embedding table: no arithmetic forward; the weight gradient scatter-adds every
          // output element (layer_costs.cpp's embedding).
          l.op_class = OpClass::embedding;
          l.flops_bwd_weight = out_elements;
        } else {
          l.op_class = OpClass::reshape;
        }
        return;
      case Kind::norm:
        l.op_class = OpClass::normalization;
        l.flops_fwd = kNorm * out_elements;
        l.flops_bwd_input = input_grad ? l.flops_fwd : 0;
        // Affine scale and shift: Σ dy·x̂ and Σ dy, 2 FLOPs per element.
        if (any_param()) l.flops_bwd_weight = 2 * out_elements;
        return;
      case Kind::elementwise:
        l.op_class = OpClass::elementwise;
        l.flops_fwd = op.flops_per_element * out_elements;
        l.flops_bwd_input = input_grad ? l.flops_fwd : 0;
        // A bias or scale read from a parameter: its gradient sums dy over the broadcast.
        if (any_param()) l.flops_bwd_weight = out_elements;
        return;
      case Kind::pool: {
        std::int64_t window = 1;
        for (const auto& a : n.attribute())
          if (a.name() == "kernel_shape")
            for (const auto k : a.ints()) window *= std::clamp<std::int64_t>(k, 1, kMaxDim);
        l.op_class = OpClass::pooling;
        l.flops_fwd = out_elements * static_cast<double>(window);
        l.flops_bwd_input = input_grad ? l.flops_fwd : 0;
        return;
      }
      case Kind::reduce:
        l.op_class = n.op_type().rfind("Global", 0) == 0 ? OpClass::pooling : OpClass::elementwise;
        l.flops_fwd = l.input_elements;
        l.flops_bwd_input = input_grad ? l.flops_fwd : 0;
        return;
      case Kind::loss:
        l.op_class = OpClass::loss;
        l.flops_fwd = kLoss * l.input_elements;
        l.flops_bwd_input = input_grad ? l.flops_fwd : 0;
        return;
      case Kind::view: l.op_class = OpClass::reshape; return;
    }
  }

  std::string source_;
  OnnxBindings bindings_;
  onnx::ModelProto model_;
  std::int64_t opset_ = 0;
  std::vector<std::string> names_;  // layer name per node, in the graph's (sorted) node order
  std::unordered_map<std::string, ValueType> types_;
  std::set<std::string> initializer_names_;
  std::size_t folded_elements_ = 0;           // integer values folded into initializers so far
  std::set<std::string> param_derived_;       // views of parameters: weights to the nodes that read them
  std::map<std::string, std::string> alias_;  // view → the value whose storage it shares
  std::set<std::string> needs_grad_;          // values that carry a gradient (read parameters, or depend on one)
};

}  // namespace

bool is_onnx_path(std::string_view path) {
  if (path.size() < 5) return false;
  std::string tail(path.substr(path.size() - 5));
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == ".onnx";
}

std::vector<std::string> onnx_operator_names() {
  std::vector<std::string> names;
  for (const auto& [name, info] : operators()) names.push_back(name);
  return names;
}

Workload parse_onnx_model(std::string_view bytes, const std::string& source_label, const OnnxBindings& bindings) {
  if (bindings.batch < 1 || bindings.batch > kMaxDim)
    throw InputError(source_label, "", "the batch must be in [1, 2^31)");
  return OnnxReader(source_label, bindings).read(bytes);
}

Workload load_onnx_workload(const std::filesystem::path& path, const OnnxBindings& bindings) {
  const std::string bytes = read_input_text(path, "ONNX model", kMaxOnnxBytes);
  return parse_onnx_model(bytes, path.string(), bindings);
}

}  // namespace trainsim::workloads
