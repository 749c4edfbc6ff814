#include "cmd/simulate/scenario.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/wire/fleet_codec.h"
#include "services/catalog.h"
#include "services/model/duration_text.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status Bad(const std::string& source, const std::string& field, const std::string& why) {
  return InvalidArgument(source + ": " + field + ": " + why);
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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

StatusOr<Workload> ParseWorkload(const std::string& src, const json& w, const fs::path& dir) {
  Workload out;
  if (!w.is_object()) return Bad(src, "workload", "must be an object");
  TY_ASSIGN_OR_RETURN(std::string path, StringField(src, w, "path", "workload.", true));
  out.path = (dir / path).lexically_normal().string();
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
  for (const char* key : {"limit", "skipGpusAbove"}) {
    if (!w.contains(key)) continue;
    if (!w[key].is_number_integer() || w[key].get<int64_t>() < 0) {
      return Bad(src, std::string("workload.") + key, "must be a whole number, 0 or more");
    }
    (std::string(key) == "limit" ? out.limit : out.skip_gpus_above) = w[key].get<int64_t>();
  }
  return out;
}

}  // namespace

StatusOr<Scenario> LoadScenario(const std::string& path, std::optional<uint64_t> seed) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(path + ": not a JSON object");
  const fs::path dir = fs::path(path).parent_path();
  Scenario s;
  s.source = path;
  TY_ASSIGN_OR_RETURN(s.name, StringField(path, j, "name", "", false));
  if (s.name.empty()) s.name = fs::path(path).stem().string();

  if (!j.contains("fleet"))
    return Bad(path, "fleet", "is required (a fleet file's path or object)");
  if (j["fleet"].is_string()) {
    TY_ASSIGN_OR_RETURN(s.fleet, LoadFleetFile((dir / j["fleet"].get<std::string>()).string()));
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
  TY_ASSIGN_OR_RETURN(s.workload, ParseWorkload(path, j["workload"], dir));

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

  if (j.contains("placement")) {
    if (!j["placement"].is_array()) return Bad(path, "placement", "must be a list of rules");
    for (size_t i = 0; i < j["placement"].size(); ++i) {
      const json& r = j["placement"][i];
      const std::string p = "placement[" + std::to_string(i) + "].";
      if (!r.is_object()) return Bad(path, p.substr(0, p.size() - 1), "must be an object");
      PlacementRule rule;
      TY_ASSIGN_OR_RETURN(rule.projects, StringList(path, r, "projects", p));
      TY_ASSIGN_OR_RETURN(rule.model, StringField(path, r, "model", p, true));
      if (rule.model != "STANDARD" && rule.model != "ON_DEMAND" && rule.model != "SPOT" &&
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
  return s;
}

}  // namespace trainyard::simulate
