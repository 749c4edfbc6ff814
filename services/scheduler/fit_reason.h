#pragma once
// Why a job does not fit, as values (docs/scheduler.md, "Parts"): the flavor assigner decides
// them, verdict_text.h turns them into words. Each names the numbers its message shows.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/verdict.h"

namespace trainyard {

// One worker pool of a gang, as a message names it.
struct GangText {
  std::string machine_type;
  int tpu_chips = 0;
  int64_t units = 0;
  std::string region;
  std::vector<ConsumptionModel> models;
  size_t pool = 0;  // which of the job's worker pools it is (a verdict's key names it so)
};

// A pool whose capacity is down now: an on-demand stockout, or spot capacity that fell.
struct ShortPool {
  const CapacityPool* pool = nullptr;
  int units_now = 0;
};

// Where a cohort member stands against the others: its dominant-resource share after admission,
// and the largest other member's share now (-1 and "" when it has no other member).
struct FairShareStanding {
  std::string project;
  double share = 0;
  std::string top_project;
  double top = -1;
};

namespace fit_reason {

// The job's region has no pool of the fleet (or the job asks for no pool).
struct NoRegion {
  std::string region;
};
// It would fit but for capacity held for an earlier starving job (backfill).
struct HeldForReservation {
  int64_t job_id = 0;
  int priority = 0;
  Timestamp start{};
};
// No pool of its type in the region is large enough, ever.
struct NeverFits {
  GangText gang;
  int64_t largest_pool = 0;
};
// A cohort member at its share: nominal plus what it may borrow.
struct ShareExhausted {
  std::string cohort;
  std::string project;
  std::string resource;
  int64_t used = 0;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  int64_t may_take = 0;
  int64_t need = 0;
};
struct WaitingForDws {
  GangText gang;
  Timestamp queue_time{};
  std::optional<Timestamp> deadline;
  Timestamp now{};
  // The DWS queue's word: this fleet's nodes asked for ahead of it, and when the first of the
  // region's pools grants it (in the past: granted, waiting for room in the pool).
  int64_t nodes_ahead = 0;
  std::optional<Timestamp> granted_at;
};
// The job's cohort pool is full: who holds it, and the member's fair-share standing.
struct CohortFull {
  std::string cohort;
  std::string resource;
  int64_t used = 0;
  int64_t capacity = 0;
  std::string project;
  int64_t project_used = 0;
  int64_t nominal = 0;
  FairShareStanding fair;
  Duration exemption{};
};
// Not enough free in any zone (NO_CAPACITY), or enough summed over zones but in none alone
// (NO_ZONE_FITS_GANG).
struct NoCapacity {
  GangText gang;
  bool split_over_zones = false;
  std::string best_zone;
  int best_zone_index = -1;  // FleetIndex's number for best_zone
  int64_t best_free = 0;
  std::vector<ShortPool> short_now;
  std::optional<CohortFull> cohort_full;
};
// Each worker pool fits alone somewhere, the gang in no one zone.
struct GangSplit {
  std::string region;
  size_t pools = 0;
};
// Jobs that name a persistent resource.
struct ResourceNotReady {
  std::string resource;
};
struct ResourceBusy {
  std::string resource;
  std::string machine_type;
  int64_t need = 0;
  int64_t free = 0;
  int64_t held = 0;
};

}  // namespace fit_reason

using FitReason =
    std::variant<fit_reason::NoRegion, fit_reason::HeldForReservation, fit_reason::NeverFits,
                 fit_reason::ShareExhausted, fit_reason::WaitingForDws, fit_reason::NoCapacity,
                 fit_reason::GangSplit, fit_reason::ResourceNotReady, fit_reason::ResourceBusy>;

// The verdict code a reason reports.
ReasonCode CodeOf(const FitReason& reason);

}  // namespace trainyard
