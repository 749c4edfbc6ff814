#pragma once
// This fleet's DWS flex-start requests in queue order (docs/capacity-model.md, "DWS flex-start"):
// per region and machine type, the pending FLEX_START jobs by when they asked, so that a request's
// wait can count the nodes asked for ahead of it, and the scheduler can tell when a request is
// granted capacity in a zone's pool (services/fleet/dws_queue_model). Kept beside the pending
// queues (QueueManager adds and removes with them), so it holds nothing the store does not: a
// restarted scheduler rebuilds the same queue from the same pending jobs.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard {

class DwsQueue {
 public:
  void Add(const SchedulerJob& job);  // a FLEX_START job; others are ignored
  void Remove(const SchedulerJob& job);
  void Clear();

  // The nodes this fleet's requests ahead of `job` ask for, in its region for its machine type.
  int64_t NodesAhead(const SchedulerJob& job) const;
  // When `job` is granted its whole size in FLEX_START pool `pool` of `fleet`: its queue time plus
  // its drawn time to capacity there (the pool's queue model, the nodes it asks for, those ahead
  // of it from this fleet and the pool's outside demand when it joined).
  Timestamp GrantAt(const Fleet& fleet, int pool, const SchedulerJob& job) const;
  // The earliest grant after `now` of any request waiting here, in any pool it may use: the next
  // time the scheduler's decision changes with time alone.
  std::optional<Timestamp> NextGrant(const Fleet& fleet, Timestamp now) const;
  size_t size() const { return requests_.size(); }

 private:
  // One queue: requests for a machine type in a region.
  struct QueueKey {
    std::string region;
    std::string machine_type;
    auto operator<=>(const QueueKey&) const = default;
  };
  struct Request {
    int64_t nodes = 0;
    QueueKey key;
    Timestamp queue_time{};
  };
  static QueueKey KeyOf(const SchedulerJob& job);
  static int64_t NodesOf(const SchedulerJob& job);
  Timestamp GrantAt(const Fleet& fleet, const CapacityPool& pool, int64_t id,
                    const Request& request, int64_t ahead) const;
  int64_t AheadOf(const QueueKey& key, Timestamp queue_time, int64_t id) const;

  // Each queue's (queue time, job id) in queue order.
  std::map<QueueKey, std::set<std::pair<Timestamp, int64_t>>> order_;
  std::unordered_map<int64_t, Request> requests_;  // job id → its request
  // A queue's requests in order with the nodes asked before each, built when first asked for
  // after the queue changed: a cycle asks for every waiting request's nodes ahead, and walking
  // the queue for each was quadratic in its length.
  struct Prefix {
    std::vector<std::pair<Timestamp, int64_t>> order;
    std::vector<int64_t> before;  // before[i]: the nodes of order[0..i); one more: the total
  };
  const Prefix& PrefixOf(const QueueKey& key,
                         const std::set<std::pair<Timestamp, int64_t>>& order) const;
  mutable std::map<QueueKey, Prefix> prefix_;
};

}  // namespace trainyard
