#include "cmd/simulate/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "cmd/simulate/figures.h"
#include "cmd/simulate/scenario_files.h"
#include "cmd/simulate/validation.h"
#include "services/cost/accrual.h"
#include "services/cost/capacity_cost.h"
#include "services/jobs/catalog.h"
#include "services/jobs/job_state_names.h"

namespace trainyard::simulate {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// As `out << std::fixed << std::setprecision(digits) << x` writes it (libstdc++ formats with
// "%.*f" in the classic locale), without a stream for each: jobs.csv has several a row, and
// 200,000 rows' streams were a second of the HPC2N replay.
std::string Fixed(double x, int digits) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  if (n >= 0 && n < static_cast<int>(sizeof buf)) return std::string(buf, static_cast<size_t>(n));
  std::ostringstream out;  // beyond 63 characters (above 1e50): the stream, as before
  out << std::fixed << std::setprecision(digits) << x;
  return out.str();
}

// The consumption models of a job's last placement ("SPOT", "RESERVATION+ON_DEMAND"); "" if none.
std::string ModelsOf(const SchedulingStatus& s) {
  std::set<std::string> models;
  for (const PlacedPoolStatus& p : s.pools) models.insert(p.consumption_model);
  std::string out;
  for (const std::string& m : models) out += (out.empty() ? "" : "+") + m;
  return out;
}

// A report file, made new: a rerun's old one (or a link someone planted in its place) is removed,
// never written through, and O_EXCL | O_NOFOLLOW make sure of it if one appears in between.
Status WriteText(const fs::path& path, const std::string& text) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Internal(path.string() + ": cannot replace: " + std::strerror(errno));
  }
  return WriteNewFile(path.string(), text, 0644);
}

// The scenario's report folder: made here, or one a rerun left (a real folder, not a link).
Status MakeReportFolder(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  struct stat st {};
  if (errno == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status::Ok();
  }
  return Internal(dir.string() + ": cannot be made a report folder (a link or a file is there)");
}

// A small SVG line chart: one polyline per series, axes with their range, a legend.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                         "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

std::string Chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                  const std::vector<Series>& series, bool dots) {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool any = false;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!any) x0 = x1 = x, y0 = 0, y1 = y;
      any = true;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y1 = std::max(y1, y);
    }
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const double W = 720, H = 420, L = 70, R = 190, T = 40, B = 50;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << L << "\" y=\"24\" font-size=\"15\">" << title << "</text>\n"
      << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B
      << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B
      << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double x = x0 + (x1 - x0) * i / 4, y = y0 + (y1 - y0) * i / 4;
    svg << "<text x=\"" << Fixed(px(x), 1) << "\" y=\"" << H - B + 16
        << "\" text-anchor=\"middle\">" << Fixed(x, x1 - x0 < 10 ? 2 : 0) << "</text>\n"
        << "<text x=\"" << L - 6 << "\" y=\"" << Fixed(py(y) + 4, 1) << "\" text-anchor=\"end\">"
        << Fixed(y, y1 - y0 < 10 ? 2 : 0) << "</text>\n";
  }
  svg << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">"
      << x_label << "</text>\n"
      << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" transform=\"rotate(-90 14 "
      << (T + H - B) / 2 << ")\" text-anchor=\"middle\">" << y_label << "</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % 8];
    if (dots) {
      for (const auto& [x, y] : series[i].points) {
        svg << "<circle cx=\"" << Fixed(px(x), 1) << "\" cy=\"" << Fixed(py(y), 1)
            << "\" r=\"5\" fill=\"" << color << "\"/>\n";
      }
    } else {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"";
      for (const auto& [x, y] : series[i].points) {
        svg << Fixed(px(x), 1) << "," << Fixed(py(y), 1) << " ";
      }
      svg << "\"/>\n";
    }
    svg << "<rect x=\"" << W - R + 12 << "\" y=\"" << T + 18 * i << "\" width=\"10\" height=\"10\" "
        << "fill=\"" << color << "\"/><text x=\"" << W - R + 28 << "\" y=\"" << T + 18 * i + 10
        << "\">" << series[i].name << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

// The process's peak resident set so far (Linux's VmHWM), in KiB; 0 when unknown.
int64_t PeakRssKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

// The nodes of a job's last placement, space-separated.
std::string NodeNames(const SchedulingStatus& s) {
  std::string out;
  for (const PlacedPoolStatus& p : s.pools) {
    for (const std::string& n : p.nodes) out += (out.empty() ? "" : " ") + n;
  }
  return out;
}

// Replays of a log on the machine it came from: each figure recorded beside replayed.
void WriteValidationTable(std::ostream& md, const std::vector<ScenarioReport>& reports) {
  bool any = false;
  for (const ScenarioReport& r : reports) any = any || r.summary.contains("validation");
  if (!any) return;
  md << "\n### Against recorded history\n\n| scenario | utilization | wait mean (s) | wait p50 (s) "
        "| wait p95 (s) | bounded slowdown | weekly wait correlation |\n|---|---:|---:|---:|---:|"
        "---:|---:|\n";
  for (const ScenarioReport& r : reports) {
    if (!r.summary.contains("validation")) continue;
    const ordered_json& v = r.summary["validation"];
    const auto pair = [&](const char* key, int digits) {
      return Fixed(v["replay"][key].get<double>(), digits) + " (recorded " +
             Fixed(v["recorded"][key].get<double>(), digits) + ")";
    };
    md << "| " << r.name << " | " << pair("utilization", 3) << " | " << pair("wait_mean_s", 0)
       << " | " << pair("wait_p50_s", 0) << " | " << pair("wait_p95_s", 0) << " | "
       << pair("bounded_slowdown", 2) << " | "
       << (v.contains("weekly_wait_correlation")
               ? Fixed(v["weekly_wait_correlation"].get<double>(), 3)
               : std::string("–"))
       << " |\n";
  }
}

}  // namespace

StatusOr<ScenarioReport> WriteScenario(const std::string& dir, const Scenario& scenario,
                                       const Trace& trace, const SimulationResult& result) {
  std::error_code ec;
  fs::create_directories(dir, ec);  // the caller's choice of folder (--out)
  if (ec) return Internal(dir + ": " + ec.message());
  // LoadScenario checked the name: a plain one, so the folder stays inside `dir`.
  const fs::path out = fs::path(dir) / scenario.name;
  TY_RETURN_IF_ERROR(MakeReportFolder(out));
  const Timestamp epoch = ReplayEpoch();
  std::ostringstream csv;
  csv << "trace_line,job_id,project,submit_s,start_s,end_s,state,consumption_model,zone,"
         "machine_type,nodes,gpus,cost_usd,wait_s,jct_s,waiting_s,starting_s,restarting_s,"
         "running_s,redone_s,preemptions,node_names\n";
  std::vector<double> waits, jcts;
  std::map<std::string, std::vector<double>> waits_by_project;
  double job_cost = 0, productive = 0, lifetime = 0, wall = 0;
  double productive_accelerator_hours = 0;  // productive time × the accelerators the job held
  // Productive accelerator-hours by the consumption model of the job's placement, and job-hours
  // by ML Goodput's badput buckets.
  std::map<std::string, double> productive_by_model;
  std::map<std::string, double> badput;
  int64_t succeeded = 0, failed = 0, unfinished = 0, preemptions = 0;
  for (const JobOutcome& j : result.jobs) {
    const CustomJob& job = j.record->job;
    const SchedulingStatus& s = *job.trainyard;
    const double submit = Seconds(*job.create_time - epoch);
    const double this_cost = cost::Usd(j.record->cost_micros);
    std::string wait, jct, start, end;
    if (job.start_time) {
      waits.push_back(Seconds(*job.start_time - *job.create_time));
      waits_by_project[j.trace->project].push_back(waits.back());
      wait = Fixed(waits.back(), 1);
      start = Fixed(Seconds(*job.start_time - epoch), 1);
    }
    if (job.end_time) {
      end = Fixed(Seconds(*job.end_time - epoch), 1);
      if (job.state == JobState::kSucceeded) {
        jcts.push_back(Seconds(*job.end_time - *job.create_time));
        jct = Fixed(jcts.back(), 1);
      }
    }
    succeeded += job.state == JobState::kSucceeded ? 1 : 0;
    failed += job.state == JobState::kFailed ? 1 : 0;
    unfinished += IsTerminal(job.state) ? 0 : 1;
    preemptions += j.record->spot_restarts;
    const std::string model = ModelsOf(s);
    job_cost += this_cost;
    productive += Seconds(s.goodput.Productive());
    if (const MachineType* machine = FindMachineType(j.built.machine_type)) {
      const double hours = Seconds(s.goodput.Productive()) / 3600 *
                           static_cast<double>(j.built.nodes) *
                           std::max(machine->accelerator_count, 1);
      productive_accelerator_hours += hours;
      productive_by_model[model] += hours;
    }
    badput["TPU_INITIALIZATION"] += Seconds(s.goodput.starting) / 3600;
    badput["PROGRAM_STARTUP"] += Seconds(s.goodput.program_startup) / 3600;
    badput["UNPRODUCTIVE_CHECKPOINT_SAVE_TIME"] += Seconds(s.goodput.checkpoint_save) / 3600;
    badput["UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME"] += Seconds(s.goodput.checkpoint_restore) / 3600;
    badput["WASTED_PROGRESS_FROM_DISRUPTION"] += Seconds(s.goodput.redone) / 3600;
    badput["INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION"] += Seconds(s.goodput.restarting) / 3600;
    lifetime += Seconds(s.goodput.Lifetime());
    wall += Seconds(s.goodput.Total());
    csv << j.trace->line << "," << job.name.substr(job.name.rfind('/') + 1) << ","
        << j.trace->project << "," << Fixed(submit, 1) << "," << start << "," << end << ","
        << StateNameForMessage(job.state) << "," << model << "," << s.zone << ","
        << j.built.machine_type << "," << j.built.nodes << "," << j.trace->gpus << ","
        << Fixed(this_cost, 4) << "," << wait << "," << jct << ","
        << Fixed(Seconds(s.goodput.waiting), 1) << "," << Fixed(Seconds(s.goodput.starting), 1)
        << "," << Fixed(Seconds(s.goodput.restarting), 1) << ","
        << Fixed(Seconds(s.goodput.running), 1) << "," << Fixed(Seconds(s.goodput.redone), 1) << ","
        << j.record->spot_restarts << "," << NodeNames(s) << "\n";
  }
  std::sort(waits.begin(), waits.end());
  std::sort(jcts.begin(), jcts.end());
  ordered_json summary;
  summary["scenario"] = scenario.name;
  summary["seed"] = scenario.seed;
  summary["jobs"] = result.jobs.size();
  summary["skipped_jobs"] = trace.skipped + trace.skipped_large;
  summary["succeeded"] = succeeded;
  summary["failed"] = failed;
  summary["unfinished"] = unfinished;
  // What the capacity costs, from the nodes (services/cost/capacity_cost.h's PoolCostUsd).
  std::map<std::string, double> cost_by_model, busy_by_model, slots_by_model;
  for (const CapacityPool& pool : scenario.fleet.pools) {
    const std::string model(ConsumptionModelName(pool.model));
    auto at = [&](const std::map<std::string, double>& m) {
      auto it = m.find(pool.id);
      return it == m.end() ? 0.0 : it->second;
    };
    const double busy = at(result.busy_node_seconds), slots = at(result.node_seconds);
    busy_by_model[model] += busy;
    slots_by_model[model] += slots;
    cost_by_model[model] += cost::PoolCostUsd(pool.model, pool.price_per_node_hour, slots, busy);
  }
  double capacity_cost = 0;
  ordered_json by_model = ordered_json::object();
  for (const auto& [model, c] : cost_by_model) {
    capacity_cost += c;
    by_model[model] = Round(c, 2);
  }
  summary["cost_usd"] = {{"total", Round(capacity_cost, 2)},
                         {"by_consumption_model", by_model},
                         {"charged_to_jobs", Round(job_cost, 2)}};
  // What the capacity costs for each accelerator-hour that trained and kept its result.
  summary["cost_per_productive_accelerator_hour"] = Round(
      cost::PerProductiveAcceleratorHour(capacity_cost, productive_accelerator_hours).value_or(0),
      4);
  ordered_json per_model = ordered_json::object();
  for (const auto& [model, c] : cost_by_model) {
    auto hours = productive_by_model.find(model);
    if (hours == productive_by_model.end()) continue;
    if (auto per_hour = cost::PerProductiveAcceleratorHour(c, hours->second)) {
      per_model[model] = Round(*per_hour, 4);
    }
  }
  summary["cost_per_productive_accelerator_hour_by_consumption_model"] = per_model;
  summary["wait_seconds"] = {{"p50", Round(Percentile(waits, 50), 1)},
                             {"p95", Round(Percentile(waits, 95), 1)},
                             {"p99", Round(Percentile(waits, 99), 1)}};
  ordered_json by_project = ordered_json::object();
  for (auto& [project, w] : waits_by_project) {
    std::sort(w.begin(), w.end());
    by_project[project] = {{"p50", Round(Percentile(w, 50), 1)},
                           {"p95", Round(Percentile(w, 95), 1)},
                           {"p99", Round(Percentile(w, 99), 1)}};
  }
  summary["wait_seconds_by_project"] = by_project;
  summary["jct_seconds"] = {{"p50", Round(Percentile(jcts, 50), 1)},
                            {"p95", Round(Percentile(jcts, 95), 1)}};
  summary["goodput"] = Round(lifetime > 0 ? productive / lifetime : 0, 4);
  summary["scheduling_goodput"] = Round(wall > 0 ? lifetime / wall : 0, 4);
  ordered_json badput_hours = ordered_json::object();
  for (const char* bucket :
       {"TPU_INITIALIZATION", "PROGRAM_STARTUP", "UNPRODUCTIVE_CHECKPOINT_SAVE_TIME",
        "UNPRODUCTIVE_CHECKPOINT_RESTORE_TIME", "WASTED_PROGRESS_FROM_DISRUPTION",
        "INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION"}) {
    badput_hours[bucket] = Round(badput[bucket], 2);
  }
  summary["badput_job_hours"] = badput_hours;
  summary["preemptions"] = preemptions;
  ordered_json utilization = ordered_json::object();
  for (const auto& [model, available] : slots_by_model) {
    if (available > 0) utilization[model] = Round(busy_by_model[model] / available, 4);
  }
  summary["utilization"] = utilization;
  summary["reservation_utilization"] =
      utilization.contains("RESERVATION") ? utilization["RESERVATION"] : ordered_json(nullptr);
  // Each persistent resource: node-hours it held (paid for), node-hours its jobs ran on them, and
  // the share of its hours that did work.
  ordered_json resources = ordered_json::object();
  for (const auto& [id, usage] : result.resources) {
    resources[id] = {
        {"held_node_hours", Round(usage.held_node_seconds / 3600, 2)},
        {"busy_node_hours", Round(usage.busy_node_seconds / 3600, 2)},
        {"utilization",
         Round(usage.held_node_seconds > 0 ? usage.busy_node_seconds / usage.held_node_seconds : 0,
               4)},
        {"most_nodes", usage.most_nodes}};
  }
  summary["persistent_resources"] = resources;
  summary["simulated_seconds"] = Round(Seconds(result.simulated), 1);
  if (auto validation = ValidationOf(trace, result)) summary["validation"] = *validation;
  TY_RETURN_IF_ERROR(WriteText(out / "jobs.csv", std::move(csv).str()));  // no copy
  TY_RETURN_IF_ERROR(WriteText(out / "summary.json", summary.dump(2) + "\n"));
  return ScenarioReport{scenario.name, summary, waits, result.capacity};
}

Status WriteTiming(const std::string& dir, const Scenario& scenario, const SimulationResult& result,
                   double wall_seconds) {
  ordered_json timing;
  timing["wall_seconds"] = Round(wall_seconds, 3);
  timing["simulated_per_wall"] =
      Round(wall_seconds > 0 ? Seconds(result.simulated) / wall_seconds : 0, 0);
  timing["passes"] = result.passes;
  timing["quiet_cycles"] = result.quiet_cycles;
  timing["unsettled_events"] = result.unsettled_events;
  timing["most_waiting"] = result.most_waiting;
  timing["peak_rss_mib"] = Round(static_cast<double>(PeakRssKib()) / 1024, 1);
  return WriteText(fs::path(dir) / scenario.name / "timing.json", timing.dump(2) + "\n");
}

Status WriteComparison(const std::string& dir, const std::vector<ScenarioReport>& reports) {
  ordered_json all = ordered_json::array();
  std::ostringstream md;
  md << "# Comparison\n\n| | ";
  for (const ScenarioReport& r : reports) md << r.name << " | ";
  md << "\n|---|";
  for (size_t i = 0; i < reports.size(); ++i) md << "---:|";
  md << "\n";
  auto row = [&](const std::string& label, auto value) {
    md << "| " << label << " | ";
    for (const ScenarioReport& r : reports) md << value(r.summary) << " | ";
    md << "\n";
  };
  auto num = [](const ordered_json& v, int digits) {
    return v.is_number() ? Fixed(v.get<double>(), digits) : std::string("–");
  };
  row("jobs", [&](const ordered_json& s) { return num(s["jobs"], 0); });
  row("succeeded", [&](const ordered_json& s) { return num(s["succeeded"], 0); });
  row("failed", [&](const ordered_json& s) { return num(s["failed"], 0); });
  row("cost (USD)", [&](const ordered_json& s) { return num(s["cost_usd"]["total"], 0); });
  std::set<std::string> models;
  for (const ScenarioReport& r : reports) {
    for (const auto& [m, v] : r.summary["cost_usd"]["by_consumption_model"].items()) {
      models.insert(m);
    }
  }
  for (const std::string& m : models) {
    row("  of it " + m, [&](const ordered_json& s) {
      const auto& by = s["cost_usd"]["by_consumption_model"];
      return by.contains(m) ? num(by[m], 0) : std::string("–");
    });
  }
  row("wait p50 (s)", [&](const ordered_json& s) { return num(s["wait_seconds"]["p50"], 0); });
  row("wait p95 (s)", [&](const ordered_json& s) { return num(s["wait_seconds"]["p95"], 0); });
  row("wait p99 (s)", [&](const ordered_json& s) { return num(s["wait_seconds"]["p99"], 0); });
  row("JCT p50 (s)", [&](const ordered_json& s) { return num(s["jct_seconds"]["p50"], 0); });
  row("JCT p95 (s)", [&](const ordered_json& s) { return num(s["jct_seconds"]["p95"], 0); });
  row("goodput", [&](const ordered_json& s) { return num(s["goodput"], 3); });
  row("scheduling goodput", [&](const ordered_json& s) { return num(s["scheduling_goodput"], 3); });
  row("cost per productive accelerator-hour (USD)",
      [&](const ordered_json& s) { return num(s["cost_per_productive_accelerator_hour"], 2); });
  row("preemptions", [&](const ordered_json& s) { return num(s["preemptions"], 0); });
  row("reservation utilization",
      [&](const ordered_json& s) { return num(s["reservation_utilization"], 3); });
  std::set<std::string> resource_ids;
  for (const ScenarioReport& r : reports) {
    for (const auto& [id, v] : r.summary["persistent_resources"].items()) resource_ids.insert(id);
  }
  for (const std::string& id : resource_ids) {
    row("persistent resource " + id + ": node-hours held / used", [&](const ordered_json& s) {
      const auto& all = s["persistent_resources"];
      if (!all.contains(id)) return std::string("–");
      return num(all[id]["held_node_hours"], 0) + " / " + num(all[id]["busy_node_hours"], 0);
    });
  }
  WriteValidationTable(md, reports);
  md << "\n![wait CDF](wait_cdf.svg)\n![cost against p95 wait](cost_vs_wait.svg)\n";
  for (const ScenarioReport& r : reports) {
    all.push_back(r.summary);
    md << "![capacity in use: " << r.name << "](capacity_" << r.name << ".svg)\n";
  }
  TY_RETURN_IF_ERROR(WriteText(fs::path(dir) / "comparison.md", md.str()));
  TY_RETURN_IF_ERROR(WriteText(fs::path(dir) / "comparison.json",
                               ordered_json{{"scenarios", all}}.dump(2) + "\n"));

  std::vector<Series> cdf, scatter;
  for (const ScenarioReport& r : reports) {
    Series s{r.name, {}};
    const size_t n = r.waits.size();
    const size_t step = std::max<size_t>(1, n / 400);  // at most ~400 points a curve
    for (size_t i = 0; i < n; i += step) {
      s.points.emplace_back(r.waits[i] / 3600, static_cast<double>(i + 1) / static_cast<double>(n));
    }
    if (n > 0) s.points.emplace_back(r.waits.back() / 3600, 1.0);
    cdf.push_back(std::move(s));
    scatter.push_back(Series{r.name,
                             {{r.summary["wait_seconds"]["p95"].get<double>() / 3600,
                               r.summary["cost_usd"]["total"].get<double>()}}});
  }
  TY_RETURN_IF_ERROR(WriteText(
      fs::path(dir) / "wait_cdf.svg",
      Chart("Wait until start, per scenario", "wait (hours)", "fraction of jobs", cdf, false)));
  TY_RETURN_IF_ERROR(
      WriteText(fs::path(dir) / "cost_vs_wait.svg",
                Chart("Cost against p95 wait", "p95 wait (hours)", "cost (USD)", scatter, true)));
  for (const ScenarioReport& r : reports) {
    std::map<std::string, Series> by_model;
    for (const CapacitySample& c : r.capacity) {
      for (const auto& [model, busy] : c.busy) {
        Series& s = by_model[model];
        s.name = model;
        s.points.emplace_back(Seconds(c.at) / 86400, static_cast<double>(busy));
      }
    }
    std::vector<Series> series;
    for (auto& [model, s] : by_model) series.push_back(std::move(s));
    TY_RETURN_IF_ERROR(WriteText(
        fs::path(dir) / ("capacity_" + r.name + ".svg"),
        Chart("Nodes in use by consumption model: " + r.name, "day", "nodes", series, false)));
  }
  return Status::Ok();
}

}  // namespace trainyard::simulate
