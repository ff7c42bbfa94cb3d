// From layer specs to a Workload. The layers become a Boost.Graph adjacency list (edge = parent →
// child); Boost's strong components find cycles and name every layer on them (Boost's own
// not_a_dag exception names nothing); the forward order is Kahn's algorithm taking, among the
// ready layers, the one written first, so a file already in topological order keeps its order.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include "graph_build.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim::workloads::detail {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

std::vector<std::string> names_of(const std::vector<LayerSpec>& specs) {
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const auto& s : specs) names.push_back(s.name);
  return names;
}

// Throws naming the layers of the first cycle (in file order) when the graph has one.
void reject_cycles(const Graph& graph, const std::vector<LayerSpec>& specs) {
  std::vector<int> component(boost::num_vertices(graph));
  const int count = boost::strong_components(graph, boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, graph)));
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(count));
  for (std::size_t v = 0; v < component.size(); ++v) members[static_cast<std::size_t>(component[v])].push_back(v);
  for (std::size_t v = 0; v < specs.size(); ++v) {
    const auto& group = members[static_cast<std::size_t>(component[v])];
    const bool self_loop = boost::edge(v, v, graph).second;
    if (group.size() < 2 && !self_loop) continue;
    // Walk the cycle from v through parents inside the component, so the names read as a path.
    std::vector<std::size_t> path{v};
    std::vector<bool> seen(specs.size(), false);
    seen[v] = true;
    for (std::size_t current = v;;) {
      std::size_t next = current;
      for (auto [e, end] = boost::in_edges(current, graph); e != end; ++e) {
        const std::size_t parent = boost::source(*e, graph);
        if (component[parent] == component[v] && (!seen[parent] || parent == v)) {
          next = parent;
          if (parent == v) break;
        }
      }
      if (next == v || next == current) break;
      seen[next] = true;
      path.push_back(next);
      current = next;
    }
    // path = v, a parent of v, its parent, …: read backwards it runs along the edges.
    std::string cycle = "'" + specs[v].name + "'";
    for (auto it = path.rbegin(); it != path.rend(); ++it) cycle += " → '" + specs[*it].name + "'";
    throw specs[v].error_at("parents", "the graph has a cycle through layers " + cycle + " (" + std::to_string(group.size()) +
                                           " layer(s) on it); a layer graph must be acyclic");
  }
}

std::vector<std::size_t> forward_order(const Graph& graph) {
  const std::size_t n = boost::num_vertices(graph);
  std::vector<std::size_t> pending(n);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t v = 0; v < n; ++v) {
    pending[v] = boost::in_degree(v, graph);
    if (pending[v] == 0) ready.push(v);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e)
      if (--pending[boost::target(*e, graph)] == 0) ready.push(boost::target(*e, graph));
  }
  TRAINSIM_CHECK(order.size() == n, "forward order of an acyclic graph must contain every layer");
  return order;
}

// Sizes past these limits would overflow the next layer's 64-bit shape arithmetic or make counts
// inexact; a file can reach them with sizes that are each allowed (a flatten, a wide concat).
void check_counts(const LayerSpec& spec, const LayerEstimate& e) {
  for (const std::int64_t d : e.output)
    if (d > kMaxSize)
      throw spec.error("its output " + shape_text(e.output) + " has a dimension larger than " + std::to_string(kMaxSize));
  if (element_count(e.output) > kMaxCount)
    throw spec.error("its output " + shape_text(e.output) + " has more than 2^53 elements");
  if (e.params > kMaxCount) throw spec.error("has more than 2^53 parameters");
}

}  // namespace

Workload build_workload(std::string name, std::string source, std::vector<LayerSpec> specs) {
  if (specs.empty()) throw InputError(source, "", "the layer graph has no layers");
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto [it, inserted] = index.emplace(specs[i].name, i);
    if (!inserted)
      throw specs[i].error_at("name", "duplicate layer name (first defined at " + specs[it->second].node.pointer() + ")");
  }

  Graph graph(specs.size());
  const std::vector<std::string> all_names = names_of(specs);
  std::vector<std::vector<std::size_t>> parent_index(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    for (std::size_t j = 0; j < specs[i].parents.size(); ++j) {
      auto it = index.find(specs[i].parents[j]);
      if (it == index.end())
        throw specs[i].parent_nodes.at(j).error("layer '" + specs[i].name + "': " + unknown_name_message("parent", specs[i].parents[j], all_names));
      parent_index[i].push_back(it->second);
      boost::add_edge(it->second, i, graph);
    }
    if (const auto& tied = specs[i].tied_to; !tied.empty()) {
      auto it = index.find(tied);
      if (it == index.end()) throw specs[i].error_at("tied_to", unknown_name_message("layer", tied, all_names));
      const LayerSpec& target = specs[it->second];
      if (!has_weight_matrix(target) || !target.tied_to.empty())
        throw specs[i].error_at("tied_to", "can only share the weight of an embedding or an untied linear layer; '" + tied + "' is a " +
                                               target.type);
    }
  }
  reject_cycles(graph, specs);

  Workload workload;
  workload.name = std::move(name);
  workload.source = std::move(source);
  std::vector<Shape> outputs(specs.size());
  std::vector<Shape> weight_shapes(specs.size());
  std::vector<bool> computed(specs.size(), false);
  std::vector<bool> requires_grad(specs.size(), false);  // does this layer's output carry a gradient?
  double total_params = 0;
  for (const std::size_t i : forward_order(graph)) {
    const LayerSpec& spec = specs[i];
    std::vector<Shape> inputs;
    bool input_needs_grad = false;
    for (const std::size_t p : parent_index[i]) {
      inputs.push_back(outputs[p]);
      input_needs_grad = input_needs_grad || requires_grad[p];
    }
    Shape tied_weight;
    if (!spec.tied_to.empty()) {
      // An embedding's weight shape needs no inputs; a linear's is known once the layer is shaped.
      const std::size_t target = index.at(spec.tied_to);
      tied_weight = computed[target] ? weight_shapes[target] : weight_matrix_shape(specs[target], {});
      if (!computed[target] && tied_weight.empty())
        throw spec.error_at("tied_to", "layer '" + spec.tied_to + "' must come before this layer in the forward order");
    }
    const LayerEstimate e = estimate_layer(spec, inputs, tied_weight);
    check_counts(spec, e);
    total_params += e.params;
    if (total_params > kMaxCount) throw spec.error("the model has more than 2^53 parameters up to this layer");
    outputs[i] = e.output;
    weight_shapes[i] = weight_matrix_shape(spec, inputs);
    computed[i] = true;
    requires_grad[i] = e.has_weights || input_needs_grad;

    LayerCost cost;
    cost.name = spec.name;
    cost.type = spec.type;
    cost.op_class = e.op_class;
    cost.params = static_cast<std::int64_t>(e.params);
    cost.flops_fwd = e.flops_fwd;
    // The input gradient only matters when some input carries a gradient (autograd's rule):
    // the first convolution of a CNN, fed by the data only, computes none.
    cost.flops_bwd_input = input_needs_grad ? e.flops_bwd_internal + e.flops_bwd_edge : e.flops_bwd_internal;
    cost.flops_bwd_weight = e.flops_bwd_weight;
    for (const auto& s : inputs) cost.input_elements += element_count(s);
    cost.output_elements = element_count(e.output);
    cost.saved_elements = e.saved_elements;
    cost.heads = e.heads;
    cost.activation = e.activation;
    cost.parents = spec.parents;
    cost.output_shape = e.output;
    workload.layers.push_back(std::move(cost));
  }
  return workload;
}

}  // namespace trainsim::workloads::detail
