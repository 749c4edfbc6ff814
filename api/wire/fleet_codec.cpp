#include "api/wire/fleet_codec.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "api/wire/json_reader.h"
#include "services/fleet/failure_model.h"
#include "services/jobs/catalog.h"

namespace trainyard {
namespace {

// A pool of `zone` before its capacity: zone, region, type, model and the id the rest derive from.
CapacityPool NewPool(const std::string& zone, std::string machine_type, ConsumptionModel model) {
  CapacityPool pool;
  pool.zone = zone;
  const size_t dash = zone.rfind('-');
  pool.region = dash == std::string::npos ? zone : zone.substr(0, dash);
  pool.machine_type = std::move(machine_type);
  pool.model = model;
  pool.id = zone + "/" + (pool.machine_type.empty() ? "elastic-cpu" : pool.machine_type) + "/" +
            std::string(ConsumptionModelName(model));
  return pool;
}

// Non-negative number at object[name], consumed from `reader`; false when absent.
bool GetNumber(const nlohmann::json& object, ObjectReader& reader, std::string_view name,
               double* out) {
  if (!object.is_object()) return false;
  auto it = object.find(std::string(name));
  if (it == object.end() || it->is_null()) return false;
  reader.Skip(name);
  if (!it->is_number() || it->get<double>() < 0) {
    reader.Fail(InvalidField(reader.path().Field(name).json(), "must be a non-negative number"));
    return false;
  }
  *out = it->get<double>();
  return true;
}

// A map of `name` → value at object[name], each value read by `parse` (nullopt: refused, with
// `what` as the reason), consumed from `reader`; absent: nothing.
template <typename T, typename Parse>
void ReadMap(const nlohmann::json& object, ObjectReader& reader, std::string_view name,
             std::map<std::string, T>* out, std::string_view what, Parse parse) {
  if (!object.is_object() || !object.contains(std::string(name))) return;
  const nlohmann::json& map = object.at(std::string(name));
  reader.Skip(name);
  if (!map.is_object()) {
    reader.Fail(InvalidField(reader.path().Field(name).json(), "must be an object"));
    return;
  }
  for (auto& [key, value] : map.items()) {
    std::optional<T> parsed = parse(value);
    if (!parsed) {
      reader.Fail(InvalidField(reader.path().Field(name).Key(key).json(), std::string(what)));
      return;
    }
    (*out)[key] = *parsed;
  }
}

void ReadNumberMap(const nlohmann::json& object, ObjectReader& reader, std::string_view name,
                   std::map<std::string, double>* out) {
  ReadMap(object, reader, name, out, "must be a non-negative number",
          [](const nlohmann::json& v) -> std::optional<double> {
            if (!v.is_number() || v.get<double>() < 0) return std::nullopt;
            return v.get<double>();
          });
}

void ReadDurationMap(const nlohmann::json& object, ObjectReader& reader, std::string_view name,
                     std::map<std::string, Duration>* out) {
  ReadMap(object, reader, name, out, "must be a duration like \"300s\"",
          [](const nlohmann::json& v) -> std::optional<Duration> {
            if (!v.is_string()) return std::nullopt;
            auto d = ParseDuration(v.get<std::string>());
            if (!d.ok() || d->count() < 0) return std::nullopt;
            return *d;
          });
}

void ReadQuotaMap(const nlohmann::json& map, const FieldPath& path, ObjectReader& reader,
                  std::map<std::string, int64_t>* out) {
  if (!map.is_object()) {
    reader.Fail(InvalidField(path.json(), "must be an object of metric → limit"));
    return;
  }
  for (auto& [metric, value] : map.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      reader.Fail(InvalidField(path.Key(metric).json(), "must be a non-negative integer"));
      return;
    }
    (*out)[metric] = value.get<int64_t>();
  }
}

void ReadQuotas(const nlohmann::json& object, ObjectReader& reader, QuotaConfig* quotas) {
  const nlohmann::json* defaults = object.contains("default") ? &object["default"] : nullptr;
  if (defaults != nullptr) {
    reader.Skip("default");
    ReadQuotaMap(*defaults, reader.path().Field("default"), reader, &quotas->defaults);
  }
  if (object.contains("projects")) {
    reader.Skip("projects");
    const nlohmann::json& projects = object["projects"];
    FieldPath path = reader.path().Field("projects");
    if (!projects.is_object()) {
      reader.Fail(InvalidField(path.json(), "must be an object of project id → quotas"));
      return;
    }
    for (auto& [project, map] : projects.items()) {
      ReadQuotaMap(map, path.Key(project), reader, &quotas->per_project[project]);
    }
  }
}

// A two-state capacity process (services/fleet/spot_availability.h): its means and the share left.
SpotAvailability ReadAvailability(ObjectReader& a) {
  SpotAvailability spot;
  a.GetDuration("meanAvailable", &spot.mean_available);
  a.GetDuration("meanConstrained", &spot.mean_constrained);
  a.GetDouble("minShareLeft", &spot.share_low);
  a.GetDouble("maxShareLeft", &spot.share_high);
  for (auto [name, mean] : {std::pair{"meanAvailable", spot.mean_available},
                            std::pair{"meanConstrained", spot.mean_constrained}}) {
    if (mean < kHazardTick) {
      a.Fail(InvalidField(a.path().Field(name).json(), "must be at least 60s"));
      return spot;
    }
  }
  if (spot.share_low < 0 || spot.share_low > spot.share_high || spot.share_high > 1) {
    a.Fail(InvalidField(a.path().Field("maxShareLeft").json(),
                        "needs 0 <= minShareLeft <= maxShareLeft <= 1"));
  }
  return spot;
}

// A zone's `capacity`: one count of a machine type its on-demand and spot pools share.
void ReadZoneCapacity(ObjectReader& c, const std::string& zone, Fleet& fleet) {
  ZoneCapacity capacity;
  capacity.zone = zone;
  const size_t dash = zone.rfind('-');
  capacity.region = dash == std::string::npos ? zone : zone.substr(0, dash);
  const std::string at = c.path().json();
  const MachineType* machine = nullptr;
  if (c.GetString("machineType", &capacity.machine_type)) {
    machine = FindMachineType(capacity.machine_type);
  }
  if (machine == nullptr || machine->is_tpu) {
    c.Fail(InvalidField(at + ".machineType",
                        "needs a GPU or CPU machine type (TPU pools count slices of one shape)"));
    return;
  }
  int64_t nodes = 0;
  if (!c.GetInt64("nodes", &nodes) || nodes <= 0) {
    c.Fail(InvalidField(at + ".nodes", "must be a positive integer"));
    return;
  }
  capacity.units = static_cast<int>(nodes);
  c.GetObject("outsideOnDemand", "trainyard.fleet.SpotAvailability",
              [&](ObjectReader& a) { capacity.outside_on_demand = ReadAvailability(a); });
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.zone != zone || pool.machine_type != capacity.machine_type || !pool.availability ||
        (pool.model != ConsumptionModel::kOnDemand && pool.model != ConsumptionModel::kSpot)) {
      continue;
    }
    c.Fail(InvalidField(
        at, "pool " + pool.id + " has an availability of its own; the zone's capacity sets it"));
    return;
  }
  for (const ZoneCapacity& other : fleet.zone_capacity) {
    if (other.zone == zone && other.machine_type == capacity.machine_type) {
      c.Fail(InvalidField(at, "a second capacity of " + capacity.machine_type + " in " + zone));
      return;
    }
  }
  fleet.zone_capacity.push_back(std::move(capacity));
}

void ReadPool(const nlohmann::json& json, ObjectReader& r, const std::string& zone, Fleet& fleet) {
  CapacityPool pool = NewPool(zone, "", ConsumptionModel::kOnDemand);
  const std::string at = r.path().json();
  if (!r.GetString("machineType", &pool.machine_type)) {
    r.Fail(InvalidField(at + ".machineType", "is required"));
    return;
  }
  const MachineType* machine = FindMachineType(pool.machine_type);
  if (machine == nullptr) {
    r.Fail(InvalidField(at + ".machineType", "unknown machine type \"" + pool.machine_type + "\""));
    return;
  }
  std::string model;
  if (!r.GetString("model", &model) || !ParseConsumptionModel(model)) {
    r.Fail(InvalidField(at + ".model", "must be RESERVATION, ON_DEMAND, SPOT or FLEX_START"));
    return;
  }
  pool.model = *ParseConsumptionModel(model);
  r.GetString("reservation", &pool.reservation);
  r.GetString("term", &pool.term);
  r.GetStringList("projects", &pool.projects);
  r.GetString("tpuTopology", &pool.tpu_topology);
  r.GetString("slurmPartition", &pool.slurm_partition);
  if (pool.model == ConsumptionModel::kReservation) {
    if (pool.reservation.empty()) {
      r.Fail(InvalidField(at + ".reservation", "a RESERVATION pool needs a reservation name"));
      return;
    }
    if (pool.term != "1y" && pool.term != "3y" && pool.term != "calendar") {
      r.Fail(InvalidField(at + ".term", "must be 1y, 3y or calendar"));
      return;
    }
  }
  r.GetObject("window", "trainyard.fleet.Window", [&](ObjectReader& w) {
    // Absolute {"start", "end"}, or relative to the fleet's epoch {"after", "length"}.
    Timestamp start{}, end{};
    Duration after{}, length{};
    if (w.GetTimestamp("start", &start) && w.GetTimestamp("end", &end) && end > start) {
      length = end - start;
      pool.window_start = start;
      pool.window_end = end;
    } else if (w.GetDuration("after", &after) && w.GetDuration("length", &length)) {
      pool.window_after = after;
      pool.window_length = length;
    } else {
      w.Fail(InvalidField(w.path().json(),
                          "needs start and a later end (RFC 3339), or after and length"));
      return;
    }
    // DWS calendar mode: a fixed window of 1 to 90 days.
    if (length < std::chrono::hours(24) || length > std::chrono::hours(24 * 90)) {
      w.Fail(InvalidField(w.path().json(), "a calendar-mode window lasts 1 to 90 days"));
      return;
    }
  });
  if (pool.term == "calendar" && !pool.window_start && !pool.window_after) {
    r.Fail(InvalidField(at + ".window", "a calendar-mode reservation needs its window"));
    return;
  }
  if (machine->is_tpu) {
    auto slice = ResolveTpuTopology(*machine, pool.tpu_topology);
    if (!slice.ok()) {
      r.Fail(InvalidField(at + ".tpuTopology", slice.status().message()));
      return;
    }
    pool.tpu_chips = slice->chips;
    pool.hosts_per_unit = slice->hosts;
  }
  int64_t count = 0;
  const char* count_field = machine->is_tpu ? "slices" : "nodes";
  if (r.GetInt64(count_field, &count)) pool.units = static_cast<int>(count);
  if (json.is_object() && json.contains("flexStart")) {
    r.Fail(InvalidField(at + ".flexStart",
                        "DWS flex-start is a queue now: give the pool its \"nodes\" (the most "
                        "DWS provisions at once) and, optionally, its \"queue\""));
    return;
  }
  r.GetObject("queue", "trainyard.fleet.DwsQueue", [&](ObjectReader& q) {
    if (pool.model != ConsumptionModel::kFlexStart) {
      q.Fail(InvalidField(q.path().json(), "only a FLEX_START pool has a DWS queue"));
      return;
    }
    DwsQueueModel& model = pool.dws_queue;
    for (auto [name, d] : {std::pair{"baseWait", &model.base_wait},
                           std::pair{"waitPerNode", &model.wait_per_node}}) {
      if (q.GetDuration(name, d) && *d < Duration{}) {
        q.Fail(InvalidField(q.path().Field(name).json(), "must not be negative"));
      }
    }
    const nlohmann::json& queue = json["queue"];
    if (GetNumber(queue, q, "p95Ratio", &model.p95_ratio) && model.p95_ratio < 1) {
      q.Fail(InvalidField(q.path().Field("p95Ratio").json(),
                          "must be at least 1 (1: every request waits its median)"));
    }
    GetNumber(queue, q, "outsideNodesAhead", &model.outside_nodes_ahead);
  });
  if (pool.units <= 0) {
    r.Fail(InvalidField(at + "." + count_field, "must be a positive integer"));
    return;
  }
  r.GetBool("keepBooted", &pool.keep_booted);
  if (int64_t block = 0; r.GetInt64("blockSize", &block)) {
    if (block <= 0 || block % pool.hosts_per_unit != 0) {
      r.Fail(InvalidField(at + ".blockSize", "must be a positive number of nodes, whole units"));
      return;
    }
    pool.block_nodes = static_cast<int>(block);
  }
  r.GetObject("availability", "trainyard.fleet.SpotAvailability", [&](ObjectReader& a) {
    if (pool.model == ConsumptionModel::kReservation) {
      a.Fail(InvalidField(a.path().json(), "a reservation's capacity does not come and go"));
      return;
    }
    pool.availability = ReadAvailability(a);
  });
  GetNumber(json, r, "preemptionsPerNodeHour", &pool.spot_preemptions_per_node_hour);
  if (double rate = 0; GetNumber(json, r, "failuresPerNodeHour", &rate)) {
    pool.failures_per_node_hour = rate;
  }
  pool.price_per_node_hour =
      ListPricePerNodeHour(pool.machine_type, pool.model, pool.term, machine->tpu_chips_per_host);
  GetNumber(json, r, "pricePerNodeHour", &pool.price_per_node_hour);
  pool.id = zone + "/" + pool.machine_type + "/" + std::string(ConsumptionModelName(pool.model));
  if (!pool.tpu_topology.empty()) pool.id += "/" + pool.tpu_topology;
  if (!pool.reservation.empty()) pool.id += "/" + pool.reservation;
  for (const CapacityPool& other : fleet.pools) {
    if (other.id == pool.id) {
      r.Fail(InvalidField(at, "duplicates pool " + pool.id));
      return;
    }
  }
  fleet.pools.push_back(std::move(pool));
}

}  // namespace

namespace {

// elasticCpu: CPU-only machine types run on demand or on spot in every zone, bounded by the
// project's CPUS quota rather than by a node count (services/fleet/fleet.h, CapacityPool::elastic).
void AddElasticCpuPools(const std::string& zone, Fleet& fleet) {
  for (ConsumptionModel model : {ConsumptionModel::kOnDemand, ConsumptionModel::kSpot}) {
    CapacityPool pool = NewPool(zone, "", model);
    pool.elastic = true;
    fleet.pools.push_back(std::move(pool));
  }
}

// catalogPools: a small pool of every accelerator machine type of the catalog (GPU types with
// built-in GPUs; TPU types as their single-host slice) that a zone has no explicit pool of, so
// every type Vertex sells can run, while accelerators stay scarce.
// {"zones": [...] (default: every zone of the fleet), "models": [...] (default ON_DEMAND, SPOT),
//  "nodes": 2 (TPU: slices)}
void ReadCatalogPools(const nlohmann::json& json, ObjectReader& r, Fleet& fleet) {
  if (!json.is_object() || !json.contains("catalogPools")) return;
  r.GetObject("catalogPools", "trainyard.fleet.CatalogPools", [&](ObjectReader& c) {
    std::vector<std::string> zones;
    if (!c.GetStringList("zones", &zones)) {
      for (const CapacityPool& pool : fleet.pools) {
        if (std::find(zones.begin(), zones.end(), pool.zone) == zones.end()) {
          zones.push_back(pool.zone);
        }
      }
    }
    std::vector<std::string> model_names = {"ON_DEMAND", "SPOT"};
    c.GetStringList("models", &model_names);
    std::vector<ConsumptionModel> models;
    for (size_t i = 0; i < model_names.size(); ++i) {
      auto model = ParseConsumptionModel(model_names[i]);
      if (!model || *model == ConsumptionModel::kReservation ||
          *model == ConsumptionModel::kFlexStart) {
        c.Fail(InvalidField(c.path().Field("models").Index(i).json(), "must be ON_DEMAND or SPOT"));
        return;
      }
      models.push_back(*model);
    }
    int64_t units = 2;
    if (c.GetInt64("nodes", &units) && units <= 0) {
      c.Fail(InvalidField(c.path().Field("nodes").json(), "must be a positive integer"));
      return;
    }
    for (const std::string& zone : zones) {
      std::set<std::string> explicit_types;
      for (const CapacityPool& pool : fleet.pools) {
        if (pool.zone == zone && !pool.elastic) explicit_types.insert(pool.machine_type);
      }
      for (std::string_view name : MachineTypeNames()) {
        const MachineType* machine = FindMachineType(name);
        const bool gpu = !machine->is_tpu && machine->accelerator != AcceleratorType::kUnspecified;
        const bool tpu = machine->is_tpu && !machine->tpu_family.empty();
        if ((!gpu && !tpu) || explicit_types.count(std::string(name)) > 0) continue;
        for (ConsumptionModel model : models) {
          CapacityPool pool = NewPool(zone, std::string(name), model);
          pool.units = static_cast<int>(units);
          if (tpu) {
            pool.tpu_topology = std::string(TpuTopologies(*machine).front());
            auto slice = ResolveTpuTopology(*machine, pool.tpu_topology);
            if (!slice.ok()) continue;
            pool.tpu_chips = slice->chips;
            pool.hosts_per_unit = slice->hosts;
            pool.id += "/" + pool.tpu_topology;
          }
          pool.price_per_node_hour =
              ListPricePerNodeHour(pool.machine_type, model, "", machine->tpu_chips_per_host);
          fleet.pools.push_back(std::move(pool));
        }
      }
      // N1 VMs with attached GPUs: one pool per GPU type, any N1 shape, as many GPUs as asked.
      for (AcceleratorType gpu : N1AttachableAccelerators()) {
        for (ConsumptionModel model : models) {
          CapacityPool pool = NewPool(zone, AttachedPoolType("n1", gpu), model);
          pool.attached = gpu;
          pool.units = static_cast<int>(units);
          // Shown for one GPU on an n1-standard-8; each admission is priced by its own shape.
          pool.price_per_node_hour = ListPricePerNodeHour("n1-standard-8", gpu, 1, model);
          fleet.pools.push_back(std::move(pool));
        }
      }
      // cloud-tpu (TPU v2 and v3): one v2-8 or v3-8 host a unit, 8 TensorCores on 4 chips.
      for (AcceleratorType tpu : {AcceleratorType::kTpuV2, AcceleratorType::kTpuV3}) {
        if (explicit_types.count(AttachedPoolType("cloud-tpu", tpu)) > 0) continue;
        for (ConsumptionModel model : models) {
          CapacityPool pool = NewPool(zone, AttachedPoolType("cloud-tpu", tpu), model);
          pool.attached = tpu;
          pool.tpu_chips = kCloudTpuHostCores / 2;
          pool.units = static_cast<int>(units);
          pool.price_per_node_hour =
              ListPricePerNodeHour("cloud-tpu", tpu, kCloudTpuHostCores, model);
          fleet.pools.push_back(std::move(pool));
        }
      }
    }
    // Keep each zone's pools together, zones in the order the file gave them.
    std::map<std::string, size_t> zone_order;
    for (const CapacityPool& pool : fleet.pools)
      zone_order.try_emplace(pool.zone, zone_order.size());
    std::stable_sort(fleet.pools.begin(), fleet.pools.end(),
                     [&](const CapacityPool& a, const CapacityPool& b) {
                       return zone_order[a.zone] < zone_order[b.zone];
                     });
  });
}

// A cohort's member maps: resource → non-negative units, for resources the cohort's pools have.
void ReadShareMap(const nlohmann::json& object, ObjectReader& reader, std::string_view name,
                  const Cohort& cohort, std::map<std::string, int64_t>* out) {
  if (!object.is_object() || !object.contains(std::string(name))) return;
  reader.Skip(name);
  const FieldPath path = reader.path().Field(name);
  ReadQuotaMap(object.at(std::string(name)), path, reader, out);
  for (const auto& [resource, units] : *out) {
    if (cohort.capacity.count(resource) == 0) {
      std::string known;
      for (const auto& [r, c] : cohort.capacity) known += (known.empty() ? "" : ", ") + r;
      reader.Fail(InvalidField(
          path.Key(resource).json(),
          "is not a resource of cohort " + cohort.name + "'s pools (they have: " + known + ")"));
      return;
    }
  }
}

// "cohorts": [{"name", "pools": [pool id …], "members": [{"project", "weight", "nominal",
// "borrowingLimit", "lendingLimit"}]}]: after the zones, so the pool ids resolve.
void ReadCohorts(const nlohmann::json& json, ObjectReader& r, Fleet& fleet) {
  r.GetObjectList("cohorts", "trainyard.fleet.Cohort", [&](ObjectReader& c, size_t ci) {
    const nlohmann::json& spec = json["cohorts"][ci];
    Cohort cohort;
    if (!c.GetString("name", &cohort.name) || cohort.name.empty()) {
      c.Fail(InvalidField(c.path().Field("name").json(), "a cohort needs a name"));
      return;
    }
    c.GetStringList("pools", &cohort.pools);
    const int index = static_cast<int>(fleet.cohorts.size());
    for (size_t i = 0; i < cohort.pools.size(); ++i) {
      const std::string at = c.path().Field("pools").Index(i).json();
      const int p = fleet.PoolIndex(cohort.pools[i]);
      if (p < 0) {
        c.Fail(InvalidField(at, "no pool \"" + cohort.pools[i] + "\" in this fleet"));
        return;
      }
      CapacityPool& pool = fleet.pools[p];
      if (pool.elastic || pool.cohort >= 0 || pool.model == ConsumptionModel::kFlexStart) {
        c.Fail(InvalidField(at, pool.elastic       ? "an elastic pool cannot be owned by a cohort"
                                : pool.cohort >= 0 ? "the pool already belongs to a cohort"
                                                   : "DWS flex-start capacity cannot be shared"));
        return;
      }
      pool.cohort = index;
      cohort.capacity[CohortResource(pool)] += pool.units;
    }
    if (cohort.pools.empty()) {
      c.Fail(InvalidField(c.path().Field("pools").json(), "a cohort needs at least one pool"));
      return;
    }
    c.GetObjectList("members", "trainyard.fleet.CohortMember", [&](ObjectReader& m, size_t mi) {
      const nlohmann::json& member_spec = spec["members"][mi];
      CohortMember member;
      if (!m.GetString("project", &member.project) || member.project.empty()) {
        m.Fail(InvalidField(m.path().Field("project").json(), "a member needs its project id"));
        return;
      }
      for (const Cohort& other : fleet.cohorts) {
        if (other.Member(member.project) != nullptr) {
          m.Fail(InvalidField(m.path().Field("project").json(),
                              "project " + member.project + " is already in cohort " + other.name));
          return;
        }
      }
      if (GetNumber(member_spec, m, "weight", &member.weight) && member.weight <= 0) {
        m.Fail(InvalidField(m.path().Field("weight").json(), "must be positive"));
        return;
      }
      ReadShareMap(member_spec, m, "nominal", cohort, &member.nominal);
      ReadShareMap(member_spec, m, "borrowingLimit", cohort, &member.borrowing_limit);
      ReadShareMap(member_spec, m, "lendingLimit", cohort, &member.lending_limit);
      cohort.members.push_back(std::move(member));
    });
    std::map<std::string, int64_t> nominal_sum;
    for (const CohortMember& m : cohort.members) {
      for (const auto& [resource, units] : m.nominal) nominal_sum[resource] += units;
    }
    for (const auto& [resource, sum] : nominal_sum) {
      if (sum > cohort.capacity[resource]) {
        c.Fail(InvalidField(c.path().Field("members").json(),
                            "the nominal shares of " + resource + " add up to " +
                                std::to_string(sum) + ", more than the " +
                                std::to_string(cohort.capacity[resource]) + " its pools have"));
        return;
      }
    }
    fleet.cohorts.push_back(std::move(cohort));
  });
}

}  // namespace

StatusOr<Fleet> ParseFleet(const std::string& json_text, const std::string& source) {
  auto json = nlohmann::json::parse(json_text, nullptr, false);
  if (json.is_discarded()) return InvalidArgument("fleet file " + source + ": not valid JSON");
  Fleet fleet;
  ObjectReader r(json, FieldPath("fleet"));
  r.GetString("name", &fleet.name);
  int64_t seed = 1;
  if (r.GetInt64("seed", &seed)) fleet.seed = static_cast<uint64_t>(seed);
  ReadDurationMap(json, r, "bootTime", &fleet.boot_time);
  GetNumber(json, r, "imagePullGbps", &fleet.image_pull_gbps);
  ReadNumberMap(json, r, "imageSizeGb", &fleet.image_size_gb);
  if (json.is_object() && json.contains("startupSpread")) {
    r.GetObject("startupSpread", "trainyard.fleet.StartupSpread", [&](ObjectReader& s) {
      const nlohmann::json& spread = json["startupSpread"];
      StartupSpread& out = fleet.startup_spread;
      for (auto [name, ratio] : {std::pair{"bootP95Ratio", &out.boot_p95_ratio},
                                 std::pair{"pullP95Ratio", &out.pull_p95_ratio},
                                 std::pair{"repairP95Ratio", &out.repair_p95_ratio}}) {
        if (GetNumber(spread, s, name, ratio) && *ratio < 1) {
          s.Fail(InvalidField(s.path().Field(name).json(),
                              "must be at least 1 (1: every node takes exactly its figure)"));
        }
      }
      GetNumber(spread, s, "tpuSliceGrowthPerDoubling", &out.tpu_slice_growth_per_doubling);
    });
  }
  if (json.is_object() && json.contains("programStartup")) {
    r.GetObject("programStartup", "trainyard.fleet.ProgramStartup", [&](ObjectReader& s) {
      ProgramStartupModel& out = fleet.program_startup;
      for (auto [name, d] :
           {std::pair{"base", &out.base}, std::pair{"perDoubling", &out.per_doubling}}) {
        if (s.GetDuration(name, d) && *d < Duration{}) {
          s.Fail(InvalidField(s.path().Field(name).json(), "must not be negative"));
        }
      }
    });
  }
  r.GetDuration("spotNotice", &fleet.spot_notice);
  if (r.GetDuration("terminationGracePeriod", &fleet.termination_grace) &&
      fleet.termination_grace < Duration{}) {
    r.Fail(InvalidField("fleet.terminationGracePeriod", "must not be negative (0s: at once)"));
  }
  if (r.GetDuration("resourceIdleTimeout", &fleet.resource_idle_timeout) &&
      fleet.resource_idle_timeout <= Duration{}) {
    r.Fail(InvalidField("fleet.resourceIdleTimeout", "must be positive, e.g. \"600s\""));
  }
  if (r.GetDuration("neverFitsTimeout", &fleet.never_fits_timeout) &&
      fleet.never_fits_timeout < Duration{}) {
    r.Fail(InvalidField("fleet.neverFitsTimeout", "must not be negative (0s waits forever)"));
  }
  r.GetDuration("repairTime", &fleet.repair_time);
  GetNumber(json, r, "failuresPerAcceleratorHour", &fleet.failures_per_accelerator_hour);
  if (GetNumber(json, r, "zoneCorrelation", &fleet.zone_correlation) &&
      fleet.zone_correlation > 1) {
    r.Fail(InvalidField("fleet.zoneCorrelation", "must be between 0 and 1"));
  }
  if (json.is_object() && json.contains("quotas")) {
    r.GetObject("quotas", "trainyard.fleet.Quotas",
                [&](ObjectReader& q) { ReadQuotas(json["quotas"], q, &fleet.quotas); });
  }
  bool elastic_cpu = false;
  r.GetBool("elasticCpu", &elastic_cpu);
  r.GetObjectList("zones", "trainyard.fleet.Zone", [&](ObjectReader& z, size_t zi) {
    std::string zone;
    if (!z.GetString("zone", &zone) || zone.find('-') == std::string::npos) {
      z.Fail(InvalidField(z.path().json() + ".zone", "must be a zone like us-central1-a"));
      return;
    }
    const nlohmann::json& pools = json["zones"][zi]["pools"];
    z.GetObjectList("pools", "trainyard.fleet.Pool",
                    [&](ObjectReader& p, size_t pi) { ReadPool(pools[pi], p, zone, fleet); });
    z.GetObjectList("capacity", "trainyard.fleet.ZoneCapacity",
                    [&](ObjectReader& c, size_t) { ReadZoneCapacity(c, zone, fleet); });
    if (elastic_cpu) AddElasticCpuPools(zone, fleet);
  });
  ReadCatalogPools(json, r, fleet);
  ReadCohorts(json, r, fleet);
  Status status = r.Finish();
  if (status.ok() && fleet.pools.empty()) {
    status = InvalidField("zones", "the fleet has no pools");
  }
  if (!status.ok()) {
    // InvalidField messages already start with the field's path.
    return InvalidArgument("fleet file " + source + ": " + status.message());
  }
  return fleet;
}

StatusOr<Fleet> LoadFleetFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("fleet file " + path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return ParseFleet(text.str(), path);
}

}  // namespace trainyard
