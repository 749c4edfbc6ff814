#include "services/model/goodput.h"

#include <algorithm>

#include "services/model/custom_job.h"

namespace trainyard {

std::optional<double> JobGoodput::Ratio() const {
  const Duration lifetime = Lifetime();
  if (lifetime <= Duration{}) return std::nullopt;
  return std::chrono::duration<double>(Productive()).count() /
         std::chrono::duration<double>(lifetime).count();
}

std::optional<double> JobGoodput::SchedulingRatio() const {
  const Duration total = Total();
  if (total <= Duration{}) return std::nullopt;
  return std::chrono::duration<double>(Lifetime()).count() /
         std::chrono::duration<double>(total).count();
}

RunSplit SplitRun(Duration ran, bool resumed, Duration interval, CheckpointCost cost,
                  Duration program_startup) {
  RunSplit out;
  if (ran <= Duration{}) return out;
  out.program_startup = std::clamp(program_startup, Duration{}, ran);
  ran -= out.program_startup;
  out.restore = resumed ? std::min(ran, cost.restore) : Duration{};
  const Duration work = ran - out.restore;  // work and saves, alternating
  if (interval <= Duration{}) {
    out.redone = work;
    return out;
  }
  const int64_t saves = work / (interval + cost.save);
  out.saving = saves * cost.save;
  out.kept = saves * interval;
  out.redone = work - out.saving - out.kept;
  return out;
}

GoodputClock GoodputClockOf(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return GoodputClock::kQueued;
    case JobState::kPending:
      return GoodputClock::kPending;
    case JobState::kRunning:
      return GoodputClock::kRunning;
    default:
      return GoodputClock::kNone;
  }
}

JobGoodput GoodputAsOf(JobGoodput goodput, JobState state, bool started, Timestamp state_since,
                       Timestamp now) {
  if (now <= state_since) return goodput;
  const Duration so_far = now - state_since;
  switch (GoodputClockOf(state)) {
    case GoodputClock::kQueued:
      (started ? goodput.restarting : goodput.waiting) += so_far;
      break;
    case GoodputClock::kPending:
      (started ? goodput.restarting : goodput.starting) += so_far;
      break;
    case GoodputClock::kRunning:
      goodput.running += so_far;
      break;
    case GoodputClock::kNone:
      break;
  }
  return goodput;
}

}  // namespace trainyard
