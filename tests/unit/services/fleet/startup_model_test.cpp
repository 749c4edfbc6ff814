#include "services/fleet/startup_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "services/fleet/fleet.h"

namespace trainyard {
namespace {

using std::chrono::seconds;

double Secs(Duration d) { return std::chrono::duration<double>(d).count(); }

Fleet SpreadFleet() {
  Fleet fleet;
  fleet.seed = 11;
  fleet.boot_time["a3-highgpu-8g"] = seconds(300);
  fleet.boot_time["ct5p-hightpu-4t"] = seconds(180);
  fleet.image_pull_gbps = 10;
  fleet.image_size_gb["default"] = 10;
  fleet.startup_spread = StartupSpread{1.3, 1.5, 0.1, 1};
  return fleet;
}

CapacityPool Pool(std::string id, std::string machine_type, int hosts_per_unit = 1) {
  CapacityPool pool;
  pool.id = std::move(id);
  pool.machine_type = std::move(machine_type);
  pool.hosts_per_unit = hosts_per_unit;
  return pool;
}

TEST(NormalQuantileTest, MatchesTheTable) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.05), -1.644854, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232, 1e-6);
}

TEST(SlowestOfTest, ARatioOfOneIsTheFigureItself) {
  for (double u : {0.01, 0.5, 0.99}) {
    EXPECT_EQ(SlowestOf(u, 1, seconds(300), 1.0), Duration(seconds(300)));
    EXPECT_EQ(SlowestOf(u, 512, seconds(300), 1.0), Duration(seconds(300)));
  }
}

TEST(SlowestOfTest, OneNodesDrawHasTheFiguresMedianAndTail) {
  // u at the median and the 95th percentile give the figure and the figure times the ratio.
  EXPECT_NEAR(Secs(SlowestOf(0.5, 1, seconds(300), 1.3)), 300, 1e-3);
  EXPECT_NEAR(Secs(SlowestOf(0.95, 1, seconds(300), 1.3)), 390, 1e-3);
  EXPECT_LT(Secs(SlowestOf(0.05, 1, seconds(300), 1.3)), 300);
}

TEST(SlowestOfTest, AGangWaitsForItsSlowestNode) {
  // The median of the slowest of n draws is one draw's quantile 0.5^(1/n): it grows with n.
  double last = 0;
  for (int64_t nodes : {1, 8, 64, 512}) {
    double slowest = Secs(SlowestOf(0.5, nodes, seconds(300), 1.3));
    EXPECT_GT(slowest, last) << nodes << " nodes";
    last = slowest;
  }
  // 64 nodes: the median slowest sits near one node's 99th percentile (0.5^(1/64) = 0.9892).
  EXPECT_NEAR(Secs(SlowestOf(0.5, 64, seconds(300), 1.3)),
              300 * std::exp(std::log(1.3) / 1.6448536 * 2.297), 1);
}

TEST(StartupModelTest, TheSameAdmissionDrawsTheSameAndAnotherDrawsAnew) {
  const Fleet fleet = SpreadFleet();
  const CapacityPool pool = Pool("us-central1-a/a3-highgpu-8g/ON_DEMAND", "a3-highgpu-8g");
  const StartupKey key{false, 42, 3};
  EXPECT_EQ(DrawBoot(fleet, pool, "a3-highgpu-8g", 1, key),
            DrawBoot(fleet, pool, "a3-highgpu-8g", 1, key));
  std::vector<double> boots;
  for (int64_t job = 1; job <= 2000; ++job) {
    boots.push_back(Secs(DrawBoot(fleet, pool, "a3-highgpu-8g", 1, StartupKey{false, job, 1})));
  }
  std::sort(boots.begin(), boots.end());
  // Over many admissions, the median is the fleet's figure and the p95 its ratio (sampling error).
  EXPECT_NEAR(boots[1000], 300, 10);
  EXPECT_NEAR(boots[1900], 390, 15);
  // A resource's hold numbered like a job draws apart from it.
  EXPECT_NE(DrawBoot(fleet, pool, "a3-highgpu-8g", 1, StartupKey{true, 42, 3}),
            DrawBoot(fleet, pool, "a3-highgpu-8g", 1, key));
}

TEST(StartupModelTest, AFleetWithoutASpreadBootsInExactlyItsFigure) {
  Fleet fleet = SpreadFleet();
  fleet.startup_spread = StartupSpread{};
  const CapacityPool pool = Pool("p", "a3-highgpu-8g");
  for (int64_t job = 1; job <= 20; ++job) {
    EXPECT_EQ(DrawBoot(fleet, pool, "a3-highgpu-8g", 16, StartupKey{false, job, 1}),
              Duration(seconds(300)));
    EXPECT_EQ(DrawImagePull(fleet, pool, "a3-highgpu-8g", "img", 16, StartupKey{false, job, 1}),
              Duration(seconds(8)));
  }
}

TEST(StartupModelTest, ALargerTpuSliceProvisionsLonger) {
  Fleet fleet = SpreadFleet();
  fleet.startup_spread.boot_p95_ratio = 1;  // the median alone
  const StartupKey key{false, 1, 1};
  EXPECT_EQ(DrawBoot(fleet, Pool("v5p-8", "ct5p-hightpu-4t", 1), "ct5p-hightpu-4t", 1, key),
            Duration(seconds(180)));
  // 16 hosts: four doublings, 10% each.
  EXPECT_NEAR(
      Secs(DrawBoot(fleet, Pool("v5p-128", "ct5p-hightpu-4t", 16), "ct5p-hightpu-4t", 16, key)),
      180 * 1.4, 1e-6);
}

TEST(StartupModelTest, APullIsBoundByTheSlowerOfTheRegistryAndTheMachinesNetwork) {
  Fleet fleet = SpreadFleet();
  fleet.startup_spread.pull_p95_ratio = 1;
  fleet.image_pull_gbps = 100;
  const StartupKey key{false, 1, 1};
  // a3-highgpu-8g's network is far above 100 Gb/s: the registry bounds it (10 GB in 0.8 s).
  EXPECT_NEAR(Secs(DrawImagePull(fleet, Pool("a", "a3-highgpu-8g"), "a3-highgpu-8g", "i", 1, key)),
              0.8, 1e-6);
  // n1-standard-4 has a 10 Gb/s network: 10 GB in 8 s.
  EXPECT_NEAR(Secs(DrawImagePull(fleet, Pool("n", "n1-standard-4"), "n1-standard-4", "i", 1, key)),
              8, 1e-6);
}

TEST(ProgramStartupTest, GrowsWithTheLogOfTheGangsHosts) {
  Fleet fleet = SpreadFleet();
  EXPECT_EQ(ProgramStartup(fleet, 128), Duration::zero()) << "a fleet without the block";
  fleet.program_startup = ProgramStartupModel{seconds(60), seconds(10)};
  EXPECT_EQ(ProgramStartup(fleet, 1), Duration(seconds(60)));
  EXPECT_EQ(ProgramStartup(fleet, 2), Duration(seconds(70)));
  EXPECT_EQ(ProgramStartup(fleet, 128), Duration(seconds(130))) << "7 doublings";
  EXPECT_EQ(ProgramStartup(fleet, 2048), Duration(seconds(170))) << "16,384 GPUs";
  EXPECT_EQ(ProgramStartup(fleet, 0), Duration::zero());
}

TEST(RepairModelTest, RepairsDifferAcrossNodesWithTheFleetsMedianAndTail) {
  Fleet fleet = SpreadFleet();
  fleet.repair_time = seconds(900);
  fleet.startup_spread.repair_p95_ratio = 4;
  const Timestamp at = fleet.epoch + std::chrono::hours(5);
  // The same failure repairs in the same time; another node's failure at that minute draws anew.
  EXPECT_EQ(DrawRepair(fleet, "pool", 3, at), DrawRepair(fleet, "pool", 3, at));
  std::vector<double> repairs;
  for (int64_t node = 0; node < 4000; ++node) {
    repairs.push_back(Secs(DrawRepair(fleet, "pool", node, at)));
  }
  std::sort(repairs.begin(), repairs.end());
  EXPECT_LT(repairs.front(), 900 / 2.0);
  EXPECT_GT(repairs.back(), 900 * 4.0);
  // Over many failures the median is repairTime and the p95 its ratio (sampling error).
  EXPECT_NEAR(repairs[2000], 900, 50);
  EXPECT_NEAR(repairs[3800], 3600, 300);
  // The same node failing again later draws anew.
  std::vector<double> later;
  for (int hour = 1; hour <= 50; ++hour) {
    later.push_back(Secs(DrawRepair(fleet, "pool", 3, fleet.epoch + std::chrono::hours(hour))));
  }
  std::sort(later.begin(), later.end());
  EXPECT_LT(later.front() * 2, later.back());
}

TEST(RepairModelTest, WithoutARatioEveryRepairTakesRepairTime) {
  Fleet fleet = SpreadFleet();
  fleet.repair_time = seconds(600);
  for (int64_t node = 0; node < 20; ++node) {
    EXPECT_EQ(DrawRepair(fleet, "pool", node, fleet.epoch + std::chrono::minutes(node)),
              Duration(seconds(600)));
  }
}

}  // namespace
}  // namespace trainyard
