// Link classes and names without SimGrid: the XML naming convention and the reading of the names
// SimGrid 3.32 gives the links of its cluster zones (the builder's tests check them on real platforms).
#include <gtest/gtest.h>

#include <ostream>

#include <string>
#include <vector>

#include "trainsim/core/json_reader.hpp"
#include "trainsim/platforms/link_names.hpp"
#include "trainsim_test/names.hpp"

namespace tp = trainsim::platforms;

namespace {

tp::PlatformSpec spec_of(const std::string& json) {
  return tp::read_platform_spec(trainsim::parse_json_text(json, "test"));
}

struct IdCase {
  const char* id;
  tp::LinkClass expected;
};
void PrintTo(const IdCase& c, std::ostream* os) {
  *os << c.id;
}

class LinkClassFromId : public ::testing::TestWithParam<IdCase> {};

TEST_P(LinkClassFromId, FollowsTheNamingConvention) {
  EXPECT_EQ(tp::link_class_from_id(GetParam().id), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Ids, LinkClassFromId,
    ::testing::Values(IdCase{"nic-node3", tp::LinkClass::nic}, IdCase{"PCIe_gpu0_UP", tp::LinkClass::pcie},
                      IdCase{"nvlink0-1", tp::LinkClass::nvlink}, IdCase{"NVSwitch", tp::LinkClass::nvswitch},
                      IdCase{"fabric7", tp::LinkClass::fabric}, IdCase{"memory.bus", tp::LinkClass::memory},
                      IdCase{"nice_link", tp::LinkClass::unknown}, IdCase{"nics", tp::LinkClass::unknown},
                      IdCase{"link_from_0_1", tp::LinkClass::unknown}, IdCase{"", tp::LinkClass::unknown}),
    [](const auto& p) { return trainsim_test::test_name(std::string("id_") + p.param.id); });

TEST(FatTreeParents, OnePerLeafThenOversubscribedThenTheLevelBelow) {
  EXPECT_EQ(tp::fat_tree_parents({{8}, 1}), (std::vector<unsigned>{1}));
  EXPECT_EQ(tp::fat_tree_parents({{4, 4}, 2}), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(tp::fat_tree_parents({{2, 2, 2}, 1}), (std::vector<unsigned>{1, 2, 2}));
}

std::vector<std::string> names(const std::vector<tp::LinkInfo>& infos) {
  std::vector<std::string> out;
  for (const auto& i : infos)
    out.push_back(i.name + " | " + i.connection + " | " + std::string(tp::to_string(i.link_class)) + " " +
                  std::to_string(i.node) + " " + std::to_string(i.server_node));
  return out;
}

TEST(TopologyLinkNames, SwitchCablesNameTheirNodeOrServerNode) {
  // Three leaves, the last a server node: SimGrid's one switch has id 2·3 − 1 = 5; _UP is leaf → switch.
  const tp::PlatformSpec shaped = spec_of(R"({"preset": "cluster-25gbe", "nodes": 3})");
  EXPECT_EQ(names(tp::name_topology_links(
                {"link_from_1_5_1_UP", "link_from_2_5_2_DOWN", "link_from_9_5_3_UP", "loose_cable"}, shaped, 2)),
            (std::vector<std::string>{"node 1 → switch | node 1 ↔ switch | fabric 1 -1",
                                      "switch → server node 0 | server node 0 ↔ switch | fabric -1 0",
                                      "link_from_9_5_3_UP | link_from_9_5_3_UP | fabric -1 -1",
                                      "loose_cable | loose_cable | fabric -1 -1"}));
}

TEST(TopologyLinkNames, FatTreeSwitchesAreLeavesAndSpines) {
  // 16 leaves, down [4, 4]: four leaf switches (ids 31…28), then two spines (27, 26) after
  // oversubscription 2.
  const tp::PlatformSpec shaped = spec_of(
      R"({"preset": "cluster-ib-edr", "nodes": 16, "network": {"fat_tree": {"down": [4, 4], "oversubscription": 2}}})");
  EXPECT_EQ(names(tp::name_topology_links({"link_from_9_29_9_UP", "link_from_29_26_21_DOWN"}, shaped, 16)),
            (std::vector<std::string>{"node 9 → leaf 2 | node 9 ↔ leaf 2 | fabric 9 -1",
                                      "spine 1 → leaf 2 | leaf 2 ↔ spine 1 | fabric -1 -1"}));
}

TEST(TopologyLinkNames, TorusCablesSayWhereTheyWrapAround) {
  const tp::PlatformSpec shaped = spec_of(
      R"({"preset": "cluster-100gbe", "nodes": 4, "network": {"topology": "torus", "torus": {"dimensions": [2, 2]}}})");
  EXPECT_EQ(
      names(tp::name_topology_links(
          {"network_link_from_0_to_1_UP", "network_link_from_1_to_0_DOWN", "network_link_from_1_to_3_UP"}, shaped, 4)),
      (std::vector<std::string>{
          "node 0 → node 1 | node 0 ↔ node 1 | fabric -1 -1",
          "node 0 → node 1 (wrap-around in dimension 0) | node 1 ↔ node 0 (wrap-around in dimension 0) | fabric -1 -1",
          "node 1 → node 3 | node 1 ↔ node 3 | fabric -1 -1"}));
}

}  // namespace
