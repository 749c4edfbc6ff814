#include "services/scheduler/backfill.h"

#include <algorithm>
#include <limits>

namespace trainyard {

void Backfill::AddRunning(const RunningJob& job, int sign) {
  Releases& releases =
      releases_.try_emplace(job.region, Releases::allocator_type(release_nodes_.get()))
          .first->second;
  for (const PlacedPool& pp : job.placement.pools) {
    const Release release{job.expected_end, job.id, pp.pool, pp.units};
    if (sign > 0) {
      releases.insert(release);
    } else if (auto it = releases.find(release); it != releases.end()) {
      releases.erase(it);
    }
  }
}

void Backfill::Clear() {
  releases_.clear();
  release_nodes_ = std::make_unique<NodePool>();
}

std::optional<Reservation> Backfill::Reserve(const SchedulerJob& job,
                                             const CapacitySnapshot& snapshot,
                                             const FlavorAssigner& assigner,
                                             const std::vector<ConsumptionModel>& flavors,
                                             Duration horizon_after) const {
  // Walk running jobs' expected ends and book the first time the gang fits.
  auto found = releases_.find(job.region);
  if (found == releases_.end()) return std::nullopt;
  const Releases& releases = found->second;
  const Timestamp now = snapshot.now();
  const Timestamp horizon =
      now + std::chrono::duration_cast<std::chrono::microseconds>(horizon_after);
  auto within = [&](Releases::const_iterator it) {
    return it != releases.end() && std::get<0>(*it) <= horizon;
  };
  FreedUnits& freed = freed_;
  freed.clear();
  for (auto it = releases.begin(); within(it);) {
    // Releases already due count as now.
    const Timestamp t = std::max(std::get<0>(*it), now);
    for (; within(it) && std::max(std::get<0>(*it), now) == t; ++it) {
      AddFreed(freed, std::get<2>(*it), std::get<3>(*it));
    }
    // Holds of other jobs do not count: this job's own would start behind them anyway.
    std::optional<Placement> fit =
        assigner.Place(job, snapshot, FitOptions(flavors).WithFreed(freed));
    if (!fit) continue;
    Reservation reservation;
    reservation.zone = fit->zone;
    CapacityHold& hold = reservation.hold;
    hold.job_id = job.id;
    hold.priority = job.priority;
    hold.start = t;
    for (const PlacedPool& pp : fit->pools) {
      int64_t taken = 0;
      for (const PlacedPool& other : fit->pools) {
        if (other.pool == pp.pool) taken += other.units;
      }
      const int64_t slack = snapshot.Available(pp.pool, now) + FreedIn(freed, pp.pool) - taken;
      if (int64_t* s = hold.SlackOf(pp.pool)) {
        *s = slack;
      } else {
        hold.slack.push_back({pp.pool, slack});
      }
    }
    return reservation;
  }
  return std::nullopt;
}

std::optional<Timestamp> Backfill::NextChange(Timestamp now, Duration horizon) const {
  const auto ahead = std::chrono::duration_cast<std::chrono::microseconds>(horizon);
  std::optional<Timestamp> next;
  for (const auto& [region, releases] : releases_) {
    if (releases.empty()) continue;
    if (std::get<0>(*releases.begin()) <= now) return now;
    // The earliest end falls due: from then a hold on it starts at the clock.
    if (!next || std::get<0>(*releases.begin()) < *next) next = std::get<0>(*releases.begin());
    auto beyond = releases.upper_bound(Release{now + ahead, std::numeric_limits<int64_t>::max(),
                                               std::numeric_limits<int>::max(),
                                               std::numeric_limits<int64_t>::max()});
    if (beyond == releases.end()) continue;
    const Timestamp at = std::get<0>(*beyond) - ahead;
    if (!next || at < *next) next = at;
  }
  return next;
}

}  // namespace trainyard
