#pragma once
// Why a job waits, in words a user can act on (docs/scheduler.md, "Verdicts"), and where it stands.
#include <cstdint>
#include <string>
#include <string_view>

#include "services/scheduler/shared_text.h"

namespace trainyard {

enum class ReasonCode : int {
  kNone = 0,  // admitted
  kQuotaExceeded,
  kNoCapacity,
  kNoZoneFitsGang,
  kWaitingForDws,
  kHeldForReservation,
  kNotEvaluated,
  kNeverFits,
  kShareExhausted,        // a cohort member at its share: nominal plus what it may borrow
  kResourceNotReady,      // the persistent resource the job names is not RUNNING
  kPreempting,            // admitted once the jobs it preempts end their termination grace
  kBehindHigherPriority,  // not looked at yet: higher-priority jobs wait ahead in its queue
};

std::string_view ReasonCodeName(ReasonCode code);

// Why an admission stops a running job (its event says so).
enum class PreemptionCause {
  kHigherPriority,  // a higher-priority job of the same project
  kReclaim,         // a cohort member within its nominal share takes back what was borrowed
  kFairSharing,     // the victim's project holds more than its weighted fair share of the cohort
};                  // "QUOTA_EXCEEDED", …

struct Verdict {
  ReasonCode code = ReasonCode::kNotEvaluated;
  SharedText message;
  int64_t position = 0;  // 1-based within the job's queue, rounded by DisplayPosition

  bool operator==(const Verdict&) const = default;
};

// Exact up to 100, then two significant digits (4,810 → 4,800): positions far down a deep queue
// change every cycle and are not worth a write each time.
int64_t DisplayPosition(int64_t position);

}  // namespace trainyard
