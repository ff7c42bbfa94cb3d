// The enums of the scenario and collective formats each have one name table (core/enum_names.hpp):
// every name a reader accepts reads back to a value whose to_string is that name.
#include <gtest/gtest.h>

#include "trainsim/plan/collective_options.hpp"
#include "trainsim/plan/scenario.hpp"
#include "trainsim/plan/server_placement.hpp"
#include "trainsim/workloads/iteration_graph.hpp"

namespace {

using namespace trainsim::plan;

TEST(EnumTables, EveryNameReadsBackToItself) {
  for (const auto& n : algorithm_names()) EXPECT_EQ(to_string(*parse_algorithm(n)), n);
  for (const auto& n : collective_op_names()) EXPECT_EQ(to_string(*parse_collective_op(n)), n);
  for (const auto& n : representation_names()) EXPECT_EQ(to_string(*parse_representation(n)), n);
  for (const auto& n : hd_order_names()) EXPECT_EQ(to_string(*parse_hd_order(n)), n);
  for (const auto& n : variable_placement_names()) EXPECT_EQ(to_string(*parse_variable_placement(n)), n);
  for (const auto& n : trainsim::workloads::optimizer_names())
    EXPECT_EQ(trainsim::workloads::to_string(*trainsim::workloads::parse_optimizer(n)), n);
  for (const char* n : {"Simple", "LL", "LL128"}) EXPECT_EQ(to_string(*parse_protocol(n)), n);
  EXPECT_EQ(algorithm_names().size(), 8u);
  EXPECT_FALSE(parse_algorithm("auto").has_value());  // auto is the tuner's choice, not an algorithm
}

TEST(EnumTables, NamesKeepTheOrderMessagesListThemIn) {
  EXPECT_EQ(strategy_kind_names(),
            (std::vector<std::string>{"ring_allreduce", "hierarchical_allreduce", "tree_allreduce", "halving_doubling",
                                      "parameter_server", "nccl_allreduce"}));
  EXPECT_EQ(collective_op_names(),
            (std::vector<std::string>{"allreduce", "reduce_scatter", "all_gather", "broadcast"}));
  EXPECT_EQ(server_representation_names(), (std::vector<std::string>{"auto", "coarse", "flow"}));
  EXPECT_EQ(to_string(StrategyKind::nccl_allreduce), "nccl_allreduce");
  EXPECT_EQ(to_string(Transport::host), "host");
  EXPECT_EQ(to_string(WorkerAggregation::none), "none");
  EXPECT_EQ(to_string(CpuMode::inference), "inference");
}

}  // namespace
