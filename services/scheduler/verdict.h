#pragma once
// Why a job waits, in words a user can act on (docs/scheduler.md, "Verdicts"), and where it stands.
#include <cstdint>
#include <string>
#include <string_view>

#include "services/scheduler/shared_text.h"
#include "services/time.h"

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

// The values a verdict's message shows, for the reasons a deep queue gives on most evaluations: no
// free capacity (or no zone fitting the gang), capacity held for another job, either with a hold
// of the job's own. Of one job (or of jobs of one shape: the same worker pools, region, project),
// equal keys mean equal messages: an evaluation whose key is the one last reported keeps that
// text rather than building it again (verdict_text.h's WhyNotKey makes them; docs/performance.md).
struct VerdictKey {
  enum class Kind : uint8_t { kNone, kNoCapacity, kNoZoneFitsGang, kHeld };
  Kind kind = Kind::kNone;  // kNone: no key, the message is built every time
  uint8_t gang = 0;         // which of the job's worker pools the message names
  uint64_t flavors = 0;     // the flavors it names, one byte each, most preferred last
  int zone = -1;            // the closest zone (FleetIndex's number) and what it has free
  int64_t free = 0;
  int64_t held_for = 0;  // the job capacity is held for, its priority and its expected start
  int held_priority = 0;
  Timestamp held_start{};
  int reserved_zone = -1;  // the job's own hold (ReservedSuffix): where, from when
  Timestamp reserved_start{};

  bool operator==(const VerdictKey&) const = default;
};

struct Verdict {
  ReasonCode code = ReasonCode::kNotEvaluated;
  SharedText message;
  int64_t position = 0;  // 1-based within the job's queue, rounded by DisplayPosition
  VerdictKey key = {};   // what `message` shows, as values (none: not known)

  // What a client reads: the code, the message and the position; the key only saves work.
  bool operator==(const Verdict& o) const {
    return code == o.code && message == o.message && position == o.position;
  }
  // The same shared verdict: its code, the very text (one pointer's compare, not the characters)
  // and its key; the position is not compared.
  bool SharesWith(const Verdict& o) const {
    return code == o.code && message.SharesWith(o.message) && key == o.key;
  }
};

// Exact up to 100, then two significant digits (4,810 → 4,800): positions far down a deep queue
// change every cycle and are not worth a write each time.
int64_t DisplayPosition(int64_t position);

}  // namespace trainyard
