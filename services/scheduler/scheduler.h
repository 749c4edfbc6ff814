#pragma once
// The scheduler's pure core (docs/scheduler.md, "Design"): one long-lived state of pending and
// admitted jobs over a fleet's pools, and a cycle that admits whole gangs, preempts lower
// priorities, holds capacity for jobs that would otherwise starve, and explains every job that
// waits. No I/O: the leader loop (workers/scheduler_loop) feeds it changes and commits what it
// decides. It composes the parts ("Parts" there): the queue manager, the capacity snapshot, the
// flavor assigner, the preemptor and backfill, each tested alone.
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/model/stop_notice.h"
#include "services/scheduler/backfill.h"
#include "services/scheduler/capacity_snapshot.h"
#include "services/scheduler/flavor_assigner.h"
#include "services/scheduler/fleet_index.h"
#include "services/scheduler/preemptor.h"
#include "services/scheduler/queue_manager.h"
#include "services/scheduler/reservation_memo.h"
#include "services/scheduler/scheduler_job.h"
#include "services/scheduler/shared_verdicts.h"
#include "services/scheduler/slab_pool.h"
#include "services/scheduler/text_interner.h"
#include "services/scheduler/verdict.h"

namespace trainyard {

// Where a job that ran and was requeued (a preemption, a failed node, a spot reclaim) waits, as
// Kueue's waitForPodsReady.requeuingStrategy.timestamp names it (docs/scheduler.md, "Queues").
enum class RequeueTimestamp {
  kCreation,  // its create time: it keeps its place ahead of the jobs queued since
  kEviction,  // its requeue: behind the jobs of its priority that queued before then
};

struct SchedulerConfig {
  double evaluation_budget = 5000;                       // per cycle; a reused verdict costs 1/20
  int lookback = 1000;                                   // jobs looked at per queue per cycle
  int max_victims = 64;                                  // per cycle
  int reserve_min_priority = 1000;                       // backfill: who may hold capacity…
  Duration reserve_min_wait = std::chrono::minutes(30);  // …or who has waited this long
  Duration backfill_horizon = std::chrono::hours(24 * 8);
  int max_reservations = 32;  // per cycle
  // Work that has been RUNNING for less than this (or not yet: its nodes boot) is not taken back
  // by reclaim or fair sharing (it has not reached a first checkpoint), only by a higher
  // priority of its own project. It counts from RUNNING, not from admission: with A3 Mega's 6
  // minutes of boot and pull, counting from admission left 4 minutes of real protection.
  Duration preemption_exemption = std::chrono::minutes(10);
  // A cycle whose inputs (jobs, running jobs, units down, resources' capacity) did not change
  // since one that decided nothing, before that one's NextTimeDrivenDecision, would decide nothing
  // again: return at once. Off by default (a server's cycles and the benchmarks walk every
  // time); a replay turns it on.
  bool skip_quiet_cycles = false;
  // Creation by default: the work a preempted or interrupted job already did is not made to
  // wait again behind newer jobs. Eviction moves it back, and its waits (holdAfter, NEVER_FITS)
  // count anew from the requeue.
  RequeueTimestamp requeue_timestamp = RequeueTimestamp::kCreation;
};

// Why `victim` stops: reclaim if it is among `reclaimed`, fair sharing if among `fair_shared`,
// else a higher priority.
PreemptionCause CauseAmong(int64_t victim, const std::vector<int64_t>& reclaimed,
                           const std::vector<int64_t>& fair_shared);

struct AdmissionDecision {
  int64_t job_id = 0;
  int64_t version = 0;
  Placement placement;
  std::vector<int64_t> victims;  // admitted jobs to stop and requeue in the same commit
  // Of the victims, the cohort borrowers whose borrowed capacity this admission reclaims, and those
  // stopped because their project is over its fair share; the rest yield to a higher priority.
  std::vector<int64_t> reclaimed;
  std::vector<int64_t> fair_shared;
  PreemptionCause CauseOf(int64_t victim) const;
  // What the victim's event and status say: who took its capacity and why.
  std::string VictimMessage(int64_t victim) const;
  // When the victims were told to stop (the preemptor then waited out their termination grace),
  // and which of them wrote an emergency checkpoint in it: those keep their progress up to then.
  std::optional<Timestamp> notice_at;
  std::vector<int64_t> saved_at_notice;
  std::optional<Timestamp> SavedAt(int64_t victim) const;
  std::string image_uri;
  std::string message;  // for the job event
  // A job on a persistent resource's nodes: the resource's uid (0: none).
  int64_t resource_uid = 0;
};

// A persistent resource's hold placed: the nodes it keeps for its jobs from now on.
struct HoldDecision {
  int64_t resource_uid = 0;
  int64_t version = 0;
  Placement placement;
  std::string image_uri;
};

struct FailureDecision {
  int64_t job_id = 0;
  int64_t version = 0;
  std::string message;
};

// A persistent resource that can never be placed: ERROR, and its operation ends with the error.
struct HoldFailure {
  int64_t resource_uid = 0;
  int64_t version = 0;
  std::string message;
};

struct VerdictUpdate {
  int64_t job_id = 0;
  int64_t version = 0;
  Verdict verdict;
  bool code_changed = false;  // worth a job event, not just a new position
};

// Why a persistent resource is not placed yet.
struct HoldVerdict {
  int64_t resource_uid = 0;
  Verdict verdict;
};

// What a cycle decided. Jobs and persistent resources' holds are both workloads to the core (they
// wait for capacity and take it); each decision here says which it is about.
// A job preempted for another, told so when its termination grace begins: it keeps running and
// its reason (PREEMPTION_NOTICE) says when it stops. A note, not a transition.
struct PreemptionNotice {
  int64_t job_id = 0;
  std::string message;
  std::string code =
      std::string(kPreemptionNotice);  // ADMITTED again when the preemption is called off
};

struct CycleResult {
  std::vector<AdmissionDecision> admissions;
  std::vector<PreemptionNotice> notices;
  std::vector<HoldDecision> holds;
  std::vector<FailureDecision> failures;
  std::vector<HoldFailure> hold_failures;
  std::vector<VerdictUpdate> verdicts;  // only the ones whose text or position changed
  std::vector<HoldVerdict> hold_verdicts;
  int evaluations = 0;
  int reused = 0;
  // Of the evaluations, jobs that may hold capacity given the verdict of the last of their shape,
  // fitted on the same state (SharedVerdicts::UnchangedFit).
  int shared_fits = 0;
  bool empty() const {
    return admissions.empty() && notices.empty() && holds.empty() && failures.empty() &&
           hold_failures.empty() && verdicts.empty() && hold_verdicts.empty();
  }
};

class Scheduler {
 public:
  // What an elastic pool offers: more than any quota lets one project take.
  static constexpr int64_t kElasticUnits = CapacitySnapshot::kElasticUnits;

  Scheduler(const Fleet& fleet, SchedulerConfig config = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Idempotent by (id, version): an older version never replaces a newer one.
  void UpsertPending(SchedulerJob job);
  void UpsertRunning(RunningJob job);
  void Remove(int64_t id);  // a job that left the queue or ended
  void Clear();
  // Units of a pool that are out of service (failed, repairing, preempted nodes).
  void SetUnitsDown(int pool, int64_t units);
  // What a persistent resource holds (its holder's placement, once admitted), which only the jobs
  // that name it (SchedulerJob::on_resource) take; ready once its nodes have booted.
  void SetResourceCapacity(const std::string& key, int64_t uid, const Placement& held, bool ready);
  void RemoveResourceCapacity(const std::string& key);
  // Units of what a resource holds that are out of service (a failed node no job holds): its jobs
  // cannot take them until they are repaired. Per fleet pool; a pool not named has none down.
  void SetResourceUnitsDown(const std::string& key, const std::map<int, int64_t>& down);
  // Per resource and machine type: the units the jobs that waited for it in the last cycle needed,
  // and what it had free (autoscaling grows by the difference).
  struct ResourceDemand {
    int64_t needed = 0;
    int64_t free = 0;
  };
  using Shortfall = std::map<std::string, std::map<std::string, ResourceDemand>>;
  const Shortfall& resource_shortfall() const { return resource_shortfall_; }
  // The units of fleet pool `pool` that the jobs on resource `key` (ResourceKey) take now.
  int64_t ResourceUnitsUsed(const std::string& key, int pool) const;

  // One cycle at `now`. The state moves as if the decisions commit (admitted jobs become running,
  // victims and failures leave); when the commit fails, the caller Clear()s and reloads.
  // Without `report_positions`, the queues whose order moved keep their shown positions until a
  // cycle with it (the loop's period of wall time); the jobs evaluated get their verdicts anyway.
  CycleResult RunCycle(Timestamp now, bool report_positions = true);
  // When the earliest termination grace under way ends: a cycle then admits its preemptor.
  std::optional<Timestamp> NextPreemptionDue() const;
  // The earliest time after `now` at which a cycle could decide anything a cycle at `now` did not
  // (admit, hold, fail, preempt, or tell a job another reason) with nothing else changing: no job
  // arriving, starting or ending, no node or quota moving. Built from the parts: a termination
  // grace ending, a DWS or never-fits wait running out, a job passing reserve_min_wait (it may
  // then hold capacity), a running job's expected end coming within the backfill horizon or its
  // preemption exemption ending (cohorts), a pool's availability stepping. A time not after `now`
  // means any cycle might (a DWS wait's verdict counts its minutes); none, that none will.
  // A replay wakes for this instead of every minute (cmd/simulate/simulation.cpp).
  std::optional<Timestamp> NextTimeDrivenDecision(Timestamp now) const;
  // Cycles that returned at once (SchedulerConfig::skip_quiet_cycles).
  int64_t quiet_cycles() const { return quiet_cycles_; }
  // The earliest time after `now` that a waiting DWS flex-start request is granted capacity: a
  // decision that time alone brings, so a loop that sleeps between events wakes for it.
  std::optional<Timestamp> NextDwsGrant(Timestamp now) const;

  // Why `project_id` may not take `more` on top of what it holds now (metrics with their
  // PREEMPTIBLE_ prefix, if any): the QUOTA_EXCEEDED message, or nullopt when it may. A resource
  // that grows in place (resize, autoscaling) asks this before it takes nodes.
  std::optional<std::string> QuotaBlock(const std::string& project_id,
                                        const std::vector<QuotaDemand>& more) const;

  // Waiting jobs the walk would skip as holding their shape's shared verdict while they do not
  // (told_shared_check.h); empty unless a path changed a verdict and left the claim. For tests:
  // it walks every waiting job.
  std::vector<int64_t> JobsWithStaleSharedVerdict();

  size_t pending_count() const { return queues_.pending_count(); }
  size_t running_count() const { return running_.size(); }
  // Slots the active jobs' entries take: compaction keeps them under twice the active jobs once
  // many have parked (and at least a few slabs' worth).
  size_t active_entry_slots() const { return queues_.active_entry_slots(); }
  int64_t FreeUnits(int pool, Timestamp now) const;
  const Fleet& fleet() const { return fleet_; }

 private:
  using RankKey = QueueManager::RankKey;
  using OrderedKeys = QueueManager::OrderedKeys;
  using Parked = QueueManager::Parked;
  using Queue = QueueManager::Queue;
  using PendingEntry = QueueManager::Entry;
  using Hold = CapacityHold;
  // Extra units per pool beyond what is free (preemption and backfill planning).
  using Extra = FreedUnits;
  struct Cycle;

  // A job that names a persistent resource: the resource's free held units, nothing else.
  FitResult FitOnResource(const SchedulerJob& job) const;
  using PreemptionPlan = ::trainyard::PreemptionPlan;
  std::optional<PreemptionPlan> PlanPreemption(const SchedulerJob& job, int queue, Cycle& cycle,
                                               const std::vector<ConsumptionModel>& models) const;
  using FairKey = ::trainyard::FairKey;
  using UnitsByResource = CapacitySnapshot::UnitsByResource;
  // A hold booked for a job (backfill): its zone (FleetIndex's number) and expected start.
  struct Booked {
    int zone = -1;
    Timestamp start{};
  };
  // Books a hold of the capacity `job` will fit on once running jobs end, if that is within the
  // backfill horizon.
  // `shape` is the job's shape id: jobs of one shape share the search (ReservationMemo).
  std::optional<Booked> ReserveCapacity(const SchedulerJob& job, int shape, Cycle& cycle,
                                        const std::vector<ConsumptionModel>& models);
  // Whether a job that is not a DWS request may hold capacity by backfill's rule: its priority,
  // or how long it has waited. Evaluate and HeldAsTold both ask.
  bool MayReserve(int priority, Timestamp queue_time, const Cycle& cycle) const;
  // Evaluate's way for a job that holds its shape's shared verdict as told, read from its walk
  // slot alone (`key`, `visit`): true, the visit counted and `code` that verdict's, when it does;
  // otherwise false and nothing changed (Evaluate then looks at the job).
  bool HeldAsTold(const RankKey& key, const QueueManager::Visit& visit, Cycle& cycle,
                  CycleResult& result, ReasonCode& code) const;
  void Evaluate(PendingEntry& entry, Cycle& cycle, CycleResult& result);
  // Evaluate's fit, preemption plan and hold for a job no verdict is shared with.
  // `flex` and `may_hold` are Evaluate's, for this job and cycle.
  void EvaluateAlone(PendingEntry& entry, bool eligible, bool flex, bool may_hold,
                     int64_t shape_key, Cycle& cycle, CycleResult& result);
  // `entry`'s verdict `code`, its message text() unless `key` says it is the one last reported.
  template <typename Text>
  void SetVerdict(PendingEntry& entry, ReasonCode code, const VerdictKey& key, Text&& text);
  // A preemption under way (Fleet::termination_grace): the victims run out their grace, told at
  // `notice_at`, while the preemptor waits PREEMPTING; at `due`, or once they are all gone, it is
  // admitted in their place, in the commit that requeues them.
  struct Preempting {
    PreemptionPlan plan;
    std::vector<ConsumptionModel> models;  // as its quota allowed when planned
    Timestamp notice_at{};
    Timestamp due{};
    // Shares and quota count the preemption as done from the notice (or other plans would take
    // more victims for the same share): what was moved, to move back when it ends.
    std::vector<RunningJob> victims_share;
    RunningJob preemptor_share;
  };
  void EndPreemption(Preempting& p);  // moves the shares back
  // A preemption that will not happen (its preemptor left the queue or no longer fits): the
  // victims still running are told they run on.
  void CallOffPreemption(int64_t preemptor, Preempting& p, CycleResult& result);
  void StartPreemption(PendingEntry& entry, PreemptionPlan plan,
                       std::vector<ConsumptionModel> models, Cycle& cycle, CycleResult& result);
  // False when the plan no longer holds (the job is evaluated afresh).
  bool ContinuePreemption(PendingEntry& entry, Preempting& p, Cycle& cycle, CycleResult& result);
  void AdmitPreempting(PendingEntry& entry, PreemptionPlan plan, Cycle& cycle, CycleResult& result);
  void Admit(PendingEntry& entry, const Placement& placement, std::vector<int64_t> victims,
             Cycle& cycle, CycleResult& result);
  void ReportPositions(Cycle& cycle, CycleResult& result);
  // A waiting job (or hold) that fails without ever running: a DWS wait that ran out, a never-fit.
  void Fail(const PendingEntry& entry, std::string message, CycleResult& result);
  void Report(PendingEntry& entry, int64_t position, CycleResult& result);
  // Takes a job whose verdict only a change elsewhere can lift out of the active order, and its
  // entry out of the active pool (`entry` is gone then); true when it did.
  // `code` is its verdict's.
  bool Park(PendingEntry& entry, ReasonCode code, Cycle& cycle);
  using JobArena = std::pmr::unsynchronized_pool_resource;
  // `job` must be the one in running_ (the queue keeps its address).
  void AddUsage(const RunningJob& job, int sign);
  // The part of AddUsage that shares and quotas read (cohort usage, quota accounts), not the
  // nodes: a preemption under way moves it from its victims to its preemptor at once.
  void AddShare(const RunningJob& job, int sign);

  const Fleet& fleet_;
  SchedulerConfig config_;
  // The parts (docs/scheduler.md, "Parts"): the fleet numbered once, the capacity every decision
  // reads, the flavor assigner that fits gangs on it, the preemptor that picks victims and the
  // backfill that books holds; the queue manager keeps the waiting jobs.
  FleetIndex index_;
  CapacitySnapshot capacity_;
  FlavorAssigner assigner_;
  Preemptor preemptor_;
  Backfill backfill_;
  std::unordered_map<int64_t, Preempting> preempting_;  // by preemptor
  struct HeldPool {
    int64_t units = 0;
    int64_t down = 0;  // of the units, out of service
    std::string machine_type;
  };
  struct HeldCapacity {
    int64_t uid = 0;
    bool ready = false;
    std::string zone;
    std::map<int, HeldPool> pools;  // fleet pool → what the resource holds there
  };
  std::unordered_map<std::string, HeldCapacity> resources_;
  mutable Shortfall resource_shortfall_;  // FitOnResource notes it; RunCycle starts it afresh
  // Per resource: fleet pool → units its running jobs take of what it holds.
  std::unordered_map<std::string, std::unordered_map<int, int64_t>> resource_used_;

  QueueManager queues_;
  // Admitted jobs, on slots of their own: preemption planning reads a queue's admitted jobs for
  // every job it evaluates, and from malloc they would spread over as many pages as they are.
  using RunningEntry = std::pair<const int64_t, RunningJob>;
  using RunningPool = SlabPool<sizeof(void*) + sizeof(RunningEntry)>;  // a hash node's size
  std::unique_ptr<RunningPool> running_slots_ = std::make_unique<RunningPool>();
  std::unique_ptr<JobArena> running_arena_ = std::make_unique<JobArena>();  // their placements
  std::unordered_map<int64_t, RunningJob, std::hash<int64_t>, std::equal_to<int64_t>,
                     PoolAllocator<RunningEntry, RunningPool>>
      running_{0, std::hash<int64_t>{}, std::equal_to<int64_t>{},
               PoolAllocator<RunningEntry, RunningPool>(running_slots_.get())};
  std::optional<Timestamp> first_cycle_;  // the never-fits wait counts from here at least
  // Set by a cycle that decided nothing (skip_quiet_cycles): from when until when a cycle with
  // the same inputs decides nothing again. Every change of the inputs resets it.
  struct Quiet {
    Timestamp from{};
    Timestamp until{};
  };
  std::optional<Quiet> quiet_;
  // The last cycle's: when a hold one of its fits passed stops being passable, which changes
  // that fit with no other change (NextTimeDrivenDecision).
  Timestamp holds_passable_until_ = Timestamp::max();
  int64_t quiet_cycles_ = 0;
  int64_t cycles_ = 0;
  // The cycle's state, one for all cycles: its vectors keep their memory from one cycle to the next
  // (grown anew each cycle they cost allocations on a heap a deep queue fragments).
  std::unique_ptr<Cycle> cycle_;
  // The flavors of the job being evaluated (Evaluate's; not reentrant), kept for its memory.
  std::vector<ConsumptionModel> models_scratch_;
  // Jobs of one shape share the verdict of the first of them this cycle (when they may not hold
  // capacity), or of the last of them fitted on the state the cycle still has without changing
  // it (when they may: a hold one books changes the fits of those after it, so such a job takes
  // the verdict at the cost of an evaluation, and the budget and the walk are as if it were
  // fitted).
  SharedVerdicts shared_;
  ReservationMemo reservations_;  // ReserveCapacity's searches, per shape
  // Also makes `verdict`'s message the interned copy, which the shape's other jobs then share.
  void RememberShapeVerdict(int64_t shape_key, Verdict& verdict);
  // Bumped by everything that moves what a fit, a preemption plan or a hold reads: nodes, shares,
  // quota (AddUsage, AddShare). With the cycle's holds, claimed victims and victims left it
  // stamps the state a verdict was decided on.
  int64_t capacity_changes_ = 0;
  FitState StateOf(const Cycle& cycle) const;
  const Verdict* UnchangedFitVerdict(const PendingEntry& entry, const Cycle& cycle) const;
  void RememberUnchangedFit(const PendingEntry& entry, const Cycle& cycle);
  // Verdict messages, so that a job's new verdict and the one last reported share their text
  // when they are equal (aged each cycle).
  TextInterner messages_;
};

}  // namespace trainyard
