#pragma once
// Where a job's wall time went (`trainyard.goodput`): the share of it that trained and kept the
// result. Storage accrues the buckets at every state change (each state's time goes to the bucket
// of that state); reads add the time the job has spent in its current state so far.
//
//   waiting     QUEUED before the first start
//   starting    PENDING before the first start (boot, image pull, launch)
//   restarting  QUEUED or PENDING after the first start (preemptions, repairs, retries)
//   running     RUNNING; of it, `redone` is work lost to an interruption (done since the last
//               checkpoint) and done again, `checkpoint_save` and `checkpoint_restore` the time
//               checkpoints took, `program_startup` the program's start-up before its first step
//               (every run), the rest is productive
#include <optional>

#include "services/time.h"

namespace trainyard {

enum class JobState : int;  // services/model/custom_job.h, which holds a JobGoodput

struct JobGoodput {
  Duration waiting{};
  Duration starting{};
  Duration restarting{};
  Duration running{};
  Duration redone{};
  // Of `running`: saving periodic checkpoints, and restoring one when a run resumed from it.
  Duration checkpoint_save{};
  Duration checkpoint_restore{};
  // Of `running`: each run's start-up from its nodes being ready to its first step (container
  // start, NCCL or jax.distributed initialization): ML Goodput's PROGRAM_STARTUP.
  Duration program_startup{};

  bool operator==(const JobGoodput&) const = default;
  Duration Productive() const {
    const Duration unproductive = redone + checkpoint_save + checkpoint_restore + program_startup;
    return running > unproductive ? running - unproductive : Duration{};
  }
  Duration Lost() const { return restarting + redone; }
  Duration Total() const { return waiting + starting + restarting + running; }
  // From its first admission on: what the job held or waited for again once it had capacity.
  Duration Lifetime() const { return starting + restarting + running; }
  // Goodput as Google's ML productivity goodput splits it. Runtime goodput: productive time over
  // the job's running lifetime (from its first admission; the wait for capacity before it is
  // not the job's to lose). Scheduling goodput: the share of its wall time it was not waiting for
  // capacity to be first given. nullopt before any time has passed.
  std::optional<double> Ratio() const;
  std::optional<double> SchedulingRatio() const;
};

// What checkpoints cost in run time (services/jobs/workload_model.h).
struct CheckpointCost {
  Duration save{};
  Duration restore{};
};

// How `ran` of RUNNING time split: first the program's start-up (`program_startup`, every run),
// then the restore of the last checkpoint (when the run resumed from one), then work with a save
// after every `interval` of it (0: no saves). `kept` is the work that completed saves hold,
// `redone` the rest since the last of them (lost if the run stops). storage/job_transition_sql.cpp
// does the same arithmetic in SQL.
struct RunSplit {
  Duration program_startup{};
  Duration restore{};
  Duration saving{};
  Duration kept{};
  Duration redone{};
};
RunSplit SplitRun(Duration ran, bool resumed, Duration interval, CheckpointCost cost,
                  Duration program_startup = {});

// The bucket a state's time goes to, by whether the job had started when it was in that state.
enum class GoodputClock { kNone, kQueued, kPending, kRunning };
GoodputClock GoodputClockOf(JobState state);

// `goodput` plus the time since `state_since` in the job's current `state` (none once terminal).
JobGoodput GoodputAsOf(JobGoodput goodput, JobState state, bool started, Timestamp state_since,
                       Timestamp now);

}  // namespace trainyard
