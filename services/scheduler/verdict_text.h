#pragma once
// The words of every scheduling verdict, in one place (docs/scheduler.md, "Verdicts"): each names
// the flavor, the zone or the quota that decides, and numbers a user can compare.
#include <string>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/model/duration_text.h"
#include "services/scheduler/fit_reason.h"
#include "services/scheduler/scheduler_job.h"
#include "services/scheduler/verdict.h"

namespace trainyard {

// Why a job does not fit, in words: the message of the verdict whose code is CodeOf(reason).
std::string WhyNotText(const FitReason& reason);
// The values WhyNotText(reason) shows, as a verdict's key (verdict.h); none (Kind::kNone) for the
// reasons a key does not cover (stockouts, full cohorts, DWS, quota, resources, never-fits).
VerdictKey WhyNotKey(const FitReason& reason);
// `key` for the text with ReservedSuffix(zone's name, start) after it; none if `key` is none or
// the zone is not the fleet's (-1).
VerdictKey WithReserved(VerdictKey key, int zone, Timestamp start);

std::string NoRegionMessage(const std::string& region);
std::string NeverFitsCapacityMessage(const GangText& gang, int64_t largest_pool);
std::string NeverFitsQuotaMessage(const std::string& metric, int64_t need, int64_t limit);
std::string QuotaMessage(const std::string& metric, int64_t used, int64_t limit, int64_t need);
// "short now: us-central1-a a3-megagpu-8g ON_DEMAND stocked out (2 of 8 obtainable), …"
std::string CapacityShortMessage(const std::vector<ShortPool>& pools);
std::string NoCapacityMessage(const GangText& gang, const std::string& zone, int64_t best_free);
std::string NoZoneFitsMessage(const GangText& gang, const std::string& zone, int64_t best_free);
std::string GangSplitMessage(const std::string& region, size_t pools);
std::string WaitingForDwsMessage(const fit_reason::WaitingForDws& reason);
std::string DwsTimeoutMessage(const SchedulerJob& job);
// The error of a job failed after waiting the fleet's neverFitsTimeout; `why` is its NEVER_FITS
// verdict.
std::string NeverFitsTimeoutMessage(std::string why, Duration timeout);
// A cohort member that may take fewer than `need` units of `resource` now: what it uses, its
// nominal share and borrowing limit, and what the cohort has free for it.
// Added to NO_CAPACITY when the job's cohort pool is what is full.
std::string CohortFullMessage(const std::string& cohort, const std::string& resource, int64_t used,
                              int64_t capacity, const std::string& project, int64_t project_used,
                              int64_t nominal);
// After CohortFullMessage: whether `project`'s dominant-resource share after admission (`share`)
// is above the largest other member's (`top`, of `top_project`), so it waits its turn, or below
// it, so it waits for that member's work to pass the preemption `exemption`.
std::string FairShareMessage(const std::string& project, double share,
                             const std::string& top_project, double top, Duration exemption);
std::string ShareExhaustedMessage(const std::string& cohort, const std::string& project,
                                  const std::string& resource, int64_t used, int64_t nominal,
                                  std::optional<int64_t> borrowing_limit, int64_t may_take,
                                  int64_t need);
// Jobs that name a persistent resource.
std::string ResourceNotReadyMessage(const std::string& resource_id);
std::string ResourceBusyMessage(const std::string& resource_id, const std::string& machine_type,
                                int64_t need, int64_t free, int64_t held);
std::string HeldMessage(int64_t job_id, int priority, Timestamp start);
std::string ReservedSuffix(const std::string& zone, Timestamp start);
std::string NotEvaluatedMessage(int64_t position, int lookback);
std::string AdmittedMessage(const Fleet& fleet, const Placement& placement);
// " after preempting 3 jobs (1 lower-priority, 2 over their project's fair share)".
// "; it cannot finish before reservation cal1's window ends at 2026-…Z: it is stopped then and
// goes back to the queue" when a calendar-mode pool of `placement` ends before `expected_end`.
std::string WindowEndNote(const Fleet& fleet, const Placement& placement, Timestamp expected_end);
std::string PreemptedSuffix(size_t victims, size_t reclaimed, size_t fair_shared);
// "preempting job 12 (lower priority): admitted when its 30s termination grace ends at
// 2026-11-22 14:20:30 UTC".
std::string PreemptingMessage(const std::vector<int64_t>& victims, size_t reclaimed,
                              size_t fair_shared, Duration grace, Timestamp due);
// "preempted by higher-priority job 7: stops at the end of its 30s termination grace,
// 2026-11-22 14:20:30 UTC, and goes back to the queue".
std::string VictimNoticeMessage(int64_t preemptor, PreemptionCause cause, Duration grace,
                                Timestamp stops_at);
// "not evaluated yet: higher-priority jobs wait ahead of it in its queue (the first is job 7,
// priority 100); position 1400, lookback 1000 per cycle" (Slurm's reason Priority).
std::string BehindHigherPriorityMessage(int64_t position, int lookback, int64_t head_id,
                                        int head_priority);

// "2026-11-22 14:20 UTC"; with seconds "2026-11-22 14:20:30 UTC" (a 30 s grace's end).
std::string ClockText(Timestamp t, bool seconds = false);

}  // namespace trainyard
