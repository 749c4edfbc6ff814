#pragma once
// A3 High machines and gangs of them, on a persistent resource or not: what the persistent
// resource tests submit.
#include <string>

#include "services/model/custom_job.h"

namespace trainyard::testing {

inline MachineSpec H100() {
  MachineSpec m;
  m.machine_type = "a3-highgpu-8g";
  m.accelerator_type = AcceleratorType::kNvidiaH100_80gb;
  m.accelerator_count = 8;
  return m;
}

// A chief and `replicas - 1` workers of train:1, running for `run` once started, on `resource`
// when set.
inline CustomJob H100Gang(const std::string& resource, int64_t replicas,
                          const std::string& run = "600s") {
  CustomJob job;
  job.display_name = "on-" + resource;
  for (int64_t n : {int64_t{1}, replicas - 1}) {
    if (n == 0) continue;
    WorkerPoolSpec pool;
    pool.machine_spec = H100();
    pool.replica_count = n;
    pool.container_spec = ContainerSpec{};
    pool.container_spec->image_uri = "train:1";
    pool.container_spec->env.push_back({"TRAINYARD_SIM_DURATION", run});
    job.job_spec.worker_pool_specs.push_back(pool);
  }
  job.job_spec.persistent_resource_id = resource;
  return job;
}

}  // namespace trainyard::testing
