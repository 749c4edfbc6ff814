#pragma once
// The operations use cases: get, list, cancel, delete and wait, under flat names
// (…/operations/{id}) and nested ones (…/persistentResources/{pr}/operations/{id}). A nested name
// must name the operation's own resource; a flat one finds any operation of the location.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/job_repository.h"
#include "services/operations/operation_repository.h"
#include "services/resource_names.h"

namespace trainyard {

struct ListOperationsRequest {
  ParentRef parent;
  std::string collection;   // nested list: "customJobs" or "persistentResources"; "" when flat
  std::string resource_id;  // the resource the operations nest under
  std::string filter;       // "", "done=true", "done = false", "NOT done" …
  int page_size = 100;
  std::optional<JobCursor> after;
};

struct ListOperationsResult {
  std::vector<Operation> operations;
  std::optional<JobCursor> next;
};

// How long :wait waits at most, and when the request names no timeout (Vertex's cap).
inline constexpr std::chrono::seconds kMaxOperationWait{60};

class OperationService {
 public:
  OperationService(ProjectRepository& projects, OperationRepository& operations, const Clock& clock)
      : projects_(projects), operations_(operations), clock_(clock) {}

  StatusOr<Operation> Get(const OperationRef& ref);
  StatusOr<ListOperationsResult> List(const ListOperationsRequest& request);
  Status Cancel(const OperationRef& ref);
  Status Delete(const OperationRef& ref);
  // The operation once done, or as it is after `timeout` (wall time, at most kMaxOperationWait).
  StatusOr<Operation> Wait(const OperationRef& ref, std::chrono::milliseconds timeout);

 private:
  struct Key {
    int64_t project_number = 0;
    int64_t id = 0;
  };
  StatusOr<Key> Resolve(const OperationRef& ref);

  ProjectRepository& projects_;
  OperationRepository& operations_;
  const Clock& clock_;
};

// "done=true" → true; "" → nullopt; anything else INVALID_ARGUMENT naming filter.
StatusOr<std::optional<bool>> ParseOperationFilter(const std::string& filter);

}  // namespace trainyard
