#include "trainsim/platforms/link_names.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "trainsim/core/enum_names.hpp"

namespace trainsim::platforms {

namespace {
constexpr EnumNames<LinkClass, 7> kLinkClasses{{{{LinkClass::nvlink, "nvlink"},
                                                 {LinkClass::nvswitch, "nvswitch"},
                                                 {LinkClass::pcie, "pcie"},
                                                 {LinkClass::memory, "memory"},
                                                 {LinkClass::nic, "nic"},
                                                 {LinkClass::fabric, "fabric"},
                                                 {LinkClass::unknown, "unknown"}}}};
}  // namespace

std::string_view to_string(LinkClass c) {
  return kLinkClasses.name(c);
}

LinkClass link_class_from_id(std::string_view id) {
  // No class name is a prefix of another, so the order does not matter; "nice" is not "nic".
  static constexpr std::array classes{LinkClass::nvswitch, LinkClass::nvlink, LinkClass::fabric,
                                      LinkClass::memory,   LinkClass::pcie,   LinkClass::nic};
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (LinkClass c : classes) {
    const std::string_view name = to_string(c);
    if (id.size() < name.size()) continue;
    if (!std::equal(name.begin(), name.end(), id.begin(), [&](char a, char b) { return a == lower(b); })) continue;
    if (id.size() == name.size() || !std::isalpha(static_cast<unsigned char>(id[name.size()]))) return c;
  }
  return LinkClass::unknown;
}

std::vector<unsigned> fat_tree_parents(const FatTreeShape& shape) {
  std::vector<unsigned> up{1};
  for (std::size_t i = 1; i < shape.down.size(); ++i)
    up.push_back(i == 1 ? shape.down[0] / shape.oversubscription : shape.down[i - 1]);
  return up;
}

namespace {

/// A SimGrid link name cut at '_', with the direction suffix taken off.
struct Tokens {
  std::vector<std::string_view> parts;
  bool up = true;  ///< "_UP" (or no suffix) vs "_DOWN"
};

std::optional<Tokens> tokenize(std::string_view name) {
  Tokens t;
  if (name.ends_with("_UP")) {
    name.remove_suffix(3);
  } else if (name.ends_with("_DOWN")) {
    name.remove_suffix(5);
    t.up = false;
  } else {
    return std::nullopt;  // the builder asks for split-duplex links only
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find('_', start);
    t.parts.push_back(name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return t;
}

/// Matches `parts` (from `offset`) against `pattern`, where "#" is an unsigned number collected into
/// `numbers`.
bool match(const Tokens& t, std::size_t offset, std::initializer_list<std::string_view> pattern,
           std::vector<unsigned long>& numbers) {
  numbers.clear();
  if (t.parts.size() != offset + pattern.size()) return false;
  std::size_t i = offset;
  for (std::string_view p : pattern) {
    const std::string_view part = t.parts[i++];
    if (p != "#") {
      if (part != p) return false;
      continue;
    }
    unsigned long v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return false;
    numbers.push_back(v);
  }
  return true;
}

/// Names one end of a cable: a leaf of the topology or a switch/router.
class Namer {
public:
  Namer(const PlatformSpec& shaped, int worker_nodes)
      : spec_(shaped),
        leaves_(static_cast<unsigned long>(shaped.nodes)),
        workers_(static_cast<unsigned long>(worker_nodes)) {
    if (spec_.network.topology == TopologyKind::single_switch || spec_.network.topology == TopologyKind::fat_tree) {
      // SimGrid's FatTreeZone::generate_switches: level ℓ+1 holds Π_{j≤ℓ} up[j] · Π_{j>ℓ} down[j]
      // switches; ids count down from 2·leaves − 1, level by level, position by position.
      const FatTreeShape shape = spec_.network.topology == TopologyKind::fat_tree
                                     ? spec_.network.fat_tree
                                     : FatTreeShape{{static_cast<unsigned>(leaves_)}, 1};
      const std::vector<unsigned> up = fat_tree_parents(shape);
      for (std::size_t level = 0; level < shape.down.size(); ++level) {
        unsigned long count = 1;
        for (std::size_t j = 0; j <= level; ++j) count *= up[j];
        for (std::size_t j = level + 1; j < shape.down.size(); ++j) count *= shape.down[j];
        switches_per_level_.push_back(count);
      }
    }
  }

  /// A leaf (worker or server node) by its index in the topology; sets `info`'s owner.
  std::string leaf(unsigned long k, LinkInfo& info) const {
    if (k < workers_) {
      info.node = static_cast<int>(k);
      return "node " + std::to_string(k);
    }
    info.server_node = static_cast<int>(k - workers_);
    return "server node " + std::to_string(k - workers_);
  }

  /// A fat tree switch by SimGrid id: its level (0 = the one above the leaves) and name. Switch ids
  /// may equal leaf ids (SimGrid counts them down from 2·leaves − 1, past the leaves' ids when a
  /// tree has more switches than leaves), so only the position in a link tells which one is meant.
  std::optional<std::pair<std::size_t, std::string>> fat_tree_switch(unsigned long id) const {
    if (id >= 2 * leaves_) return std::nullopt;
    unsigned long order = 2 * leaves_ - 1 - id;
    const std::size_t levels = switches_per_level_.size();
    for (std::size_t level = 0; level < levels; ++level) {
      if (order >= switches_per_level_[level]) {
        order -= switches_per_level_[level];
        continue;
      }
      if (levels == 1) return std::pair{level, std::string("switch")};
      static constexpr std::array<const char*, 3> names{"leaf", "spine", "super-spine"};
      const std::string kind = level < names.size() ? names[level] : "level-" + std::to_string(level + 1) + " switch";
      return std::pair{level, kind + " " + std::to_string(order)};
    }
    return std::nullopt;
  }

  unsigned long leaves() const { return leaves_; }

  /// The dimension in which the torus cable from leaf a to its next neighbour b wraps around
  /// (a sits at the dimension's last position); nullopt when it does not wrap.
  std::optional<std::size_t> torus_wrap_dimension(unsigned long a, unsigned long b) const {
    unsigned long stride = 1;
    for (std::size_t j = 0; j < spec_.network.torus_dimensions.size(); ++j) {
      const unsigned long size = spec_.network.torus_dimensions[j];
      if (size > 1 && (a / stride) % size == size - 1 && b + (size - 1) * stride == a) return j;
      stride *= size;
    }
    return std::nullopt;
  }

private:
  const PlatformSpec& spec_;
  unsigned long leaves_, workers_;
  std::vector<unsigned long> switches_per_level_;
};

/// Names a link of the connection between `first` and `second`: first → second when `up`.
void name_link(LinkInfo& info, const std::string& first, const std::string& second, bool up) {
  info.name = up ? first + " → " + second : second + " → " + first;
  info.connection = first + " ↔ " + second;
}
std::string router(unsigned long r) {
  return "router " + std::to_string(r);
}

std::optional<LinkInfo> name_fat_tree_link(const Tokens& t, const Namer& namer) {
  std::vector<unsigned long> n;
  if (!match(t, 0, {"link", "from", "#", "#", "#"}, n)) return std::nullopt;
  LinkInfo info;
  info.link_class = LinkClass::fabric;
  const auto parent = namer.fat_tree_switch(n[1]);  // a parent is always a switch
  if (!parent) return std::nullopt;
  std::string child;
  if (parent->first == 0) {  // under the first switch level: a leaf
    if (n[0] >= namer.leaves()) return std::nullopt;
    child = namer.leaf(n[0], info);
  } else {
    const auto below = namer.fat_tree_switch(n[0]);
    if (!below || below->first + 1 != parent->first) return std::nullopt;
    child = below->second;
  }
  name_link(info, child, parent->second, t.up);  // _UP is child → parent (FatTreeLink's up_link_)
  return info;
}

std::optional<LinkInfo> name_torus_link(const Tokens& t, const Namer& namer) {
  // "<zone>_link_from_<a>_to_<b>": a's link to its next neighbour b in one dimension; _UP is a → b.
  std::vector<unsigned long> n;
  if (t.parts.size() < 5 || !match(t, t.parts.size() - 5, {"link", "from", "#", "to", "#"}, n)) return std::nullopt;
  if (n[0] >= namer.leaves() || n[1] >= namer.leaves()) return std::nullopt;
  LinkInfo info, ignored;
  info.link_class = LinkClass::fabric;
  name_link(info, namer.leaf(n[0], ignored), namer.leaf(n[1], ignored), t.up);
  // The cable from the last position of a dimension back to its first: in a dimension of size 2
  // it joins the same two nodes as the other cable, and the names must still differ.
  if (const auto wrap = namer.torus_wrap_dimension(n[0], n[1])) {
    const std::string where = " (wrap-around in dimension " + std::to_string(*wrap) + ")";
    info.name += where;
    info.connection += where;
  }
  return info;  // a cable between two nodes belongs to neither
}

/// Dragonfly names (SimGrid's DragonflyZone::generate_links). Routers are numbered
/// (group·chassis + chassis)·routers + blade; router r serves leaves r·nodes_per_router + j.
class DragonflyNamer {
public:
  DragonflyNamer(const DragonflyShape& shape, const std::vector<std::optional<Tokens>>& all) : d_(shape) {
    // A green link's name gives its chassis within the group, not the group: the group comes from
    // its creation rank among green links (SimGrid numbers every link it creates in order).
    std::vector<unsigned long> n;
    for (const auto& t : all)
      if (t && match(*t, 0, {"green", "link", "in", "chassis", "#", "between", "routers", "#", "and", "#", "#"}, n))
        first_green_ = std::min(first_green_, n[3]);
  }

  std::optional<LinkInfo> name(const Tokens& t, const Namer& namer) const {
    std::vector<unsigned long> n;
    LinkInfo info;
    info.link_class = LinkClass::fabric;
    const unsigned long per_group = static_cast<unsigned long>(d_.chassis) * d_.routers;
    const unsigned long routers = per_group * d_.groups;
    if (match(t, 0, {"local", "link", "from", "router", "#", "to", "node", "#", "#"}, n)) {
      // _UP carries node → router (DragonflyRouter::my_nodes_[2·node]).
      const unsigned long leaf = n[0] * d_.nodes_per_router + n[1];
      if (n[0] >= routers || n[1] >= d_.nodes_per_router || leaf >= namer.leaves()) return std::nullopt;
      name_link(info, namer.leaf(leaf, info), router(n[0]), t.up);
      return info;
    }
    if (match(t, 0, {"green", "link", "in", "chassis", "#", "between", "routers", "#", "and", "#", "#"}, n)) {
      const unsigned long pairs = static_cast<unsigned long>(d_.routers) * (d_.routers - 1) / 2;
      const unsigned long chassis = pairs > 0 ? (n[3] - first_green_) / pairs : 0;  // group·chassis + chassis
      if (chassis % d_.chassis != n[0] || n[1] >= d_.routers || n[2] >= d_.routers || chassis * d_.routers >= routers)
        return std::nullopt;
      name_link(info, router(chassis * d_.routers + n[1]), router(chassis * d_.routers + n[2]), t.up);
      return info;
    }
    if (match(t, 0, {"black", "link", "in", "group", "#", "between", "chassis", "#", "and", "#", "blade", "#", "#"},
              n)) {
      if (n[0] >= d_.groups || n[1] >= d_.chassis || n[2] >= d_.chassis || n[3] >= d_.routers) return std::nullopt;
      name_link(info, router(n[0] * per_group + n[1] * d_.routers + n[3]),
                router(n[0] * per_group + n[2] * d_.routers + n[3]), t.up);
      return info;
    }
    if (match(t, 0, {"blue", "link", "between", "group", "#", "and", "#", "routers", "#", "and", "#", "#"}, n)) {
      if (n[2] >= routers || n[3] >= routers) return std::nullopt;
      name_link(info, router(n[2]), router(n[3]), t.up);
      return info;
    }
    return std::nullopt;
  }

private:
  const DragonflyShape& d_;
  unsigned long first_green_ = std::numeric_limits<unsigned long>::max();
};

}  // namespace

std::vector<LinkInfo> name_topology_links(const std::vector<std::string>& simgrid_names, const PlatformSpec& shaped,
                                          int worker_nodes) {
  std::vector<std::optional<Tokens>> tokens;
  tokens.reserve(simgrid_names.size());
  for (const auto& name : simgrid_names) tokens.push_back(tokenize(name));
  const Namer namer(shaped, worker_nodes);
  const DragonflyNamer dragonfly(shaped.network.dragonfly, tokens);
  std::vector<LinkInfo> out;
  out.reserve(simgrid_names.size());
  for (std::size_t i = 0; i < simgrid_names.size(); ++i) {
    std::optional<LinkInfo> info;
    if (tokens[i]) {
      switch (shaped.network.topology) {
        case TopologyKind::single_switch:
        case TopologyKind::fat_tree: info = name_fat_tree_link(*tokens[i], namer); break;
        case TopologyKind::torus: info = name_torus_link(*tokens[i], namer); break;
        case TopologyKind::dragonfly: info = dragonfly.name(*tokens[i], namer); break;
      }
    }
    out.push_back(info ? std::move(*info) : LinkInfo{simgrid_names[i], simgrid_names[i], LinkClass::fabric, -1, -1});
  }
  return out;
}

}  // namespace trainsim::platforms
