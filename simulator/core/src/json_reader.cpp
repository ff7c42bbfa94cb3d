#include "trainsim/core/json_reader.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>

#include "trainsim/core/input_file.hpp"
#include "trainsim/core/suggest.hpp"

namespace trainsim {

JsonNode::JsonNode(std::shared_ptr<const Json> document, const Json* value,
                   std::shared_ptr<const std::string> source, std::string pointer)
    : document_(std::move(document)), value_(value), source_(std::move(source)), pointer_(std::move(pointer)) {}

InputError JsonNode::error(const std::string& detail) const { return InputError(*source_, pointer_, detail); }

std::string describe_json(const Json& value) {
  std::string dumped = value.dump();
  if (dumped.size() > 40) dumped = dumped.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + dumped;
}

void JsonNode::type_error(std::string_view expected) const {
  throw error("expected " + std::string(expected) + ", got " + describe_json(*value_));
}

double JsonNode::as_number() const {
  if (!value_->is_number()) type_error("a number");
  const double v = value_->get<double>();
  if (!std::isfinite(v)) type_error("a finite number");
  return v;
}

double JsonNode::positive_number() const {
  const double v = as_number();
  if (!(v > 0)) throw error("must be > 0, got " + value_->dump());
  return v;
}

double JsonNode::non_negative_number() const {
  const double v = as_number();
  if (v < 0) throw error("must be ≥ 0, got " + value_->dump());
  return v;
}

double JsonNode::number_in(double lo, double hi) const {
  const double v = as_number();
  if (v < lo || v > hi) {
    std::ostringstream range;
    range << "must be in [" << lo << ", " << hi << "], got " << value_->dump();
    throw error(range.str());
  }
  return v;
}

std::int64_t JsonNode::as_int() const {
  // An unsigned number above INT64_MAX (18446744073709551615) would wrap to a negative one.
  if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw error("too large: got " + value_->dump() + ", more than " + std::to_string(INT64_MAX));
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  }
  type_error("an integer");
}

std::int64_t JsonNode::int_at_least(std::int64_t min) const {
  const std::int64_t v = as_int();
  if (v < min) throw error("must be ≥ " + std::to_string(min) + ", got " + std::to_string(v));
  return v;
}

int JsonNode::int_in(int lo, int hi) const {
  const std::int64_t v = as_int();
  if (v < lo) throw error("must be ≥ " + std::to_string(lo) + ", got " + std::to_string(v));
  if (v > hi) throw error("must be ≤ " + std::to_string(hi) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

std::string JsonNode::as_string() const {
  if (!value_->is_string()) type_error("a string");
  return value_->get<std::string>();
}

bool JsonNode::as_bool() const {
  if (!value_->is_boolean()) type_error("true or false");
  return value_->get<bool>();
}

std::string JsonNode::one_of(const std::vector<std::string>& allowed) const {
  const std::string v = as_string();
  for (const auto& a : allowed)
    if (a == v) return v;
  throw error(unknown_name_message("value", v, allowed));
}

void JsonNode::require_object() const {
  if (!value_->is_object()) type_error("an object");
}

void JsonNode::require_array() const {
  if (!value_->is_array()) type_error("an array");
}

bool JsonNode::has(std::string_view key) const {
  require_object();
  return value_->contains(key);
}

JsonNode JsonNode::child(const Json* value, std::string pointer) const {
  return JsonNode(document_, value, source_, std::move(pointer));
}

JsonNode JsonNode::at(std::string_view key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end()) throw error("missing required key '" + std::string(key) + "'");
  return child(&*it, json_pointer_append(pointer_, key));
}

std::optional<JsonNode> JsonNode::find(std::string_view key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(&*it, json_pointer_append(pointer_, key));
}

void JsonNode::allow_only(const std::vector<std::string>& allowed) const {
  require_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool known = false;
    for (const auto& a : allowed) known = known || a == it.key();
    if (!known)
      throw InputError(*source_, json_pointer_append(pointer_, it.key()), unknown_name_message("key", it.key(), allowed));
  }
}

std::vector<std::pair<std::string, JsonNode>> JsonNode::members() const {
  require_object();
  std::vector<std::pair<std::string, JsonNode>> out;
  for (auto it = value_->begin(); it != value_->end(); ++it)
    out.emplace_back(it.key(), child(&*it, json_pointer_append(pointer_, it.key())));
  return out;
}

std::size_t JsonNode::size() const {
  if (!value_->is_array() && !value_->is_object()) type_error("an array");
  return value_->size();
}

JsonNode JsonNode::element(std::size_t index) const {
  require_array();
  if (index >= value_->size()) throw error("index " + std::to_string(index) + " out of range");
  return child(&(*value_)[index], pointer_ + "/" + std::to_string(index));
}

std::vector<JsonNode> JsonNode::elements() const {
  require_array();
  std::vector<JsonNode> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(child(&(*value_)[i], pointer_ + "/" + std::to_string(i)));
  return out;
}

std::string json_pointer_append(const std::string& pointer, std::string_view token) {
  std::string out = pointer + "/";
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {
// nlohmann reports a byte offset; users want line and column.
std::string line_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}
}  // namespace

JsonNode json_root(std::shared_ptr<const Json> document, const std::string& source) {
  const Json* value = document.get();
  return JsonNode(std::move(document), value, std::make_shared<const std::string>(source), "");
}

namespace {

// Where the parser is, for errors the parser itself cannot place (a duplicate key, a number out of
// range): one frame per open object or array, with the member or element being read.
class ParsePosition {
public:
  bool on_event(int /*depth*/, Json::parse_event_t event, Json& parsed, const std::string& source) {
    switch (event) {
      case Json::parse_event_t::object_start: frames_.push_back(Frame{true, {}, {}, 0}); break;
      case Json::parse_event_t::array_start: frames_.push_back(Frame{false, {}, {}, 0}); break;
      case Json::parse_event_t::key: {
        Frame& top = frames_.back();
        std::string key = parsed.get<std::string>();
        if (!top.keys.insert(key).second)
          throw InputError(source, pointer_below_top() + "/" + escape(key), "duplicate key '" + key + "' (JSON keeps only one; remove the other)");
        top.key = std::move(key);
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames_.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value: element_done(); break;
    }
    return true;
  }
  /// The pointer of the value being read.
  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_) out += "/" + (f.object ? escape(f.key) : std::to_string(f.index));
    return out;
  }

private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t index;
  };
  static std::string escape(const std::string& key) { return json_pointer_append("", key).substr(1); }
  std::string pointer_below_top() const {
    std::string out;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i)
      out += "/" + (frames_[i].object ? escape(frames_[i].key) : std::to_string(frames_[i].index));
    return out;
  }
  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::vector<Frame> frames_;
};

}  // namespace

JsonNode parse_json_text(std::string_view text, const std::string& source) {
  auto source_ptr = std::make_shared<const std::string>(source);
  // The depth scan comes first: nlohmann's parser and the code that copies documents recurse once
  // per level, so a 100,000-deep document would overflow the stack before any error.
  check_json_depth(text, source);
  ParsePosition position;
  try {
    Json::parser_callback_t track = [&position, &source](int depth, Json::parse_event_t event, Json& parsed) {
      return position.on_event(depth, event, parsed, source);
    };
    auto document = std::make_shared<const Json>(Json::parse(text.begin(), text.end(), track));
    const Json* root = document.get();
    return JsonNode(document, root, source_ptr, "");
  } catch (const Json::parse_error& e) {
    std::string message = e.what();
    if (auto colon = message.rfind(": "); colon != std::string::npos) message = message.substr(colon + 2);
    throw InputError(source, line_column(text, e.byte), "invalid JSON: " + message);
  } catch (const Json::out_of_range&) {
    // nlohmann reports a number beyond double's range (1e400) this way, without a position.
    throw InputError(source, position.pointer(), "number out of range: the largest finite number is about 1.8e308");
  }
}

JsonNode read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_input_text(path, "JSON file"), path.string());
}

}  // namespace trainsim
