// Paleo's network format (TalwalkarLab/paleo, nets/*.json), read into the same layer specs as the
// layer-graph format. Mapping (workloads/README.md has the table):
//   Input {tensor: [N, H, W, C]}            → input [C, H, W]  (N, the batch, is dropped; [N, F] → [F])
//   Convolution {filter: [kh, kw, Cin, Cout], strides: [1, sh, sw, 1], padding: VALID|SAME|[ph, pw]}
//                                           → conv2d with bias (Cin = -1: taken from the input)
//   Pooling / AvgPool {ksize, strides, padding} → maxpool2d / avgpool2d (TensorFlow VALID/SAME)
//   InnerProduct {num_outputs}              → linear over the flattened sample, with bias
//   Dropout {dropout_keep_prob}             → dropout, rate = 1 − keep
//   Concatenate {dim} (NHWC)                → concat (dim 3 = channels)
//   Elementwise                             → add
//   Softmax {num_classes}                   → loss (softmax cross-entropy)
//   Block {parents, endpoint, layers}       → its layers, named "block/layer"; a layer with no
//                                             parents reads the block's parents; the block's name
//                                             as a parent means "block/endpoint"
//   ModelParallel {splits, ...}             → each layer repeated per split as "block/layer@k",
//                                             convolution filters divided by `splits`,
//                                             "x@self" = same split, "x@all" = every split
// activation_fn and normalizer_fn are accepted and, as in Paleo, not costed.
#include <map>
#include <memory>

#include "graph_build.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/workloads/layer_graph.hpp"

namespace trainsim::workloads {
namespace {

using detail::LayerSpec;
using detail::PadMode;

const std::vector<std::string> kPaleoTypes{"Input",   "Convolution", "Pooling", "AvgPool",  "InnerProduct", "Dropout",
                                           "Concatenate", "Elementwise", "Softmax", "Block", "ModelParallel"};

std::vector<std::string> paleo_keys(const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> table{
      {"Input", {"tensor"}},
      {"Convolution", {"filter", "strides", "padding", "activation_fn", "normalizer_fn"}},
      {"Pooling", {"ksize", "strides", "padding"}},
      {"AvgPool", {"ksize", "strides", "padding"}},
      {"InnerProduct", {"num_outputs", "activation_fn", "normalizer_fn"}},
      {"Dropout", {"dropout_keep_prob"}},
      {"Concatenate", {"dim"}},
      {"Elementwise", {}},
      {"Softmax", {"num_classes"}},
      {"Block", {"endpoint", "layers"}},
      {"ModelParallel", {"splits", "endpoint", "layers"}},
  };
  std::vector<std::string> keys{"parents", "type"};
  const auto& specific = table.at(type);
  keys.insert(keys.end(), specific.begin(), specific.end());
  return keys;
}

// [1, a, b, 1] → {a, b}: Paleo's NHWC window and stride vectors.
detail::Pair2 nhwc_window(const JsonNode& node) {
  node.require_array();
  if (node.size() != 4) throw node.error("expected [1, height, width, 1], got " + describe_json(node.raw()));
  return {detail::read_size(node.element(1), 1), detail::read_size(node.element(2), 1)};
}

detail::Padding read_paleo_padding(const JsonNode& node) {
  if (node.is_string()) return {node.one_of({"SAME", "VALID"}) == "SAME" ? PadMode::same : PadMode::valid, {0, 0}};
  node.require_array();
  if (node.size() != 2) throw node.error("expected \"SAME\", \"VALID\" or [pad_height, pad_width]");
  return {PadMode::explicit_size, {detail::read_size(node.element(0), 0), detail::read_size(node.element(1), 0)}};
}

// Gives `spec` its layer-graph type and that type's attributes.
template <class Attrs>
void set_layer(LayerSpec& spec, std::string type, const Attrs& attrs) {
  spec.type = std::move(type);
  spec.attrs = std::make_shared<const Attrs>(attrs);
}

// Reads one (non-block) Paleo layer into `spec`, whose name, node and parents are already set.
void read_paleo_layer(LayerSpec& spec, const std::string& paleo_type, std::int64_t splits) {
  const JsonNode& node = spec.node;
  node.allow_only(paleo_keys(paleo_type));
  if (paleo_type == "Input") {
    const JsonNode tensor = node.at("tensor");
    tensor.require_array();
    if (tensor.size() < 2) throw tensor.error("expected [batch, ...] with at least one dimension besides the batch");
    std::vector<std::int64_t> dims;
    for (const JsonNode& d : tensor.elements()) dims.push_back(detail::read_size(d, 1));
    detail::InputAttrs a;
    if (dims.size() == 4)
      a.shape = {dims[3], dims[1], dims[2]};  // NHWC → CHW
    else
      a.shape.assign(dims.begin() + 1, dims.end());
    set_layer(spec, "input", a);
  } else if (paleo_type == "Convolution") {
    const JsonNode filter = node.at("filter");
    filter.require_array();
    if (filter.size() != 4) throw filter.error("expected [kernel_height, kernel_width, in_channels, out_channels]");
    detail::Conv2dAttrs a;
    a.kernel = {detail::read_size(filter.element(0), 1), detail::read_size(filter.element(1), 1)};
    const JsonNode cin = filter.element(2);
    a.in_channels = cin.is_number() && cin.as_int() == -1 ? 0 : detail::read_size(cin, 1);
    a.out_channels = detail::read_size(filter.element(3), 1);
    if (a.out_channels % splits != 0)
      throw filter.element(3).error("out_channels " + std::to_string(a.out_channels) + " cannot be split " + std::to_string(splits) +
                                    " ways");
    a.out_channels /= splits;
    a.stride = nhwc_window(node.at("strides"));
    a.padding = read_paleo_padding(node.at("padding"));
    set_layer(spec, "conv2d", a);
  } else if (paleo_type == "Pooling" || paleo_type == "AvgPool") {
    detail::Pool2dAttrs a;
    a.kernel = nhwc_window(node.at("ksize"));
    a.stride = nhwc_window(node.at("strides"));
    a.padding = read_paleo_padding(node.at("padding"));
    set_layer(spec, paleo_type == "Pooling" ? "maxpool2d" : "avgpool2d", a);
  } else if (paleo_type == "InnerProduct") {
    detail::LinearAttrs a;
    a.out_features = detail::read_size(node.at("num_outputs"), 1);
    a.flatten_input = true;
    set_layer(spec, "linear", a);
  } else if (paleo_type == "Dropout") {
    const JsonNode keep = node.at("dropout_keep_prob");
    const double p = keep.number_in(0, 1);
    if (p <= 0) throw keep.error("must be > 0 (a keep probability of 0 drops everything)");
    detail::DropoutAttrs a;
    a.rate = 1 - p;
    set_layer(spec, "dropout", a);
  } else if (paleo_type == "Concatenate") {
    detail::ConcatAttrs a;
    a.axis = detail::read_size(node.at("dim"), 0);
    a.nhwc_axis = true;
    set_layer(spec, "concat", a);
  } else if (paleo_type == "Elementwise") {
    set_layer(spec, "add", detail::NoAttrs{});
  } else if (paleo_type == "Softmax") {
    detail::LossAttrs a;
    if (auto n = node.find("num_classes"); n && !n->is_null()) a.num_classes = detail::read_size(*n, 1);
    set_layer(spec, "loss", a);
  }
}

// "layer@k": the copy of a ModelParallel block's layer on split k.
std::string split_name(const std::string& layer, std::int64_t split) { return layer + "@" + std::to_string(split); }

struct ParentRef {
  std::string name;
  JsonNode node;
};

// How far a file may expand: ModelParallel repeats its block's layers per split and "x@all" names
// every split, so a small file could otherwise ask for billions of layers or parent links.
constexpr std::size_t kMaxExpandedEntries = 100'000;

class PaleoReader {
public:
  explicit PaleoReader(const JsonNode& layers) : layers_(layers) {}

  std::vector<LayerSpec> read() {
    // Endpoints and split counts first, so that layers may name blocks written after them.
    for (const auto& [name, node] : layers_.members()) {
      if (!node.is_object() || !node.raw().contains("type") || !node.raw().at("type").is_string()) continue;
      const std::string type = node.raw().at("type").get<std::string>();
      if (type != "Block" && type != "ModelParallel") continue;
      if (auto e = node.find("endpoint")) endpoints_[name] = name + "/" + e->as_string();
      if (type == "ModelParallel") {
        const std::int64_t splits = node.find("splits") ? node.at("splits").int_at_least(1) : 1;
        for (const auto& [sub, unused] : node.at("layers").members()) splits_[name + "/" + sub] = splits;
      }
    }
    for (const auto& [name, node] : layers_.members()) read_entry(name, node);
    return std::move(specs_);
  }

private:
  std::string type_of(const std::string& name, const JsonNode& node) {
    std::string type;
    detail::with_layer_context(name, [&] {
      node.require_object();
      const JsonNode t = node.at("type");
      type = t.as_string();
      if (std::find(kPaleoTypes.begin(), kPaleoTypes.end(), type) == kPaleoTypes.end())
        throw t.error(unknown_name_message("Paleo layer type", type, kPaleoTypes));
    });
    return type;
  }

  // Resolves a parent as Paleo does: block names → endpoints, "x@all" → every split, "x@self" → this split.
  void resolve(const std::string& raw, const JsonNode& where, std::int64_t split, std::vector<ParentRef>& out) {
    auto endpoint = [&](const std::string& n) { return endpoints_.count(n) ? endpoints_.at(n) : n; };
    if (auto at = raw.find("@all"); at != std::string::npos) {
      const std::string base = raw.substr(0, at);
      const std::int64_t n = splits_.count(base) ? splits_.at(base) : 1;
      require_room(static_cast<std::size_t>(n), where);  // before the links are made: n may be huge
      for (std::int64_t s = 0; s < n; ++s) out.push_back({split_name(endpoint(base), s), where});
    } else if (auto self = raw.find("@self"); self != std::string::npos) {
      out.push_back({split_name(endpoint(raw.substr(0, self)), split), where});
    } else {
      out.push_back({endpoint(raw), where});
    }
  }

  std::vector<ParentRef> read_parents(const std::string& name, const JsonNode& node, const std::string& prefix, std::int64_t split) {
    std::vector<ParentRef> out;
    detail::with_layer_context(name, [&] {
      for (const JsonNode& p : node.at("parents").elements()) resolve(prefix + p.as_string(), p, split, out);
    });
    return out;
  }

  // InputError at `where` when `n` more layers or parent links would pass kMaxExpandedEntries.
  void require_room(std::size_t n, const JsonNode& where) const {
    if (expanded_ + n > kMaxExpandedEntries)
      throw where.error("the network expands to more than " + std::to_string(kMaxExpandedEntries) +
                        " layers and parent links (ModelParallel repeats its layers per split; \"x@all\" names every split)");
  }

  void add_layer(const std::string& name, const JsonNode& node, const std::string& type, std::vector<ParentRef> parents,
                 std::int64_t splits) {
    require_room(1 + parents.size(), node);
    expanded_ += 1 + parents.size();
    LayerSpec spec{name, "", {}, {}, "", node, nullptr};
    for (auto& p : parents) {
      spec.parents.push_back(std::move(p.name));
      spec.parent_nodes.push_back(std::move(p.node));
    }
    detail::with_layer_context(name, [&] { read_paleo_layer(spec, type, splits); });
    specs_.push_back(std::move(spec));
  }

  void read_entry(const std::string& name, const JsonNode& node) {
    const std::string type = type_of(name, node);
    if (type != "Block" && type != "ModelParallel") {
      add_layer(name, node, type, read_parents(name, node, "", 0), 1);
      return;
    }
    std::int64_t splits = 1;
    detail::with_layer_context(name, [&] {
      node.allow_only(paleo_keys(type));
      if (type == "ModelParallel" && node.find("splits")) splits = node.at("splits").int_at_least(1);
    });
    const std::vector<ParentRef> block_parents = read_parents(name, node, "", 0);
    const bool parallel = type == "ModelParallel";
    const auto members = node.at("layers").members();
    if (members.empty()) throw node.at("layers").error("layer '" + name + "': a block needs at least one layer");
    for (std::int64_t s = 0; s < splits; ++s) {
      for (const auto& [sub, sub_node] : members) {
        const std::string full = parallel ? split_name(name + "/" + sub, s) : name + "/" + sub;
        const std::string sub_type = type_of(full, sub_node);
        if (sub_type == "Block" || sub_type == "ModelParallel")
          throw sub_node.at("type").error("layer '" + full + "': blocks cannot be nested");
        std::vector<ParentRef> parents;
        // An init-capture: clang 14 (the fuzz build's compiler) cannot capture a structured binding.
        detail::with_layer_context(full, [&layer = sub_node] { layer.at("parents").require_array(); });
        if (sub_node.at("parents").size() == 0)
          parents = block_parents;
        else
          parents = read_parents(full, sub_node, name + "/", s);
        add_layer(full, sub_node, sub_type, std::move(parents), parallel ? splits : 1);
      }
    }
  }

  JsonNode layers_;
  std::map<std::string, std::string> endpoints_;
  std::map<std::string, std::int64_t> splits_;
  std::vector<LayerSpec> specs_;
  std::size_t expanded_ = 0;  // layers and parent links made so far
};

}  // namespace

Workload parse_paleo_graph(const JsonNode& root, const std::string& source_label) {
  root.allow_only({"name", "layers"});
  std::string name = source_label;
  if (auto n = root.find("name")) name = n->as_string();
  const JsonNode layers = root.at("layers");
  if (layers.size() == 0) throw layers.error("expected at least one layer");
  return detail::build_workload(std::move(name), source_label, PaleoReader(layers).read());
}

}  // namespace trainsim::workloads
