#include "services/jobs/gang_network.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trainyard {
namespace {

// `nodes` nodes of `machine_type` as one worker pool, with the job's env.
CustomJobSpec Gang(const std::string& machine_type, int nodes, std::vector<EnvVar> env = {}) {
  CustomJobSpec spec;
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = machine_type;
  pool.replica_count = nodes;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->env = std::move(env);
  spec.worker_pool_specs.push_back(pool);
  return spec;
}

// Compute Engine's GPU-to-GPU NIC bandwidths (gpu-network-bandwidth page).
TEST(GangNetworkTest, EachA3AndA4TypeHasItsGpuNicBandwidth) {
  EXPECT_EQ(GpuNetworkGbps("a3-highgpu-8g"), 800);
  EXPECT_EQ(GpuNetworkGbps("a3-megagpu-8g"), 1600);
  EXPECT_EQ(GpuNetworkGbps("a3-ultragpu-8g"), 3200);
  EXPECT_EQ(GpuNetworkGbps("a4-highgpu-8g"), 3200);
  EXPECT_EQ(GpuNetworkGbps("a2-ultragpu-8g"), 100) << "no GPU NICs: the VM's bandwidth";
  EXPECT_EQ(GpuNetworkGbps("ct5lp-hightpu-4t"), std::nullopt) << "TPUs are not this model's";
}

TEST(GangNetworkTest, TheCrossBlockFactorGrowsWithTheBlocks) {
  EXPECT_EQ(CrossBlockFactor(0), 1.0);
  EXPECT_EQ(CrossBlockFactor(1), 1.0);
  EXPECT_EQ(CrossBlockFactor(2), 2.0);
  EXPECT_NEAR(CrossBlockFactor(3), 1 + std::log2(3.0), 1e-12);
  EXPECT_EQ(CrossBlockFactor(4), 3.0);
  EXPECT_LT(CrossBlockFactor(3), CrossBlockFactor(4));
}

// The share is the ring all-reduce of the gradients over the compute of a step: (n-1) × 16 ×
// GPUs × delivered FLOP/s / (3 × tokens × b/s), no model size needed.
TEST(GangNetworkTest, TheShareIsTheAllReduceOverTheStepsCompute) {
  const double f = 989e12 * 0.4;  // H100 bf16 at the default 40% MFU
  const double expected = 15 * 16 * 8 * f / (3 * kDefaultTokensPerStep * 1600e9);
  EXPECT_NEAR(GangCommShare(Gang("a3-megagpu-8g", 16)), expected, 1e-12);
  EXPECT_NEAR(GangCommShare(Gang("a3-highgpu-8g", 16)), 2 * expected, 1e-12)
      << "half the bandwidth, twice the time";
  EXPECT_EQ(GangCommShare(Gang("a3-megagpu-8g", 1)), 0) << "one node all-reduces over NVLink";
  EXPECT_EQ(GangCommShare(Gang("n1-standard-8", 4)), 0) << "no GPUs";
  // A bigger batch a step spends the same all-reduce on more compute.
  EXPECT_NEAR(
      GangCommShare(Gang("a3-megagpu-8g", 16,
                         {{"TRAINYARD_GLOBAL_BATCH_SIZE", "2048"}, {"TRAINYARD_SEQ_LEN", "4096"}})),
      expected / 2, 1e-12);
}

// A modelled run is compute alone and pays the whole all-reduce; a measured one already holds
// it inside one block and pays only what crossing blocks adds.
TEST(GangNetworkTest, AMeasuredRunPaysOnlyWhatCrossingBlocksAdds) {
  const CustomJobSpec spec = Gang("a3-megagpu-8g", 16);
  const double share = GangCommShare(spec);
  const Duration run = std::chrono::hours(10);
  auto hours = [](Duration d) {
    return std::chrono::duration<double, std::ratio<3600>>(d).count();
  };
  EXPECT_EQ(WithGangNetwork(run, spec, 1, /*modelled=*/false), run);
  EXPECT_NEAR(hours(WithGangNetwork(run, spec, 1, true)), 10 * (1 + share), 1e-6);
  EXPECT_NEAR(hours(WithGangNetwork(run, spec, 3, false)), 10 * (1 + share * std::log2(3.0)), 1e-6);
  EXPECT_NEAR(hours(WithGangNetwork(run, spec, 3, true)), 10 * (1 + share * (1 + std::log2(3.0))),
              1e-6);
}

}  // namespace
}  // namespace trainyard
