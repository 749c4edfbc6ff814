#pragma once
// The persistentResources use cases: create, get, list, patch, reboot and delete. Each change is
// recorded with an Operation (done: false) that the fleet finishes once its nodes have done the
// work (workers/resource_reconciler); a change that needs no fleet work is born finished.
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/job_repository.h"
#include "services/persistent_resources/resource_repository.h"
#include "services/resource_names.h"

namespace trainyard {

struct ResourceRef {
  ParentRef parent;
  std::string resource_id;
};

struct ListResourcesRequest {
  ParentRef parent;
  int page_size = 100;
  std::optional<JobCursor> after;
};

struct ListResourcesResult {
  std::vector<PersistentResource> resources;
  std::optional<JobCursor> next;
};

class ResourceService {
 public:
  ResourceService(ProjectRepository& projects, ResourceRepository& resources, const Clock& clock)
      : projects_(projects), resources_(resources), clock_(clock) {}

  StatusOr<Operation> Create(const ParentRef& parent, const std::string& resource_id,
                             PersistentResource resource);
  StatusOr<PersistentResource> Get(const ResourceRef& ref);
  StatusOr<ListResourcesResult> List(const ListResourcesRequest& request);
  // `mask` holds camelCase paths (api/ parses snake_case too): displayName, labels,
  // resourcePools.replicaCount, resourcePools.autoscalingSpec (and their parents).
  StatusOr<Operation> Patch(const ResourceRef& ref, const PersistentResource& update,
                            const std::vector<std::string>& mask);
  StatusOr<Operation> Reboot(const ResourceRef& ref);
  StatusOr<Operation> Delete(const ResourceRef& ref);

 private:
  StatusOr<ResourceRecord> Load(const ResourceRef& ref);
  // Writes `record` as the resource's next version with a new operation of `metadata_type`;
  // retries on a concurrent change with `mutate` applied to the fresh row.
  Operation NewOperation(const ResourceRecord& record, const char* metadata_type, bool done,
                         const std::string& progress);

  ProjectRepository& projects_;
  ResourceRepository& resources_;
  const Clock& clock_;
};

std::string PersistentResourceName(int64_t project_number, const std::string& location,
                                   const std::string& resource_id);
Status ResourceNotFound(const ResourceRef& ref);

}  // namespace trainyard
