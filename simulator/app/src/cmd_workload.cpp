// `trainsim workload list | info | export`: the model zoo and the per-layer costs of a model or a
// layer-graph / Paleo file.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "commands.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/core/units.hpp"
#include "trainsim/workloads/layer_graph.hpp"
#include "trainsim/workloads/onnx_import.hpp"

namespace trainsim::app {
namespace {

struct WorkloadInfoOptions {
  std::string model;
  std::int64_t batch = 1;
  std::string precision = "fp32";
  std::string json_output;  // empty: the human table on stdout
  std::int64_t sequence_length = 0;  // 0: the model's own
  std::int64_t image_size = 0;       // 0: the model's own
  std::vector<std::string> dims;     // ONNX: NAME=N per named dynamic dimension
};

// Left-aligned text columns, right-aligned numbers, widths from the content.
std::string aligned_table(const std::vector<std::vector<std::string>>& rows, std::size_t text_columns) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += c < text_columns ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// Digits grouped by thousands: 25,557,032.
std::string grouped(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

// FLOPs with an SI prefix: "24.9 M", "1.36 G" (the column headers say FLOPs).
std::string flops_text(double flops) { return format_si(flops); }

int run_list(const std::string& json_output) {
  if (!json_output.empty()) check_output_file(json_output);
  const auto entries = workloads::zoo();
  if (!json_output.empty()) {
    Json list = Json::array();
    for (const auto& e : entries)
      list.push_back({{"name", e.name}, {"description", e.description}, {"reference_params", e.reference_params}});
    write_output(json_output, list.dump(2) + "\n");
    return 0;
  }
  std::vector<std::vector<std::string>> rows{{"model", "description", "params"}};
  for (const auto& e : entries) rows.push_back({e.name, e.description, grouped(e.reference_params)});
  std::cout << aligned_table(rows, 2);
  return 0;
}

workloads::OnnxBindings onnx_bindings(const WorkloadInfoOptions& o, const workloads::InputSize& input) {
  workloads::OnnxBindings b;
  b.batch = o.batch;
  b.sequence_length = input.sequence_length;
  b.image_size = input.image_size;
  for (const std::string& d : o.dims) {
    const auto eq = d.find('=');
    std::int64_t value = 0;
    const std::string number = eq == std::string::npos ? "" : d.substr(eq + 1);
    const bool digits = !number.empty() && number.size() <= 7 &&
                        std::all_of(number.begin(), number.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (digits) value = std::stoll(number);
    if (eq == 0 || !digits || value < 1 || value > 1'000'000)
      throw InputError("--dim", "", "expected NAME=N with N in [1, 1000000], got '" + d + "'");
    b.dims[d.substr(0, eq)] = value;
  }
  return b;
}

int run_info(const WorkloadInfoOptions& o) {
  check_outputs_apart({{"the model file", o.model}}, {{"--json", o.json_output}});
  if (!o.json_output.empty()) check_output_file(o.json_output);
  const auto precision = parse_precision(o.precision);
  if (!precision) throw InputError("--precision", "", "unknown precision '" + o.precision + "'; expected fp32, tf32, fp16 or bf16");
  workloads::InputSize input;
  if (o.sequence_length > 0) input.sequence_length = o.sequence_length;
  if (o.image_size > 0) input.image_size = o.image_size;
  if (!o.dims.empty() && !workloads::is_onnx_path(o.model))
    throw InputError("--dim", "",
                     "binds the named dynamic dimensions of an ONNX model (.onnx); '" + o.model + "' is not one");
  // An ONNX model's dynamic batch is bound to --batch (its costs are per sample either way).
  const workloads::Workload w = workloads::is_onnx_path(o.model)
                                    ? workloads::load_onnx_workload(o.model, onnx_bindings(o, input))
                                    : workloads::load_workload(o.model, input);
  if (!o.json_output.empty()) {
    write_output(o.json_output, workloads::workload_report(w, o.batch, *precision).dump(2) + "\n");
    return 0;
  }
  const double b = static_cast<double>(o.batch);
  // The activation column is what each layer keeps for backward (its output, nothing for views,
  // internal tensors for attention), so that the column adds up to the total.
  const double element_bytes = bytes_per_element(*precision);
  std::vector<std::vector<std::string>> rows{{"layer", "type", "output", "params", "fwd FLOPs", "bwd FLOPs", "saved activations"}};
  for (const auto& l : w.layers)
    rows.push_back({l.name, l.type, shape_text(l.output_shape), grouped(l.params), flops_text(l.flops_fwd * b),
                    flops_text(l.flops_bwd() * b), format_bytes(l.saved_elements * element_bytes * b)});
  rows.push_back({"total", "", "", grouped(w.params()), flops_text(w.forward_flops() * b), flops_text(w.backward_flops() * b),
                  format_bytes(w.activation_bytes(*precision) * b)});
  std::ostringstream out;
  out << w.name << " (" << w.source << "): " << w.layers.size() << " layers, batch " << o.batch << ", " << o.precision << "\n\n";
  out << aligned_table(rows, 3) << "\n";
  out << "parameters          " << grouped(w.params()) << " (" << format_bytes(w.weight_bytes(*precision)) << ")\n";
  out << "forward             " << flops_text(w.forward_flops() * b) << " FLOPs\n";
  out << "backward            " << flops_text(w.backward_flops() * b) << " FLOPs\n";
  out << "saved activations   " << format_bytes(w.activation_bytes(*precision) * b) << " (kept for backward)\n";
  std::cout << out.str();
  return 0;
}

void add_workload(CLI::App& app, Action& action) {
  CLI::App* workload = app.add_subcommand("workload", "The model zoo and per-layer costs of layer graphs");
  workload->require_subcommand(1);

  auto list_json = std::make_shared<std::string>();
  CLI::App* list = workload->add_subcommand("list", "List the zoo models with their reference parameter counts");
  list->add_option("--json", *list_json, "Write the list as JSON to FILE ('-' = stdout)");
  list->callback([&action, list_json] { action = [list_json] { return run_list(*list_json); }; });

  auto info_opts = std::make_shared<WorkloadInfoOptions>();
  CLI::App* info = workload->add_subcommand("info", "Per-layer and total parameters, FLOPs and activation bytes of a model");
  info->add_option("model", info_opts->model,
                   "Zoo model name (see 'workload list'), a layer-graph / Paleo JSON file or an ONNX model (.onnx)")
      ->required();
  info->add_option("--batch", info_opts->batch, "Samples per mini-batch: FLOPs and activations are for the whole batch")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  info->add_option(
          "--sequence-length", info_opts->sequence_length,
          "Tokens per sequence: resizes a zoo model or layer-graph file, binds an ONNX model's dynamic sequence axis")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  info->add_option(
          "--image-size", info_opts->image_size,
          "Image height and width: resizes a zoo model or layer-graph file, binds an ONNX model's dynamic image axes")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  info->add_option("--dim", info_opts->dims, "ONNX model: the value of a named dynamic dimension, NAME=N (repeatable)");
  info->add_option("--precision", info_opts->precision, "Tensor precision for bytes: fp32, tf32, fp16 or bf16")
      ->check(CLI::IsMember(precision_names()));
  info->add_option("--json", info_opts->json_output, "Write the report as JSON to FILE ('-' = stdout, then nothing else goes there)");
  info->callback([&action, info_opts] { action = [info_opts] { return run_info(*info_opts); }; });

  auto export_model = std::make_shared<std::string>();
  auto export_out = std::make_shared<std::string>("-");
  CLI::App* exp = workload->add_subcommand("export", "Print a zoo model as a layer-graph JSON file, to edit or to read back");
  exp->add_option("model", *export_model, "Zoo model name")->required();
  exp->add_option("--out", *export_out, "Destination FILE ('-' = stdout, the default)");
  exp->callback([&action, export_model, export_out] {
    action = [export_model, export_out] {
      check_outputs_apart({{"the model file", *export_model}}, {{"--out", *export_out}});
      check_output_file(*export_out);
      const auto canonical = workloads::zoo_canonical_name(*export_model);
      write_output(*export_out, workloads::zoo_layer_graph(canonical ? *canonical : *export_model).dump(2) + "\n");
      return 0;
    };
  });
}

[[maybe_unused]] static const bool registered = register_command(40, &add_workload);

}  // namespace
}  // namespace trainsim::app
