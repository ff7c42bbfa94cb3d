// play_flows (simulator/engine/src/coarse_flows.cpp) against hand-derived timelines and against
// SimGrid's own flows. What it must reproduce is how SimGrid 3.32's CM02 model shares a link
// (src/surf/network_cm02.cpp, src/kernel/lmm/maxmin.cpp):
//   - a flow waits its route latency × latency-factor before it takes any bandwidth (its maxmin
//     variable is created with penalty 0 and given its sharing penalty when the latency is paid);
//   - its sharing penalty is the route latency, unscaled (plus weight-S/bandwidth per link, and
//     weight-S is 0 in trainsim's ideal model), or 1 when the route has no latency;
//   - max-min fairness gives each flow λ/penalty, so flows sharing a link get bandwidth in
//     inverse proportion to their route latency (CM02's model of TCP's RTT unfairness).
// Each timeline below is derived by hand and fails if the latency weighting were dropped (equal
// shares) or inverted, or if the penalty used the scaled latency.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "coarse_flows.hpp"
#include "trainsim/platforms/simgrid_builder.hpp"
#include "trainsim_test/fork.hpp"

namespace te = trainsim::engine;
namespace sg4 = simgrid::s4u;

namespace {

constexpr double kBandwidth = 1e9;  // B/s of the shared link

// SimGrid's engine with trainsim's ideal network model (platforms::configure_max_min_network), in a
// forked child (one engine per process).
sg4::Engine& ideal_engine() {
  static int argc = 1;
  static char name[] = "coarse_flows_test";
  static char* argv[] = {name, nullptr};
  static sg4::Engine engine(&argc, argv);
  trainsim::platforms::configure_max_min_network();
  return engine;
}

std::string join(const std::vector<double>& values) {
  std::ostringstream out;
  out.precision(17);
  for (double v : values) out << v << " ";
  return out.str();
}

std::vector<double> split(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> out;
  for (double v; in >> v;) out.push_back(v);
  return out;
}

// play_flows on flows that each cross one shared link of kBandwidth, with the given route
// latencies and sizes, in a forked child.
std::vector<double> play_on_one_link(const std::vector<double>& latency_s, const std::vector<double>& bytes,
                                     double latency_factor) {
  return split(trainsim_test::run_forked([&] {
    ideal_engine();
    sg4::NetZone* zone = sg4::create_full_zone("zone");
    sg4::Link* shared = zone->create_link("shared", kBandwidth)->seal();
    zone->seal();
    std::vector<te::RouteInfo> routes;
    for (double latency : latency_s) routes.push_back({{shared}, latency, kBandwidth});
    std::vector<const te::RouteInfo*> pointers;
    for (const auto& r : routes) pointers.push_back(&r);
    return join(te::play_flows(pointers, bytes, latency_factor));
  }));
}

void expect_times(const std::vector<double>& got, const std::vector<double>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], expected[i] * 1e-9) << "flow " << i;
}

}  // namespace

// Flow 0 (latency 1 ms, 5 MB) runs alone at 1 GB/s from 1 ms to 3 ms (2 MB). From 3 ms flow 1
// (latency 3 ms, 3 MB) shares the link: rates λ/1ms and λ/3ms summing to 1 GB/s, i.e. 0.75 and
// 0.25 GB/s. Flow 0's last 3 MB take 4 ms: it ends at 7 ms, when flow 1 has moved 1 MB; flow 1's
// last 2 MB alone take 2 ms: 9 ms. (Equal shares would end both at 9 ms; shares inverted, flow 1
// at 7 ms and flow 0 at 9 ms.)
TEST(PlayFlows, FlowsShareALinkInInverseProportionToTheirRouteLatency) {
  expect_times(play_on_one_link({1e-3, 3e-3}, {5e6, 3e6}, 1.0), {7e-3, 9e-3});
}

// A route without latency starts sharing at once with penalty 1, against 1e-3 for a 1 ms route:
// shares 1/1001 and 1000/1001. Flow 0 (no latency, 2 MB) moves 1 MB alone by 1 ms; then flow 1
// (1 ms, 1 MB) takes 1000/1001 GB/s and ends at 1 + 1.001 = 2.001 ms while flow 0 moves 1 kB; flow
// 0's last 999 kB alone take 0.999 ms: 3 ms. (Equal shares would end flow 1 at 3 ms.)
TEST(PlayFlows, ARouteWithoutLatencyHasPenaltyOne) {
  expect_times(play_on_one_link({0.0, 1e-3}, {2e6, 1e6}, 1.0), {3e-3, 2.001e-3});
}

// The latency factor delays the start but the penalty stays the unscaled latency: with factor 2,
// flow 1 starts at 2 ms, flow 0 (3 MB) has 1 MB left, flow 1 takes 1000/1001 GB/s and ends at
// 3.001 ms, flow 0 at 4 ms. (A penalty of the scaled 2 ms would give shares 1/501 and 500/501
// and end flow 1 at 3.002 ms.)
TEST(PlayFlows, TheLatencyFactorDelaysTheStartButNotTheWeight) {
  expect_times(play_on_one_link({0.0, 1e-3}, {3e6, 1e6}, 2.0), {4e-3, 3.001e-3});
}

// Two latency-weighted flows and the scaled start: with factor 2 they start at 2 ms and 6 ms;
// flow 0 moves 4 MB alone, its last 1 MB at 0.75 GB/s ends at 7.333 ms; flow 1 has then moved
// 1/3 MB and its last 8/3 MB alone end at 10 ms.
TEST(PlayFlows, ScaledLatenciesKeepTheirRatio) {
  expect_times(play_on_one_link({1e-3, 3e-3}, {5e6, 3e6}, 2.0), {7e-3 + 1.0 / 3.0 * 1e-3, 10e-3});
}

// An empty flow ends when its latency is paid and takes no bandwidth from the others: flow 1
// (1 ms, 1 MB) still ends at 2 ms.
TEST(PlayFlows, AnEmptyFlowEndsWithItsLatency) {
  expect_times(play_on_one_link({1.5e-3, 1e-3}, {0.0, 1e6}, 1.0), {1.5e-3, 2e-3});
}

// The same flows through SimGrid itself: hosts whose routes cross a private latency link and one
// shared link, comms started together, their completion dates against play_flows on the same
// routes (latency, shared link and the private links' own constraints).
TEST(PlayFlows, MatchesSimGridsOwnFlows) {
  const std::string out = trainsim_test::run_forked([] {
    sg4::Engine& engine = ideal_engine();
    sg4::NetZone* zone = sg4::create_full_zone("zone");
    sg4::Link* shared = zone->create_link("shared", kBandwidth)->seal();
    const std::vector<double> latency_s = {1e-3, 3e-3, 0.0, 2e-3};
    const std::vector<double> bytes = {5e6, 3e6, 2e6, 4e6};
    std::vector<sg4::Host*> sources, destinations;
    std::vector<te::RouteInfo> routes;
    for (std::size_t f = 0; f < latency_s.size(); ++f) {
      const std::string id = std::to_string(f);
      sources.push_back(zone->create_host("src" + id, 1e9)->seal());
      destinations.push_back(zone->create_host("dst" + id, 1e9)->seal());
      // Each flow's own link is fast enough never to bind but is a constraint all the same.
      sg4::Link* own = zone->create_link("own" + id, 100 * kBandwidth)->set_latency(latency_s[f])->seal();
      zone->add_route(sources[f]->get_netpoint(), destinations[f]->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(own), sg4::LinkInRoute(shared)}, false);
      routes.push_back({{own, shared}, latency_s[f], kBandwidth});
    }
    zone->seal();
    std::vector<double> simgrid_finish(bytes.size(), -1);
    sg4::Actor::create("driver", sources[0], [&] {
      std::vector<sg4::CommPtr> comms;
      for (std::size_t f = 0; f < bytes.size(); ++f)
        comms.push_back(sg4::Comm::sendto_async(sources[f], destinations[f], static_cast<std::uint64_t>(bytes[f])));
      std::vector<std::size_t> index(bytes.size());
      for (std::size_t f = 0; f < index.size(); ++f) index[f] = f;
      while (!comms.empty()) {
        const auto done = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
        simgrid_finish[index[done]] = sg4::Engine::get_clock();
        comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(done));
        index.erase(index.begin() + static_cast<std::ptrdiff_t>(done));
      }
    });
    engine.run();
    std::vector<const te::RouteInfo*> pointers;
    for (const auto& r : routes) pointers.push_back(&r);
    const std::vector<double> played = te::play_flows(pointers, bytes, 1.0);
    return join(simgrid_finish) + "| " + join(played);
  });
  const auto bar = out.find('|');
  const std::vector<double> simgrid = split(out.substr(0, bar));
  const std::vector<double> played = split(out.substr(bar + 1));
  ASSERT_EQ(simgrid.size(), 4u);
  ASSERT_EQ(played.size(), 4u);
  for (std::size_t f = 0; f < simgrid.size(); ++f) {
    EXPECT_GT(simgrid[f], 0) << "flow " << f;
    // SimGrid solves to its maxmin precision (1e-5 by default) and rounds dates to its surf
    // precision; play_flows solves exactly.
    EXPECT_NEAR(played[f], simgrid[f], simgrid[f] * 1e-5) << "flow " << f;
  }
}
