#include "services/scheduler/queue_manager.h"

#include <algorithm>
#include <limits>

namespace trainyard {
namespace {

// Below this many active entry slots (a few slabs) compaction is not worth its copies.
constexpr size_t kCompactAtSlots = 4096;

QueueManager::Visit VisitOf(const QueueManager::Entry& entry) {
  return {entry.told_shared, entry.shape, entry.job.strategy == SchedulingStrategy::kFlexStart};
}

}  // namespace

QueueManager::~QueueManager() { DeleteEntries(); }

void QueueManager::SetToldShared(Entry& entry, uint64_t serial) {
  entry.told_shared = serial;
  if (entry.parked != Parked::kNo) return;
  if (auto* slot = queues_[entry.queue].walk.Find(KeyOf(entry.job), &entry)) {
    slot->hot.told_shared = serial;
  }
}

int QueueManager::QueueFor(const std::string& project_id, const std::string& region) {
  std::string key = project_id + "|" + region;
  auto [it, inserted] = queue_index_.try_emplace(key, static_cast<int>(queues_.size()));
  if (inserted) {
    queues_.emplace_back(active_nodes_.get(), parked_nodes_.get());
    queues_.back().project_id = project_id;
    queues_.back().region = region;
  }
  return it->second;
}

QueueManager::Entry& QueueManager::Add(SchedulerJob job) {
  Entry entry;
  entry.queue = QueueFor(job.project_id, job.region);
  entry.shape =
      shape_ids_.try_emplace(job.shape, static_cast<int>(shape_ids_.size())).first->second;
  if (job.dws_deadline) dws_deadlines_.insert({*job.dws_deadline, job.id});
  dws_.Add(job);
  entry.job = std::move(job);
  int64_t id = entry.job.id;
  Entry& stored = *NewEntry(*active_entries_, job_arena_.get(), std::move(entry));
  pending_.emplace(id, &stored);
  Queue& queue = queues_[stored.queue];
  const RankKey key = KeyOf(stored.job);
  queue.order.insert({key, &stored});
  queue.walk.Insert(key, &stored, VisitOf(stored));
  queue.positions_stale = true;
  return stored;
}

bool QueueManager::Remove(int64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  Entry* entry = it->second;
  Queue& queue = queues_[entry->queue];
  const RankKey key = KeyOf(entry->job);
  SetOf(queue, entry->parked).erase(key);
  if (entry->parked == Parked::kNo) queue.walk.Erase(key, entry);
  queue.positions_stale = true;
  if (entry->job.dws_deadline) dws_deadlines_.erase({*entry->job.dws_deadline, id});
  dws_.Remove(entry->job);
  if (entry->never_fits_deadline) never_fits_deadlines_.erase({*entry->never_fits_deadline, id});
  pending_.erase(it);
  DeleteEntry(PoolOf(entry->parked), entry);
  return true;
}

QueueManager::OrderedKeys& QueueManager::SetOf(Queue& queue, Parked parked) {
  switch (parked) {
    case Parked::kUntilQuotaFrees:
      return queue.quota_parked;
    case Parked::kUntilFleetChanges:
      return queue.never_parked;
    case Parked::kNo:
      break;
  }
  return queue.order;
}

QueueManager::EntryPool& QueueManager::PoolOf(Parked parked) {
  return parked == Parked::kNo ? *active_entries_ : *parked_entries_;
}

std::pmr::memory_resource* QueueManager::ArenaOf(Parked parked) const {
  return parked == Parked::kNo ? job_arena_.get() : parked_arena_.get();
}

QueueManager::Entry* QueueManager::NewEntry(EntryPool& pool, std::pmr::memory_resource* arena,
                                            Entry&& from) {
  auto* entry = new (pool.Allocate()) Entry(std::move(from));
  Rehome(entry->job.pools, arena);
  Rehome(entry->job.quota, arena);
  return entry;
}

void QueueManager::DeleteEntry(EntryPool& pool, Entry* entry) {
  entry->~Entry();
  pool.Deallocate(entry);
}

QueueManager::Entry* QueueManager::MoveEntry(Entry* entry, Parked to) {
  Entry* moved = NewEntry(PoolOf(to), ArenaOf(to), std::move(*entry));
  DeleteEntry(PoolOf(entry->parked), entry);
  moved->parked = to;
  pending_[moved->job.id] = moved;
  return moved;
}

void QueueManager::CompactIfSparse() {
  if (active_entries_->slots() >= kCompactAtSlots &&
      active_entries_->live() * 2 < active_entries_->slots()) {
    CompactActive();
  }
}

void QueueManager::CompactActive() {
  // In the order a cycle walks them: rank first across all queues (the cursors merge the queues'
  // heads by rank), so that a walk reads ascending addresses, which the hardware prefetches.
  struct Walked {
    RankKey key;
    int queue;
    Entry* entry;
  };
  std::vector<Walked> walk;
  walk.reserve(active_entries_->live());
  for (size_t q = 0; q < queues_.size(); ++q) {
    for (const auto& [key, entry] : queues_[q].order)
      walk.push_back({key, static_cast<int>(q), entry});
  }
  std::sort(walk.begin(), walk.end(),
            [](const Walked& a, const Walked& b) { return a.key < b.key; });
  auto entries = std::make_unique<EntryPool>();
  auto nodes = std::make_unique<NodePool>();
  auto arena = std::make_unique<JobArena>();
  std::vector<OrderedKeys> orders;
  orders.reserve(queues_.size());
  for (size_t q = 0; q < queues_.size(); ++q) {
    orders.emplace_back(OrderedKeys::allocator_type(nodes.get()));
  }
  for (const Walked& w : walk) {
    // The job's strings stay where they are: only what every walk reads moves.
    Entry* moved = NewEntry(*entries, arena.get(), std::move(*w.entry));
    DeleteEntry(*active_entries_, w.entry);
    pending_[moved->job.id] = moved;
    OrderedKeys& order = orders[static_cast<size_t>(w.queue)];
    order.emplace_hint(order.end(), w.key, moved);
  }
  for (size_t q = 0; q < queues_.size(); ++q) {
    queues_[q].order = std::move(orders[q]);  // the old nodes go back to the old pool
    queues_[q].walk.Clear();
    for (const auto& [key, entry] : queues_[q].order) {
      queues_[q].walk.Insert(key, entry, VisitOf(*entry));
    }
  }
  active_entries_ = std::move(entries);
  active_nodes_ = std::move(nodes);
  job_arena_ = std::move(arena);  // nothing is left on the old one
}

void QueueManager::DeleteEntries() {
  for (auto& [id, entry] : pending_) DeleteEntry(PoolOf(entry->parked), entry);
  pending_.clear();
}

void QueueManager::Clear() {
  DeleteEntries();
  dws_deadlines_.clear();
  dws_.Clear();
  never_fits_deadlines_.clear();
  quota_freed_.clear();
  queues_.clear();
  active_nodes_ = std::make_unique<NodePool>();
  parked_nodes_ = std::make_unique<NodePool>();
  active_entries_ = std::make_unique<EntryPool>();
  parked_entries_ = std::make_unique<EntryPool>();
  job_arena_ = std::make_unique<JobArena>();
  parked_arena_ = std::make_unique<JobArena>();
  queue_index_.clear();
  shape_ids_.clear();
}

QueueManager::Entry* QueueManager::Park(Entry& entry, Parked to,
                                        std::optional<Timestamp> deadline) {
  Queue& queue = queues_[entry.queue];
  const RankKey key = KeyOf(entry.job);
  queue.order.erase(key);
  queue.walk.Erase(key, &entry);
  Entry* parked = MoveEntry(&entry, to);  // `entry` is gone
  SetOf(queue, to).insert({key, parked});
  if (deadline) {
    parked->never_fits_deadline = deadline;
    never_fits_deadlines_.insert({*deadline, parked->job.id});
  }
  return parked;
}

void QueueManager::UnparkQuotaWaiters() {
  if (quota_freed_.empty()) return;
  for (Queue& queue : queues_) {
    if (queue.quota_parked.empty() || quota_freed_.count(queue.project_id) == 0) continue;
    for (const auto& [key, entry] : queue.quota_parked) {
      Entry* active = MoveEntry(entry, Parked::kNo);
      queue.order.insert({key, active});
      queue.walk.Insert(key, active, VisitOf(*active));
    }
    queue.quota_parked.clear();
  }
  quota_freed_.clear();
}

std::optional<int64_t> QueueManager::DwsDue(Timestamp now) const {
  if (dws_deadlines_.empty() || dws_deadlines_.begin()->first > now) return std::nullopt;
  return dws_deadlines_.begin()->second;
}

std::optional<int64_t> QueueManager::NeverFitsDue(Timestamp now) const {
  if (never_fits_deadlines_.empty() || never_fits_deadlines_.begin()->first > now) {
    return std::nullopt;
  }
  return never_fits_deadlines_.begin()->second;
}

std::optional<Timestamp> QueueManager::NextDeadline() const {
  std::optional<Timestamp> next;
  if (!dws_deadlines_.empty()) next = dws_deadlines_.begin()->first;
  if (!never_fits_deadlines_.empty() && (!next || never_fits_deadlines_.begin()->first < *next)) {
    next = never_fits_deadlines_.begin()->first;
  }
  return next;
}

std::optional<Timestamp> QueueManager::FirstQueuedAfter(Timestamp since, int below_priority) const {
  constexpr int64_t kLeast = std::numeric_limits<int64_t>::min();
  std::optional<Timestamp> first;
  const int64_t after = ToUnixMicros(since);
  for (const Queue& queue : queues_) {
    // Keys hold -priority: the lower priorities come last, from -(below_priority - 1) on.
    for (auto band = queue.order.lower_bound({1 - below_priority, kLeast, kLeast});
         band != queue.order.end();) {
      const int rank = std::get<0>(band->first);
      auto it = queue.order.upper_bound({rank, after, std::numeric_limits<int64_t>::max()});
      if (it != queue.order.end() && std::get<0>(it->first) == rank) {
        const Timestamp at = FromUnixMicros(std::get<1>(it->first));
        if (!first || at < *first) first = at;
      }
      if (rank == std::numeric_limits<int>::max()) break;
      band = queue.order.lower_bound({rank + 1, kLeast, kLeast});
    }
  }
  return first;
}

void QueueManager::SetRunning(const RunningJob& job, int sign) {
  Queue& queue = queues_[QueueFor(job.project_id, job.region)];
  if (sign > 0) {
    queue.running.push_back({job.priority, &job});  // the scheduler removed any earlier one
    return;
  }
  // By address, which reads no job; order does not matter (plans sort their candidates).
  auto it = std::find_if(queue.running.begin(), queue.running.end(),
                         [&](const Queue::RunningRef& r) { return r.job == &job; });
  if (it == queue.running.end()) return;
  *it = queue.running.back();
  queue.running.pop_back();
}

}  // namespace trainyard
