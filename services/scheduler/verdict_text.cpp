#include "services/scheduler/verdict_text.h"

#include <cstdio>
#include <ctime>

#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

std::string ShareText(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", share);
  return buf;
}

std::string Models(const std::vector<ConsumptionModel>& models) {
  std::string out;
  for (size_t i = 0; i < models.size(); ++i) {
    if (i > 0) out += i + 1 == models.size() ? " or " : ", ";
    out += ConsumptionModelName(models[i]);
  }
  return out;
}

std::string What(const GangText& gang) {
  if (gang.tpu_chips > 0) {
    return gang.machine_type + " slices of " + std::to_string(gang.tpu_chips) + " chips";
  }
  return gang.machine_type;
}

}  // namespace

std::string ClockText(Timestamp t, bool seconds) {
  // Not system_clock::to_time_t: it goes through nanoseconds, which overflow past the year 2262.
  std::time_t secs =
      std::chrono::time_point_cast<std::chrono::seconds>(t).time_since_epoch().count();
  // Written by hand for the years 1970-9999, as strftime writes them: a cycle formats one for each
  // capacity hold, and gmtime_r and strftime took 5-9% of a replay's time.
  if (secs >= 0 && secs < 253402300800) {  // before 10000-01-01
    const int64_t days = secs / 86400, of_day = secs % 86400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), in 400-year eras from
    // 0000-03-01.
    const int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    const int64_t day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    if (year >= 1000) {
      char buf[32];
      char* p = buf;
      auto put = [&p](int64_t v, int width) {
        for (int i = width - 1; i >= 0; --i, v /= 10) p[i] = static_cast<char>('0' + v % 10);
        p += width;
      };
      put(year, 4);
      *p++ = '-';
      put(month, 2);
      *p++ = '-';
      put(day, 2);
      *p++ = ' ';
      put(of_day / 3600, 2);
      *p++ = ':';
      put(of_day / 60 % 60, 2);
      if (seconds) {
        *p++ = ':';
        put(of_day % 60, 2);
      }
      return std::string(buf, p) + " UTC";
    }
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), seconds ? "%Y-%m-%d %H:%M:%S UTC" : "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string NoRegionMessage(const std::string& region) {
  return "the fleet has no capacity in " + region + " (parked until configuration changes)";
}

std::string NeverFitsCapacityMessage(const GangText& gang, int64_t largest_pool) {
  if (largest_pool == 0) {
    return "no " + Models(gang.models) + " capacity for " + What(gang) + " in " + gang.region +
           " (parked until configuration changes)";
  }
  return "needs " + std::to_string(gang.units) + " " + What(gang) + " in one zone; the largest " +
         Models(gang.models) + " pool in " + gang.region + " has " + std::to_string(largest_pool) +
         " (parked until configuration changes)";
}

std::string NeverFitsQuotaMessage(const std::string& metric, int64_t need, int64_t limit) {
  return "needs " + std::to_string(need) + " " + metric + ", quota is " + std::to_string(limit) +
         " (parked until configuration changes)";
}

std::string QuotaMessage(const std::string& metric, int64_t used, int64_t limit, int64_t need) {
  return "project quota for " + metric + " exceeded: " + std::to_string(used) + "/" +
         std::to_string(limit) + " in use, job needs " + std::to_string(need);
}

std::string CapacityShortMessage(const std::vector<ShortPool>& pools) {
  std::string out = "short now: ";
  for (size_t i = 0; i < pools.size(); ++i) {
    const CapacityPool& p = *pools[i].pool;
    out += (i > 0 ? ", " : "") + p.zone + " " + p.machine_type + " " +
           std::string(ConsumptionModelName(p.model)) +
           (p.model == ConsumptionModel::kSpot ? " capacity fell" : " stocked out") + " (" +
           std::to_string(pools[i].units_now) + " of " + std::to_string(p.units) + " obtainable)";
  }
  return out;
}

std::string NoCapacityMessage(const GangText& gang, const std::string& zone, int64_t best_free) {
  return "no free capacity for " + std::to_string(gang.units) + " " + What(gang) + " " +
         Models(gang.models) + " in any zone of " + gang.region + " (closest: " + zone + ", " +
         std::to_string(best_free) + " of " + std::to_string(gang.units) + ")";
}

std::string NoZoneFitsMessage(const GangText& gang, const std::string& zone, int64_t best_free) {
  return "no zone of " + gang.region + " has " + std::to_string(gang.units) + " free " +
         What(gang) + " " + Models(gang.models) + " (most: " + zone + ", " +
         std::to_string(best_free) + ")";
}

std::string GangSplitMessage(const std::string& region, size_t pools) {
  return "no zone of " + region + " fits all " + std::to_string(pools) +
         " worker pools at once; each fits alone in some zone";
}

std::string WaitingForDwsMessage(const fit_reason::WaitingForDws& reason) {
  const GangText& gang = reason.gang;
  std::string out = "waiting for DWS capacity for " + std::to_string(gang.units) + " " +
                    What(gang) + " in " + gang.region + " (";
  if (reason.deadline) {
    out += "max wait " + ShortDuration(*reason.deadline - reason.queue_time) + ", ";
  } else {
    out += "no max wait, ";
  }
  out += ShortDuration(reason.now - reason.queue_time) + " elapsed";
  if (reason.granted_at && *reason.granted_at > reason.now) {
    out += "; the DWS queue grants it in " + ShortDuration(*reason.granted_at - reason.now);
  } else if (reason.granted_at) {
    out += "; granted, waiting for room in the pool";
  }
  if (reason.nodes_ahead > 0) {
    out += "; " + std::to_string(reason.nodes_ahead) + " nodes of this fleet ahead of it";
  }
  return out + ")";
}

std::string DwsTimeoutMessage(const SchedulerJob& job) {
  Duration wait = job.dws_deadline ? *job.dws_deadline - job.DwsRequestTime() : Duration{};
  return "FLEX_START capacity for the job did not become available within maxWaitDuration (" +
         ShortDuration(wait) +
         "); resubmit it, or set a longer maxWaitDuration (0 waits "
         "forever)";
}

std::string NeverFitsTimeoutMessage(std::string why, Duration timeout) {
  constexpr std::string_view kParked = " (parked until configuration changes)";
  if (why.size() >= kParked.size() && why.ends_with(kParked)) {
    why.resize(why.size() - kParked.size());
  }
  return "NEVER_FITS: " + why + "; the fleet did not change within its neverFitsTimeout (" +
         ShortDuration(timeout) + "), so the job fails";
}

std::string CohortFullMessage(const std::string& cohort, const std::string& resource, int64_t used,
                              int64_t capacity, const std::string& project, int64_t project_used,
                              int64_t nominal) {
  return "cohort " + cohort + "'s " + resource + " is full: " + std::to_string(used) + " of " +
         std::to_string(capacity) + " in use, " + project + " holds " +
         std::to_string(project_used) + " of its nominal " + std::to_string(nominal);
}

std::string FairShareMessage(const std::string& project, double share,
                             const std::string& top_project, double top, Duration exemption) {
  const std::string mine =
      project + "'s weighted share after admission would be " + ShareText(share);
  if (top_project.empty() || share >= top) {
    return "over fair share: " + mine +
           (top_project.empty() ? "" : ", " + top_project + "'s is " + ShareText(top));
  }
  return "under fair share: " + mine + ", " + top_project + "'s is " + ShareText(top) +
         "; its work that ran less than " + ShortDuration(exemption) + " is not preempted";
}

std::string ShareExhaustedMessage(const std::string& cohort, const std::string& project,
                                  const std::string& resource, int64_t used, int64_t nominal,
                                  std::optional<int64_t> borrowing_limit, int64_t may_take,
                                  int64_t need) {
  return "share of cohort " + cohort + " exhausted for " + project + ": " + resource + " " +
         std::to_string(used) + " in use, nominal " + std::to_string(nominal) +
         (borrowing_limit ? ", borrowing limit " + std::to_string(*borrowing_limit) : "") +
         "; may take " + std::to_string(may_take) + " more now, job needs " + std::to_string(need);
}

std::string HeldMessage(int64_t job_id, int priority, Timestamp start) {
  return "capacity held for job " + std::to_string(job_id) + " (priority " +
         std::to_string(priority) + "), expected start " + ClockText(start);
}

namespace {

std::string NoCapacityText(const fit_reason::NoCapacity& r) {
  std::string out = r.split_over_zones ? NoZoneFitsMessage(r.gang, r.best_zone, r.best_free)
                                       : NoCapacityMessage(r.gang, r.best_zone, r.best_free);
  if (!r.short_now.empty()) out += "; " + CapacityShortMessage(r.short_now);
  if (r.cohort_full) {
    const fit_reason::CohortFull& full = *r.cohort_full;
    out += "; " +
           CohortFullMessage(full.cohort, full.resource, full.used, full.capacity, full.project,
                             full.project_used, full.nominal) +
           "; " +
           FairShareMessage(full.fair.project, full.fair.share, full.fair.top_project,
                            full.fair.top, full.exemption);
  }
  return out;
}

// One overload per reason, for std::visit.
struct WhyNotWords {
  std::string operator()(const fit_reason::NoRegion& r) const { return NoRegionMessage(r.region); }
  std::string operator()(const fit_reason::HeldForReservation& r) const {
    return HeldMessage(r.job_id, r.priority, r.start);
  }
  std::string operator()(const fit_reason::NeverFits& r) const {
    return NeverFitsCapacityMessage(r.gang, r.largest_pool);
  }
  std::string operator()(const fit_reason::ShareExhausted& r) const {
    return ShareExhaustedMessage(r.cohort, r.project, r.resource, r.used, r.nominal,
                                 r.borrowing_limit, r.may_take, r.need);
  }
  std::string operator()(const fit_reason::WaitingForDws& r) const {
    return WaitingForDwsMessage(r);
  }
  std::string operator()(const fit_reason::NoCapacity& r) const { return NoCapacityText(r); }
  std::string operator()(const fit_reason::GangSplit& r) const {
    return GangSplitMessage(r.region, r.pools);
  }
  std::string operator()(const fit_reason::ResourceNotReady& r) const {
    return ResourceNotReadyMessage(r.resource);
  }
  std::string operator()(const fit_reason::ResourceBusy& r) const {
    return ResourceBusyMessage(r.resource, r.machine_type, r.need, r.free, r.held);
  }
};

}  // namespace

std::string WhyNotText(const FitReason& reason) { return std::visit(WhyNotWords{}, reason); }

VerdictKey WhyNotKey(const FitReason& reason) {
  VerdictKey key;
  if (const auto* held = std::get_if<fit_reason::HeldForReservation>(&reason)) {
    key.kind = VerdictKey::Kind::kHeld;
    key.held_for = held->job_id;
    key.held_priority = held->priority;
    key.held_start = held->start;
    return key;
  }
  const auto* none = std::get_if<fit_reason::NoCapacity>(&reason);
  // Stockouts and a full cohort add words of their own (rare): those texts are always built.
  if (none == nullptr || !none->short_now.empty() || none->cohort_full ||
      none->best_zone_index < 0 || none->gang.pool > 0xff || none->gang.models.size() > 8) {
    return key;
  }
  key.kind =
      none->split_over_zones ? VerdictKey::Kind::kNoZoneFitsGang : VerdictKey::Kind::kNoCapacity;
  key.gang = static_cast<uint8_t>(none->gang.pool);
  for (ConsumptionModel m : none->gang.models) {
    key.flavors = key.flavors << 8 | (static_cast<uint64_t>(m) + 1);
  }
  key.zone = none->best_zone_index;
  key.free = none->best_free;
  return key;
}

VerdictKey WithReserved(VerdictKey key, int zone, Timestamp start) {
  if (zone < 0) return VerdictKey{};
  key.reserved_zone = zone;
  key.reserved_start = start;
  return key;
}

std::string ReservedSuffix(const std::string& zone, Timestamp start) {
  return "; capacity reserved in " + zone + ", expected start " + ClockText(start);
}

std::string NotEvaluatedMessage(int64_t position, int lookback) {
  return "not evaluated yet (position " + std::to_string(position) + ", lookback " +
         std::to_string(lookback) + " per cycle)";
}

std::string AdmittedMessage(const Fleet& fleet, const Placement& placement) {
  std::string out = "admitted to " + placement.zone + ":";
  for (size_t i = 0; i < placement.pools.size(); ++i) {
    const PlacedPool& placed = placement.pools[i];
    const CapacityPool& pool = fleet.pools[placed.pool];
    out += (i > 0 ? ", " : " ") + std::to_string(placed.units) + " " +
           pool.MachineTypeFor(placed.machine_type);
    if (pool.attached != AcceleratorType::kUnspecified && placed.attached_gpus > 0) {
      out += " with " + std::to_string(placed.attached_gpus) + " " + AcceleratorName(pool.attached);
    }
    out += " " + std::string(ConsumptionModelName(pool.model));
    if (!pool.reservation.empty()) out += " (" + pool.reservation + ")";
  }
  return out;
}

std::string WindowEndNote(const Fleet& fleet, const Placement& placement, Timestamp expected_end) {
  for (const PlacedPool& pp : placement.pools) {
    const CapacityPool& pool = fleet.pools[pp.pool];
    if (!pool.window_end || expected_end <= *pool.window_end) continue;
    return "; it cannot finish before reservation " + pool.reservation + "'s window ends at " +
           ClockText(*pool.window_end) + ": it is stopped then and goes back to the queue";
  }
  return "";
}

namespace {

// "1 lower-priority, 2 on borrowed capacity": a mixed set of victims by why each stops.
std::string VictimMix(size_t lower, size_t reclaimed, size_t fair_shared) {
  std::vector<std::string> parts;
  if (lower > 0) parts.push_back(std::to_string(lower) + " lower-priority");
  if (reclaimed > 0) parts.push_back(std::to_string(reclaimed) + " on borrowed capacity");
  if (fair_shared > 0) parts.push_back(std::to_string(fair_shared) + " over their fair share");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? ", " : "") + parts[i];
  return out;
}

}  // namespace

std::string PreemptedSuffix(size_t victims, size_t reclaimed, size_t fair_shared) {
  if (victims == 0) return "";
  const size_t lower = victims - reclaimed - fair_shared;
  auto jobs = [](size_t n) { return std::to_string(n) + " job" + (n > 1 ? "s" : ""); };
  if (lower == victims) {
    return " after preempting " + std::to_string(lower) + " lower-priority job" +
           (lower > 1 ? "s" : "");
  }
  if (reclaimed == victims) return " after reclaiming borrowed capacity from " + jobs(victims);
  if (fair_shared == victims) {
    return " after preempting " + jobs(victims) + " over their project's fair share";
  }
  return " after preempting " + jobs(victims) + ": " + VictimMix(lower, reclaimed, fair_shared);
}

std::string VictimNoticeMessage(int64_t preemptor, PreemptionCause cause, Duration grace,
                                Timestamp stops_at) {
  const std::string by = "job " + std::to_string(preemptor);
  std::string why;
  switch (cause) {
    case PreemptionCause::kReclaim:
      why = "borrowed capacity reclaimed by " + by;
      break;
    case PreemptionCause::kFairSharing:
      why = "preempted by " + by + " over its project's fair share";
      break;
    case PreemptionCause::kHigherPriority:
      why = "preempted by higher-priority " + by;
      break;
  }
  return why + ": stops at the end of its " + ShortDuration(grace) + " termination grace, " +
         ClockText(stops_at, /*seconds=*/true) + ", and goes back to the queue";
}

std::string PreemptingMessage(const std::vector<int64_t>& victims, size_t reclaimed,
                              size_t fair_shared, Duration grace, Timestamp due) {
  const size_t n = victims.size();
  std::string out = "preempting job" + std::string(n > 1 ? "s " : " ");
  for (size_t i = 0; i < n && i < 5; ++i) out += (i > 0 ? ", " : "") + std::to_string(victims[i]);
  if (n > 5) out += " and " + std::to_string(n - 5) + " more";
  const size_t lower = n - reclaimed - fair_shared;
  if (lower == n) {
    out += " (lower priority)";
  } else if (reclaimed == n) {
    out += " (on borrowed capacity)";
  } else if (fair_shared == n) {
    out += " (over their project's fair share)";
  } else {
    out += " (" + VictimMix(lower, reclaimed, fair_shared) + ")";
  }
  return out + ": admitted when " + (n > 1 ? "their " : "its ") + ShortDuration(grace) +
         " termination grace ends at " + ClockText(due, /*seconds=*/true);
}

std::string BehindHigherPriorityMessage(int64_t position, int lookback, int64_t head_id,
                                        int head_priority) {
  return "not evaluated yet: higher-priority jobs wait ahead of it in its queue (the first is "
         "job " +
         std::to_string(head_id) + ", priority " + std::to_string(head_priority) + "); position " +
         std::to_string(position) + ", lookback " + std::to_string(lookback) + " per cycle";
}

std::string ResourceNotReadyMessage(const std::string& resource_id) {
  return "waiting for persistent resource " + resource_id +
         " to be RUNNING (its nodes are being provisioned, rebooted or resized)";
}

std::string ResourceBusyMessage(const std::string& resource_id, const std::string& machine_type,
                                int64_t need, int64_t free, int64_t held) {
  if (held < need) {
    return "persistent resource " + resource_id + " holds " + std::to_string(held) + " " +
           machine_type + " replicas; the job needs " + std::to_string(need) +
           " (it waits for the pool to grow)";
  }
  return "persistent resource " + resource_id + ": " + std::to_string(free) + " of " +
         std::to_string(held) + " " + machine_type + " replicas free, the job needs " +
         std::to_string(need) + "; waiting for its other jobs to finish";
}

}  // namespace trainyard
