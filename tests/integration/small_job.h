#pragma once
// The smallest job the API accepts: one n1-standard-4 replica of python:3.11, no accelerators.
#include <string>

#include "services/model/custom_job.h"

namespace trainyard::testing {

inline CustomJob SmallJob(const std::string& display_name = "lora") {
  CustomJob job;
  job.display_name = display_name;
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = "n1-standard-4";
  pool.replica_count = 1;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "python:3.11";
  job.job_spec.worker_pool_specs.push_back(pool);
  return job;
}

}  // namespace trainyard::testing
