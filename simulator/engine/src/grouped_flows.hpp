#pragma once
// Private to the engine: the coarse representation of parameter-server pushes and pulls. Flows
// of one transfer with the same size, route latency, sharing penalty and bound form a group,
// whichever worker and server they join; a group's flows are advanced together as a fluid at the
// max-min rate SimGrid's network model would give each of them (coarse_flows.hpp's solver, with
// the model's sharing penalties, bounds and cross-traffic weights), re-solved only when a group
// starts or ends. A push of W workers to S servers is then one group instead of W × S SimGrid
// flows where the nodes are alike (a sharded variable on every node's colocated server).
//
// A group's members share one rate only while the links that fix it fix all of them: progressive
// filling fixes the group in some round, at that round's level, and each member crossing a link
// tight in that round (a server's NIC, the incast; or, all at one level, every worker's NIC) is
// fixed there at flow level too. Members crossing no such link (a worker whose NIC also carries
// its node's colocated server's pulls, while the others' do not) would rise further: they split
// off into a group of their own and the rates are solved again; a split is permanent. So every
// flow moves at its max-min rate, as at flow level, and groups stay few where nodes are alike.
//
// Two savings keep the solve cheap where groups are many (colocated servers: every node's NIC
// also carries its own server's traffic, and each pull that starts peels its node's worker off
// every push in flight): links that every declared route crosses together (a NIC and its switch
// port, a lone GPU's PCIe link and its switch's uplink) are one constraint, and when groups only
// end, the groups whose level (rate × penalty) is below the lowest ended group's keep their rates
// and only the others are solved again (progressive filling reaches that level through the same
// events with or without the ended groups, since none of their links fills below it).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "coarse_flows.hpp"
#include "trainsim/engine/simulation.hpp"

namespace trainsim::engine {

/// The fluid executor of grouped flows for one simulation. Create it before the actors that
/// transfer through it; its manager actor is a daemon (it ends with the simulation).
class GroupedFlows {
public:
  /// `routes`: every (source, destination) pair that transfers will use, or empty. With them,
  /// links crossed by exactly the same declared routes (and of the same capacity) are solved as
  /// one constraint; a transfer on an undeclared pair is then a broken invariant.
  explicit GroupedFlows(Simulation& sim, const std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>>& routes = {});
  GroupedFlows(const GroupedFlows&) = delete;
  GroupedFlows& operator=(const GroupedFlows&) = delete;

  /// One batch of flows of `bytes` each, from srcs[i] to dsts[i] (parallel, same length ≥ 1).
  struct Batch {
    std::vector<simgrid::s4u::Host*> srcs;
    std::vector<simgrid::s4u::Host*> dsts;
    double bytes = 0;
  };
  /// Starts every flow of every batch now and returns when all have arrived (call from an actor).
  /// Counts the flows' bytes per route, for account_bytes(). Returns the number of groups they
  /// formed (before any split).
  std::size_t transfer(const std::vector<Batch>& batches);

  /// Adds the bytes counted since the last call to the simulation's link and network totals
  /// (Simulation::account_flow, once per route: whole bytes add up exactly, so the totals are
  /// those of one account per flow). Call it before reading them.
  void account_bytes();

private:
  /// What one (source, destination) pair's flow is to the solver, computed once per pair: its
  /// links (declared duplicates as one constraint) with SimGrid's consumption weights, its
  /// latency, sharing penalty and bound.
  struct Route {
    std::vector<std::pair<std::size_t, double>> uses;  // (link index, weight), a constraint once
    double latency_s = 0;
    double penalty = 1;
    double bound = std::numeric_limits<double>::infinity();
    simgrid::s4u::Host* src = nullptr;
    simgrid::s4u::Host* dst = nullptr;
    double bytes = 0;  // whole bytes sent since the last account_bytes()
  };
  struct Group {
    MaxMinFlow flow;            // per member: penalty and bound; uses weighted by member count
    std::vector<std::uint32_t> members;  // each member's route (index into routes_)
    std::vector<std::size_t> common;  // the links every member crosses
    std::vector<char> covering;       // per use: tight when a solve last found every member on a tight link
    double remaining = 0;       // bytes left per member
    double active_at_s = 0;     // when its latency is paid and it starts sharing bandwidth
    double rate_Bps = 0;        // per member, while active
    bool active = false;
    bool frozen = false;        // keeps its rate in the current partial solve
    std::size_t transfer = 0;   // index into pending_
  };
  std::vector<std::pair<const simgrid::s4u::Link*, double>> link_weights(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  std::uint32_t route_id(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  void declare(const std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>>& routes);
  void manager();
  void advance_to(double now_s);
  void solve();
  bool solve_once();
  void set_uses(Group& g);
  double next_event_s() const;
  std::size_t link_index(const simgrid::s4u::Link* link);

  Simulation& sim_;
  double weight_S_ = 0;      // SimGrid's network/weight-S
  double tcp_gamma_ = 0;     // network/TCP-gamma
  bool crosstraffic_ = false;
  std::unordered_map<const simgrid::s4u::Link*, std::size_t> link_index_;
  std::unordered_map<const simgrid::s4u::Link*, const simgrid::s4u::Link*> representative_;  // declared duplicates
  bool declared_ = false;
  bool routes_open_ = true;  // routes may still be added (no declaration, or during it)
  struct PairHash {
    std::size_t operator()(const std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>& p) const noexcept {
      return std::hash<const void*>()(p.first) * 0x9e3779b97f4a7c15ULL ^ std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, std::uint32_t, PairHash> route_ids_;
  std::vector<Route> routes_;
  std::vector<double> capacity_;
  std::vector<Group> groups_;               // live groups, in creation order
  std::vector<std::size_t> pending_;        // per transfer: groups still moving
  std::vector<simgrid::s4u::SemaphorePtr> done_;  // per transfer
  simgrid::s4u::SemaphorePtr wake_;
  double updated_s_ = 0;
  bool dirty_ = false;
  bool full_solve_ = true;  // a group started since the last solve: every rate may change
  double ended_level_ = std::numeric_limits<double>::infinity();  // lowest level of the groups ended since
  std::vector<double> load_;      // per link: what the active groups use at their current rates
  std::vector<double> residual_;  // capacity_ less the frozen groups' use, during a partial solve
  std::vector<std::size_t> position_;  // set_uses' scratch, per link: index into a group's uses or npos
  std::vector<std::size_t> tight_round_;  // solve_once's scratch: per link, the filling round it was tight in
};

}  // namespace trainsim::engine
