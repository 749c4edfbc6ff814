#pragma once
// The persistentResources use cases: create, get, list, patch, reboot and delete. Each change is
// recorded with an Operation (done: false) that the fleet finishes once its nodes have done the
// work (workers/resource_reconciler); a change that needs no fleet work is born finished.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
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
  // `ids`: where operation ids come from (none: random), as JobService's.
  ResourceService(ProjectRepository& projects, ResourceRepository& resources, const Clock& clock,
                  IdSource* ids = nullptr)
      : projects_(projects),
        resources_(resources),
        clock_(clock),
        ids_(ids != nullptr ? *ids : RandomIdSource()) {}

  StatusOr<Operation> Create(const ParentRef& parent, const std::string& resource_id,
                             PersistentResource resource);
  StatusOr<PersistentResource> Get(const ResourceRef& ref);
  StatusOr<ListResourcesResult> List(const ListResourcesRequest& request);
  // `mask` holds camelCase paths (api/ turns snake_case into them): displayName, labels,
  // resourcePools.replicaCount, resourcePools.autoscalingSpec (and their parents).
  StatusOr<Operation> Patch(const ResourceRef& ref, const PersistentResource& update,
                            const std::vector<std::string>& mask);
  StatusOr<Operation> Reboot(const ResourceRef& ref);
  StatusOr<Operation> Delete(const ResourceRef& ref);

 private:
  StatusOr<ResourceRecord> Load(const ResourceRef& ref);
  Operation NewOperation(const ResourceRecord& record, const char* metadata_type, bool done,
                         const std::string& progress);
  // Reads the resource, lets `make` turn it into a change, and writes that as a compare-and-set;
  // a concurrent change reads it again (ABORTED, naming `verb`, after a few tries).
  using MakeChange = std::function<StatusOr<ResourceChange>(ResourceRecord)>;
  StatusOr<Operation> Change(const ResourceRef& ref, const char* verb, const MakeChange& make);
  // The change that hands `record` to the fleet in `state`, with an unfinished operation that
  // ends the one in flight (with `superseded_message`), if any.
  ResourceChange Started(ResourceRecord record, ResourceState state, const char* metadata_type,
                         const std::string& progress, const std::string& superseded_message);

  ProjectRepository& projects_;
  ResourceRepository& resources_;
  const Clock& clock_;
  IdSource& ids_;
};

Status ResourceNotFound(const ResourceRef& ref);

}  // namespace trainyard
