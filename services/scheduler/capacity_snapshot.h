#pragma once
// The capacity a cycle decides on (docs/scheduler.md, "Parts"): units per pool held by admitted
// jobs and out of service, cohort usage per member and resource (nominal shares, borrowing,
// fair sharing), and quota accounts. The cycle reads it once (Refresh: the cohorts' capacity at
// its time) and updates it as it admits, so that later decisions of the same cycle see earlier
// ones. No queue, no job's verdict: the flavor assigner and the preemptor read it.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/scheduler/fit_reason.h"
#include "services/scheduler/fleet_index.h"
#include "services/scheduler/scheduler_job.h"
#include "services/scheduler/verdict.h"

namespace trainyard {

// Units per pool beyond what is free: what planned victims or releases give back.
using PoolUnits = std::pair<int, int64_t>;
// A plan's freed units, one entry per pool (AddFreed keeps it so).
using FreedUnits = std::vector<PoolUnits>;
void AddFreed(FreedUnits& freed, int pool, int64_t units);
int64_t FreedIn(std::span<const PoolUnits> freed, int pool);

// Kueue's fair-sharing order: jobs that stay within their nominal first, then the lowest
// dominant-resource share after admission, (usage + request - nominal) / capacity / weight.
struct FairKey {
  bool borrowing = false;
  double drs = 0;
  auto operator<=>(const FairKey&) const = default;
};

class CapacitySnapshot {
 public:
  // What an elastic pool offers: more than any quota lets one project take.
  static constexpr int64_t kElasticUnits = int64_t{1} << 40;
  using UnitsByResource = std::map<std::string, int64_t>;

  CapacitySnapshot(const Fleet& fleet, const FleetIndex& index);

  // Once per cycle: the cohorts' capacity as of `now` (calendar pools come and go).
  void Refresh(Timestamp now);
  Timestamp now() const { return now_; }  // as of the last Refresh
  void Clear();                           // no admitted job holds anything

  // Free units, pools and quota.
  int64_t Available(int pool, Timestamp now) const {
    const CapacityPool& p = fleet_.pools[pool];
    if (p.elastic) return kElasticUnits;
    // A spot pool sharing its zone's capacity has what this fleet's on-demand leaves of it.
    const int64_t offered = p.zone_capacity >= 0 ? fleet_.UnitsOffered(pool, now, used_)
                            : now == now_        ? offered_now_[pool]
                                                 : p.UnitsAvailableAt(now, fleet_.epoch);
    return std::max<int64_t>(0, offered - used_[pool] - down_[pool]);
  }
  // True when it changed what the pool had down.
  bool SetUnitsDown(int pool, int64_t units);
  // Blocks (a pool's blockSize): how many blocks `units` more units of `pool` would span beside
  // what `taken` already takes there (0: the pool has no blocks), and which: the one block with
  // the fewest free units that holds them all, else the fewest blocks, the freest first (as
  // FreeUnits::Take chooses nodes at the commit). Units out of service are not known by block
  // and are not counted; the commit's choice is what the job gets.
  int BlocksFor(int pool, int64_t units, const Placement& taken) const;
  std::vector<std::pair<int, int64_t>> ChooseBlocks(int pool, int64_t units,
                                                    const Placement& taken) const;
  // An admitted job's nodes (sign +1) or their release (-1).
  void AddPlacement(const Placement& placement, int sign);
  // The part shares and quota read (cohort usage, quota accounts): a preemption under way moves
  // it from its victims to its preemptor at once.
  void AddShare(const RunningJob& job, int sign);
  int AccountOf(const std::string& project_id, const std::string& metric);  // made if new
  int64_t QuotaUsed(const std::string& project_id, const std::string& metric) const;
  // Narrows `models` to the flavors the job's quota allows; else the verdict that blocks it.
  std::optional<Verdict> CheckQuota(const SchedulerJob& job,
                                    std::vector<ConsumptionModel>& models) const;
  std::optional<std::string> QuotaBlock(const std::string& project_id,
                                        const std::vector<QuotaDemand>& more) const;

  // Cohorts. Units of `pool`'s cohort resource `project` may take now (a pool no cohort owns: no
  // limit), with `freed` units given back by planned victims.
  int64_t Headroom(const std::string& project, int pool, std::span<const PoolUnits> freed) const;
  int64_t CohortUsage(int cohort, const std::string& resource, const std::string& project) const;
  const Cohort::Now& CohortNow(int cohort) const { return cohort_now_[cohort]; }
  // Whether `project` would stay within its nominal share of some resource the job asks for:
  // only then may it reclaim what others borrowed.
  bool MayReclaim(const SchedulerJob& job, const std::vector<ConsumptionModel>& models) const;
  bool Borrowing(const RunningJob& job) const;
  FairKey FairKeyOf(const SchedulerJob& job) const;
  // A member's dominant-resource share now, with `less` units per resource taken away.
  double Drs(int cohort, const std::string& project, const UnitsByResource* less = nullptr) const;
  // Fair sharing: `victim` of another member may stop for `job` if the job's project, after
  // admission, holds no larger a share than the victim's will after it stops, or a smaller one
  // than the victim's holds now. `taken` is what earlier victims of the same plan give back.
  bool FairShareAllows(const SchedulerJob& job, const RunningJob& victim,
                       const std::map<std::string, UnitsByResource>& taken) const;
  FairShareStanding FairShareOf(const SchedulerJob& job, int cohort) const;

  const Fleet& fleet() const { return fleet_; }
  const FleetIndex& index() const { return index_; }

 private:
  // A project's account of one quota metric (PREEMPTIBLE_ prefix and all): its limit in the
  // fleet and what its admitted jobs use. Numbered, so that pending jobs carry the numbers.
  struct QuotaAccount {
    std::optional<int64_t> limit;  // none: unlimited
    int64_t used = 0;
  };

  const Fleet& fleet_;
  const FleetIndex& index_;
  Timestamp now_{};
  std::vector<int64_t> used_;  // per pool: units held by admitted jobs
  std::vector<int64_t> down_;  // per pool: units out of service
  // Per pool: what it offers at now_ (its window and capacity steps), which every fit asks for
  // every pool it looks at; a search of the steps each time was a tenth of a saturated replay.
  std::vector<int64_t> offered_now_;
  // Per pool of blocks: units held by admitted jobs in each block (empty for other pools).
  std::vector<std::vector<int64_t>> block_used_;
  int64_t BlockUnits(int pool) const;  // units a block of `pool` holds
  // Per cohort: resource → project → units its running jobs hold on the cohort's pools.
  std::vector<std::map<std::string, std::unordered_map<std::string, int64_t>>> cohort_usage_;
  std::vector<Cohort::Now> cohort_now_;               // per cohort, as of the current cycle
  std::unordered_map<std::string, int> account_ids_;  // project|metric → index in accounts_
  std::vector<QuotaAccount> accounts_;
};

}  // namespace trainyard
