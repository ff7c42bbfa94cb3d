// The `trainsim` Python module: the simulator from a notebook, built from the same libraries as the
// executable and through the same readers, so a scenario dict is validated exactly as a scenario
// file is and an error names the same JSON pointer.
//
//   trainsim.simulate(scenario, sets=(), source="scenario")        → the result dict (simulate --json)
//   trainsim.sweep(scenario, out=None, jobs=1, source="scenario")  → the result lines (results.jsonl)
//   trainsim.collective(platform, op=..., algorithm=..., bytes=...) → the timings (collective --json)
//   trainsim.fit(data, y, model=None, expression=None, ...)        → the fit report (fit --json)
//   trainsim.workload_info(model, batch=1, ...)                    → the workload report (workload info --json)
//
// Errors: trainsim.InputError (a ValueError) with .source, .pointer and .detail for bad input;
// trainsim.RunError (a RuntimeError) for a run that failed; TypeError for a Python value that has
// no JSON form (naming its key). SimGrid allows one simulation per process, so every simulation
// runs in a forked child (as sweep points do) and the result comes back through a pipe; the
// caller's interpreter never hosts a SimGrid engine.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <pybind11/eval.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "commands.hpp"
#include "sweep.hpp"
#include "trainsim/core/csv.hpp"
#include "trainsim/core/error.hpp"
#include "trainsim/core/input_file.hpp"
#include "trainsim/core/json_reader.hpp"
#include "trainsim/core/output.hpp"
#include "trainsim/engine/training.hpp"
#include "trainsim/fitting/analysis.hpp"
#include "trainsim/plan/scenario.hpp"

namespace py = pybind11;

namespace trainsim::python {
namespace {

// ---- Python values ↔ JSON ----

// `value` as JSON; `pointer` names it in a TypeError ("/workload/batch_per_gpu").
Json to_json(py::handle value, const std::string& pointer, const std::string& function, int depth = 0) {
  auto type_error = [&](const std::string& what) {
    return py::type_error("trainsim." + function + ": " + (pointer.empty() ? std::string("the argument") : pointer) +
                          ": " + what);
  };
  if (depth > static_cast<int>(kMaxJsonDepth))
    throw type_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw type_error("the integer " + py::str(value).cast<std::string>() + " does not fit 64 bits");
    }
  }
  if (py::isinstance<py::float_>(value)) {
    const double d = value.cast<double>();
    if (!std::isfinite(d)) throw type_error("expected a finite number, got " + py::repr(value).cast<std::string>());
    return d;
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    Json object = Json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw type_error("keys must be strings, got " + py::repr(key).cast<std::string>() + " (" +
                         std::string(py::str(key.get_type().attr("__name__"))) + ")");
      const std::string name = key.cast<std::string>();
      object[name] = to_json(item, json_pointer_append(pointer, name), function, depth + 1);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    Json array = Json::array();
    std::size_t i = 0;
    for (const auto& item : value)
      array.push_back(to_json(item, pointer + "/" + std::to_string(i++), function, depth + 1));
    return array;
  }
  // NumPy scalars and other number types: integers by __index__, reals by __float__.
  if (py::hasattr(value, "__index__"))
    return to_json(py::int_(py::reinterpret_borrow<py::object>(value)), pointer, function, depth);
  if (py::hasattr(value, "__float__") && !py::hasattr(value, "__len__"))
    return to_json(py::float_(py::reinterpret_borrow<py::object>(value)), pointer, function, depth);
  throw type_error("a " + std::string(py::str(value.get_type().attr("__name__"))) +
                   " has no JSON form (give dicts, lists, strings, numbers, booleans or None)");
}

py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(j.get<bool>());
    case Json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case Json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case Json::value_t::number_float: return py::float_(j.get<double>());
    case Json::value_t::string: return py::str(j.get<std::string>());
    case Json::value_t::array: {
      py::list list;
      for (const auto& item : j) list.append(to_python(item));
      return list;
    }
    case Json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : j.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    default: return py::none();
  }
}

// ---- Errors ----

py::object& input_error_type() {
  static py::object type;
  return type;
}
py::object& run_error_type() {
  static py::object type;
  return type;
}

[[noreturn]] void raise_input_error(const std::string& source, const std::string& location, const std::string& detail) {
  const InputError e(source, location, detail);
  py::object instance = input_error_type()(e.what(), source, location, detail);
  PyErr_SetObject(input_error_type().ptr(), instance.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_run_error(const std::string& message) {
  PyErr_SetString(run_error_type().ptr(), message.c_str());
  throw py::error_already_set();
}

// Runs `body`, turning trainsim's errors into the module's exceptions.
template <class Body>
auto translated(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const InputError& e) {
    raise_input_error(e.source(), e.location(), e.detail());
  } catch (const RunError& e) {
    raise_run_error(e.what());
  }
}

// ---- Running in a child ----

// The child's answer on the pipe: {"ok": result} or {"input_error": {source, location, detail}} or
// {"run_error": message}.
Json child_answer(const std::function<Json()>& body) {
  try {
    return Json{{"ok", body()}};
  } catch (const InputError& e) {
    return Json{{"input_error", {{"source", e.source()}, {"location", e.location()}, {"detail", e.detail()}}}};
  } catch (const std::exception& e) {
    return Json{{"run_error", e.what()}};
  }
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Runs `body` in a forked child (SimGrid's one engine per process) and returns what it returned,
// or raises what it threw. The GIL is released while the child runs; the child touches no Python
// object and leaves with _exit, so no interpreter state is shared or torn down twice.
Json run_in_child(const std::function<Json()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) raise_run_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::string text;
  int status = 0;
  {
    py::gil_scoped_release release;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      py::gil_scoped_acquire acquire;
      raise_run_error(std::string("cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(fds[0]);
      std::signal(SIGINT, SIG_DFL);  // Ctrl-C in the notebook's terminal ends the child too
      const bool written = write_all(fds[1], child_answer(body).dump());
      std::fflush(nullptr);
      ::_exit(written ? 0 : 3);
    }
    ::close(fds[1]);
    char buffer[1 << 16];
    while (true) {
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFSIGNALED(status))
    raise_run_error("the simulation's process ended by signal " + std::to_string(WTERMSIG(status)) +
                    (WTERMSIG(status) == SIGKILL ? " (out of memory?)" : ""));
  Json answer;
  try {
    answer = Json::parse(text);
  } catch (const std::exception&) {
    raise_run_error("the simulation's process gave no answer (exit status " + std::to_string(WEXITSTATUS(status)) +
                    ")");
  }
  if (answer.contains("input_error")) {
    const Json& e = answer["input_error"];
    raise_input_error(e.at("source").get<std::string>(), e.at("location").get<std::string>(),
                      e.at("detail").get<std::string>());
  }
  if (answer.contains("run_error")) raise_run_error(answer["run_error"].get<std::string>());
  return answer.at("ok");
}

// ---- The functions ----

Json scenario_document(py::handle scenario, const std::vector<std::string>& sets, const std::string& function) {
  if (!py::isinstance<py::dict>(scenario))
    throw py::type_error("trainsim." + function +
                         ": scenario must be a dict (a scenario document, as json.load gives it), got " +
                         std::string(py::str(scenario.get_type().attr("__name__"))));
  Json document = to_json(scenario, "", function);
  for (const auto& s : sets) plan::apply_set(document, s);
  return document;
}

py::object simulate(py::handle scenario, const std::vector<std::string>& sets, const std::string& source,
                    bool reproducible) {
  const Json document = scenario_document(scenario, sets, "simulate");
  return translated([&] {
    // Validated here, in the caller's process, then simulated in a child.
    const plan::Scenario parsed = plan::read_scenario(document, source);
    const Json result = run_in_child([&] {
      engine::SimulateOptions options;
      engine::IterationResult r = engine::simulate_iteration(parsed, options);
      if (reproducible) r.sim_wall_s = 0;
      return r.to_json();
    });
    return to_python(result);
  });
}

// A fresh private folder under the system's temporary directory.
std::filesystem::path private_temp_dir() {
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("trainsim-py-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) {
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
      return dir;
    }
  }
  raise_run_error("cannot create a temporary folder");
}

py::object sweep(py::handle scenario, const std::optional<std::string>& out, int jobs,
                 const std::vector<std::string>& sets, const std::string& source) {
  if (jobs < 1) raise_input_error("sweep", "jobs", "must be ≥ 1, got " + std::to_string(jobs));
  const Json document = scenario_document(scenario, sets, "sweep");
  return translated([&] {
    const plan::Scenario base = plan::read_scenario(document, source);
    const std::filesystem::path dir = out ? std::filesystem::path(*out) : private_temp_dir();
    app::SweepOptions options;
    options.out_dir = dir.string();
    options.jobs = jobs;
    app::SweepSummary summary;
    std::vector<Json> lines;
    {
      // The sweep forks its own children (one per point) and waits for them.
      py::gil_scoped_release release;
      try {
        summary = app::run_sweep(base, options);
        lines = app::read_results((dir / "results.jsonl").string());
      } catch (...) {
        if (!out) {
          std::error_code ec;
          std::filesystem::remove_all(dir, ec);
        }
        throw;
      }
    }
    if (!out) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
    if (summary.interrupted) raise_run_error("the sweep was interrupted");
    // results.jsonl is written as points finish (jobs > 1: in any order); the caller gets them in
    // the sweep's point order, the same list for the same scenario whatever the jobs.
    std::stable_sort(lines.begin(), lines.end(), [](const Json& a, const Json& b) {
      return a.at("index").get<std::size_t>() < b.at("index").get<std::size_t>();
    });
    py::list rows;
    for (const auto& line : lines) rows.append(to_python(line));
    return py::object(std::move(rows));
  });
}

// Runs one trainsim command (its CLI arguments) in a child, the command writing its JSON to a
// temporary file: the command's own option checks and messages, unchanged.
Json run_command(std::vector<std::string> args) {
  const std::filesystem::path dir = private_temp_dir();
  const std::string json_path = (dir / "out.json").string();
  args.push_back("--json");
  args.push_back(json_path);
  Json result;
  try {
    result = run_in_child([&] {
      CLI::App cli{"trainsim"};
      cli.require_subcommand(1);
      app::Action action;
      for (auto adder : app::registered_commands()) adder(cli, action);
      std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
      try {
        cli.parse(reversed);
      } catch (const CLI::ParseError& e) {
        throw InputError("arguments", "", e.what());
      }
      action();
      return read_json_file(json_path).raw();
    });
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return result;
}

std::string option_text(py::handle value, const std::string& function, const std::string& name) {
  if (py::isinstance<py::bool_>(value))
    throw py::type_error("trainsim." + function + ": " + name + " must be a string or a number, got bool");
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__"))
    return py::str(py::int_(py::reinterpret_borrow<py::object>(value)));
  if (py::isinstance<py::float_>(value)) return py::str(value);
  throw py::type_error("trainsim." + function + ": " + name + " must be a string or a number, got " +
                       std::string(py::str(value.get_type().attr("__name__"))));
}

Json collective_once(const std::string& platform, const std::string& op, const std::string& algorithm,
                     const std::string& bytes, int gpus, int nodes, const std::optional<std::string>& protocol,
                     const std::optional<std::string>& network_model) {
  std::vector<std::string> args{"collective",  "--platform", platform,  "--op", op,
                                "--algorithm", algorithm,    "--bytes", bytes};
  if (gpus > 0) args.insert(args.end(), {"--gpus", std::to_string(gpus)});
  if (nodes > 0) args.insert(args.end(), {"--nodes", std::to_string(nodes)});
  if (protocol) args.insert(args.end(), {"--protocol", *protocol});
  if (network_model) args.insert(args.end(), {"--network-model", *network_model});
  return run_command(args);
}

py::object collective(py::handle platform, const std::string& op, const std::string& algorithm, py::handle bytes,
                      int gpus, int nodes, const std::optional<std::string>& protocol,
                      const std::optional<std::string>& network_model) {
  if (!py::isinstance<py::str>(platform))
    throw py::type_error("trainsim.collective: platform must be a preset name or a platform file path (str), got " +
                         std::string(py::str(platform.get_type().attr("__name__"))));
  const std::string where = platform.cast<std::string>();
  std::vector<std::string> sizes;
  const bool several = py::isinstance<py::list>(bytes) || py::isinstance<py::tuple>(bytes);
  if (several) {
    std::size_t i = 0;
    for (const auto& b : bytes) sizes.push_back(option_text(b, "collective", "bytes[" + std::to_string(i++) + "]"));
    if (sizes.empty()) throw py::type_error("trainsim.collective: bytes is an empty list");
  } else {
    sizes.push_back(option_text(bytes, "collective", "bytes"));
  }
  return translated([&] {
    // A list: one run per size (a list need not be geometric, as the command's ranges are), the
    // timings gathered under "results".
    Json merged;
    for (const auto& size : sizes) {
      Json one = collective_once(where, op, algorithm, size, gpus, nodes, protocol, network_model);
      if (merged.is_null()) {
        merged = one;
        if (several) {
          for (const char* key :
               {"size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "representation", "channels", "protocol"})
            merged.erase(key);
          merged["results"] = Json::array();
        }
      }
      if (several)
        for (const auto& row : one.at("results")) merged["results"].push_back(row);
    }
    return to_python(merged);
  });
}

py::object workload_info(const std::string& model, std::int64_t batch, const std::string& precision,
                         std::int64_t sequence_length, std::int64_t image_size,
                         const std::map<std::string, std::int64_t>& dims) {
  std::vector<std::string> args{"workload", "info", model, "--batch", std::to_string(batch), "--precision", precision};
  if (sequence_length > 0) args.insert(args.end(), {"--sequence-length", std::to_string(sequence_length)});
  if (image_size > 0) args.insert(args.end(), {"--image-size", std::to_string(image_size)});
  for (const auto& [name, value] : dims) args.insert(args.end(), {"--dim", name + "=" + std::to_string(value)});
  return translated([&] { return to_python(run_command(args)); });
}

// `data`: a CSV file's path, a list of row dicts, or a dict of columns (as pandas' to_dict("list")).
CsvTable table_of(py::handle data) {
  if (py::isinstance<py::str>(data)) return CsvTable::read(data.cast<std::string>());
  auto cell = [](py::handle v, const std::string& where) {
    if (py::isinstance<py::bool_>(v) || py::isinstance<py::str>(v))
      throw py::type_error("trainsim.fit: " + where + ": expected a number, got " +
                           std::string(py::str(v.get_type().attr("__name__"))));
    try {
      return py::str(py::float_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
    } catch (const py::error_already_set&) {
      throw py::type_error("trainsim.fit: " + where + ": expected a number, got " +
                           std::string(py::str(v.get_type().attr("__name__"))));
    }
  };
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  if (py::isinstance<py::dict>(data)) {
    std::size_t length = 0;
    bool first = true;
    for (const auto& [key, values] : data.cast<py::dict>()) {
      const std::string name = py::str(key);
      columns.push_back(name);
      if (!py::isinstance<py::list>(values) && !py::isinstance<py::tuple>(values) && !py::hasattr(values, "__len__"))
        throw py::type_error("trainsim.fit: data['" + name + "']: expected a list of numbers");
      const std::size_t n = py::len(values);
      if (!first && n != length)
        throw py::type_error("trainsim.fit: data['" + name + "']: has " + std::to_string(n) +
                             " values, the first column " + std::to_string(length));
      first = false;
      length = n;
      rows.resize(n);
      std::size_t i = 0;
      for (const auto& v : values) {
        rows[i].push_back(cell(v, "data['" + name + "'][" + std::to_string(i) + "]"));
        ++i;
      }
    }
  } else if (py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data)) {
    std::size_t i = 0;
    for (const auto& row : data) {
      if (!py::isinstance<py::dict>(row))
        throw py::type_error("trainsim.fit: data[" + std::to_string(i) + "]: expected a dict (one row)");
      std::vector<std::string> values;
      std::vector<std::string> names;
      for (const auto& [key, v] : row.cast<py::dict>()) {
        names.push_back(py::str(key));
        values.push_back(cell(v, "data[" + std::to_string(i) + "]['" + names.back() + "']"));
      }
      if (i == 0)
        columns = names;
      else if (names != columns)
        throw py::type_error("trainsim.fit: data[" + std::to_string(i) + "]: its keys differ from the first row's");
      rows.push_back(values);
      ++i;
    }
  } else {
    throw py::type_error("trainsim.fit: data must be a CSV path (str), a list of row dicts or a dict of columns, got " +
                         std::string(py::str(data.get_type().attr("__name__"))));
  }
  auto quoted = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string text;
  for (std::size_t c = 0; c < columns.size(); ++c) text += (c ? "," : "") + quoted(columns[c]);
  text += "\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) text += (c ? "," : "") + row[c];
    text += "\n";
  }
  return CsvTable::parse(text, "data");
}

py::object fit(py::handle data, const std::string& y, const std::optional<std::string>& model,
               const std::optional<std::string>& expression, const std::optional<std::string>& holdout,
               const std::vector<std::string>& bounds, unsigned seed, unsigned bootstrap) {
  return translated([&] {
    const CsvTable table = table_of(data);
    fitting::FitRequest request;
    request.y_column = y;
    request.model = model;
    request.expression = expression;
    request.holdout = holdout;
    request.bounds = bounds;
    request.options.seed = seed;
    if (bootstrap > fitting::FitOptions::kMaxBootstrapSamples)
      throw InputError("fit", "bootstrap", "must be ≤ " + std::to_string(fitting::FitOptions::kMaxBootstrapSamples));
    request.options.bootstrap_samples = bootstrap;
    return to_python(fitting::fit_report_json(fitting::run_fit(table, request)));
  });
}

}  // namespace
}  // namespace trainsim::python

PYBIND11_MODULE(trainsim, m) {
  using namespace trainsim::python;
  m.doc() = "trainsim: what-if simulator for distributed deep-learning training (simulator/README.md, Python module)";
  // The exception classes, defined in Python so that they carry their fields as attributes.
  py::dict scope;
  py::exec(R"(
class InputError(ValueError):
    """Bad input: `source` names the file (or "scenario" for a dict), `pointer` the JSON pointer
    (or option) and `detail` what was expected. str(e) reads "source: /pointer: detail"."""
    def __init__(self, message, source="", pointer="", detail=""):
        super().__init__(message)
        self.source, self.pointer, self.detail = source, pointer, detail

class RunError(RuntimeError):
    """A valid run that failed (the simulation's process died, a sweep was interrupted)."""
)",
           py::globals(), scope);
  input_error_type() = scope["InputError"];
  run_error_type() = scope["RunError"];
  input_error_type().attr("__module__") = "trainsim";
  run_error_type().attr("__module__") = "trainsim";
  m.attr("InputError") = input_error_type();
  m.attr("RunError") = run_error_type();

  m.def("simulate", &simulate, py::arg("scenario"), py::kw_only(), py::arg("sets") = std::vector<std::string>{},
        py::arg("source") = "scenario", py::arg("reproducible") = false,
        "Simulates one training iteration of a scenario (a dict, as a scenario file holds) and returns the result as a "
        "dict\n"
        "(the fields of `trainsim simulate --json`: samples_per_s, iteration_time_s, breakdown, memory, ...). `sets` "
        "are\n"
        "--set overrides (\"platform.nodes=4\"); `source` is the name errors give and the folder relative paths start "
        "from.");
  m.def(
      "sweep", &sweep, py::arg("scenario"), py::kw_only(), py::arg("out") = py::none(), py::arg("jobs") = 1,
      py::arg("sets") = std::vector<std::string>{}, py::arg("source") = "scenario",
      "Simulates every point of the scenario's `sweep` (jobs child processes at a time) and returns the lines of\n"
      "results.jsonl as dicts (each with index, point and the result fields, or error). With `out`, the folder keeps\n"
      "results.jsonl (in point order), results.csv and report.html as `trainsim sweep --out` writes them.");
  m.def("collective", &collective, py::arg("platform"), py::kw_only(), py::arg("op") = "allreduce",
        py::arg("algorithm") = "ring", py::arg("bytes") = "8:8G:x2", py::arg("gpus") = 0, py::arg("nodes") = 0,
        py::arg("protocol") = py::none(), py::arg("network_model") = py::none(),
        "Times one collective on a platform (a preset name or a platform file), nccl-tests style, as `trainsim "
        "collective\n"
        "--json`: bytes is a size (8, \"64M\"), a range \"A:B:xF\" or a list of sizes.");
  m.def("fit", &fit, py::arg("data"), py::arg("y"), py::kw_only(), py::arg("model") = py::none(),
        py::arg("expression") = py::none(), py::arg("holdout") = py::none(),
        py::arg("bounds") = std::vector<std::string>{}, py::arg("seed") = 1u, py::arg("bootstrap") = 200u,
        "Fits a generic execution-time expression (a built-in model or your own) to `data` (a CSV path, a list of row\n"
        "dicts or a dict of columns) and returns `trainsim fit --json`'s report: constants, r2, mape, term shares.");
  m.def(
      "workload_info", &workload_info, py::arg("model"), py::kw_only(), py::arg("batch") = 1,
      py::arg("precision") = "fp32", py::arg("sequence_length") = 0, py::arg("image_size") = 0,
      py::arg("dims") = std::map<std::string, std::int64_t>{},
      "Per-layer and total parameters, FLOPs and activation bytes of a zoo model, a layer-graph file or an ONNX model\n"
      "(`trainsim workload info --json`).");
}
