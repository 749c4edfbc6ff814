#pragma once
// What the operations service needs from storage. Operations are written by the store of the
// resource they describe, in the transaction that records the change (a job delete, a persistent
// resource create); this interface reads them and takes clients' requests on them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "services/jobs/job_repository.h"
#include "services/model/operation.h"
#include "services/status.h"

namespace trainyard {

struct ListOperationsQuery {
  int64_t project_number = 0;
  std::string location;
  std::optional<std::string> parent;  // nested list: only this resource's operations
  std::optional<bool> done;
  int limit = 100;
  std::optional<JobCursor> after;  // keyset (create_time DESC, id DESC), as job lists
};

class OperationRepository {
 public:
  virtual ~OperationRepository() = default;
  virtual StatusOr<Operation> Get(int64_t project_number, const std::string& location,
                                  int64_t id) = 0;
  // Up to query.limit + 1 rows, so the caller knows whether another page exists.
  virtual StatusOr<std::vector<Operation>> List(const ListOperationsQuery& query) = 0;
  // Marks an unfinished operation's cancel request; NOT_FOUND when there is none.
  virtual Status RequestCancel(int64_t project_number, const std::string& location, int64_t id,
                               Timestamp now) = 0;
  // Forgets the operation (not the work it describes); NOT_FOUND when there is none.
  virtual Status Delete(int64_t project_number, const std::string& location, int64_t id) = 0;
};

}  // namespace trainyard
