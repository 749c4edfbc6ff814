#include "services/scheduler/verdict.h"

namespace trainyard {

std::string_view ReasonCodeName(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNone:
      return "ADMITTED";
    case ReasonCode::kQuotaExceeded:
      return "QUOTA_EXCEEDED";
    case ReasonCode::kNoCapacity:
      return "NO_CAPACITY";
    case ReasonCode::kNoZoneFitsGang:
      return "NO_ZONE_FITS_GANG";
    case ReasonCode::kWaitingForDws:
      return "WAITING_FOR_DWS";
    case ReasonCode::kHeldForReservation:
      return "HELD_FOR_RESERVATION";
    case ReasonCode::kNotEvaluated:
      return "NOT_EVALUATED";
    case ReasonCode::kNeverFits:
      return "NEVER_FITS";
    case ReasonCode::kShareExhausted:
      return "SHARE_EXHAUSTED";
    case ReasonCode::kResourceNotReady:
      return "RESOURCE_NOT_READY";
    case ReasonCode::kPreempting:
      return "PREEMPTING";
    case ReasonCode::kBehindHigherPriority:
      return "BEHIND_HIGHER_PRIORITY";
  }
  return "";
}

int64_t DisplayPosition(int64_t position) {
  if (position <= 100) return position;
  int64_t scale = 1;
  while (position / scale >= 100) scale *= 10;
  return position / scale * scale;
}

}  // namespace trainyard
