#include "services/scheduler/dws_queue.h"

#include <algorithm>

namespace trainyard {

DwsQueue::QueueKey DwsQueue::KeyOf(const SchedulerJob& job) {
  return {job.region, job.pools.empty() ? std::string() : job.pools[0].machine_type};
}

int64_t DwsQueue::NodesOf(const SchedulerJob& job) {
  int64_t nodes = 0;
  for (const GangPool& gp : job.pools) nodes += gp.units;
  return nodes;
}

void DwsQueue::Add(const SchedulerJob& job) {
  if (job.strategy != SchedulingStrategy::kFlexStart || job.pools.empty()) return;
  Remove(job);
  Request request{NodesOf(job), KeyOf(job), job.DwsRequestTime()};
  prefix_.erase(request.key);
  order_[request.key].insert({request.queue_time, job.id});
  requests_[job.id] = std::move(request);
}

void DwsQueue::Remove(const SchedulerJob& job) {
  auto it = requests_.find(job.id);
  if (it == requests_.end()) return;
  prefix_.erase(it->second.key);
  auto order = order_.find(it->second.key);
  if (order != order_.end()) {
    order->second.erase({it->second.queue_time, job.id});
    if (order->second.empty()) order_.erase(order);
  }
  requests_.erase(it);
}

void DwsQueue::Clear() {
  order_.clear();
  requests_.clear();
  prefix_.clear();
}

const DwsQueue::Prefix& DwsQueue::PrefixOf(
    const QueueKey& key, const std::set<std::pair<Timestamp, int64_t>>& order) const {
  auto [it, added] = prefix_.try_emplace(key);
  Prefix& prefix = it->second;
  if (!added) return prefix;
  prefix.order.reserve(order.size());
  prefix.before.reserve(order.size() + 1);
  int64_t sum = 0;
  for (const auto& entry : order) {
    prefix.order.push_back(entry);
    prefix.before.push_back(sum);
    sum += requests_.at(entry.second).nodes;
  }
  prefix.before.push_back(sum);
  return prefix;
}

int64_t DwsQueue::AheadOf(const QueueKey& key, Timestamp queue_time, int64_t id) const {
  auto order = order_.find(key);
  if (order == order_.end()) return 0;
  const Prefix& prefix = PrefixOf(key, order->second);
  // The requests strictly before (queue_time, id) are the ones ahead.
  const auto first_not_ahead =
      std::lower_bound(prefix.order.begin(), prefix.order.end(), std::pair(queue_time, id));
  return prefix.before[first_not_ahead - prefix.order.begin()];
}

int64_t DwsQueue::NodesAhead(const SchedulerJob& job) const {
  return AheadOf(KeyOf(job), job.DwsRequestTime(), job.id);
}

Timestamp DwsQueue::GrantAt(const Fleet& fleet, const CapacityPool& pool, int64_t id,
                            const Request& request, int64_t ahead) const {
  const int64_t outside =
      OutsideNodesAhead(fleet.seed, pool.id, pool.dws_queue, request.queue_time - fleet.epoch);
  const Duration wait =
      DwsTimeToCapacity(fleet.seed, pool.id, id, request.nodes, ahead + outside, pool.dws_queue);
  return request.queue_time + std::chrono::duration_cast<std::chrono::microseconds>(wait);
}

Timestamp DwsQueue::GrantAt(const Fleet& fleet, int pool, const SchedulerJob& job) const {
  const Request request{NodesOf(job), KeyOf(job), job.DwsRequestTime()};
  return GrantAt(fleet, fleet.pools[pool], job.id, request, NodesAhead(job));
}

std::optional<Timestamp> DwsQueue::NextGrant(const Fleet& fleet, Timestamp now) const {
  std::optional<Timestamp> next;
  for (const auto& [key, order] : order_) {
    int64_t ahead = 0;  // the queue is walked in order: each request's ahead is the sum so far
    for (const auto& [at, id] : order) {
      const Request& request = requests_.at(id);
      for (const CapacityPool& pool : fleet.pools) {
        if (pool.model != ConsumptionModel::kFlexStart || pool.region != key.region ||
            pool.machine_type != key.machine_type) {
          continue;
        }
        const Timestamp grant = GrantAt(fleet, pool, id, request, ahead);
        if (grant > now && (!next || grant < *next)) next = grant;
      }
      ahead += request.nodes;
    }
  }
  return next;
}

}  // namespace trainyard
