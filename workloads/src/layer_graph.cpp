// The layer-graph format, the Workload accessors, loading by name or path, and the JSON report.
#include "trainsim/workloads/layer_graph.hpp"

#include <cmath>

#include "graph_build.hpp"
#include "trainsim/core/enum_names.hpp"
#include "trainsim/core/suggest.hpp"
#include "trainsim/workloads/onnx_import.hpp"

namespace trainsim::workloads {

namespace {
constexpr EnumNames<OpClass, 10> kOpClasses{{{{OpClass::data, "data"},
                                              {OpClass::conv, "conv"},
                                              {OpClass::matmul, "matmul"},
                                              {OpClass::attention, "attention"},
                                              {OpClass::elementwise, "elementwise"},
                                              {OpClass::normalization, "normalization"},
                                              {OpClass::pooling, "pooling"},
                                              {OpClass::embedding, "embedding"},
                                              {OpClass::reshape, "reshape"},
                                              {OpClass::loss, "loss"}}}};
}  // namespace

std::string_view to_string(OpClass op_class) {
  return kOpClasses.name(op_class);
}

double LayerCost::activation_bytes(Precision p) const { return output_elements * bytes_per_element(p); }
double LayerCost::weight_bytes(Precision p) const { return static_cast<double>(params) * bytes_per_element(p); }

std::int64_t Workload::params() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += l.params;
  return total;
}

double Workload::forward_flops() const {
  double total = 0;
  for (const auto& l : layers) total += l.flops_fwd;
  return total;
}

double Workload::backward_flops() const {
  double total = 0;
  for (const auto& l : layers) total += l.flops_bwd();
  return total;
}

double Workload::activation_bytes(Precision p) const {
  double total = 0;
  for (const auto& l : layers) total += l.saved_elements;
  return total * bytes_per_element(p);
}

double Workload::weight_bytes(Precision p) const { return static_cast<double>(params()) * bytes_per_element(p); }

const LayerCost* Workload::find_layer(std::string_view layer_name) const {
  for (const auto& l : layers)
    if (l.name == layer_name) return &l;
  return nullptr;
}

std::vector<std::string> layer_type_names() { return detail::layer_types(); }

Workload parse_layer_graph(const JsonNode& root, const std::string& source_label) {
  root.require_object();
  root.allow_only({"name", "description", "layers"});
  std::string name = source_label;
  if (auto n = root.find("name")) name = n->as_string();
  const JsonNode layers = root.at("layers");
  layers.require_array();
  if (layers.size() == 0) throw layers.error("expected at least one layer");

  std::vector<detail::LayerSpec> specs;
  for (const JsonNode& node : layers.elements()) {
    node.require_object();
    const JsonNode name_node = node.at("name");
    detail::LayerSpec spec{name_node.as_string(), "", {}, {}, "", node, nullptr};
    if (spec.name.empty()) throw name_node.error("expected a non-empty layer name");
    detail::with_layer_context(spec.name, [&] {
      const JsonNode type_node = node.at("type");
      spec.type = type_node.as_string();
      const auto& types = detail::layer_types();
      if (std::find(types.begin(), types.end(), spec.type) == types.end())
        throw type_node.error(unknown_name_message("layer type", spec.type, types));
      if (auto parents = node.find("parents")) {
        for (const JsonNode& p : parents->elements()) {
          spec.parents.push_back(p.as_string());
          spec.parent_nodes.push_back(p);
        }
      } else if (detail::takes_parents(spec.type) && !specs.empty()) {
        // Sequential shorthand: without "parents" a layer reads the layer written before it
        // (unless its type takes none, as an input does).
        spec.parents.push_back(specs.back().name);
        spec.parent_nodes.push_back(node);
      }
      detail::read_layer_attrs(spec);
    });
    specs.push_back(std::move(spec));
  }
  return detail::build_workload(std::move(name), source_label, std::move(specs));
}

bool is_paleo_graph(const JsonNode& root) {
  return root.is_object() && root.raw().contains("layers") && root.raw().at("layers").is_object();
}

Workload load_workload_file(const std::filesystem::path& path) {
  const JsonNode root = read_json_file(path);
  if (is_paleo_graph(root)) return parse_paleo_graph(root, path.string());
  return parse_layer_graph(root, path.string());
}

Workload load_workload(const std::string& model_or_file) {
  if (is_onnx_path(model_or_file)) return load_onnx_workload(model_or_file, OnnxBindings{});
  const bool looks_like_path = model_or_file.find('/') != std::string::npos ||
                               (model_or_file.size() > 5 && model_or_file.ends_with(".json"));
  if (!looks_like_path) {
    if (auto canonical = zoo_canonical_name(model_or_file)) {
      auto document = std::make_shared<const Json>(zoo_layer_graph(*canonical));
      const JsonNode root(document, document.get(), std::make_shared<const std::string>("zoo:" + *canonical), "");
      Workload w = parse_layer_graph(root, "zoo");
      w.name = *canonical;
      return w;
    }
    if (!std::filesystem::exists(model_or_file)) {
      std::vector<std::string> names;
      for (const auto& entry : zoo()) names.push_back(entry.name);
      throw InputError("model", "", unknown_name_message("zoo model", model_or_file, names) +
                                        " (or give the path of a layer-graph JSON file)");
    }
  }
  return load_workload_file(model_or_file);
}

Workload load_workload(const std::string& model_or_file, const InputSize& input) {
  if (!input.any()) return load_workload(model_or_file);
  if (is_onnx_path(model_or_file)) {
    OnnxBindings bindings;
    bindings.sequence_length = input.sequence_length;
    bindings.image_size = input.image_size;
    return load_onnx_workload(model_or_file, bindings);
  }
  Json document;
  std::string label;
  std::string name;
  const bool looks_like_path = model_or_file.find('/') != std::string::npos || model_or_file.ends_with(".json");
  if (const auto canonical = looks_like_path ? std::nullopt : zoo_canonical_name(model_or_file)) {
    document = zoo_layer_graph(*canonical);
    label = "zoo:" + *canonical;
    name = *canonical;
  } else {
    if (!looks_like_path && !std::filesystem::exists(model_or_file)) return load_workload(model_or_file);  // names the unknown model
    const JsonNode root = read_json_file(model_or_file);
    if (is_paleo_graph(root))
      throw InputError("model", "", "sequence_length and image_size apply to zoo models and layer-graph files, not to the Paleo network '" +
                                        model_or_file + "'");
    document = root.raw();
    label = model_or_file;
  }
  bool resized_sequence = false, resized_image = false;
  if (document.contains("layers") && document["layers"].is_array())
    for (Json& layer : document["layers"]) {
      if (!layer.is_object() || layer.value("type", "") != "input" || !layer.contains("shape") || !layer["shape"].is_array()) continue;
      Json& shape = layer["shape"];
      if (shape.size() == 1 && input.sequence_length) {
        shape[0] = *input.sequence_length;
        resized_sequence = true;
      } else if (shape.size() == 3 && input.image_size) {
        shape[1] = *input.image_size;
        shape[2] = *input.image_size;
        resized_image = true;
      }
    }
  if (input.sequence_length && !resized_sequence)
    throw InputError("model", "", "'" + model_or_file + "' has no sequence input ([tokens]) for a sequence_length");
  if (input.image_size && !resized_image)
    throw InputError("model", "", "'" + model_or_file + "' has no image input ([channels, height, width]) for an image_size");
  Workload w = parse_layer_graph(json_root(std::make_shared<const Json>(std::move(document)), label), label.rfind("zoo:", 0) == 0 ? "zoo" : label);
  if (!name.empty()) w.name = name;
  return w;
}

Json workload_report(const Workload& workload, std::int64_t batch, Precision precision) {
  TRAINSIM_CHECK(batch >= 1, "batch must be ≥ 1");
  const double b = static_cast<double>(batch);
  Json layers = Json::array();
  for (const auto& l : workload.layers) {
    layers.push_back({{"name", l.name},
                      {"type", l.type},
                      {"op_class", std::string(to_string(l.op_class))},
                      {"parents", l.parents},
                      {"output_shape", l.output_shape},
                      {"params", l.params},
                      {"forward_flops", l.flops_fwd * b},
                      {"backward_input_flops", l.flops_bwd_input * b},
                      {"backward_weight_flops", l.flops_bwd_weight * b},
                      {"input_elements", l.input_elements * b},
                      {"output_elements", l.output_elements * b},
                      {"saved_elements", l.saved_elements * b},
                      {"activation_bytes", l.activation_bytes(precision) * b},
                      {"saved_bytes", l.saved_elements * bytes_per_element(precision) * b},
                      {"weight_bytes", l.weight_bytes(precision)}});
  }
  return Json{{"name", workload.name},
              {"source", workload.source},
              {"batch", batch},
              {"precision", std::string(to_string(precision))},
              {"params", workload.params()},
              {"weight_bytes", workload.weight_bytes(precision)},
              {"forward_flops", workload.forward_flops() * b},
              {"backward_flops", workload.backward_flops() * b},
              {"activation_bytes", workload.activation_bytes(precision) * b},
              {"layers", std::move(layers)}};
}

}  // namespace trainsim::workloads
