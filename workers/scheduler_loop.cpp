#include "workers/scheduler_loop.h"

#include "services/log.h"
#include "services/scheduler/workload_key.h"
#include "services/thread_name.h"
#include "workers/background_priority.h"

namespace trainyard {

SchedulerLoop::SchedulerLoop(SchedulerStore& store, const Fleet& fleet, const Clock& clock,
                             SchedulerLoopOptions options)
    : store_(store),
      fleet_(fleet),
      clock_(clock),
      options_(options),
      core_(fleet, options.config),
      planner_(fleet, options.simulated_startup, options.runtime_lease) {}

Status SchedulerLoop::Apply(const JobRecord& record) {
  const CustomJob& job = record.job;
  const bool placed = job.trainyard && !job.trainyard->zone.empty();
  if (job.state == JobState::kQueued) {
    auto pending = MakeSchedulerJob(record.id, record.version, record.project_id, record.location,
                                    job, record.state_since);
    if (!pending.ok()) {
      LogJson(LogLevel::kWarn, "scheduler_skipped_job",
              {{"job", job.name}, {"error", pending.status().message()}});
      shapes_.erase(record.id);
      return Status::Ok();
    }
    shapes_.insert_or_assign(record.id, *pending);
    core_.UpsertPending(std::move(pending).value());
    return Status::Ok();
  }
  if (IsTerminal(job.state)) shapes_.erase(record.id);
  const bool holds_nodes = job.state == JobState::kPending || job.state == JobState::kRunning ||
                           job.state == JobState::kCancelling;
  if (!holds_nodes || !placed) {
    core_.Remove(record.id);
    return Status::Ok();
  }
  auto known = shapes_.find(record.id);
  if (known == shapes_.end()) {
    if (record.without_spec) {
      return Aborted("job " + job.name + " came past the queue with no shape kept for it");
    }
    auto shape =
        MakeSchedulerJob(record.id, record.version, record.project_id, record.location, job);
    if (!shape.ok()) return Status::Ok();  // its queued row was skipped likewise
    known = shapes_.emplace(record.id, std::move(shape).value()).first;
  }
  const SchedulerJob& shape = known->second;
  Placement placement;
  placement.zone = job.trainyard->zone;
  for (const PlacedPoolStatus& p : job.trainyard->pools) {
    int index = fleet_.PoolIndex(p.pool_id);
    if (index < 0) continue;  // a pool the fleet file no longer has: its nodes count nowhere
    placement.pools.push_back(
        {index, p.units, p.machine_type, 0, BlockUnitsOf(fleet_.pools[index], p.nodes)});
  }
  // A RUNNING job's run began when it entered RUNNING; before that its nodes were booting.
  std::optional<Timestamp> running_since;
  if (job.state == JobState::kRunning) running_since = record.state_since;
  core_.UpsertRunning(MakeRunningJob(
      shape, placement, fleet_, job.trainyard->admitted_at.value_or(clock_.Now()), running_since));
  return Status::Ok();
}

void SchedulerLoop::ApplyResource(const ResourceRecord& record) {
  const std::string key = ResourceKey(record.project_id, record.location, record.resource_id);
  known_resources_[record.uid] = KnownResource{record.version, key};
  const PersistentResource& r = record.resource;
  auto holder =
      MakeResourceHolder(record.uid, record.version, record.project_id, record.location, r);
  const bool placed = r.trainyard && !r.trainyard->zone.empty();
  if (!holder.ok() || (!placed && r.state != ResourceState::kProvisioning)) {
    core_.Remove(HoldKey(record.uid));  // ERROR before it was placed: it holds nothing
    core_.RemoveResourceCapacity(key);
    return;
  }
  if (!placed) {
    core_.UpsertPending(std::move(holder).value());
    core_.RemoveResourceCapacity(key);
    return;
  }
  Placement placement;
  placement.zone = r.trainyard->zone;
  for (const PlacedPoolStatus& p : r.trainyard->pools) {
    int index = fleet_.PoolIndex(p.pool_id);
    if (index < 0) continue;
    placement.pools.push_back(
        {index, p.units, p.machine_type, 0, BlockUnitsOf(fleet_.pools[index], p.nodes)});
  }
  // Its quota counts the nodes it holds, not the size a resize asks for and has not reached.
  auto held =
      MakeResourceHolder(record.uid, record.version, record.project_id, record.location, AsHeld(r));
  core_.UpsertRunning(MakeRunningJob(held.ok() ? *held : *holder, placement, fleet_,
                                     record.held_since.value_or(*r.create_time)));
  const bool ready = r.state == ResourceState::kRunning || r.state == ResourceState::kUpdating;
  core_.SetResourceCapacity(key, record.uid, placement, ready);
}

StatusOr<std::vector<ResourceRecord>> SchedulerLoop::ReadResources() {
  TY_ASSIGN_OR_RETURN(std::vector<SchedulerStore::ResourceStamp> stamps, store_.ResourceStamps());
  std::unordered_map<int64_t, ResourceRecord> rows;
  std::vector<int64_t> changed;
  for (const SchedulerStore::ResourceStamp& stamp : stamps) {
    auto cached = resource_rows_.find(stamp.uid);
    if (cached != resource_rows_.end() && StampOf(cached->second) == stamp) {
      rows.insert(resource_rows_.extract(cached));
    } else {
      changed.push_back(stamp.uid);
    }
  }
  if (!changed.empty()) {
    // A row that moved again since its stamp was read is read as it now is; its own version
    // is what the next pass compares with.
    TY_ASSIGN_OR_RETURN(std::vector<ResourceRecord> fresh, store_.ResourcesByUid(changed));
    for (ResourceRecord& record : fresh) rows[record.uid] = std::move(record);
  }
  resource_rows_ = std::move(rows);  // what is not there any more was deleted
  std::vector<ResourceRecord> out;
  out.reserve(resource_rows_.size());
  for (const auto& [uid, record] : resource_rows_) out.push_back(record);
  std::sort(out.begin(), out.end(),
            [](const ResourceRecord& a, const ResourceRecord& b) { return a.uid < b.uid; });
  return out;
}

Status SchedulerLoop::IngestResources(Timestamp now) {
  TY_ASSIGN_OR_RETURN(std::vector<ResourceRecord> resources, ReadResources());
  if (resources_ != nullptr && !resources.empty()) {
    TY_ASSIGN_OR_RETURN(int moved, resources_->Step(resources, now, core_));
    if (moved > 0) {
      TY_ASSIGN_OR_RETURN(resources, ReadResources());  // as the steps left them
    }
  }
  std::unordered_map<int64_t, KnownResource> gone = std::move(known_resources_);
  known_resources_.clear();
  for (const ResourceRecord& record : resources) {
    auto known = gone.find(record.uid);
    if (known != gone.end() && known->second.version == record.version) {
      known_resources_.insert(*known);  // unchanged: the core has it already
    } else {
      ApplyResource(record);
    }
    if (known != gone.end()) gone.erase(known);
  }
  for (const auto& [uid, known] : gone) {  // deleted: its nodes are back in their pools
    core_.Remove(HoldKey(uid));
    core_.RemoveResourceCapacity(known.key);
  }
  return Status::Ok();
}

Status SchedulerLoop::Ingest(LoopStats& stats) {
  for (;;) {
    TY_ASSIGN_OR_RETURN(std::vector<JobRecord> changes,
                        store_.JobChanges(cursor_, options_.change_batch));
    for (const JobRecord& record : changes) TY_RETURN_IF_ERROR(Apply(record));
    if (!changes.empty())
      cursor_ = ChangeCursor{changes.back().change_xid, changes.back().change_seq};
    stats.changes += static_cast<int>(changes.size());
    if (static_cast<int>(changes.size()) < options_.change_batch) break;
  }
  TY_RETURN_IF_ERROR(IngestResources(clock_.Now()));
  TY_ASSIGN_OR_RETURN(SchedulerStore::UnitsDownView down, store_.UnitsDown(fleet_));
  // A node the cluster says is down may be one the fleet already counts as failed: the larger.
  const std::map<std::string, int64_t> external =
      external_ != nullptr ? external_->UnitsDown() : std::map<std::string, int64_t>{};
  for (size_t p = 0; p < fleet_.pools.size(); ++p) {
    auto it = down.pools.find(fleet_.pools[p].id);
    int64_t units = it == down.pools.end() ? 0 : it->second;
    if (auto ext = external.find(fleet_.pools[p].id); ext != external.end()) {
      units = std::max(units, ext->second);
    }
    core_.SetUnitsDown(static_cast<int>(p), units);
  }
  for (const auto& [uid, known] : known_resources_) {
    std::map<int, int64_t> held_down;
    if (auto it = down.resources.find(uid); it != down.resources.end()) {
      for (const auto& [pool_id, units] : it->second) held_down[fleet_.PoolIndex(pool_id)] = units;
    }
    core_.SetResourceUnitsDown(known.key, held_down);
  }
  return Status::Ok();
}

StatusOr<LoopStats> SchedulerLoop::RunOnce() {
  LoopStats stats;
  auto leading = store_.TryLead();
  metrics_.Leading(leading.ok() && *leading);
  if (!leading.ok() || !*leading) {
    synced_ = false;  // whoever leads may change everything meanwhile
    was_leading_ = false;
    if (!leading.ok()) return leading.status();
    return stats;
  }
  stats.leading = true;
  if (!was_leading_) {
    LogJson(LogLevel::kInfo, "scheduler_leading", {});  // the first pass, or a takeover
    was_leading_ = true;
  }
  if (!synced_) {
    core_.Clear();
    shapes_.clear();
    known_resources_.clear();
    resource_rows_.clear();
    // The jobs that have not ended, and the feed from there: ended ones are nothing to an empty
    // core.
    auto live = store_.ReadLiveJobs();
    if (!live.ok()) return live.status();
    for (const JobRecord& record : live->jobs) {
      if (Status s = Apply(record); !s.ok()) return s;  // a reload reads every spec
    }
    cursor_ = live->cursor;
    stats.reloaded = static_cast<int>(live->jobs.size());
    synced_ = true;
  }
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  Timestamp now = clock_.Now();
  if (failures_ != nullptr) {
    auto step = failures_->Step(now);
    if (!step.ok()) {
      LogJson(LogLevel::kWarn, "fleet_failures_failed", {{"error", step.status().message()}});
    } else {
      metrics_.Fleet(*step);
    }
  }
  if (Status s = Ingest(stats); !s.ok()) {
    synced_ = false;
    return s;
  }
  const auto ingested = Clock::now();
  // Decide at a time read after the ingest: a job created meanwhile must never be admitted (and
  // billed) at a virtual time before its own createTime.
  now = clock_.Now();
  const bool report_positions =
      options_.report_positions &&
      (options_.positions_period.count() <= 0 || ingested >= positions_due_);
  CycleResult cycle = core_.RunCycle(now, report_positions);
  if (report_positions) {
    positions_due_ =
        ingested + options_.positions_period +
        options_.positions_period_per_write * static_cast<int64_t>(cycle.verdicts.size());
  }
  const auto decided = Clock::now();
  stats.evaluations = cycle.evaluations;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  if (cycle.empty()) {
    metrics_.Cycle(seconds(ingested - started), seconds(decided - ingested), std::nullopt, cycle,
                   {}, core_.pending_count(), core_.running_count());
    return stats;
  }
  auto committed = store_.Commit(planner_, cycle, now);
  if (!committed.ok()) {
    synced_ = false;  // the core moved as if committed: reload it
    return committed.status();
  }
  stats.committed = *committed;
  if (committed->skipped > 0) synced_ = false;
  metrics_.Cycle(seconds(ingested - started), seconds(decided - ingested),
                 seconds(Clock::now() - decided), cycle, *committed, core_.pending_count(),
                 core_.running_count());
  if (committed->admitted > 0 || committed->failed > 0) {
    auto ms = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    LogJson(LogLevel::kInfo, "scheduler_cycle",
            {{"ingest_ms", ms(ingested - started)},
             {"decide_ms", ms(decided - ingested)},
             {"commit_ms", ms(Clock::now() - decided)},
             {"changes", stats.changes},
             {"admitted", committed->admitted},
             {"preempted", committed->preempted},
             {"failed", committed->failed},
             {"skipped", committed->skipped},
             {"evaluations", cycle.evaluations},
             {"pending", static_cast<int64_t>(core_.pending_count())}});
  }
  return stats;
}

void SchedulerLoop::Start() {
  stop_ = false;
  thread_ = std::thread([this] {
    NameThisThread("ty-scheduler");
    LowerThisThreadsPriority();
    Loop();
  });
}

void SchedulerLoop::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (Status resigned = store_.Resign(); !resigned.ok()) {
    LogJson(LogLevel::kWarn, "scheduler_resign_failed", {{"error", resigned.message()}});
  }
}

void SchedulerLoop::Wake() {
  // Behind jobs that already wait for capacity a new one most likely waits too, and a pass per
  // create would only cost a busy server a cycle each: then the tick will do.
  if (!queue_was_empty_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void SchedulerLoop::Loop() {
  auto last_pass = std::chrono::steady_clock::now();
  while (!stop_) {
    metrics_.Deferred(DeferToRequests(options_.deferral, last_pass, mu_, wake_, stop_));
    const auto began = last_pass = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu_);
      woken_ = false;
    }
    auto stats = RunOnce();
    if (!stats.ok()) {
      LogJson(LogLevel::kWarn, "scheduler_pass_failed", {{"error", stats.status().message()}});
    }
    queue_was_empty_.store(core_.pending_count() == 0, std::memory_order_relaxed);
    // A cycle that admitted may have left more that fits (the per-queue lookback), and one that
    // preempted put its victims back in the queue: go again now. One that admitted the last job
    // waiting waits for the next create and the gap, as any other: with one client creating,
    // passes back to back took one or two jobs each and read the admitted pools' free nodes
    // each time.
    if (stats.ok() && stats->committed.admitted > 0 &&
        (core_.pending_count() > 0 || stats->committed.preempted > 0)) {
      continue;
    }
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, options_.tick, [this] { return stop_.load() || woken_; });
    if (woken_ && !stop_) {
      wake_.wait_until(lock, began + options_.wake_gap, [this] { return stop_.load(); });
    }
  }
}

}  // namespace trainyard
