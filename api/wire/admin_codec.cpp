#include "api/wire/admin_codec.h"

#include "api/wire/enums.h"
#include "api/wire/json_reader.h"
#include "services/cost/accrual.h"

namespace trainyard {
namespace {

using json = nlohmann::json;

using cost::Usd;

json NodesByState(const PoolNodeCounts& counts) {
  json out = json::object();
  for (NodeState s : kAllNodeStates) {
    auto it = counts.by_state.find(s);
    out[std::string(NodeStateName(s))] = it == counts.by_state.end() ? 0 : it->second;
  }
  return out;
}

// A reservation's terms, shared by the fleet's pools and the reservations list.
void PutReservationTerms(json& out, const CapacityPool& pool) {
  out["term"] = pool.term;
  out["projects"] = pool.projects;  // empty: any project may use it
  if (pool.window_start) out["windowStart"] = FormatTimestamp(*pool.window_start);
  if (pool.window_end) out["windowEnd"] = FormatTimestamp(*pool.window_end);
}

json EncodePool(const PoolView& view) {
  const CapacityPool& pool = *view.pool;
  json out = {{"id", pool.id},
              {"machineType", pool.machine_type},
              {"consumptionModel", ConsumptionModelName(pool.model)},
              {"units", pool.units},
              {"nodes", pool.nodes()},
              {"unitsUsableNow", view.units_usable_now},
              {"nodesByState", NodesByState(view.nodes)},
              {"nodesHeld", view.nodes.with_job},
              {"pricePerNodeHourUsd", pool.price_per_node_hour}};
  if (pool.elastic) {
    // No node count and no list price of its own: any CPU-only machine type the zone has no
    // explicit pool of, bounded by the CPUS quota, at that type's price.
    out["elastic"] = true;
    out["machineType"] = "any CPU-only machine type";
    out.erase("units");
    out.erase("unitsUsableNow");
    out.erase("pricePerNodeHourUsd");
  }
  if (!pool.tpu_topology.empty()) {
    out["tpuTopology"] = pool.tpu_topology;
    out["hostsPerUnit"] = pool.hosts_per_unit;
  }
  if (pool.model == ConsumptionModel::kReservation) {
    json reservation = {{"name", pool.reservation}};
    PutReservationTerms(reservation, pool);
    out["reservation"] = std::move(reservation);
  }
  if (pool.model == ConsumptionModel::kSpot) {
    out["preemptionsPerNodeHour"] = pool.spot_preemptions_per_node_hour;
    if (pool.availability) {
      out["availability"] = {
          {"meanAvailable", FormatDuration(pool.availability->mean_available)},
          {"meanConstrained", FormatDuration(pool.availability->mean_constrained)},
          {"minShareLeft", pool.availability->share_low},
          {"maxShareLeft", pool.availability->share_high}};
    }
  }
  if (pool.model == ConsumptionModel::kFlexStart) {
    const DwsQueueModel& q = pool.dws_queue;
    out["queue"] = {{"baseWait", FormatDuration(q.base_wait)},
                    {"waitPerNode", FormatDuration(q.wait_per_node)},
                    {"p95Ratio", q.p95_ratio},
                    {"outsideNodesAhead", q.outside_nodes_ahead}};
  }
  return out;
}

}  // namespace

json EncodeFleetView(const FleetView& view) {
  // Regions → zones → pools, each in fleet file order.
  json regions = json::array();
  for (const PoolView& p : view.pools) {
    const CapacityPool& pool = *p.pool;
    if (regions.empty() || regions.back()["region"] != pool.region) {
      regions.push_back({{"region", pool.region}, {"zones", json::array()}});
    }
    json& zones = regions.back()["zones"];
    if (zones.empty() || zones.back()["zone"] != pool.zone) {
      zones.push_back({{"zone", pool.zone}, {"pools", json::array()}});
    }
    zones.back()["pools"].push_back(EncodePool(p));
  }
  json out = {{"name", view.name}, {"epoch", FormatTimestamp(view.epoch)}, {"regions", regions}};
  // Cohorts → resources → members, in fleet file order.
  json cohorts = json::array();
  for (const CohortShareView& share : view.cohorts) {
    const Cohort& cohort = *share.cohort;
    if (cohorts.empty() || cohorts.back()["name"] != cohort.name) {
      cohorts.push_back(
          {{"name", cohort.name}, {"pools", cohort.pools}, {"resources", json::array()}});
    }
    json members = json::array();
    for (const CohortShareView::Member& m : share.members) {
      json member = {{"project", m.member->project}, {"weight", m.member->weight},
                     {"nominal", m.nominal},         {"used", m.used},
                     {"borrowed", m.borrowed},       {"lent", m.lent}};
      if (auto l = m.member->borrowing_limit.find(share.resource);
          l != m.member->borrowing_limit.end()) {
        member["borrowingLimit"] = l->second;
      }
      if (auto l = m.member->lending_limit.find(share.resource);
          l != m.member->lending_limit.end()) {
        member["lendingLimit"] = l->second;
      }
      members.push_back(std::move(member));
    }
    cohorts.back()["resources"].push_back(
        {{"resource", share.resource}, {"capacity", share.capacity}, {"members", members}});
  }
  if (!cohorts.empty()) out["cohorts"] = std::move(cohorts);
  return out;
}

json EncodeNodeRecord(const NodeRecord& node) {
  json out = {{"name", NodeName(node.pool_id, node.ordinal)},
              {"pool", node.pool_id},
              {"ordinal", node.ordinal},
              {"zone", node.zone},
              {"machineType", node.machine_type},
              {"state", NodeStateName(node.state)},
              {"since", FormatTimestamp(node.since)},
              {"imageCache", node.image_cache}};
  if (node.job_id) out["jobId"] = std::to_string(*node.job_id);
  if (!node.persistent_resource.empty()) out["persistentResource"] = node.persistent_resource;
  return out;
}

json EncodeReservations(const std::vector<ReservationView>& reservations) {
  json list = json::array();
  for (const ReservationView& r : reservations) {
    const CapacityPool& pool = *r.pool;
    json out = {{"name", pool.reservation},
                {"kind", pool.term == "calendar" ? "DWS_CALENDAR" : "CUD"},
                {"pool", pool.id},
                {"zone", pool.zone},
                {"machineType", pool.machine_type},
                {"usableNow", r.usable_now},
                {"nodesTotal", r.nodes_total},
                {"nodesBusy", r.nodes_busy},
                {"nodesFree", r.nodes_free},
                {"nodesDown", r.nodes_down}};
    PutReservationTerms(out, pool);
    list.push_back(std::move(out));
  }
  return {{"reservations", list}};
}

json EncodeQueues(const std::vector<QueueView>& queues) {
  json list = json::array();
  for (const QueueView& q : queues) {
    json jobs = json::array();
    for (const QueuedJobView& j : q.jobs) {
      json job = {{"name", j.name},
                  {"displayName", j.record.display_name},
                  {"priority", j.priority},
                  {"createTime", FormatTimestamp(j.record.create_time)}};
      if (j.record.queue_position) job["queuePosition"] = *j.record.queue_position;
      if (!j.record.reason_code.empty()) {
        job["reason"] = {{"code", j.record.reason_code}, {"message", j.record.reason_message}};
      }
      jobs.push_back(std::move(job));
    }
    list.push_back({{"project", q.project_id},
                    {"region", q.location},
                    {"queued", q.queued},
                    {"admitted", q.pending + q.running},
                    {"pending", q.pending},
                    {"running", q.running},
                    {"cancelling", q.cancelling},
                    {"queuedByReason", q.queued_by_reason},
                    {"jobs", std::move(jobs)}});
  }
  return {{"queues", list}};
}

json EncodeStateCounts(const std::vector<StateCount>& counts, int64_t cap) {
  json list = json::array();
  for (const StateCount& c : counts) {
    list.push_back({{"state", JobStateName(c.state)}, {"jobs", c.jobs}});
  }
  return {{"counts", std::move(list)}, {"cap", cap}};
}

json EncodeProjectCosts(const ProjectCostView& costs) {
  json models = json::array();
  for (const ModelCost& m : costs.by_model) {
    json& entry = models.emplace_back(
        json{{"consumptionModel", m.consumption_model.empty() ? "NOT_PLACED" : m.consumption_model},
             {"jobs", m.jobs},
             {"accruedUsd", Usd(m.accrued_micros)},
             {"runningUsd", Usd(m.running_micros)},
             {"totalUsd", Usd(m.accrued_micros + m.running_micros)}});
    if (auto per_hour = m.CostPerProductiveAcceleratorHour()) {
      entry["costPerProductiveAcceleratorHourUsd"] = *per_hour;
    }
  }
  json resources = json::array();
  for (const ResourceCost& r : costs.resources) {
    json& entry = resources.emplace_back(json{{"name", r.name},
                                              {"consumptionModel", r.consumption_model},
                                              {"hourlyUsd", Usd(r.hourly_micros)},
                                              {"totalUsd", Usd(r.total_micros)}});
    if (r.deleted_at) entry["deleteTime"] = FormatTimestamp(*r.deleted_at);
  }
  json out = {{"project", costs.project.id},
              {"projectNumber", std::to_string(costs.project.number)},
              {"accruedUsd", Usd(costs.accrued_micros)},
              {"runningUsd", Usd(costs.running_micros)},
              {"totalUsd", Usd(costs.accrued_micros + costs.running_micros)},
              {"byConsumptionModel", std::move(models)}};
  if (!resources.empty()) out["persistentResources"] = std::move(resources);
  if (auto per_hour = costs.CostPerProductiveAcceleratorHour()) {
    out["costPerProductiveAcceleratorHourUsd"] = *per_hour;
  }
  return out;
}

json EncodeJobEvents(const std::vector<JobEvent>& events) {
  json list = json::array();
  for (const JobEvent& e : events) {
    list.push_back({{"time", FormatTimestamp(e.time)},
                    {"fromState", JobStateName(e.from)},
                    {"toState", JobStateName(e.to)},
                    {"reason", e.reason}});
  }
  return {{"events", list}};
}

}  // namespace trainyard
