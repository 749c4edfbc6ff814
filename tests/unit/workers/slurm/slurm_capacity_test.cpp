#include "workers/slurm/slurm_capacity.h"

#include <gtest/gtest.h>

namespace trainyard::slurm {
namespace {

CapacityPool Pool(const std::string& id, int units, const std::string& partition) {
  CapacityPool p;
  p.id = id;
  p.units = units;
  p.slurm_partition = partition;
  return p;
}

SlurmNode Node(const std::string& name, const std::string& state,
               std::vector<std::string> partitions) {
  return SlurmNode{name, state, {}, std::move(partitions)};
}

TEST(SlurmCapacityTest, APoolsUnitsBeyondItsPartitionsUsableNodesAreDown) {
  Fleet fleet;
  fleet.pools = {Pool("a3mega", 3, "a3"), Pool("a3mega-spot", 2, "a3"), Pool("cpu", 4, "cpu"),
                 Pool("elastic", 0, ""), Pool("typo", 1, "nope")};
  std::vector<SlurmNode> nodes = {
      Node("n1", "idle", {"a3"}), Node("n2", "allocated", {"a3"}),   Node("n3", "mixed", {"a3"}),
      Node("n4", "down", {"a3"}), Node("n5", "idle", {"a3", "cpu"}), Node("c1", "idle", {"cpu"})};
  nodes[4].state_flags = {"DRAIN"};
  std::map<std::string, int64_t> down = SlurmUnitsDown(fleet, nodes);
  EXPECT_EQ(down.at("a3mega"), 0) << "three usable a3 nodes, all to the first pool";
  EXPECT_EQ(down.at("a3mega-spot"), 2) << "none left for the second";
  EXPECT_EQ(down.at("cpu"), 3) << "one usable of four: n5 is drained";
  EXPECT_EQ(down.count("elastic"), 0u) << "no partition: not Slurm's to say";
  EXPECT_EQ(down.at("typo"), 1) << "a partition Slurm does not have runs nothing";
  // A node that runs two replicas (a test cluster's --slurm-tasks-per-node) is two units.
  down = SlurmUnitsDown(fleet, nodes, 2);
  EXPECT_EQ(down.at("a3mega-spot"), 0) << "six a3 units: three to the first pool, two here";
  EXPECT_EQ(down.at("cpu"), 2);
}

struct NodesOnly : SlurmApi {
  std::vector<SlurmNode> nodes;
  bool down = false;
  StatusOr<int64_t> Submit(const SlurmSubmit&, std::chrono::milliseconds) override {
    return Unavailable("no");
  }
  StatusOr<std::vector<SlurmJob>> Jobs() override { return Unavailable("no"); }
  Status Cancel(int64_t) override { return Unavailable("no"); }
  Status Signal(int64_t, const std::string&) override { return Unavailable("no"); }
  StatusOr<std::vector<SlurmNode>> Nodes() override {
    if (down) return Unavailable("slurmrestd cannot be reached");
    return nodes;
  }
};

TEST(SlurmCapacityTest, AnOutageOfTheApiKeepsTheLastReading) {
  Fleet fleet;
  fleet.pools = {Pool("gpu", 2, "gpu")};
  auto api = std::make_unique<NodesOnly>();
  NodesOnly* nodes = api.get();
  nodes->nodes = {Node("g1", "idle", {"gpu"})};
  SlurmCapacity capacity(std::move(api), fleet, std::chrono::milliseconds(1000));
  EXPECT_TRUE(capacity.UnitsDown().empty()) << "nothing known before the first reading";
  ASSERT_TRUE(capacity.Refresh().ok());
  EXPECT_EQ(capacity.UnitsDown().at("gpu"), 1);
  nodes->down = true;
  EXPECT_EQ(capacity.Refresh().code(), Code::kUnavailable);
  EXPECT_EQ(capacity.UnitsDown().at("gpu"), 1) << "not every node down because the API is";
}

}  // namespace
}  // namespace trainyard::slurm
