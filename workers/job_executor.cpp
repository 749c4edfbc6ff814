#include "workers/job_executor.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "services/job_state_machine.h"
#include "services/log.h"

namespace trainyard {

std::string DefaultExecutorOwner() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(rd() % 100000);
}

StatusOr<int> JobExecutor::RunOnce() {
  // A lease outlives three missed heartbeats; renewing every pass rewrote every leased row each
  // time (a thousand rows a pass under load) for nothing.
  const auto wall = std::chrono::steady_clock::now();
  if (!last_heartbeat_ || wall - *last_heartbeat_ >= options_.lease / 3) {
    TY_RETURN_IF_ERROR(leases_.Heartbeat(options_.owner, options_.lease).status());
    last_heartbeat_ = wall;
  }
  TY_RETURN_IF_ERROR(leases_.Claim(options_.owner, options_.batch, options_.lease).status());
  Timestamp now = clock_.Now();
  last_pass_at_ = now;
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> due, leases_.Due(options_.owner, now, options_.batch));
  std::vector<StateUpdate> updates;
  std::vector<const JobRecord*> stepped;
  for (const JobRecord& record : due) {
    auto step = sim::NextStep(record.job, now, options_.timings, record.run_remaining);
    if (!step) continue;
    auto transition = JobStateMachine::Transition(SnapshotOf(record.id, record.version, record.job),
                                                  step->to, now, step->reason, step->error);
    if (!transition.ok()) {
      LogJson(LogLevel::kError, "job_transition_refused",
              {{"job", record.job.name}, {"error", transition.status().message()}});
      continue;
    }
    StateUpdate update;
    update.id = record.id;
    update.expected_version = record.version;
    update.transition = std::move(transition).value();
    update.transition.next_action_at = step->next_action_at;
    update.lease_owner = options_.owner;
    if (step->to == JobState::kRunning) update.transition.image_uri = sim::PrimaryImage(record.job);
    updates.push_back(std::move(update));
    stepped.push_back(&record);
  }
  // One transaction for the whole pass: one commit instead of one per step.
  TY_ASSIGN_OR_RETURN(std::vector<bool> applied, jobs_.ApplyTransitions(updates));
  int count = 0;
  for (size_t i = 0; i < applied.size(); ++i) {
    if (!applied[i]) continue;
    ++count;
    LogJson(LogLevel::kDebug, "job_transition",
            {{"job", stepped[i]->job.name},
             {"to", static_cast<int>(updates[i].transition.to)},
             {"reason", updates[i].transition.reason}});
  }
  return count;
}

void JobExecutor::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void JobExecutor::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  Status released = leases_.ReleaseAll(options_.owner);
  if (!released.ok()) {
    LogJson(LogLevel::kWarn, "lease_release_failed", {{"error", released.message()}});
  }
}

std::chrono::milliseconds JobExecutor::IdleWait() {
  // Sleep until the earliest step we hold falls due (in wall time: virtual time may run faster),
  // but never longer than the tick, which is how soon newly admitted jobs are claimed. A step that
  // was due at the last pass and still did not apply waits the tick, so it cannot spin the loop;
  // one that fell due since then runs at once.
  auto next = leases_.NextDue(options_.owner);
  if (!next.ok() || !*next) return options_.idle_tick;
  if (**next <= last_pass_at_) return options_.idle_tick;
  const std::chrono::microseconds wall = clock_.WallFor(**next - clock_.Now());
  if (wall.count() <= 0) return std::chrono::milliseconds(0);
  return std::min(std::chrono::ceil<std::chrono::milliseconds>(wall), options_.idle_tick);
}

void JobExecutor::Loop() {
  while (!stop_) {
    auto applied = RunOnce();
    if (!applied.ok()) {
      LogJson(LogLevel::kWarn, "executor_pass_failed", {{"error", applied.status().message()}});
    }
    // Busy: go again at once. Idle: wait for the next due step (or until stopped).
    if (applied.ok() && *applied > 0) continue;
    const auto wait = applied.ok() ? IdleWait() : options_.idle_tick;
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, wait, [this] { return stop_.load(); });
  }
}

}  // namespace trainyard
