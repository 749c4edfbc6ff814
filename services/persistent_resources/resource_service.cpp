#include "services/persistent_resources/resource_service.h"

#include "services/persistent_resources/resource_state_machine.h"
#include "services/persistent_resources/resource_validator.h"

namespace trainyard {
namespace {

constexpr int kMaxAttempts = 5;

Status InvalidMask(const std::string& path, const std::string& why) {
  std::string message = "invalid updateMask path \"" + path + "\": " + why;
  return InvalidArgument(message).WithViolation("updateMask", message);
}

}  // namespace

Status ResourceNotFound(const ResourceRef& ref) {
  return NotFound("PersistentResource projects/" + ref.parent.project + "/locations/" +
                  ref.parent.location + "/persistentResources/" + ref.resource_id + " not found.");
}

Operation ResourceService::NewOperation(const ResourceRecord& record, const char* metadata_type,
                                        bool done, const std::string& progress) {
  Operation op;
  op.id = ids_.Next();
  op.project_number = record.project_number;
  op.location = record.location;
  op.parent = "persistentResources/" + record.resource_id;
  op.metadata_type = metadata_type;
  op.progress_message = progress;
  op.done = done;
  op.create_time = op.update_time = clock_.Now();
  return op;
}

StatusOr<ResourceRecord> ResourceService::Load(const ResourceRef& ref) {
  TY_RETURN_IF_ERROR(ValidateLocation(ref.parent.location));
  auto project = projects_.Resolve(ref.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    if (project.status().code() == Code::kNotFound) return ResourceNotFound(ref);
    return project.status();
  }
  auto record = resources_.Get(project->number, ref.parent.location, ref.resource_id);
  if (!record.ok() && record.status().code() == Code::kNotFound) return ResourceNotFound(ref);
  return record;
}

StatusOr<Operation> ResourceService::Create(const ParentRef& parent, const std::string& resource_id,
                                            PersistentResource resource) {
  TY_RETURN_IF_ERROR(ValidateLocation(parent.location));
  TY_RETURN_IF_ERROR(ValidatePersistentResourceId(resource_id));
  TY_RETURN_IF_ERROR(ValidatePersistentResource(resource));
  TY_ASSIGN_OR_RETURN(Project project, projects_.Resolve(parent.project, true));
  const Timestamp now = clock_.Now();
  ResourceRecord record;
  record.project_number = project.number;
  record.project_id = project.id;
  record.location = parent.location;
  record.resource_id = resource_id;
  record.resource = std::move(resource);
  record.resource.name = PersistentResourceName(project.number, parent.location, resource_id);
  record.resource.state = ResourceState::kProvisioning;
  record.resource.create_time = record.resource.update_time = now;
  record.resource.trainyard.reset();
  for (int attempt = 0;; ++attempt) {
    ResourceChange change{record,
                          NewOperation(record, kCreatePersistentResourceMetadata, false,
                                       "Provisioning the resource's nodes"),
                          false, std::nullopt, ""};
    change.record.operation_id = change.operation.id;
    Status inserted = resources_.Insert(change);
    if (inserted.ok()) return change.operation;
    if (inserted.code() == Code::kAlreadyExists) {
      return AlreadyExists("PersistentResource " + record.resource.name + " already exists.");
    }
    // An operation id that collided (19 random digits): draw another.
    if (inserted.code() != Code::kAborted || attempt + 1 >= kMaxAttempts) return inserted;
  }
}

StatusOr<PersistentResource> ResourceService::Get(const ResourceRef& ref) {
  TY_ASSIGN_OR_RETURN(ResourceRecord record, Load(ref));
  return std::move(record.resource);
}

StatusOr<ListResourcesResult> ResourceService::List(const ListResourcesRequest& request) {
  TY_RETURN_IF_ERROR(ValidateLocation(request.parent.location));
  ListResourcesResult result;
  auto project = projects_.Resolve(request.parent.project, /*create_if_missing=*/false);
  if (!project.ok()) {
    if (project.status().code() == Code::kNotFound) return result;
    return project.status();
  }
  ListResourcesQuery query{project->number, request.parent.location, request.page_size,
                           request.after};
  TY_ASSIGN_OR_RETURN(std::vector<ResourceRecord> rows, resources_.List(query));
  if (static_cast<int>(rows.size()) > request.page_size) {
    rows.resize(request.page_size);
    result.next = JobCursor{*rows.back().resource.create_time, rows.back().uid};
  }
  for (ResourceRecord& row : rows) result.resources.push_back(std::move(row.resource));
  return result;
}

StatusOr<Operation> ResourceService::Patch(const ResourceRef& ref, const PersistentResource& update,
                                           const std::vector<std::string>& mask) {
  if (mask.empty()) {
    return InvalidArgument(
               "updateMask is required: the fields to change, e.g. "
               "updateMask=displayName,labels")
        .WithViolation("updateMask", "required");
  }
  bool name = false, labels = false, replicas = false, autoscaling = false;
  for (const std::string& path : mask) {
    if (path == "displayName") {
      name = true;
    } else if (path == "labels") {
      labels = true;
    } else if (path == "resourcePools") {
      replicas = autoscaling = true;
    } else if (path == "resourcePools.replicaCount") {
      replicas = true;
    } else if (path == "resourcePools.autoscalingSpec" ||
               path.starts_with("resourcePools.autoscalingSpec.")) {
      autoscaling = true;
    } else {
      return InvalidMask(path,
                         "a persistent resource's displayName, labels and its pools' "
                         "replicaCount and autoscalingSpec can change; nothing else can");
    }
  }
  if (name && update.display_name.size() > 128) {
    return InvalidArgument("displayName must be at most 128 characters")
        .WithViolation("displayName", "at most 128 characters");
  }
  return Change(ref, "update", [&](ResourceRecord record) -> StatusOr<ResourceChange> {
    PersistentResource& r = record.resource;
    TY_RETURN_IF_ERROR(ResourceStateMachine::OnRequest(r, replicas || autoscaling
                                                              ? ResourceRequest::kResize
                                                              : ResourceRequest::kEdit)
                           .status());
    if (name) r.display_name = update.display_name;
    if (labels) r.labels = update.labels;
    bool resize = false;
    if (replicas || autoscaling) {
      if (update.resource_pools.size() != r.resource_pools.size()) {
        return InvalidArgument("resourcePools must list the resource's " +
                               std::to_string(r.resource_pools.size()) +
                               " pools, in order; pools cannot be added or removed")
            .WithViolation("resourcePools", "the same pools, in order");
      }
      for (size_t i = 0; i < r.resource_pools.size(); ++i) {
        ResourcePool& pool = r.resource_pools[i];
        const ResourcePool& asked = update.resource_pools[i];
        const std::string path = "resourcePools[" + std::to_string(i) + "]";
        if (!asked.id.empty() && asked.id != pool.id) {
          return InvalidArgument(path + ".id is \"" + asked.id + "\" but the resource's pool " +
                                 std::to_string(i) + " is \"" + pool.id + "\"")
              .WithViolation(path + ".id", "pools keep their ids and order");
        }
        const int64_t before = pool.replica_count;
        if (replicas && asked.replica_count > 0) pool.replica_count = asked.replica_count;
        if (autoscaling) pool.autoscaling_spec = asked.autoscaling_spec;
        resize = resize || pool.replica_count != before;
      }
      PersistentResource check = r;
      TY_RETURN_IF_ERROR(ValidatePersistentResource(check));
    }
    // Only a new replica count is fleet work: the resource is UPDATING until its nodes match.
    if (!resize) {
      r.update_time = clock_.Now();
      return ResourceChange{record,
                            NewOperation(record, kUpdatePersistentResourceMetadata, true, ""), true,
                            std::nullopt, ""};
    }
    return Started(std::move(record), ResourceState::kUpdating, kUpdatePersistentResourceMetadata,
                   "Resizing the resource's pools", "");  // OnRequest(kResize)'s
  });
}

StatusOr<Operation> ResourceService::Reboot(const ResourceRef& ref) {
  return Change(ref, "reboot", [&](ResourceRecord record) -> StatusOr<ResourceChange> {
    TY_ASSIGN_OR_RETURN(ResourceState to,
                        ResourceStateMachine::OnRequest(record.resource, ResourceRequest::kReboot));
    return Started(std::move(record), to, kRebootPersistentResourceMetadata,
                   "Rebooting the resource's nodes", "");
  });
}

StatusOr<Operation> ResourceService::Delete(const ResourceRef& ref) {
  return Change(ref, "delete", [&](ResourceRecord record) -> StatusOr<ResourceChange> {
    TY_ASSIGN_OR_RETURN(ResourceState to,
                        ResourceStateMachine::OnRequest(record.resource, ResourceRequest::kDelete));
    const std::string was(ResourceStateText(record.resource.state));
    return Started(std::move(record), to, kDeleteOperationMetadata, "",
                   "the persistent resource was deleted while " + was);
  });
}

StatusOr<Operation> ResourceService::Change(const ResourceRef& ref, const char* verb,
                                            const MakeChange& make) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    TY_ASSIGN_OR_RETURN(ResourceRecord record, Load(ref));
    TY_ASSIGN_OR_RETURN(ResourceChange change, make(std::move(record)));
    TY_ASSIGN_OR_RETURN(std::optional<Operation> applied, resources_.Update(change));
    if (applied) return std::move(*applied);
  }
  return Aborted(std::string("the persistent resource changed concurrently; retry the ") + verb);
}

ResourceChange ResourceService::Started(ResourceRecord record, ResourceState state,
                                        const char* metadata_type, const std::string& progress,
                                        const std::string& superseded_message) {
  record.resource.state = state;
  record.resource.update_time = clock_.Now();
  ResourceChange change{record, NewOperation(record, metadata_type, false, progress), false,
                        record.operation_id,
                        superseded_message.empty() ? "superseded by a later change to the resource"
                                                   : superseded_message};
  change.record.operation_id = change.operation.id;
  return change;
}

}  // namespace trainyard
