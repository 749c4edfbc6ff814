// Waiting jobs as the scheduler feeds the queue manager: versions, parking policy, positions and
// verdicts as reported.
#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <queue>

#include "services/jobs/catalog.h"
#include "services/scheduler/scheduler_internal.h"
#include "services/scheduler/told_shared_check.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {

using namespace scheduler_detail;

void Scheduler::UpsertPending(SchedulerJob job) {
  if (const PendingEntry* waiting = queues_.Find(job.id)) {
    if (waiting->job.version >= job.version) return;
    Remove(job.id);
  }
  quiet_.reset();
  Remove(job.id);  // a requeued job leaves the running set
  if (config_.requeue_timestamp == RequeueTimestamp::kEviction && job.requeued_at) {
    job.queue_time = *job.requeued_at;
  }
  for (GangPool& gp : job.pools) gp.type_id = index_.TypeIdOf(gp);
  for (QuotaDemand& d : job.quota) {
    d.accounts = {capacity_.AccountOf(job.project_id, d.metric),
                  capacity_.AccountOf(job.project_id, PreemptibleQuotaMetric(d.metric))};
  }
  queues_.Add(std::move(job));
}

void Scheduler::UpsertRunning(RunningJob job) {
  Remove(job.id);
  quiet_.reset();
  int64_t id = job.id;
  RunningJob& stored = running_.emplace(id, std::move(job)).first->second;
  Rehome(stored.placement.pools, running_arena_.get());
  AddUsage(stored, +1);
}

void Scheduler::Remove(int64_t id) {
  if (queues_.Remove(id)) quiet_.reset();
  if (auto it = running_.find(id); it != running_.end()) {
    quiet_.reset();
    AddUsage(it->second, -1);
    running_.erase(it);
  }
}

void Scheduler::Clear() {
  quiet_.reset();
  queues_.Clear();
  running_.clear();
  preempting_.clear();
  shared_.Clear();
  reservations_.Clear();
  backfill_.Clear();
  resources_.clear();
  resource_used_.clear();
  capacity_.Clear();
}

void Scheduler::RememberShapeVerdict(int64_t shape_key, Verdict& verdict) {
  verdict.message = messages_.Intern(verdict.message);
  shared_.RememberShape(cycles_, shape_key, verdict, queues_.shape_count() * 2);
}

FitState Scheduler::StateOf(const Cycle& cycle) const {
  return {capacity_changes_, cycle.holds.size(), cycle.claimed.size(), cycle.victims_left};
}

const Verdict* Scheduler::UnchangedFitVerdict(const PendingEntry& entry, const Cycle& cycle) const {
  return shared_.UnchangedFit(cycles_, entry.shape, entry.queue, StateOf(cycle));
}

void Scheduler::RememberUnchangedFit(const PendingEntry& entry, const Cycle& cycle) {
  Verdict verdict = entry.verdict;
  verdict.message = messages_.Intern(verdict.message);
  shared_.RememberUnchangedFit(cycles_, entry.shape, entry.queue, StateOf(cycle), verdict,
                               queues_.shape_count() * 2);
}

bool Scheduler::Park(PendingEntry& entry, ReasonCode code, Cycle& cycle) {
  if (entry.parked != Parked::kNo) return false;
  Parked to = Parked::kNo;
  if (code == ReasonCode::kNeverFits) to = Parked::kUntilFleetChanges;
  if (code == ReasonCode::kQuotaExceeded) to = Parked::kUntilQuotaFrees;
  if (to == Parked::kNo) return false;
  std::optional<Timestamp> deadline;
  const Duration timeout = fleet_.never_fits_timeout;
  if (to == Parked::kUntilFleetChanges && timeout > Duration{}) {
    // From when this fleet could first have said so: a job queued before a restart (perhaps on
    // another fleet) gets the whole wait again.
    const Timestamp from = std::max(entry.job.queue_time, first_cycle_.value_or(cycle.now));
    deadline = from + duration_cast<microseconds>(timeout);
  }
  PendingEntry* const was = &entry;  // gone after the move
  PendingEntry* parked = queues_.Park(entry, to, deadline);
  if (!cycle.evaluated.empty() && cycle.evaluated.back() == was) cycle.evaluated.back() = parked;
  return true;
}

void Scheduler::Report(PendingEntry& entry, int64_t position, CycleResult& result) {
  // Its verdict or position may change here.
  if (entry.told_shared != 0) queues_.SetToldShared(entry, 0);
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
    v.key = {};
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
    // Equal, but read to tell (it was reported before the interner held its text): share it,
    // and what it shows.
    if (!entry.reported->message.SharesWith(v.message)) entry.reported->message = v.message;
    entry.reported->key = v.key;
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

std::vector<int64_t> Scheduler::JobsWithStaleSharedVerdict() {
  return ::trainyard::JobsWithStaleSharedVerdict(queues_, shared_);
}

// Positions count every waiting job of the queue, parked or not, in rank order. They change only
// when a job joins or leaves the queue, so only those queues are walked, and only in a cycle that
// reports positions; elsewhere only the jobs evaluated this cycle may have a new verdict, shown
// at the position last reported (none yet: 0, which the stores keep as no position).
void Scheduler::ReportPositions(Cycle& cycle, CycleResult& result) {
  std::vector<bool>& walked = cycle.walked;
  walked.assign(queues_.size(), false);
  for (size_t q = 0; q < queues_.size() && cycle.report_positions; ++q) {
    Queue& queue = queues_[q];
    if (!queue.positions_stale) continue;
    queue.positions_stale = false;
    walked[q] = true;
    queues_.ForEachInRankOrder(
        queue, [&](PendingEntry& entry, int64_t position) { Report(entry, position, result); });
  }
  for (PendingEntry* entry : cycle.evaluated) {
    if (entry == nullptr || walked[entry->queue]) continue;
    Report(*entry, entry->reported ? entry->reported->position : 0, result);
  }
}

}  // namespace trainyard
