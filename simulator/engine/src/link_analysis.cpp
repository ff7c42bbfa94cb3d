#include "link_analysis.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

namespace {

/// Incast links and the node ("node 0", "server node 1") of the server each carries the incast of.
using IncastLinks = std::unordered_map<const sg4::Link*, std::string>;

bool fatpipe(const sg4::Link* l) {
  return l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE;
}

bool in_server_node(const platforms::LinkInfo& info, const plan::PlannedServer& server) {
  return server.host == plan::ServerHost::server_node ? info.server_node == server.index
                                                      : info.node >= 0 && info.node == server.node;
}

/// Links inside a server's node that carry the flows of two or more workers to or from it (the
/// routes the pushes and pulls took; Simulation caches them).
IncastLinks incast_links(Simulation& sim, const plan::TrainingPlan& plan, const std::vector<sg4::Host*>& servers) {
  IncastLinks out;
  std::vector<const sg4::Link*> path;
  for (std::size_t i = 0; i < plan.servers.size(); ++i) {
    std::unordered_map<const sg4::Link*, int> workers;
    // Under worker aggregation the nodes' CPUs push and pull, else every GPU.
    const bool hosts = plan.worker_aggregation == "host";
    for (int w = 0; w < (hosts ? plan.nodes : plan.gpus); ++w) {
      sg4::Host* gpu = hosts ? sim.node_cpus().at(static_cast<std::size_t>(w)) : sim.gpu(w);
      if (gpu == servers[i]) continue;
      path.assign(sim.route(gpu, servers[i]).links.begin(), sim.route(gpu, servers[i]).links.end());
      const auto& back = sim.route(servers[i], gpu).links;
      path.insert(path.end(), back.begin(), back.end());
      std::sort(path.begin(), path.end());
      path.erase(std::unique(path.begin(), path.end()), path.end());  // a shared link serves both ways
      for (const sg4::Link* l : path) ++workers[l];
    }
    const plan::PlannedServer& server = plan.servers[i];
    const std::string node = server.host == plan::ServerHost::server_node
                                 ? "server node " + std::to_string(server.index)
                                 : "node " + std::to_string(server.node);
    for (const auto& [link, count] : workers)
      if (count >= 2 && in_server_node(sim.link_info(link), server)) out.emplace(link, node);
  }
  return out;
}

}  // namespace

LinkFindings analyse_links(Simulation& sim, const plan::TrainingPlan& plan, const std::vector<sg4::Host*>& servers,
                           const ExposedTraffic& exposed, double iteration_s, std::size_t top_k) {
  const IncastLinks incast = plan.servers.empty() ? IncastLinks{} : incast_links(sim, plan, servers);
  struct Connection {
    const platforms::LinkInfo* info = nullptr;
    double limit_s = 0;
    std::string incast_into;
    std::size_t op = std::size_t(-1);  ///< the last operation that loaded it
    double op_saturation = 0;          ///< in that operation, the busier direction's
  };
  std::unordered_map<std::string_view, Connection> connections;  // keys view the built platform's names
  // What each link is, asked of SimGrid and the platform once, when the link is first seen (five
  // look-ups per link and operation were 10 % of a 65,536-GPU iteration), and its limit time.
  struct LinkEntry {
    bool met = false;
    bool fatpipe = false;
    double capacity_Bps = 0;
    double limit_s = 0;
    Connection* connection = nullptr;  // entries of `connections` stay put
    const std::string* incast = nullptr;
  };
  std::vector<LinkEntry> links(sim.link_count());  // by Simulation::link_index
  std::vector<Connection*> loaded;                 // the connections the current operation loaded
  for (std::size_t i = 0; i < exposed.ops.size(); ++i) {
    const OpTraffic& op = exposed.ops[i];
    const double duration = op.end_s - op.start_s;
    double inside = std::max(0.0, std::min(op.end_s, exposed.end_s) - std::max(op.start_s, exposed.begin_s));
    for (const auto& [begin, end] : exposed.waits)
      inside += std::max(0.0, std::min(op.end_s, end) - std::max(op.start_s, begin));
    if (duration <= 0 || inside <= 0) continue;
    loaded.clear();
    for (const LinkBytes& lb : op.bytes) {
      LinkEntry& link = links[sim.link_index(lb.link)];
      if (!link.met) {
        link.met = true;
        link.fatpipe = fatpipe(lb.link);
        if (!link.fatpipe) {
          link.capacity_Bps = sim.capacity_Bps(lb.link);
          const platforms::LinkInfo& info = sim.link_info(lb.link);
          link.connection = &connections[info.connection];
          link.connection->info = &info;
          if (const auto in = incast.find(lb.link); in != incast.end()) link.incast = &in->second;
        }
      }
      if (link.fatpipe) continue;
      const double saturation = std::min(1.0, lb.bytes / link.capacity_Bps / duration);
      link.limit_s += saturation * inside;
      Connection& c = *link.connection;
      if (link.incast) c.incast_into = *link.incast;
      // Per operation, the busier direction's share of each connection it loaded.
      if (c.op != i) {
        c.op = i;
        c.op_saturation = 0;
        loaded.push_back(&c);
      }
      c.op_saturation = std::max(c.op_saturation, saturation);
    }
    for (Connection* c : loaded) c->limit_s += c->op_saturation * inside;
  }

  LinkFindings out;
  const LinkReport report = sim.link_report(top_k);
  out.network_bytes = report.total_network_bytes;
  for (const LinkUsage& u : report.busiest) {
    const LinkEntry& limit = links[sim.link_index(u.link)];
    out.busiest.push_back(plan::LinkLoad{u.info->name, std::string(platforms::to_string(u.info->link_class)), u.bytes,
                                         u.busy_fraction,
                                         !limit.met || limit.fatpipe ? 0.0 : limit.limit_s / iteration_s});
  }
  for (const auto& [name, c] : connections)
    if (c.limit_s > 0)
      out.connections.push_back(plan::ConnectionLimit{std::string(name),
                                                      std::string(platforms::to_string(c.info->link_class)),
                                                      c.limit_s / iteration_s, c.incast_into});
  return out;
}

}  // namespace trainsim::engine
