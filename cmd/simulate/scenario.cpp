#include "cmd/simulate/scenario.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/wire/fleet_codec.h"
#include "services/jobs/catalog.h"
#include "services/model/duration_text.h"
#include "services/scheduler/scheduler_knobs.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status Bad(const std::string& source, const std::string& field, const std::string& why) {
  return InvalidArgument(source + ": " + field + ": " + why);
}

StatusOr<std::string> StringField(const std::string& src, const json& obj, const std::string& key,
                                  const std::string& path, bool required) {
  if (!obj.contains(key)) {
    if (required) return Bad(src, path + key, "is required");
    return std::string();
  }
  if (!obj[key].is_string()) return Bad(src, path + key, "must be a string");
  return obj[key].get<std::string>();
}

StatusOr<std::vector<std::string>> StringList(const std::string& src, const json& obj,
                                              const std::string& key, const std::string& path) {
  std::vector<std::string> out;
  if (!obj.contains(key)) return out;
  if (!obj[key].is_array()) return Bad(src, path + key, "must be a list of strings");
  for (size_t i = 0; i < obj[key].size(); ++i) {
    if (!obj[key][i].is_string()) {
      return Bad(src, path + key + "[" + std::to_string(i) + "]", "must be a string");
    }
    out.push_back(obj[key][i].get<std::string>());
  }
  return out;
}

StatusOr<std::optional<Duration>> DurationField(const std::string& src, const json& obj,
                                                const std::string& key, const std::string& path) {
  if (!obj.contains(key)) return std::optional<Duration>();
  if (!obj[key].is_string()) return Bad(src, path + key, "must be a duration such as \"1800s\"");
  auto d = ParseDurationText(obj[key].get<std::string>());
  if (!d || d->count() <= 0) {
    return Bad(src, path + key, "must be a positive duration such as \"1800s\"");
  }
  return std::optional<Duration>(*d);
}

// `scheduler`: when a queued job starts to hold the capacity it needs (`holdAfter`, 0s: at
// once) and how many may hold in one cycle (`holdsPerCycle`). 0s and 1 make it EASY backfilling:
// the queue's head alone holds, and the rest backfill only where they do not delay it.
// `requeueTimestamp` (Creation, Eviction) orders requeued jobs (SchedulerConfig).
StatusOr<SchedulerConfig> ParseSchedulerKnobs(const std::string& src, const json& k) {
  SchedulerConfig out;
  if (!k.is_object()) return Bad(src, "scheduler", "must be an object");
  for (const auto& [key, value] : k.items()) {
    // holdsPerCycle is a JSON number, the others strings; the knob reads them as text.
    const bool number = key == "holdsPerCycle";
    std::optional<std::string> wrong;
    if (number ? !value.is_number_integer() : !value.is_string()) {
      wrong = SetSchedulerKnob(out, key, "");  // the knob's own words for what it takes
    } else {
      wrong = SetSchedulerKnob(out, key, number ? value.dump() : value.get<std::string>());
    }
    if (wrong) return Bad(src, "scheduler." + key, *wrong);
  }
  return out;
}

StatusOr<Workload> ParseWorkload(const std::string& src, const json& w, const fs::path& dir,
                                 const FileRules& rules) {
  Workload out;
  out.rules = rules;
  if (!w.is_object()) return Bad(src, "workload", "must be an object");
  TY_ASSIGN_OR_RETURN(std::string path, StringField(src, w, "path", "workload.", true));
  TY_ASSIGN_OR_RETURN(out.path,
                      ResolveScenarioPath(src, "workload.path", dir.string(), path, rules));
  TY_ASSIGN_OR_RETURN(std::string format, StringField(src, w, "format", "workload.", true));
  if (format == "swf") {
    out.format = TraceFormat::kSwf;
  } else if (format == "csv") {
    out.format = TraceFormat::kCsv;
  } else if (format == "jsonl") {
    out.format = TraceFormat::kJsonl;
  } else {
    return Bad(src, "workload.format", "must be swf, csv or jsonl, not \"" + format + "\"");
  }
  if (out.format == TraceFormat::kCsv) {
    if (!w.contains("columns") || !w["columns"].is_object()) {
      return Bad(src, "workload.columns", "is required for a CSV trace: which column is which");
    }
    const json& c = w["columns"];
    const std::string p = "workload.columns.";
    TY_ASSIGN_OR_RETURN(out.columns.submit, StringField(src, c, "submit", p, true));
    TY_ASSIGN_OR_RETURN(out.columns.duration, StringField(src, c, "duration", p, true));
    TY_ASSIGN_OR_RETURN(out.columns.gpus, StringField(src, c, "gpus", p, true));
    TY_ASSIGN_OR_RETURN(out.columns.nodes, StringField(src, c, "nodes", p, false));
    TY_ASSIGN_OR_RETURN(out.columns.project, StringField(src, c, "project", p, false));
    TY_ASSIGN_OR_RETURN(out.columns.status, StringField(src, c, "status", p, false));
    TY_ASSIGN_OR_RETURN(out.columns.limit, StringField(src, c, "limit", p, false));
    TY_ASSIGN_OR_RETURN(std::string submit,
                        StringField(src, w, "submitFormat", "workload.", false));
    if (submit == "timestamp") {
      out.submit_is_timestamp = true;
    } else if (!submit.empty() && submit != "seconds") {
      return Bad(src, "workload.submitFormat", "must be seconds or timestamp");
    }
  }
  if (out.format == TraceFormat::kSwf) {
    TY_ASSIGN_OR_RETURN(std::string project, StringField(src, w, "project", "workload.", false));
    if (!project.empty()) out.swf_project = project;
    if (out.swf_project != "user" && out.swf_project != "group" && out.swf_project != "queue" &&
        out.swf_project != "partition") {
      return Bad(src, "workload.project", "must be user, group, queue or partition");
    }
  }
  if (w.contains("durationScale")) {
    if (!w["durationScale"].is_number() || w["durationScale"].get<double>() <= 0) {
      return Bad(src, "workload.durationScale", "must be a positive number");
    }
    out.duration_scale = w["durationScale"].get<double>();
  }
  for (const char* key : {"limit", "skipGpusAbove"}) {
    if (!w.contains(key)) continue;
    if (!w[key].is_number_integer() || w[key].get<int64_t>() < 0) {
      return Bad(src, std::string("workload.") + key, "must be a whole number, 0 or more");
    }
    (std::string(key) == "limit" ? out.limit : out.skip_gpus_above) = w[key].get<int64_t>();
  }
  return out;
}

StatusOr<ResourcePlan> ParseResource(const std::string& src, const json& r, size_t i) {
  const std::string p = "persistentResources[" + std::to_string(i) + "].";
  if (!r.is_object()) return Bad(src, p.substr(0, p.size() - 1), "must be an object");
  ResourcePlan plan;
  TY_ASSIGN_OR_RETURN(plan.id, StringField(src, r, "id", p, true));
  TY_ASSIGN_OR_RETURN(plan.project, StringField(src, r, "project", p, true));
  TY_ASSIGN_OR_RETURN(plan.machine_type, StringField(src, r, "machineType", p, true));
  const MachineType* m = FindMachineType(plan.machine_type);
  if (m == nullptr || m->accelerator_count <= 0 || m->is_tpu) {
    return Bad(src, p + "machineType",
               "\"" + plan.machine_type + "\" is not a machine type with built-in GPUs");
  }
  auto count = [&](const json& obj, const char* key, const std::string& at,
                   int64_t least) -> StatusOr<std::optional<int64_t>> {
    if (!obj.contains(key)) return std::optional<int64_t>();
    if (!obj[key].is_number_integer() || obj[key].get<int64_t>() < least) {
      return Bad(src, at + key, "must be a whole number, " + std::to_string(least) + " or more");
    }
    return std::optional(obj[key].get<int64_t>());
  };
  TY_ASSIGN_OR_RETURN(std::optional<int64_t> replicas, count(r, "replicaCount", p, 1));
  if (r.contains("autoscalingSpec")) {
    const json& a = r["autoscalingSpec"];
    const std::string ap = p + "autoscalingSpec.";
    if (!a.is_object()) return Bad(src, p + "autoscalingSpec", "must be an object");
    TY_ASSIGN_OR_RETURN(plan.min_replicas, count(a, "minReplicaCount", ap, 0));
    TY_ASSIGN_OR_RETURN(plan.max_replicas, count(a, "maxReplicaCount", ap, 1));
    if (!plan.min_replicas || !plan.max_replicas) {
      return Bad(src, ap + (plan.min_replicas ? "maxReplicaCount" : "minReplicaCount"),
                 "is required");
    }
    if (*plan.max_replicas < *plan.min_replicas) {
      return Bad(src, ap + "maxReplicaCount", "must be at least minReplicaCount");
    }
  } else if (!replicas) {
    return Bad(src, p + "replicaCount", "is required without an autoscalingSpec");
  }
  plan.replicas = replicas.value_or(0);
  return plan;
}

// A rule that sends jobs to a persistent resource names one the scenario keeps, and only the
// resource's own project: a resource serves its project's jobs alone.
Status CheckResourceRule(const std::string& src, const std::string& p, const PlacementRule& rule,
                         const std::vector<ResourcePlan>& resources) {
  const ResourcePlan* plan = nullptr;
  for (const ResourcePlan& r : resources) {
    if (r.id == rule.persistent_resource) plan = &r;
  }
  if (plan == nullptr) {
    return Bad(src, p + "persistentResource",
               "the scenario keeps no persistent resource \"" + rule.persistent_resource + "\"");
  }
  if (rule.projects.size() != 1 || rule.projects[0] != plan->project) {
    return Bad(src, p + "projects",
               "must be [\"" + plan->project + "\"]: persistent resource \"" + plan->id +
                   "\" serves only its own project's jobs");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Scenario> LoadScenario(const std::string& path, std::optional<uint64_t> seed,
                                const FileRules& rules) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadScenarioFile(path, rules));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(path + ": not a JSON object");
  const fs::path dir = fs::path(path).parent_path();
  Scenario s;
  s.source = path;
  TY_ASSIGN_OR_RETURN(s.name, StringField(path, j, "name", "", false));
  if (s.name.empty()) s.name = fs::path(path).stem().string();
  // The name becomes the scenario's report folder.
  if (!ValidScenarioName(s.name)) {
    return Bad(path, "name", "\"" + s.name + "\" " + kScenarioNameRule);
  }

  if (!j.contains("fleet"))
    return Bad(path, "fleet", "is required (a fleet file's path or object)");
  if (j["fleet"].is_string()) {
    TY_ASSIGN_OR_RETURN(
        std::string fleet_path,
        ResolveScenarioPath(path, "fleet", dir.string(), j["fleet"].get<std::string>(), rules));
    TY_ASSIGN_OR_RETURN(std::string fleet_text, ReadScenarioFile(fleet_path, rules));
    TY_ASSIGN_OR_RETURN(s.fleet, ParseFleet(fleet_text, fleet_path));
  } else if (j["fleet"].is_object()) {
    TY_ASSIGN_OR_RETURN(s.fleet, ParseFleet(j["fleet"].dump(), path + ": fleet"));
  } else {
    return Bad(path, "fleet", "must be a fleet file's path or an inline fleet object");
  }
  if (j.contains("fleetScale")) {
    if (!j["fleetScale"].is_number() || j["fleetScale"].get<double>() <= 0) {
      return Bad(path, "fleetScale", "must be a positive number");
    }
    const double scale = j["fleetScale"].get<double>();
    for (CapacityPool& pool : s.fleet.pools) {
      if (pool.elastic) continue;
      pool.units = static_cast<int64_t>(std::llround(static_cast<double>(pool.units) * scale));
    }
  }
  if (seed) s.fleet.seed = *seed;
  s.seed = s.fleet.seed;

  if (!j.contains("workload")) return Bad(path, "workload", "is required");
  TY_ASSIGN_OR_RETURN(s.workload, ParseWorkload(path, j["workload"], dir, rules));

  TY_ASSIGN_OR_RETURN(s.shapes, StringList(path, j, "shapes", ""));
  if (s.shapes.empty()) s.shapes = {"a3-megagpu-8g"};
  for (size_t i = 0; i < s.shapes.size(); ++i) {
    const MachineType* m = FindMachineType(s.shapes[i]);
    if (m == nullptr || m->accelerator_count <= 0 || m->is_tpu) {
      return Bad(path, "shapes[" + std::to_string(i) + "]",
                 "\"" + s.shapes[i] + "\" is not a machine type with built-in GPUs");
    }
  }
  std::sort(s.shapes.begin(), s.shapes.end(), [](const std::string& a, const std::string& b) {
    return FindMachineType(a)->accelerator_count < FindMachineType(b)->accelerator_count;
  });

  if (j.contains("persistentResources")) {
    const json& list = j["persistentResources"];
    if (!list.is_array()) return Bad(path, "persistentResources", "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      TY_ASSIGN_OR_RETURN(ResourcePlan plan, ParseResource(path, list[i], i));
      for (const ResourcePlan& other : s.resources) {
        if (other.id == plan.id) {
          return Bad(path, "persistentResources[" + std::to_string(i) + "].id",
                     "\"" + plan.id + "\" is named twice");
        }
      }
      s.resources.push_back(std::move(plan));
    }
  }

  if (j.contains("placement")) {
    if (!j["placement"].is_array()) return Bad(path, "placement", "must be a list of rules");
    for (size_t i = 0; i < j["placement"].size(); ++i) {
      const json& r = j["placement"][i];
      const std::string p = "placement[" + std::to_string(i) + "].";
      if (!r.is_object()) return Bad(path, p.substr(0, p.size() - 1), "must be an object");
      PlacementRule rule;
      TY_ASSIGN_OR_RETURN(rule.projects, StringList(path, r, "projects", p));
      TY_ASSIGN_OR_RETURN(rule.persistent_resource,
                          StringField(path, r, "persistentResource", p, false));
      TY_ASSIGN_OR_RETURN(rule.model,
                          StringField(path, r, "model", p, rule.persistent_resource.empty()));
      if (!rule.persistent_resource.empty()) {
        TY_RETURN_IF_ERROR(CheckResourceRule(path, p, rule, s.resources));
        rule.model = "STANDARD";  // the resource's nodes, whatever they were bought as
      } else if (rule.model != "STANDARD" && rule.model != "ON_DEMAND" && rule.model != "SPOT" &&
                 rule.model != "SPOT_THEN_ON_DEMAND" && rule.model != "FLEX_START") {
        return Bad(path, p + "model",
                   "must be STANDARD, ON_DEMAND, SPOT, SPOT_THEN_ON_DEMAND or FLEX_START");
      }
      for (const char* key : {"minGpus", "maxGpus"}) {
        if (!r.contains(key)) continue;
        if (!r[key].is_number_integer() || r[key].get<int64_t>() < 0) {
          return Bad(path, p + key, "must be a whole number, 0 or more");
        }
        (std::string(key) == "minGpus" ? rule.min_gpus : rule.max_gpus) = r[key].get<int64_t>();
      }
      s.placement.push_back(std::move(rule));
    }
  }

  // Reservations as the scenario buys them: how many nodes, for which term, owned by whom.
  if (j.contains("reservations")) {
    const json& list = j["reservations"];
    if (!list.is_array()) return Bad(path, "reservations", "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string p = "reservations[" + std::to_string(i) + "].";
      const json& r = list[i];
      if (!r.is_object()) return Bad(path, p.substr(0, p.size() - 1), "must be an object");
      TY_ASSIGN_OR_RETURN(std::string reservation, StringField(path, r, "reservation", p, true));
      TY_ASSIGN_OR_RETURN(std::string term, StringField(path, r, "term", p, false));
      if (!term.empty() && term != "1y" && term != "3y") {
        return Bad(path, p + "term", "must be 1y or 3y");
      }
      std::optional<int64_t> nodes;
      if (r.contains("nodes")) {
        if (!r["nodes"].is_number_integer() || r["nodes"].get<int64_t>() < 0) {
          return Bad(path, p + "nodes", "must be a whole number, 0 or more");
        }
        nodes = r["nodes"].get<int64_t>();
      }
      bool found = false;
      for (CapacityPool& pool : s.fleet.pools) {
        if (pool.reservation != reservation) continue;
        found = true;
        if (r.contains("projects")) {
          TY_ASSIGN_OR_RETURN(pool.projects, StringList(path, r, "projects", p));
        }
        if (nodes) pool.units = *nodes / std::max(1, pool.hosts_per_unit);
        if (!term.empty()) {
          const MachineType* m = FindMachineType(pool.machine_type);
          pool.term = term;
          pool.price_per_node_hour = ListPricePerNodeHour(pool.machine_type, pool.model, term,
                                                          m != nullptr ? m->tpu_chips_per_host : 0);
        }
      }
      if (!found) {
        return Bad(path, p + "reservation",
                   "the fleet has no pool of reservation \"" + reservation + "\"");
      }
    }
  }
  TY_ASSIGN_OR_RETURN(s.checkpoint_interval, DurationField(path, j, "checkpointInterval", ""));
  TY_ASSIGN_OR_RETURN(s.checkpoint_save, DurationField(path, j, "checkpointSaveTime", ""));
  TY_ASSIGN_OR_RETURN(s.checkpoint_restore, DurationField(path, j, "checkpointRestoreTime", ""));
  TY_ASSIGN_OR_RETURN(s.max_wait, DurationField(path, j, "flexStartMaxWait", ""));
  if (j.contains("scheduler")) {
    TY_ASSIGN_OR_RETURN(s.scheduler, ParseSchedulerKnobs(path, j["scheduler"]));
  }
  return s;
}

}  // namespace trainyard::simulate
