#pragma once
// The operations use cases: get, list, cancel, delete and wait, under flat names
// (…/operations/{id}) and nested ones (…/persistentResources/{pr}/operations/{id}). A nested name
// must name the operation's own resource; a flat one finds any operation of the location.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "services/clock.h"
#include "services/jobs/job_repository.h"
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
  // `max_waiters`: how many :wait calls may wait at once. Each holds a request thread while it
  // waits, so a bound keeps waits from taking every thread the listener has; past it a :wait
  // answers at once with the operation as it is (WaitOperation is best effort: clients call
  // again while it is not done).
  OperationService(ProjectRepository& projects, OperationRepository& operations, const Clock& clock,
                   int max_waiters = 8)
      : projects_(projects), operations_(operations), clock_(clock), max_waiters_(max_waiters) {}

  StatusOr<Operation> Get(const OperationRef& ref);
  StatusOr<ListOperationsResult> List(const ListOperationsRequest& request);
  Status Cancel(const OperationRef& ref);
  Status Delete(const OperationRef& ref);
  // The operation once done, or as it is after `timeout` (wall time, at most kMaxOperationWait),
  // or at once when max_waiters calls wait already.
  StatusOr<Operation> Wait(const OperationRef& ref, std::chrono::milliseconds timeout);
  int waiting() const { return waiting_.load(std::memory_order_relaxed); }

 private:
  struct Key {
    int64_t project_number = 0;
    int64_t id = 0;
  };
  StatusOr<Key> Resolve(const OperationRef& ref);

  ProjectRepository& projects_;
  OperationRepository& operations_;
  const Clock& clock_;
  const int max_waiters_;
  std::atomic<int> waiting_{0};
};

// "done=true" → true; "" → nullopt; anything else INVALID_ARGUMENT naming filter.
StatusOr<std::optional<bool>> ParseOperationFilter(const std::string& filter);

}  // namespace trainyard
