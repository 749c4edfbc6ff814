#pragma once
// Whether a job may run on a persistent resource (jobSpec.persistentResourceId): each worker pool
// must match one of the resource's pools exactly (machineSpec, and diskSpec where either sets
// one) and ask no more replicas than that pool can ever hold. A 400 names both sides.
#include "services/model/custom_job.h"
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

Status CheckJobFitsResource(const CustomJobSpec& spec, const PersistentResource& resource);

}  // namespace trainyard
