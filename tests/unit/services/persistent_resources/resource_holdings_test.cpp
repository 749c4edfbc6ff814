// What a resize of a persistent resource comes to, the rule both stores apply: node moves for
// pools with node rows, made and deleted VMs for elastic ones.
#include "services/persistent_resources/resource_holdings.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

const std::string kVm = "us-central1-a-n1-standard-4-ON_DEMAND-r7-";

// A resource with two pools of one CPU shape (VMs 0 and 1-2) and one of GPU nodes.
ResourceFleetStatus Held() {
  ResourceFleetStatus status;
  status.zone = "us-central1-a";
  status.pools.push_back(
      {"us-central1-a/elastic-cpu/ON_DEMAND", "n1-standard-4", "ON_DEMAND", "", 1, {kVm + "0"}, 0});
  status.pools.push_back({"us-central1-a/elastic-cpu/ON_DEMAND",
                          "n1-standard-4",
                          "ON_DEMAND",
                          "",
                          2,
                          {kVm + "1", kVm + "2"},
                          0});
  status.pools.push_back({"us-central1-a/a3-highgpu-8g/ON_DEMAND",
                          "a3-highgpu-8g",
                          "ON_DEMAND",
                          "",
                          1,
                          {"us-central1-a-a3-highgpu-8g-ON_DEMAND-0004"},
                          0});
  return status;
}

std::vector<ResourceFleetStore::PoolResize> To(int64_t first, int64_t second, int64_t gpus) {
  return {{"us-central1-a/elastic-cpu/ON_DEMAND", first, 1, 0.19, kVm},
          {"us-central1-a/elastic-cpu/ON_DEMAND", second, 1, 0.19, kVm},
          {"us-central1-a/a3-highgpu-8g/ON_DEMAND", gpus, 1, 88.0, ""}};
}

TEST(ResourceHoldingsTest, ElasticPoolsMoveNoNodes) {
  EXPECT_TRUE(ResizeNodeDeltas(Held(), To(3, 0, 1)).empty());
  EXPECT_EQ(ResizeNodeDeltas(Held(), To(3, 0, 2)),
            (std::map<std::string, int64_t>{{"us-central1-a/a3-highgpu-8g/ON_DEMAND", 1}}));
}

// New VMs are numbered after the highest the resource holds in any pool, so growing the first
// pool never takes the second's names; shrinking keeps a pool's first VMs.
TEST(ResourceHoldingsTest, ElasticVmsAreNamedPastEveryHeldOneAndShrinkFromTheEnd) {
  JobAdmission grown =
      ResizedPlacement(Held(), To(3, 1, 1), {{"us-central1-a/a3-highgpu-8g/ON_DEMAND", {4}}});
  ASSERT_EQ(grown.pools.size(), 3u);
  EXPECT_EQ(grown.pools[0].nodes, (std::vector<std::string>{kVm + "0", kVm + "3", kVm + "4"}));
  EXPECT_EQ(grown.pools[1].nodes, std::vector<std::string>{kVm + "1"});
  EXPECT_EQ(grown.pools[2].nodes,
            std::vector<std::string>{"us-central1-a-a3-highgpu-8g-ON_DEMAND-0004"});
  EXPECT_EQ(grown.hourly_price_micros, 4 * 190'000 + 88'000'000);
}

}  // namespace
}  // namespace trainyard
