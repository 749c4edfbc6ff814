#pragma once
// The API's ports whose state `simulate` does not keep in memory: the admin view, fault
// injections, tokens and replica logs (the control plane itself needs none of them). Each answers
// UNIMPLEMENTED (naming what is missing), except the log store, which drops lines (a replay has
// no replicas to read) and lists none.
#include "services/admin/admin_repository.h"
#include "services/auth/token_repository.h"
#include "services/fleet/fault_injection.h"
#include "services/logs/job_log_repository.h"

namespace trainyard::storage::memory {

Status NotKept(const char* what);

class NoAdminView final : public AdminRepository {
 public:
  StatusOr<std::map<std::string, PoolNodeCounts>> NodeCounts() override {
    return NotKept("the admin view");
  }
  StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> NodesHeldByProject(
      const std::vector<std::string>&) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<NodeRecord>> ListNodes(const NodeQuery&) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<NodeRecord>> NodesHeldByJobs(std::optional<int64_t>) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<QueueCount>> QueueCounts() override { return NotKept("the admin view"); }
  StatusOr<std::vector<StateCount>> StateCounts(int64_t, const std::string&, int64_t) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<QueuedJobRecord>> QueuedJobs(int) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<ModelCost>> ProjectCosts(int64_t, Timestamp) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<ModelTotals>> FleetTotals(Timestamp) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<ResourceCost>> ResourceCosts(int64_t, Timestamp) override {
    return NotKept("the admin view");
  }
  StatusOr<std::vector<JobEvent>> JobEvents(int64_t, const std::string&, int64_t) override {
    return NotKept("the admin view");
  }
};

class NoInjections final : public FaultInjectionRepository {
 public:
  StatusOr<FaultInjection> Insert(const FaultInjection&) override {
    return NotKept("fault injections");
  }
  StatusOr<FaultInjection> Get(int64_t) override { return NotKept("fault injections"); }
};

class NoTokens final : public TokenRepository {
 public:
  StatusOr<std::string> HashKey() override { return NotKept("tokens"); }
  StatusOr<int64_t> Insert(const TokenRecord&) override { return NotKept("tokens"); }
  StatusOr<std::optional<TokenRecord>> Find(int64_t) override { return NotKept("tokens"); }
  StatusOr<std::vector<TokenRecord>> List() override { return NotKept("tokens"); }
  StatusOr<bool> Revoke(int64_t, Timestamp) override { return NotKept("tokens"); }
};

class DroppedLogs final : public JobLogRepository {
 public:
  Status Append(const std::vector<LogLine>&) override { return Status::Ok(); }
  StatusOr<LogPage> List(const LogQuery&) override { return LogPage{}; }
};

}  // namespace trainyard::storage::memory
