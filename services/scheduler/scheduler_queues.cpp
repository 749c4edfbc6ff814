// Queue order and parking: pending and running jobs by queue, the entry pools, compaction,
// positions and verdicts as reported.
#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/jobs/catalog.h"
#include "services/scheduler/scheduler_internal.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {

using namespace scheduler_detail;

int Scheduler::QueueFor(const std::string& project_id, const std::string& region) {
  std::string key = project_id + "|" + region;
  auto [it, inserted] = queue_index_.try_emplace(key, static_cast<int>(queues_.size()));
  if (inserted) {
    queues_.emplace_back(active_nodes_.get(), parked_nodes_.get());
    queues_.back().project_id = project_id;
    queues_.back().region = region;
  }
  return it->second;
}

Scheduler::RankKey Scheduler::KeyOf(const SchedulerJob& job) const {
  return {-job.priority, ToUnixMicros(job.queue_time), job.id};
}

void Scheduler::UpsertPending(SchedulerJob job) {
  if (auto it = pending_.find(job.id); it != pending_.end()) {
    if (it->second->job.version >= job.version) return;
    Remove(job.id);
  }
  Remove(job.id);  // a requeued job leaves the running set
  for (GangPool& gp : job.pools) gp.type_id = index_.TypeIdOf(gp);
  for (QuotaDemand& d : job.quota) {
    d.accounts = {capacity_.AccountOf(job.project_id, d.metric),
                  capacity_.AccountOf(job.project_id, PreemptibleQuotaMetric(d.metric))};
  }
  PendingEntry entry;
  entry.queue = QueueFor(job.project_id, job.region);
  entry.shape =
      shape_ids_.try_emplace(job.shape, static_cast<int>(shape_ids_.size())).first->second;
  if (job.dws_deadline) dws_deadlines_.insert({*job.dws_deadline, job.id});
  entry.job = std::move(job);
  int64_t id = entry.job.id;
  PendingEntry& stored = *NewEntry(*active_entries_, job_arena_.get(), std::move(entry));
  pending_.emplace(id, &stored);
  Queue& queue = queues_[stored.queue];
  queue.order.insert({KeyOf(stored.job), &stored});
  queue.positions_stale = true;
}

void Scheduler::UpsertRunning(RunningJob job) {
  Remove(job.id);
  int64_t id = job.id;
  RunningJob& stored = running_.emplace(id, std::move(job)).first->second;
  Rehome(stored.placement.pools, running_arena_.get());
  AddUsage(stored, +1);
}

void Scheduler::Remove(int64_t id) {
  if (auto it = pending_.find(id); it != pending_.end()) {
    PendingEntry* entry = it->second;
    Queue& queue = queues_[entry->queue];
    SetOf(queue, entry->parked).erase(KeyOf(entry->job));
    queue.positions_stale = true;
    if (entry->job.dws_deadline) dws_deadlines_.erase({*entry->job.dws_deadline, id});
    if (entry->never_fits_deadline) never_fits_deadlines_.erase({*entry->never_fits_deadline, id});
    pending_.erase(it);
    DeleteEntry(PoolOf(entry->parked), entry);
  }
  if (auto it = running_.find(id); it != running_.end()) {
    AddUsage(it->second, -1);
    running_.erase(it);
  }
}

Scheduler::OrderedKeys& Scheduler::SetOf(Queue& queue, Parked parked) {
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

Scheduler::EntryPool& Scheduler::PoolOf(Parked parked) {
  return parked == Parked::kNo ? *active_entries_ : *parked_entries_;
}

std::pmr::memory_resource* Scheduler::ArenaOf(Parked parked) const {
  return parked == Parked::kNo ? job_arena_.get() : parked_arena_.get();
}

Scheduler::PendingEntry* Scheduler::NewEntry(EntryPool& pool, std::pmr::memory_resource* arena,
                                             PendingEntry&& from) {
  auto* entry = new (pool.Allocate()) PendingEntry(std::move(from));
  Rehome(entry->job.pools, arena);
  Rehome(entry->job.quota, arena);
  return entry;
}

void Scheduler::DeleteEntry(EntryPool& pool, PendingEntry* entry) {
  entry->~PendingEntry();
  pool.Deallocate(entry);
}

Scheduler::PendingEntry* Scheduler::MoveEntry(PendingEntry* entry, Parked to) {
  PendingEntry* moved = NewEntry(PoolOf(to), ArenaOf(to), std::move(*entry));
  DeleteEntry(PoolOf(entry->parked), entry);
  moved->parked = to;
  pending_[moved->job.id] = moved;
  return moved;
}

void Scheduler::CompactActive() {
  // In the order a cycle walks them: rank first across all queues (the cursors merge the queues'
  // heads by rank), so that a walk reads ascending addresses, which the hardware prefetches.
  struct Walked {
    RankKey key;
    int queue;
    PendingEntry* entry;
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
    PendingEntry* moved = NewEntry(*entries, arena.get(), std::move(*w.entry));
    DeleteEntry(*active_entries_, w.entry);
    pending_[moved->job.id] = moved;
    OrderedKeys& order = orders[static_cast<size_t>(w.queue)];
    order.emplace_hint(order.end(), w.key, moved);
  }
  for (size_t q = 0; q < queues_.size(); ++q) {
    queues_[q].order = std::move(orders[q]);  // the old nodes go back to the old pool
  }
  active_entries_ = std::move(entries);
  active_nodes_ = std::move(nodes);
  job_arena_ = std::move(arena);  // nothing is left on the old one
}

void Scheduler::DeleteEntries() {
  for (auto& [id, entry] : pending_) DeleteEntry(PoolOf(entry->parked), entry);
  pending_.clear();
}

void Scheduler::Clear() {
  DeleteEntries();
  running_.clear();
  preempting_.clear();
  dws_deadlines_.clear();
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
  shape_verdicts_.clear();
  backfill_.Clear();
  resources_.clear();
  resource_used_.clear();
  capacity_.Clear();
}

const Verdict* Scheduler::ShapeVerdict(int64_t shape_key) const {
  if (shape_key >= static_cast<int64_t>(shape_verdicts_.size())) return nullptr;
  const auto& [cycle, verdict] = shape_verdicts_[static_cast<size_t>(shape_key)];
  return cycle == cycles_ ? &verdict : nullptr;
}

void Scheduler::RememberShapeVerdict(int64_t shape_key, Verdict& verdict) {
  verdict.message = messages_.Intern(verdict.message);
  if (shape_key >= static_cast<int64_t>(shape_verdicts_.size())) {
    shape_verdicts_.resize(
        std::max<size_t>(static_cast<size_t>(shape_key) + 1, shape_ids_.size() * 2));
  }
  shape_verdicts_[static_cast<size_t>(shape_key)] = {cycles_, verdict};
}

bool Scheduler::Park(PendingEntry& entry, Cycle& cycle) {
  if (entry.parked != Parked::kNo) return false;
  Parked to = Parked::kNo;
  if (entry.verdict.code == ReasonCode::kNeverFits) to = Parked::kUntilFleetChanges;
  if (entry.verdict.code == ReasonCode::kQuotaExceeded) to = Parked::kUntilQuotaFrees;
  if (to == Parked::kNo) return false;
  Queue& queue = queues_[entry.queue];
  const RankKey key = KeyOf(entry.job);
  queue.order.erase(key);
  PendingEntry* const was = &entry;  // gone after the move
  PendingEntry* parked = MoveEntry(was, to);
  SetOf(queue, to).insert({key, parked});
  if (!cycle.evaluated.empty() && cycle.evaluated.back() == was) cycle.evaluated.back() = parked;
  const Duration timeout = fleet_.never_fits_timeout;
  if (to == Parked::kUntilFleetChanges && timeout > Duration{}) {
    // From when this fleet could first have said so: a job queued before a restart (perhaps on
    // another fleet) gets the whole wait again.
    const Timestamp from = std::max(parked->job.queue_time, first_cycle_.value_or(cycle.now));
    parked->never_fits_deadline = from + duration_cast<microseconds>(timeout);
    never_fits_deadlines_.insert({*parked->never_fits_deadline, parked->job.id});
  }
  return true;
}

void Scheduler::UnparkQuotaWaiters() {
  if (quota_freed_.empty()) return;
  for (Queue& queue : queues_) {
    if (queue.quota_parked.empty() || quota_freed_.count(queue.project_id) == 0) continue;
    for (const auto& [key, entry] : queue.quota_parked) {
      PendingEntry* active = MoveEntry(entry, Parked::kNo);
      queue.order.insert({key, active});
    }
    queue.quota_parked.clear();
  }
  quota_freed_.clear();
}

void Scheduler::Report(PendingEntry& entry, int64_t position, CycleResult& result) {
  const int64_t shown = DisplayPosition(position);
  const bool evaluated = entry.evaluated_in == cycles_;
  // Most of a deep queue: not looked at, and its shown place has not moved.
  if (!evaluated && entry.reported && entry.reported->position == shown) return;
  Verdict& v = entry.verdict;  // compared in place: most verdicts are as last reported
  v.position = shown;
  if (!evaluated &&
      (v.code == ReasonCode::kNotEvaluated || v.code == ReasonCode::kBehindHigherPriority)) {
    // Never looked at: behind the lookback. When the queue's head outranks it, that is why.
    const Queue& queue = queues_[entry.queue];
    const PendingEntry* head = queue.order.empty() ? nullptr : queue.order.begin()->second;
    if (head != nullptr && head->job.priority > entry.job.priority) {
      v.code = ReasonCode::kBehindHigherPriority;
      v.message = BehindHigherPriorityMessage(v.position, config_.lookback, head->job.id,
                                              head->job.priority);
    } else {
      v.code = ReasonCode::kNotEvaluated;
      v.message = NotEvaluatedMessage(v.position, config_.lookback);
    }
  }
  // Interned only to compare with what was reported (a first report has nothing to compare
  // with, and most verdicts come interned already, from their shape's).
  if (entry.reported && !v.message.SharesWith(entry.reported->message)) {
    v.message = messages_.Intern(v.message);
  }
  if (entry.reported && *entry.reported == v) {
    // Equal, but read to tell (it was reported before the interner held its text): share it.
    entry.reported->message = v.message;
    return;
  }
  const bool code_changed = !entry.reported || entry.reported->code != v.code;
  entry.reported = v;
  if (IsHoldKey(entry.job.id)) {
    result.hold_verdicts.push_back({ResourceUidOfHoldKey(entry.job.id), v});
  } else {
    result.verdicts.push_back({entry.job.id, entry.job.version, v, code_changed});
  }
}

// Positions count every waiting job of the queue, parked or not, in rank order. They change only
// when a job joins or leaves the queue, so only those queues are walked, and only in a cycle that
// reports positions; elsewhere only the jobs evaluated this cycle may have a new verdict, shown
// at the position last reported (none yet: 0, which the stores keep as no position).
void Scheduler::ReportPositions(Cycle& cycle, CycleResult& result) {
  std::vector<bool> walked(queues_.size(), false);
  for (size_t q = 0; q < queues_.size() && cycle.report_positions; ++q) {
    Queue& queue = queues_[q];
    if (!queue.positions_stale) continue;
    queue.positions_stale = false;
    walked[q] = true;
    std::array<std::pair<OrderedKeys::iterator, OrderedKeys::iterator>, 3> sets = {
        std::pair{queue.order.begin(), queue.order.end()},
        std::pair{queue.quota_parked.begin(), queue.quota_parked.end()},
        std::pair{queue.never_parked.begin(), queue.never_parked.end()}};
    int64_t position = 0;
    while (true) {
      auto* next = static_cast<std::pair<OrderedKeys::iterator, OrderedKeys::iterator>*>(nullptr);
      for (auto& set : sets) {
        if (set.first != set.second && (next == nullptr || set.first->first < next->first->first)) {
          next = &set;
        }
      }
      if (next == nullptr) break;
      Report(*next->first->second, ++position, result);
      ++next->first;
    }
  }
  for (PendingEntry* entry : cycle.evaluated) {
    if (entry == nullptr || walked[entry->queue]) continue;
    Report(*entry, entry->reported ? entry->reported->position : 0, result);
  }
}

}  // namespace trainyard
