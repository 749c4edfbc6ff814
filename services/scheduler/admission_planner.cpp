#include "services/scheduler/admission_planner.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "services/cost/price.h"
#include "services/fleet/node_state.h"
#include "services/jobs/gang_network.h"

namespace trainyard {
namespace {

// The nodes an admission takes in one pool, chosen from the free units.
struct PoolChoice {
  const CapacityPool* pool = nullptr;
  int64_t units = 0;
  std::string machine_type;  // the pool's, or the job's on an elastic or attached-GPU pool
  FreeUnits::Taken taken;    // an elastic pool's: fresh VMs, cold and uncached
  std::vector<std::string> elastic_nodes;
  int attached_gpus = 0;
};

// Chooses the nodes pool by pool, taking them from `free` (nullopt: a pool is short).
// `owner` names elastic VMs: "j42" for job 42, "r7" for resource 7.
std::optional<std::vector<PoolChoice>> ChooseNodes(const Fleet& fleet, const Placement& placement,
                                                   const std::string& image_uri,
                                                   int64_t resource_uid, const std::string& owner,
                                                   FreeByPool& free) {
  // A gang's worker pools on one fleet pool (a chief and its workers) take their nodes together,
  // so they can share one block; each then gets its share of them in worker-pool order.
  std::map<int, FreeUnits::Taken> taken_in;
  for (const PlacedPool& pp : placement.pools) {
    if (fleet.pools[pp.pool].elastic || taken_in.contains(pp.pool)) continue;
    int64_t units = 0;
    for (const PlacedPool& other : placement.pools)
      units += other.pool == pp.pool ? other.units : 0;
    auto held = free.find({pp.pool, resource_uid});
    if (held == free.end()) return std::nullopt;
    FreeUnits::Taken taken = held->second.Take(static_cast<int>(units), image_uri);
    if (taken.ordinals.empty()) return std::nullopt;
    taken_in.emplace(pp.pool, std::move(taken));
  }
  std::map<int, size_t> handed;  // fleet pool → ordinals given out so far
  // Elastic VMs made for this job or resource, numbered on per name
  // (CapacityPool::ElasticVmPrefix).
  std::map<std::string, int64_t> elastic_made;
  std::vector<PoolChoice> choices;
  for (const PlacedPool& pp : placement.pools) {
    const CapacityPool& pool = fleet.pools[pp.pool];
    PoolChoice choice{&pool, pp.units, pool.MachineTypeFor(pp.machine_type),
                      {},    {},       pp.attached_gpus};
    if (pool.elastic) {
      choice.taken.cold = choice.taken.uncached = true;
      const std::string prefix = pool.ElasticVmPrefix(pp.machine_type, owner);
      int64_t& made = elastic_made[prefix];
      for (int64_t i = 0; i < pp.units; ++i) {
        choice.elastic_nodes.push_back(prefix + std::to_string(made++));
      }
    } else {
      const FreeUnits::Taken& all = taken_in.at(pp.pool);
      const size_t nodes = static_cast<size_t>(pp.units * pool.hosts_per_unit);
      const size_t from = handed[pp.pool];
      choice.taken.ordinals.assign(all.ordinals.begin() + static_cast<long>(from),
                                   all.ordinals.begin() + static_cast<long>(from + nodes));
      handed[pp.pool] = from + nodes;
      choice.taken.cold = all.cold;
      choice.taken.uncached = all.uncached;
      choice.taken.blocks = all.blocks;
    }
    choices.push_back(std::move(choice));
  }
  return choices;
}

// What the placement costs an hour: every node of every unit, at its pool's price (an elastic
// pool's: the list price of the machine type).
int64_t HourlyPriceMicros(const std::vector<PoolChoice>& choices) {
  int64_t micros = 0;
  for (const PoolChoice& c : choices) {
    micros += cost::NodesHourlyMicros(c.pool->NodeHourPrice(c.machine_type, c.attached_gpus),
                                      c.units * c.pool->hosts_per_unit);
  }
  return micros;
}

// How long until the gang can start: the slowest pool boots its cold nodes, then pulls the image
// where it is not cached; within a pool, the slowest node (services/fleet/startup_model).
StartupDetail SlowestStartup(const Fleet& fleet, const std::string& image_uri,
                             const std::vector<PoolChoice>& choices, const StartupKey& key) {
  StartupDetail slowest;
  for (const PoolChoice& c : choices) {
    StartupDetail pool;
    pool.machine_type = c.machine_type;
    const int64_t nodes = c.units * c.pool->hosts_per_unit;
    if (c.taken.cold) {
      pool.boot_nodes = nodes;
      pool.boot = DrawBoot(fleet, *c.pool, c.machine_type, nodes, key);
    }
    if (c.taken.uncached && !image_uri.empty()) {
      pool.image_gb = fleet.ImageSizeGb(image_uri);
      pool.image_pull = DrawImagePull(fleet, *c.pool, c.machine_type, image_uri, nodes, key);
    }
    if (pool.boot + pool.image_pull > slowest.boot + slowest.image_pull) slowest = pool;
  }
  return slowest;
}

void SetStartup(JobAdmission& admission, const Fleet& fleet, const std::string& image_uri,
                const std::vector<PoolChoice>& choices, const StartupKey& key) {
  admission.startup_detail = SlowestStartup(fleet, image_uri, choices, key);
  admission.startup = admission.startup_detail.boot + admission.startup_detail.image_pull;
  int64_t hosts = 0;
  for (const PoolChoice& c : choices) hosts += c.units * c.pool->hosts_per_unit;
  admission.program_startup = ProgramStartup(fleet, hosts);
}

// What the user is told when no block of a pool held the whole gang: "; spread over 2 blocks of
// us-central1-a/a3-megagpu-8g/ON_DEMAND (no block had 8 free nodes): its all-reduce takes 2.0x as
// long" (CrossBlockFactor; how much of the run that is depends on the workload).
std::string SpreadNote(const std::vector<PoolChoice>& choices) {
  for (const PoolChoice& c : choices) {
    if (c.taken.blocks <= 1) continue;
    int64_t nodes = 0;
    for (const PoolChoice& same : choices) {
      if (same.pool == c.pool) nodes += same.units * same.pool->hosts_per_unit;
    }
    char factor[16];
    std::snprintf(factor, sizeof(factor), "%.1f", CrossBlockFactor(c.taken.blocks));
    return "; spread over " + std::to_string(c.taken.blocks) + " blocks of " + c.pool->id +
           " (no block had " + std::to_string(nodes) + " free nodes): its all-reduce takes " +
           factor + "x as long";
  }
  return "";
}

JobAdmission AdmissionOf(const std::string& zone, const std::vector<PoolChoice>& choices) {
  JobAdmission admission;
  admission.zone = zone;
  admission.hourly_price_micros = HourlyPriceMicros(choices);
  for (const PoolChoice& c : choices) {
    PlacedPoolStatus pool;
    pool.pool_id = c.pool->id;
    pool.machine_type = c.machine_type;
    pool.consumption_model = std::string(ConsumptionModelName(c.pool->model));
    pool.reservation = c.pool->reservation;
    pool.units = c.units;
    pool.blocks = c.taken.blocks;
    for (int64_t ordinal : c.taken.ordinals) pool.nodes.push_back(NodeName(c.pool->id, ordinal));
    pool.nodes.insert(pool.nodes.end(), c.elastic_nodes.begin(), c.elastic_nodes.end());
    admission.pools.push_back(std::move(pool));
  }
  return admission;
}

std::vector<NodeClaim> ClaimsOf(const std::vector<PoolChoice>& choices) {
  std::vector<NodeClaim> claims;
  for (const PoolChoice& c : choices) {
    if (c.pool->elastic) continue;  // nothing to claim
    claims.push_back(NodeClaim{c.pool->id, c.taken.ordinals});
  }
  return claims;
}

void AddPools(const Fleet& fleet, const Placement& placement, std::set<int>& pools) {
  for (const PlacedPool& pp : placement.pools) {
    if (!fleet.pools[pp.pool].elastic) pools.insert(pp.pool);
  }
}

}  // namespace

std::vector<int> AdmissionPlanner::PoolsToRead(const CycleResult& cycle) const {
  std::set<int> pools;
  for (const AdmissionDecision& a : cycle.admissions) AddPools(fleet_, a.placement, pools);
  for (const HoldDecision& h : cycle.holds) AddPools(fleet_, h.placement, pools);
  return {pools.begin(), pools.end()};
}

std::vector<int> AdmissionPlanner::PoolsToRead(const AdmissionDecision& admission) const {
  std::set<int> pools;
  AddPools(fleet_, admission.placement, pools);
  return {pools.begin(), pools.end()};
}

namespace {

// Adds what one admission or hold takes to the reads, keyed by (pool, holder).
void AddReads(const Fleet& fleet, const Placement& placement, int64_t holder,
              const std::string& image, std::map<std::pair<int, int64_t>, FreeNodesRead>& reads) {
  for (const PlacedPool& pp : placement.pools) {
    const CapacityPool& pool = fleet.pools[pp.pool];
    if (pool.elastic) continue;
    const bool whole = pool.hosts_per_unit > 1 || pool.block_nodes > 0;
    // A pool read whole is one read whoever holds its nodes (keyed apart from any holder's).
    FreeNodesRead& read = reads[{pp.pool, whole ? -1 : holder}];
    read.pool = pp.pool;
    if (whole) continue;  // lowest stays 0: all of it
    read.holder = holder;
    read.lowest += pp.units;
    if (std::find(read.images.begin(), read.images.end(), image) == read.images.end()) {
      read.images.push_back(image);
    }
  }
}

std::vector<FreeNodesRead> Values(std::map<std::pair<int, int64_t>, FreeNodesRead> reads) {
  std::vector<FreeNodesRead> out;
  out.reserve(reads.size());
  for (auto& [key, read] : reads) out.push_back(std::move(read));
  return out;
}

}  // namespace

std::vector<FreeNodesRead> AdmissionPlanner::FreeNodesToRead(const CycleResult& cycle) const {
  std::map<std::pair<int, int64_t>, FreeNodesRead> reads;
  for (const AdmissionDecision& a : cycle.admissions) {
    AddReads(fleet_, a.placement, a.resource_uid, a.image_uri, reads);
  }
  for (const HoldDecision& h : cycle.holds) AddReads(fleet_, h.placement, 0, h.image_uri, reads);
  return Values(std::move(reads));
}

std::vector<FreeNodesRead> AdmissionPlanner::FreeNodesToRead(const AdmissionDecision& a) const {
  std::map<std::pair<int, int64_t>, FreeNodesRead> reads;
  AddReads(fleet_, a.placement, a.resource_uid, a.image_uri, reads);
  return Values(std::move(reads));
}

std::optional<JobAdmissionPlan> AdmissionPlanner::PlanJob(const AdmissionDecision& a, Timestamp now,
                                                          FreeByPool& free) const {
  auto choices = ChooseNodes(fleet_, a.placement, a.image_uri, a.resource_uid,
                             "j" + std::to_string(a.job_id), free);
  if (!choices) return std::nullopt;
  JobAdmission admission = AdmissionOf(a.placement.zone, *choices);
  if (a.resource_uid > 0) admission.hourly_price_micros = 0;  // the resource bills its nodes
  if (simulated_startup_) {
    SetStartup(admission, fleet_, a.image_uri, *choices, StartupKey{false, a.job_id, a.version});
  }
  std::string message = a.message + SpreadNote(*choices);
  auto transition = JobStateMachine::Admit(JobSnapshot{a.job_id, a.version, JobState::kQueued}, now,
                                           std::move(admission), std::move(message));
  if (!transition.ok()) return std::nullopt;
  return JobAdmissionPlan{
      a.job_id,      a.version, a.resource_uid, ClaimsOf(*choices), std::move(transition).value(),
      runtime_lease_};
}

std::optional<HoldPlan> AdmissionPlanner::PlanHold(const HoldDecision& h, Timestamp now,
                                                   FreeByPool& free) const {
  auto choices = ChooseNodes(fleet_, h.placement, h.image_uri, /*resource_uid=*/0,
                             "r" + std::to_string(h.resource_uid), free);
  if (!choices) return std::nullopt;
  HoldPlan plan;
  plan.resource_uid = h.resource_uid;
  plan.version = h.version;
  plan.claims = ClaimsOf(*choices);
  plan.placement = AdmissionOf(h.placement.zone, *choices);
  if (simulated_startup_) {
    SetStartup(plan.placement, fleet_, h.image_uri, *choices,
               StartupKey{true, h.resource_uid, h.version});
  }
  plan.ready_at =
      now + std::chrono::duration_cast<std::chrono::microseconds>(plan.placement.startup);
  return plan;
}

std::optional<JobTransition> AdmissionPlanner::PlanVictim(const AdmissionDecision& a,
                                                          const JobSnapshot& victim,
                                                          Timestamp now) const {
  auto transition = JobStateMachine::Requeue(victim, now, a.VictimMessage(victim.id),
                                             /*spot_restart=*/false, a.SavedAt(victim.id));
  if (!transition.ok()) return std::nullopt;
  return std::move(transition).value();
}

StatusOr<JobTransition> AdmissionPlanner::PlanFailure(const FailureDecision& f,
                                                      Timestamp now) const {
  return JobStateMachine::FailInQueue(JobSnapshot{f.job_id, f.version, JobState::kQueued}, now,
                                      f.message);
}

}  // namespace trainyard
