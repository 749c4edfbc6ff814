#pragma once
// The admin view's queries on PostgreSQL: nodes, queues, costs and job events. Read-only.
#include "services/admin/admin_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgAdminStore final : public AdminRepository {
 public:
  explicit PgAdminStore(pg::Pool& pool) : pool_(pool) {}

  StatusOr<std::map<std::string, PoolNodeCounts>> NodeCounts() override;
  StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> NodesHeldByProject(
      const std::vector<std::string>& pool_ids) override;
  StatusOr<std::vector<NodeRecord>> ListNodes(const NodeQuery& query) override;
  StatusOr<std::vector<NodeRecord>> NodesHeldByJobs(std::optional<int64_t> job_id) override;
  StatusOr<std::vector<QueueCount>> QueueCounts() override;
  StatusOr<std::vector<StateCount>> StateCounts(int64_t project_number, const std::string& location,
                                                int64_t cap) override;
  StatusOr<std::vector<QueuedJobRecord>> QueuedJobs(int per_queue) override;
  StatusOr<std::vector<ModelCost>> ProjectCosts(int64_t project_number, Timestamp now) override;
  StatusOr<std::vector<ModelTotals>> FleetTotals(Timestamp now) override;
  StatusOr<std::vector<ResourceCost>> ResourceCosts(int64_t project_number, Timestamp now) override;
  StatusOr<std::vector<JobEvent>> JobEvents(int64_t project_number, const std::string& location,
                                            int64_t job_id) override;

 private:
  pg::Pool& pool_;
};

}  // namespace trainyard::storage
