// The cycle: evaluates waiting jobs in fair-share and rank order within the budget, admits what
// fits (or what preemption makes fit), fails what waited too long, and reports verdicts.
#include "services/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <utility>

#include "services/jobs/catalog.h"
#include "services/scheduler/scheduler_internal.h"
#include "services/scheduler/verdict_text.h"
#include "services/scheduler/workload_key.h"

namespace trainyard {

using namespace scheduler_detail;

PreemptionCause CauseAmong(int64_t victim, const std::vector<int64_t>& reclaimed,
                           const std::vector<int64_t>& fair_shared) {
  if (std::find(reclaimed.begin(), reclaimed.end(), victim) != reclaimed.end()) {
    return PreemptionCause::kReclaim;
  }
  if (std::find(fair_shared.begin(), fair_shared.end(), victim) != fair_shared.end()) {
    return PreemptionCause::kFairSharing;
  }
  return PreemptionCause::kHigherPriority;
}

PreemptionCause AdmissionDecision::CauseOf(int64_t victim) const {
  return CauseAmong(victim, reclaimed, fair_shared);
}

std::string AdmissionDecision::VictimMessage(int64_t victim) const {
  const std::string by = "job " + std::to_string(job_id);
  std::string why;
  switch (CauseOf(victim)) {
    case PreemptionCause::kReclaim:
      why = "borrowed capacity reclaimed by " + by + ", whose project is within its cohort share";
      break;
    case PreemptionCause::kFairSharing:
      why = "preempted by " + by +
            ": this job's project holds more than its fair share of the cohort";
      break;
    case PreemptionCause::kHigherPriority:
      why = "preempted by higher-priority " + by;
      break;
  }
  if (notice_at) {
    why += ", stopped at the end of its termination grace";
    if (SavedAt(victim)) why += " (its emergency checkpoint kept its progress up to the notice)";
  }
  return why + "; back in the queue";
}

std::optional<Timestamp> AdmissionDecision::SavedAt(int64_t victim) const {
  if (!notice_at ||
      std::find(saved_at_notice.begin(), saved_at_notice.end(), victim) == saved_at_notice.end()) {
    return std::nullopt;
  }
  return notice_at;
}

Scheduler::Scheduler(const Fleet& fleet, SchedulerConfig config)
    : fleet_(fleet),
      config_(config),
      index_(fleet),
      capacity_(fleet, index_),
      assigner_(fleet, index_, config.preemption_exemption),
      preemptor_(fleet, index_, config.preemption_exemption),
      cycle_(std::make_unique<Cycle>()) {
  assigner_.SetDwsQueue(&queues_.dws());
}

Scheduler::~Scheduler() = default;

void Scheduler::Admit(PendingEntry& entry, const Placement& placement, std::vector<int64_t> victims,
                      Cycle& cycle, CycleResult& result) {
  for (int64_t v : victims) {
    cycle.claimed.insert(v);
    Remove(v);
  }
  cycle.victims_left -= static_cast<int>(victims.size());
  const SchedulerJob& job = entry.job;
  RunningJob r = MakeRunningJob(job, placement, fleet_, cycle.now);
  // Later long jobs eat into the slack of holds on the pools they take.
  for (Hold& h : cycle.holds) {
    if (r.expected_end <= h.start) continue;
    for (const PlacedPool& pp : placement.pools) {
      if (int64_t* s = h.SlackOf(pp.pool)) *s -= pp.units;
    }
  }
  if (IsHoldKey(job.id)) {
    result.holds.push_back(
        HoldDecision{ResourceUidOfHoldKey(job.id), job.version, placement, job.image_uri});
  } else {
    AdmissionDecision decision;
    decision.job_id = job.id;
    decision.version = job.version;
    decision.placement = placement;
    decision.image_uri = job.image_uri;
    decision.message =
        AdmittedMessage(fleet_, placement) + WindowEndNote(fleet_, placement, r.expected_end);
    if (auto held = job.on_resource.empty() ? resources_.end() : resources_.find(job.on_resource);
        held != resources_.end()) {
      decision.resource_uid = held->second.uid;
    }
    decision.victims = std::move(victims);
    result.admissions.push_back(std::move(decision));
  }
  entry.admitted = true;
  // The entry was the last evaluated; it goes now.
  if (!cycle.evaluated.empty() && cycle.evaluated.back() == &entry)
    cycle.evaluated.back() = nullptr;
  UpsertRunning(std::move(r));  // also removes the pending entry
}

// Most evaluations of a waiting job find what the last found: its text is built only when the
// values it shows (`key`) are not those of the text last reported for the job.
template <typename Text>
void Scheduler::SetVerdict(PendingEntry& entry, ReasonCode code, const VerdictKey& key,
                           Text&& text) {
  entry.verdict.code = code;
  entry.verdict.key = key;
  const std::optional<Verdict>& reported = entry.reported;
  if (key.kind != VerdictKey::Kind::kNone && reported && reported->code == code &&
      reported->key == key) {
    entry.verdict.message = reported->message;
    return;
  }
  entry.verdict.message = text();
}

// A shared verdict's code, text and key (not its position). Most jobs of a deep queue hold the
// text already from the last cycle: then it is not copied (a reference count's two atomic steps).
static void TakeShared(const Verdict& from, Verdict& to) {
  to.code = from.code;
  if (!to.message.SharesWith(from.message)) to.message = from.message;
  to.key = from.key;
}

bool Scheduler::MayReserve(int priority, Timestamp queue_time, const Cycle& cycle) const {
  return priority >= config_.reserve_min_priority ||
         cycle.now - queue_time >= duration_cast<microseconds>(config_.reserve_min_wait);
}

bool Scheduler::HeldAsTold(const RankKey& key, const QueueManager::Visit& visit, Cycle& cycle,
                           CycleResult& result, ReasonCode& code) const {
  // Evaluate's steps to its first return, on the same values: a preemption under way, a DWS
  // request and a job that may hold capacity are looked at.
  if (visit.told_shared == 0 || visit.flex || !preempting_.empty()) return false;
  const bool eligible = MayReserve(-std::get<0>(key), FromUnixMicros(std::get<1>(key)), cycle);
  if (eligible && cycle.reservations_left > 0) return false;
  const int64_t shape_key = SharedVerdicts::ShapeKey(visit.shape, eligible);
  const Verdict* cached = shared_.OfShape(cycles_, shape_key);
  if (cached == nullptr || shared_.ShapeSerial(shape_key) != visit.told_shared) return false;
  cycle.budget -= 0.05;
  ++result.reused;
  code = cached->code;  // the job's verdict's: it shares the shape's (told_shared_check.h)
  return true;
}

void Scheduler::Evaluate(PendingEntry& entry, Cycle& cycle, CycleResult& result) {
  const SchedulerJob& job = entry.job;
  cycle.evaluated.push_back(&entry);
  entry.evaluated_in = cycles_;
  // Whatever this visit does but the shared verdict's fast way may change either verdict.
  uint64_t told = std::exchange(entry.told_shared, 0);
  // Most cycles have no preemption under way: no lookup for every job evaluated then.
  if (auto p = preempting_.empty() ? preempting_.end() : preempting_.find(job.id);
      p != preempting_.end()) {
    told = 0;
    cycle.budget -= 1;
    ++result.evaluations;
    if (ContinuePreemption(entry, p->second, cycle, result)) return;
    CallOffPreemption(job.id, p->second, result);
    preempting_.erase(p);  // the plan no longer holds: looked at afresh
  }
  const bool flex = job.strategy == SchedulingStrategy::kFlexStart;
  const bool eligible = !flex && MayReserve(job.priority, job.queue_time, cycle);
  const int64_t shape_key = SharedVerdicts::ShapeKey(entry.shape, eligible);
  // A job that may hold capacity is its own case; once the cycle has made all the holds it may,
  // an eligible job's verdict is its shape's as much as any other's. A DWS request's is its own:
  // its grant is drawn for it.
  const bool may_hold = eligible && cycle.reservations_left > 0;
  if (!may_hold && !flex) {
    if (const Verdict* cached = shared_.OfShape(cycles_, shape_key)) {
      cycle.budget -= 0.05;
      ++result.reused;
      const uint64_t serial = shared_.ShapeSerial(shape_key);
      // It holds this very verdict and was told it (most of a deep queue, cycle after cycle):
      // nothing below would change, and Report would find nothing to tell.
      if (told == serial) {
        entry.told_shared = serial;
        cycle.evaluated.pop_back();
        return;
      }
      TakeShared(*cached, entry.verdict);
      // As last reported: Report would find nothing to tell, so it is not visited again (its
      // position is the one reported).
      if (const std::optional<Verdict>& was = entry.reported;
          was && was->SharesWith(entry.verdict)) {
        entry.verdict.position = was->position;
        entry.told_shared = serial;
        cycle.evaluated.pop_back();
      }
      return;
    }
  }
  cycle.budget -= 1;
  ++result.evaluations;
  // A job that may hold capacity is fitted alone, unless the last job of its shape was fitted on
  // the state this cycle still has and changed nothing: then this one's fit, plan and hold would
  // be that one's (none), and so its verdict.
  const bool shares_unchanged = may_hold && !flex && job.on_resource.empty() && !IsHoldKey(job.id);
  if (shares_unchanged) {
    if (const Verdict* same = UnchangedFitVerdict(entry, cycle)) {
      TakeShared(*same, entry.verdict);
      ++result.shared_fits;
      return;
    }
  }
  const FitState before = StateOf(cycle);
  const size_t admissions = result.admissions.size();
  EvaluateAlone(entry, eligible, flex, may_hold, shape_key, cycle, result);
  // Nothing it did moves any state (an admission always does: AddUsage): `entry` is still here.
  if (shares_unchanged && result.admissions.size() == admissions && StateOf(cycle) == before) {
    RememberUnchangedFit(entry, cycle);
  }
}

void Scheduler::EvaluateAlone(PendingEntry& entry, bool eligible, bool flex, bool may_hold,
                              int64_t shape_key, Cycle& cycle, CycleResult& result) {
  const SchedulerJob& job = entry.job;
  if (!job.on_resource.empty()) {
    FitResult fit = FitOnResource(job);
    if (fit.fits()) {
      Admit(entry, *fit.placement, {}, cycle, result);
      return;
    }
    SetVerdict(entry, CodeOf(fit.reason), WhyNotKey(fit.reason),
               [&] { return WhyNotText(fit.reason); });
    return;
  }
  std::vector<ConsumptionModel>& models = models_scratch_;
  FlavorOrder(job, models);
  if (std::optional<Verdict> blocked = capacity_.CheckQuota(job, models)) {
    entry.verdict.code = blocked->code;
    entry.verdict.message = blocked->message;
    entry.verdict.key = {};
    RememberShapeVerdict(shape_key, entry.verdict);
    return;
  }
  FitResult fit = assigner_.Assign(
      job, capacity_, FitOptions(models).WithHolds(cycle.holds, &cycle.holds_passable_until));
  if (fit.fits()) {
    Admit(entry, *fit.placement, {}, cycle, result);
    return;
  }
  const ReasonCode code = CodeOf(fit.reason);
  // A persistent resource's hold takes only free capacity: creating one never stops a job.
  if (code != ReasonCode::kNeverFits && !flex && !IsHoldKey(job.id) && cycle.victims_left > 0) {
    if (std::optional<PreemptionPlan> plan = PlanPreemption(job, entry.queue, cycle, models)) {
      if (fleet_.termination_grace > Duration{}) {
        StartPreemption(entry, std::move(*plan), models, cycle, result);
      } else {
        AdmitPreempting(entry, std::move(*plan), cycle, result);
      }
      return;
    }
  }
  const bool capacity_bound =
      code == ReasonCode::kNoCapacity || code == ReasonCode::kNoZoneFitsGang;
  const bool reserves = eligible && capacity_bound && cycle.reservations_left > 0;
  const std::optional<Booked> booked =
      reserves ? ReserveCapacity(job, entry.shape, cycle, models) : std::nullopt;
  const VerdictKey key = booked ? WithReserved(WhyNotKey(fit.reason), booked->zone, booked->start)
                                : WhyNotKey(fit.reason);
  SetVerdict(entry, code, key, [&] {
    std::string text = WhyNotText(fit.reason);
    if (booked) text += ReservedSuffix(index_.zone_names[booked->zone], booked->start);
    return text;
  });
  if (!reserves && !may_hold && !flex) RememberShapeVerdict(shape_key, entry.verdict);
}

void Scheduler::Fail(const PendingEntry& entry, std::string message, CycleResult& result) {
  if (IsHoldKey(entry.job.id)) {
    result.hold_failures.push_back(
        {ResourceUidOfHoldKey(entry.job.id), entry.job.version, std::move(message)});
  } else {
    result.failures.push_back({entry.job.id, entry.job.version, std::move(message)});
  }
}

CycleResult Scheduler::RunCycle(Timestamp now, bool report_positions) {
  CycleResult result;
  if (quiet_ && now >= quiet_->from && now < quiet_->until) {
    ++quiet_cycles_;
    return result;
  }
  quiet_.reset();
  Cycle& cycle = *cycle_;
  cycle.Begin(now, report_positions, config_);

  if (!first_cycle_) first_cycle_ = now;
  capacity_.Refresh(now);
  ++cycles_;
  messages_.Age();
  resource_shortfall_.clear();
  queues_.UnparkQuotaWaiters();
  // Victims already told to stop are no one else's: claimed before any plan looks.
  for (auto it = preempting_.begin(); it != preempting_.end();) {
    if (queues_.Find(it->first) == nullptr) {  // the preemptor left the queue (cancelled, failed)
      CallOffPreemption(it->first, it->second, result);
      it = preempting_.erase(it);
      continue;
    }
    cycle.claimed.insert(it->second.plan.victims.begin(), it->second.plan.victims.end());
    ++it;
  }

  // DWS requests that waited their maxWaitDuration fail (Vertex: FLEX_START, default 24h).
  while (std::optional<int64_t> id = queues_.DwsDue(now)) {
    const PendingEntry& entry = *queues_.Find(*id);
    Fail(entry, DwsTimeoutMessage(entry.job), result);
    Remove(*id);
  }
  // So do jobs that can never fit this fleet once it has not changed for the fleet's
  // neverFitsTimeout (like a Vertex stockout).
  while (std::optional<int64_t> id = queues_.NeverFitsDue(now)) {
    const PendingEntry& entry = *queues_.Find(*id);
    Fail(entry, NeverFitsTimeoutMessage(entry.verdict.message, fleet_.never_fits_timeout), result);
    Remove(*id);
  }

  // One cursor per queue, best head first (docs/scheduler.md, "The cycle": refill within the
  // evaluation budget). Heads are ordered by fair share first (cohort members that would borrow
  // after those that would not, then the lowest share), then by rank. A min-heap on the cycle's
  // vector (std::priority_queue's own steps, on memory kept between cycles).
  using Cursor = Cycle::Cursor;
  std::vector<Cursor>& heap = cycle.cursors;
  const std::greater<Cursor> after;
  auto push = [&](const Cursor& c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), after);
  };
  auto pop = [&] {
    std::pop_heap(heap.begin(), heap.end(), after);
    heap.pop_back();
  };
  // push(in) then pop() in one sift: the best head goes, `in` takes its place. Keys are unique
  // (the rank ends with the job's id), so the heads come off in the same order either way.
  auto replace_top = [&](const Cursor& in) {
    const Cursor top = heap.front();
    const size_t n = heap.size();
    size_t i = 0;
    for (size_t child = 1; child < n; child = 2 * i + 1) {
      if (child + 1 < n && heap[child] > heap[child + 1]) ++child;  // the better of the two
      if (!(in > heap[child])) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = in;
    return top;
  };
  // Without cohorts every key is the same: the order is the rank's alone.
  const bool fair_shares = !index_.cohort_of_project.empty();
  auto fair_key = [&](const SchedulerJob& job) {
    return fair_shares ? capacity_.FairKeyOf(job) : FairKey{};
  };
  queues_.PackWalks();
  for (size_t q = 0; q < queues_.size(); ++q) {
    const auto& walk = queues_[q].walk;
    if (const size_t first = walk.LiveFrom(0); first < walk.size()) {
      push({fair_key(walk[first].item->job), walk[first].key, static_cast<int>(q), first, 0});
    }
  }
  bool parked = false;  // a job moved out of the active order: the next cycle walks another one
  Cursor c{};
  // How `c` became the next cursor: popped at the loop's top, kept (the next job of the queue
  // just evaluated, still ahead of the heap), or taken off the heap already (replace_top).
  enum class Next { kPop, kKept, kTaken };
  Next how = Next::kPop;
  while (cycle.budget > 0) {
    if (how != Next::kKept) {
      if (how == Next::kPop) {
        if (heap.empty()) break;
        c = heap.front();
        pop();
      }
      // Keys are lazy: an admission since this head was pushed may have raised its project's
      // share; then it goes back to wait behind whoever is now ahead.
      if (FairKey now_key = fair_key(queues_[c.queue].walk[c.at].item->job); now_key != c.fair) {
        c.fair = now_key;
        if (!heap.empty() && c > heap.front()) {
          push(c);
          how = Next::kPop;
          continue;
        }
      }
    }
    how = Next::kPop;
    const auto& slot = queues_[c.queue].walk[c.at];
    PendingEntry& entry = *slot.item;
    const size_t admissions = result.admissions.size();
    // Most visits of a deep queue: the job holds its shape's verdict as told, which its slot
    // says; its entry is then only written (what Evaluate's same way does).
    ReasonCode code = ReasonCode::kNone;
    const bool held = HeldAsTold(slot.key, slot.hot, cycle, result, code);
    if (held) {
      entry.evaluated_in = cycles_;
    } else {
      Evaluate(entry, cycle, result);  // may leave a gap at c.at (admitted), nowhere else
    }
    const bool admitted = result.admissions.size() > admissions;
    // A job parked now does not count against the lookback: the jobs behind it are looked at as
    // if it were not there, in this cycle already. Only these two verdicts park it.
    int visited = c.visited + 1;
    if (!admitted && !held) code = entry.verdict.code;
    if (!admitted && (code == ReasonCode::kNeverFits || code == ReasonCode::kQuotaExceeded) &&
        Park(entry, code, cycle)) {
      visited = c.visited;
      parked = true;
    } else if (!admitted && !held) {
      queues_[c.queue].walk[c.at].hot.told_shared = entry.told_shared;  // Evaluate may set it
    }
    const auto& walk = queues_[c.queue].walk;
    if (const size_t next = walk.LiveFrom(c.at + 1);
        next < walk.size() && visited < config_.lookback) {
      const Cursor behind{fair_key(walk[next].item->job), walk[next].key, c.queue, next, visited};
      // Ahead of every other queue's head, it would be popped at once with the key just made:
      // the same order without the heap's two steps.
      if (heap.empty() || heap.front() > behind) {
        c = behind;
        how = Next::kKept;
      } else {
        c = replace_top(behind);
        how = Next::kTaken;
      }
    }
  }
  ReportPositions(cycle, result);
  queues_.CompactIfSparse();
  holds_passable_until_ = cycle.holds_passable_until;
  if (config_.skip_quiet_cycles && result.empty() && !parked && preempting_.empty()) {
    quiet_ = Quiet{now, NextTimeDrivenDecision(now).value_or(Timestamp::max())};
  }
  return result;
}

}  // namespace trainyard
