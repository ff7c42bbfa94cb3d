#include "simgrid_xml_check.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "trainsim/core/error.hpp"

namespace trainsim::platforms::detail {

namespace {

class XmlScanner {
public:
  XmlScanner(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {}

  void check() {
    std::vector<std::pair<std::string, std::size_t>> open;  // element name, line
    std::vector<Zone> zones;
    std::string root;
    while (pos_ < text_.size()) {
      if (text_[pos_] != '<') {
        ++pos_;
        continue;
      }
      if (starts_with("<!--")) {
        skip_past("-->", "unterminated comment");
      } else if (starts_with("<?")) {
        skip_past("?>", "unterminated processing instruction");
      } else if (starts_with("<!")) {
        skip_past(">", "unterminated declaration");
      } else if (starts_with("</")) {
        const std::size_t line = line_at(pos_);
        pos_ += 2;
        const std::string name = read_name();
        skip_spaces();
        if (pos_ >= text_.size() || text_[pos_] != '>') fail(line, "malformed closing tag </" + name);
        ++pos_;
        if (open.empty()) fail(line, "closing tag </" + name + "> without an opening tag");
        if (open.back().first != name)
          fail(line, "closing tag </" + name + "> does not match <" + open.back().first + "> opened on line " +
                         std::to_string(open.back().second));
        open.pop_back();
        if (name == "zone" || name == "AS") {
          if (!zones.empty()) check_zone(zones.back());
          if (!zones.empty()) zones.pop_back();
        }
      } else {
        const std::size_t line = line_at(pos_);
        ++pos_;
        const std::string name = read_name();
        if (name.empty()) fail(line, "malformed tag");
        if (open.empty()) {
          if (!root.empty()) fail(line, "a second root element <" + name + ">");
          root = name;
          if (root != "platform") fail(line, "the root element is <" + root + ">, expected <platform>");
        }
        std::map<std::string, std::string> attrs;
        const bool self_closing = read_attributes(line, attrs);
        if (!self_closing) open.emplace_back(name, line);
        record(name, attrs, line, self_closing, zones);
      }
    }
    if (!open.empty())
      fail(open.back().second, "<" + open.back().first + "> is never closed");
    if (root.empty()) fail(1, "no <platform> element");
  }

private:
  /// A zone whose routes are listed explicitly (Full, Floyd, Dijkstra): its hosts and routes.
  struct Zone {
    std::string id, routing;
    std::vector<std::pair<std::string, std::size_t>> hosts;  // id, line
    std::set<std::pair<std::string, std::string>> routes;
    std::set<std::string> routed;                            // appears in some route
  };

  void record(const std::string& name, const std::map<std::string, std::string>& attrs, std::size_t line,
              bool self_closing, std::vector<Zone>& zones) {
    auto get = [&attrs](const char* key) {
      const auto it = attrs.find(key);
      return it == attrs.end() ? std::string() : it->second;
    };
    check_rates(name, attrs, line);
    if (name == "zone" || name == "AS") {
      if (!self_closing) zones.push_back(Zone{get("id"), get("routing"), {}, {}, {}});
    } else if (!zones.empty() && name == "host") {
      zones.back().hosts.emplace_back(get("id"), line);
    } else if (!zones.empty() && name == "route") {
      const std::string src = get("src"), dst = get("dst"), sym = get("symmetrical");
      zones.back().routes.insert({src, dst});
      if (sym != "NO" && sym != "no") zones.back().routes.insert({dst, src});
      zones.back().routed.insert(src);
      zones.back().routed.insert(dst);
    }
  }

  /// SimGrid 3.32 aborts ("The Impossible Did Happen") when a flow crosses a zero-bandwidth link or
  /// a host computes at speed 0: every speed and bandwidth must be a number > 0 (with its unit;
  /// several comma-separated pstates each).
  void check_rates(const std::string& element, const std::map<std::string, std::string>& attrs, std::size_t line) const {
    for (const char* key : {"speed", "bandwidth", "bw", "bb_bw", "loopback_bw"}) {
      const auto it = attrs.find(key);
      if (it == attrs.end()) continue;
      std::stringstream values(it->second);
      std::string value;
      while (std::getline(values, value, ',')) {
        const char* begin = value.c_str();
        while (std::isspace(static_cast<unsigned char>(*begin))) ++begin;
        char* end = nullptr;
        const double number = std::strtod(begin, &end);
        if (end == begin) continue;  // not a number: SimGrid names it when it reads the file
        if (!(number > 0) || !std::isfinite(number)) {
          const auto id = attrs.find("id");
          fail(line, "<" + element + (id == attrs.end() ? "" : " id=\"" + id->second + "\"") + "> has " + key + " \"" +
                         it->second + "\": it must be > 0 (SimGrid cannot run a flow or a computation at rate 0)");
        }
      }
    }
  }

  /// SimGrid 3.32 crashes on a flow between hosts without a route: a Full zone needs a route for
  /// every pair of its hosts, and in Floyd / Dijkstra zones every host must be on some route.
  void check_zone(const Zone& z) const {
    if (z.hosts.size() < 2) return;
    if (z.routing == "Full") {
      for (const auto& [a, line_a] : z.hosts)
        for (const auto& [b, line_b] : z.hosts)
          if (a != b && !z.routes.count({a, b}))
            fail(line_b, "host '" + b + "' has no route from host '" + a + "' in zone '" + z.id +
                             "' (hosts left unconnected)");
    } else if (z.routing == "Floyd" || z.routing == "Dijkstra" || z.routing == "DijkstraCache") {
      for (const auto& [h, line] : z.hosts)
        if (!z.routed.count(h))
          fail(line, "host '" + h + "' is on no route of zone '" + z.id + "' (hosts left unconnected)");
    }
  }

  [[noreturn]] void fail(std::size_t line, const std::string& detail) const {
    throw InputError(source_, "line " + std::to_string(line), "malformed SimGrid XML: " + detail);
  }
  std::size_t line_at(std::size_t pos) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos && i < text_.size(); ++i)
      if (text_[i] == '\n') ++line;
    return line;
  }
  bool starts_with(const char* s) const { return text_.compare(pos_, std::char_traits<char>::length(s), s) == 0; }
  void skip_past(const char* end, const char* what) {
    const std::size_t at = text_.find(end, pos_);
    if (at == std::string::npos) fail(line_at(pos_), what);
    pos_ = at + std::char_traits<char>::length(end);
  }
  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string read_name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '-' || text_[pos_] == ':' || text_[pos_] == '.'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }
  /// Reads attributes up to '>' or '/>'; returns true for a self-closing tag.
  bool read_attributes(std::size_t line, std::map<std::string, std::string>& attrs) {
    while (true) {
      skip_spaces();
      if (pos_ >= text_.size()) fail(line, "unterminated tag");
      if (text_[pos_] == '>') {
        ++pos_;
        return false;
      }
      if (starts_with("/>")) {
        pos_ += 2;
        return true;
      }
      const std::string attr = read_name();
      if (attr.empty()) fail(line_at(pos_), "unexpected character '" + std::string(1, text_[pos_]) + "' in a tag");
      skip_spaces();
      if (pos_ >= text_.size() || text_[pos_] != '=') fail(line_at(pos_), "attribute '" + attr + "' has no value");
      ++pos_;
      skip_spaces();
      if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\''))
        fail(line_at(pos_), "attribute '" + attr + "' value is not quoted");
      const char quote = text_[pos_++];
      const std::size_t end = text_.find(quote, pos_);
      if (end == std::string::npos) fail(line, "unterminated value of attribute '" + attr + "'");
      attrs[attr] = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
    }
  }

  std::string text_;
  std::string source_;
  std::size_t pos_ = 0;
};

}  // namespace

void check_simgrid_xml(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "", "cannot open SimGrid XML platform file");
  std::ostringstream text;
  text << in.rdbuf();
  XmlScanner(text.str(), path.string()).check();
}

}  // namespace trainsim::platforms::detail
