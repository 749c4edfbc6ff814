#include "services/admin/admin_metrics.h"

#include <map>
#include <string>
#include <tuple>

#include "services/cost/accrual.h"
#include "services/fleet/node_state.h"
#include "services/jobs/job_state_names.h"

namespace trainyard {
namespace {

// How an unplaced job (queued, or back in the queue after a preemption) is labelled, as in the
// admin costs view.
std::string_view ModelLabel(const std::string& model) {
  return model.empty() ? std::string_view("NOT_PLACED") : std::string_view(model);
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

using PoolKey = std::tuple<std::string, std::string, std::string_view>;  // zone, type, model

// Two samples of `family` for one (zone, machine type, consumption model), told apart by `label`.
void WriteSplit(metrics::Exposition& e, std::string_view family, const PoolKey& key,
                std::string_view label, std::pair<const char*, int64_t> first,
                std::pair<const char*, int64_t> second) {
  const auto& [zone, type, model] = key;
  for (const auto& [value, n] : {first, second}) {
    e.Sample(family,
             {{"zone", zone}, {"machine_type", type}, {"consumption_model", model}, {label, value}},
             static_cast<double>(n));
  }
}

}  // namespace

Status WriteJobFamilies(AdminService& admin, metrics::Exposition& e) {
  TY_ASSIGN_OR_RETURN(std::vector<QueueCount> counts, admin.JobCounts());
  // Summed over reasons here, over states below: each family's label set, once.
  std::map<std::tuple<std::string, std::string, JobState, std::string>, int64_t> by_state;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> by_reason;
  for (const QueueCount& c : counts) {
    by_state[{c.project_id, c.location, c.state, c.consumption_model}] += c.jobs;
    if (c.state == JobState::kQueued) {
      by_reason[{c.project_id, c.location, c.reason.empty() ? "NOT_EVALUATED" : c.reason}] +=
          c.jobs;
    }
  }
  e.Family("trainyard_jobs", "gauge",
           "Unfinished custom jobs by project, location, state (QUEUED waits for capacity, PENDING "
           "boots and pulls, RUNNING runs, CANCELLING stops) and consumption model of the "
           "placement.");
  for (const auto& [key, jobs] : by_state) {
    const auto& [project, location, state, model] = key;
    e.Sample("trainyard_jobs",
             {{"project", project},
              {"location", location},
              {"state", StateNameForMessage(state)},
              {"consumption_model", ModelLabel(model)}},
             static_cast<double>(jobs));
  }
  e.Family("trainyard_queued_jobs", "gauge",
           "QUEUED jobs by project, location and the scheduler's reason for holding them.");
  for (const auto& [key, jobs] : by_reason) {
    const auto& [project, location, reason] = key;
    e.Sample("trainyard_queued_jobs",
             {{"project", project}, {"location", location}, {"reason", reason}},
             static_cast<double>(jobs));
  }
  return Status::Ok();
}

Status WriteFleetFamilies(AdminService& admin, metrics::Exposition& e) {
  TY_ASSIGN_OR_RETURN(FleetView fleet, admin.FleetStatus());
  std::map<std::tuple<std::string, std::string, std::string_view, NodeState>, int64_t> nodes;
  std::map<PoolKey, std::pair<int64_t, int64_t>> units;      // configured, usable now
  std::map<PoolKey, std::pair<int64_t, int64_t>> resources;  // used, idle
  for (const PoolView& p : fleet.pools) {
    if (p.pool->elastic) continue;  // no node rows, no count: the quota bounds it
    const PoolKey key{p.pool->zone, p.pool->machine_type, ConsumptionModelName(p.pool->model)};
    for (const auto& [state, n] : p.nodes.by_state) {
      nodes[{p.pool->zone, p.pool->machine_type, ConsumptionModelName(p.pool->model), state}] += n;
    }
    units[key].first += p.pool->units;
    units[key].second += p.units_usable_now;
    if (p.nodes.in_resources > 0) {  // most pools never hold one: no series of zeros for them
      resources[key].first += p.nodes.resource_busy;
      resources[key].second += p.nodes.in_resources - p.nodes.resource_busy;
    }
  }
  e.Family("trainyard_nodes", "gauge",
           "Node slots by zone, machine type, consumption model and state (PROVISIONING, READY, "
           "BUSY, PREEMPTED, FAILED, REPAIRING, DELETED).");
  for (const auto& [key, n] : nodes) {
    const auto& [zone, type, model, state] = key;
    e.Sample("trainyard_nodes",
             {{"zone", zone},
              {"machine_type", type},
              {"consumption_model", model},
              {"state", NodeStateName(state)}},
             static_cast<double>(n));
  }
  e.Family("trainyard_capacity_units", "gauge",
           "Capacity units (a node, or a TPU slice) by zone, machine type and consumption model: "
           "configured, and usable now (calendar windows and DWS steps applied).");
  for (const auto& [key, u] : units) {
    WriteSplit(e, "trainyard_capacity_units", key, "kind", {"configured", u.first},
               {"usable_now", u.second});
  }
  e.Family("trainyard_persistent_resource_nodes", "gauge",
           "Nodes persistent resources hold, by zone, machine type, consumption model and whether "
           "a job of the resource runs on them (used) or they wait warm (idle).");
  for (const auto& [key, r] : resources) {
    WriteSplit(e, "trainyard_persistent_resource_nodes", key, "state", {"used", r.first},
               {"idle", r.second});
  }
  return Status::Ok();
}

Status WriteCostFamilies(AdminService& admin, metrics::Exposition& e) {
  TY_ASSIGN_OR_RETURN(std::vector<ModelTotals> totals, admin.FleetTotals());
  e.Family("trainyard_job_cost_dollars", "gauge",
           "What the jobs there are have cost, by the consumption model of their placement: "
           "accrued by finished admissions, and running (current admissions, to now). Deleting "
           "a job takes its cost out.");
  for (const ModelTotals& t : totals) {
    const std::string_view model = ModelLabel(t.cost.consumption_model);
    e.Sample("trainyard_job_cost_dollars", {{"consumption_model", model}, {"kind", "accrued"}},
             cost::Usd(t.cost.accrued_micros));
    e.Sample("trainyard_job_cost_dollars", {{"consumption_model", model}, {"kind", "running"}},
             cost::Usd(t.cost.running_micros));
  }
  e.Family("trainyard_job_time_seconds", "gauge",
           "Where the jobs' wall time went, by consumption model: waiting (queued before the first "
           "start), starting, restarting (after preemptions, repairs, retries), productive "
           "(running, kept), redone (running, lost to an interruption), checkpoint_save and "
           "checkpoint_restore (running, saving and restoring checkpoints), program_startup "
           "(running, from the nodes being ready to the first step). Accrued at each state "
           "change.");
  for (const ModelTotals& t : totals) {
    const std::string_view model = ModelLabel(t.cost.consumption_model);
    const std::pair<const char*, Duration> buckets[] = {
        {"waiting", t.time.waiting},
        {"starting", t.time.starting},
        {"restarting", t.time.restarting},
        {"productive", t.time.Productive()},
        {"redone", t.time.redone},
        {"checkpoint_save", t.time.checkpoint_save},
        {"checkpoint_restore", t.time.checkpoint_restore},
        {"program_startup", t.time.program_startup}};
    for (const auto& [bucket, d] : buckets) {
      e.Sample("trainyard_job_time_seconds", {{"consumption_model", model}, {"bucket", bucket}},
               Seconds(d));
    }
  }
  e.Family("trainyard_cost_per_productive_accelerator_hour_dollars", "gauge",
           "What the jobs cost for each accelerator-hour (GPU or TPU chip) that trained and kept "
           "its result, by consumption model: their cost over their productive time times the "
           "accelerators they hold.");
  for (const ModelTotals& t : totals) {
    if (auto per_hour = t.cost.CostPerProductiveAcceleratorHour()) {
      e.Sample("trainyard_cost_per_productive_accelerator_hour_dollars",
               {{"consumption_model", ModelLabel(t.cost.consumption_model)}}, *per_hour);
    }
  }
  e.Family("trainyard_goodput_ratio", "gauge",
           "Productive time over the jobs' running lifetime (from their first admission), by "
           "consumption model.");
  for (const ModelTotals& t : totals) {
    if (auto ratio = t.time.Ratio()) {
      e.Sample("trainyard_goodput_ratio",
               {{"consumption_model", ModelLabel(t.cost.consumption_model)}}, *ratio);
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
