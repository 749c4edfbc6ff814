// The create-time rules of persistent resources, and the job-on-resource match.
#include "services/persistent_resources/resource_validator.h"

#include <gtest/gtest.h>

#include "services/jobs/resource_fit.h"

namespace trainyard {
namespace {

MachineSpec H100() {
  MachineSpec m;
  m.machine_type = "a3-highgpu-8g";
  m.accelerator_type = AcceleratorType::kNvidiaH100_80gb;
  m.accelerator_count = 8;
  return m;
}

PersistentResource OnePool(int64_t replicas) {
  PersistentResource r;
  r.name = "projects/1/locations/us-central1/persistentResources/pr";
  ResourcePool pool;
  pool.machine_spec = H100();
  pool.replica_count = replicas;
  r.resource_pools.push_back(pool);
  return r;
}

std::string FieldOf(const Status& s) {
  return s.violations().empty() ? "" : s.violations()[0].field;
}

TEST(ResourceValidatorTest, PoolIdsAreGivenAndAutoscaledPoolsStartAtTheirMinimum) {
  PersistentResource r = OnePool(0);
  r.resource_pools[0].autoscaling_spec = ResourceAutoscaling{2, 4};
  r.resource_pools.push_back(r.resource_pools[0]);
  ASSERT_TRUE(ValidatePersistentResource(r).ok());
  EXPECT_EQ(r.resource_pools[0].replica_count, 2);
  EXPECT_EQ(r.resource_pools[0].id, "a3-highgpu-8g");
  EXPECT_NE(r.resource_pools[1].id, r.resource_pools[0].id);
}

TEST(ResourceValidatorTest, EachRuleNamesItsField) {
  PersistentResource none;
  EXPECT_EQ(FieldOf(ValidatePersistentResource(none)), "resourcePools");
  PersistentResource zero = OnePool(0);
  EXPECT_EQ(FieldOf(ValidatePersistentResource(zero)), "resourcePools[0].replicaCount");
  PersistentResource bad_min = OnePool(1);
  bad_min.resource_pools[0].autoscaling_spec = ResourceAutoscaling{0, 2};
  EXPECT_EQ(FieldOf(ValidatePersistentResource(bad_min)),
            "resourcePools[0].autoscalingSpec.minReplicaCount");
  PersistentResource bad_max = OnePool(3);
  bad_max.resource_pools[0].autoscaling_spec = ResourceAutoscaling{3, 2};
  EXPECT_EQ(FieldOf(ValidatePersistentResource(bad_max)),
            "resourcePools[0].autoscalingSpec.maxReplicaCount");
  PersistentResource ray = OnePool(1);
  ray.has_ray_spec = true;
  EXPECT_EQ(FieldOf(ValidatePersistentResource(ray)), "resourceRuntimeSpec.raySpec");
  PersistentResource machine = OnePool(1);
  machine.resource_pools[0].machine_spec.machine_type = "z9-huge";
  EXPECT_EQ(FieldOf(ValidatePersistentResource(machine)),
            "resourcePools[0].machineSpec.machineType");
  PersistentResource twice = OnePool(1);
  twice.resource_pools[0].id = "a";
  twice.resource_pools.push_back(twice.resource_pools[0]);
  EXPECT_EQ(FieldOf(ValidatePersistentResource(twice)), "resourcePools[1].id");
}

TEST(ResourceValidatorTest, ResourceIdsFollowTheRfc1035Rule) {
  EXPECT_TRUE(ValidatePersistentResourceId("warm-pool-1").ok());
  for (const char* bad : {"", "Warm", "1pool", "pool-", "a_b"}) {
    EXPECT_EQ(FieldOf(ValidatePersistentResourceId(bad)), "persistentResourceId") << bad;
  }
}

TEST(ResourceFitTest, AJobMustMatchAPoolExactlyAndFitItsMost) {
  PersistentResource r = OnePool(2);
  r.resource_pools[0].id = "h100";
  r.resource_pools[0].autoscaling_spec = ResourceAutoscaling{2, 4};
  CustomJobSpec spec;
  WorkerPoolSpec wp;
  wp.machine_spec = H100();
  wp.replica_count = 4;  // up to the pool's max
  spec.worker_pool_specs.push_back(wp);
  EXPECT_TRUE(CheckJobFitsResource(spec, r).ok());

  spec.worker_pool_specs[0].replica_count = 5;
  EXPECT_EQ(FieldOf(CheckJobFitsResource(spec, r)), "jobSpec.workerPoolSpecs[0].replicaCount");
  spec.worker_pool_specs[0].replica_count = 1;
  spec.worker_pool_specs[0].disk_spec = DiskSpec{"pd-standard", 100};
  Status disk = CheckJobFitsResource(spec, r);
  EXPECT_EQ(FieldOf(disk), "jobSpec.workerPoolSpecs[0].diskSpec");
  EXPECT_NE(disk.message().find("pd-standard"), std::string::npos);
  EXPECT_NE(disk.message().find("pd-ssd"), std::string::npos);
  spec.worker_pool_specs[0].disk_spec = DiskSpec{"pd-ssd", 100};  // the default, spelled out
  EXPECT_TRUE(CheckJobFitsResource(spec, r).ok());
  spec.worker_pool_specs[0].machine_spec->accelerator_count = 4;
  EXPECT_EQ(FieldOf(CheckJobFitsResource(spec, r)), "jobSpec.workerPoolSpecs[0].machineSpec");
}

}  // namespace
}  // namespace trainyard
