#include "cmd/simulate/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/wire/custom_job_codec.h"
#include "services/model/duration_text.h"

namespace trainyard::simulate {
namespace {

Status BadLine(const std::string& path, int64_t line, const std::string& why) {
  return InvalidArgument(path + ":" + std::to_string(line) + ": " + why);
}

std::optional<double> Number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  if (text.empty()) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// "2020-03-01 00:00:07", "2020-03-01T00:00:07Z" (UTC): seconds since the epoch.
std::optional<double> TimestampSeconds(std::string_view text) {
  std::string s(text);
  if (s.size() >= 19 && (s[10] == 'T' || s[10] == ' ')) {
    std::tm tm{};
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*c%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6) {
      tm.tm_year -= 1900;
      tm.tm_mon -= 1;
      return static_cast<double>(timegm(&tm));
    }
  }
  return std::nullopt;
}

Duration Seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

// One CSV record's fields (RFC 4180 quotes; no newlines inside quotes).
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

StatusOr<Trace> ReadSwf(const Workload& w, std::istream& in) {
  Trace trace;
  std::string line;
  int64_t number = 0;
  // SWF v2.2 fields (1-based): 2 submit, 4 run time, 5 allocated processors, 8 requested
  // processors, 9 requested time, 11 status (1 completed, 0 failed, 5 cancelled), 12 user, 13
  // group, 15 queue, 16 partition. -1 means unknown.
  const int project_field = w.swf_project == "group"       ? 12
                            : w.swf_project == "queue"     ? 14
                            : w.swf_project == "partition" ? 15
                                                           : 11;
  while (std::getline(in, line)) {
    ++number;
    if (line.starts_with("; MaxProcs:")) {
      if (auto n = Number(line.substr(11))) trace.max_procs = static_cast<int64_t>(*n);
    }
    if (line.empty() || line[0] == ';' || line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 18) {
      return BadLine(w.path, number,
                     "an SWF job line has 18 fields, this one " + std::to_string(f.size()));
    }
    auto field = [&](int i, const char* name) -> StatusOr<double> {
      auto v = Number(f[static_cast<size_t>(i)]);
      if (!v) return BadLine(w.path, number, std::string(name) + " is not a number");
      return *v;
    };
    TY_ASSIGN_OR_RETURN(double submit, field(1, "field 2 (submit time)"));
    TY_ASSIGN_OR_RETURN(double run, field(3, "field 4 (run time)"));
    TY_ASSIGN_OR_RETURN(double allocated, field(4, "field 5 (allocated processors)"));
    TY_ASSIGN_OR_RETURN(double requested, field(7, "field 8 (requested processors)"));
    const double procs = allocated > 0 ? allocated : requested;
    if (run <= 0 || procs <= 0) {
      ++trace.skipped;
      continue;
    }
    TraceJob job;
    job.line = number;
    job.id = f[0];
    job.submit = Seconds(submit);
    job.duration = Seconds(run);
    if (auto requested = Number(f[8]); requested && *requested > 0)
      job.requested = Seconds(*requested);
    if (auto wait = Number(f[2]); wait && *wait >= 0) job.recorded_wait = Seconds(*wait);
    if (auto status = Number(f[10])) {
      job.end = *status == 0   ? TraceEnd::kFailed
                : *status == 5 ? TraceEnd::kCancelled
                               : TraceEnd::kCompleted;
    }
    job.gpus = static_cast<int64_t>(procs);
    job.project = w.swf_project + "-" + f[static_cast<size_t>(project_field)];
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

// A CSV status as published: Philly's Pass/Failed/Killed, Helios's COMPLETED/FAILED/CANCELLED/
// TIMEOUT, and the like. A timeout ended at its limit: its run time says so, and it counts as
// failed.
TraceEnd EndOf(std::string status) {
  std::transform(status.begin(), status.end(), status.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (status.find("fail") != std::string::npos || status.find("timeout") != std::string::npos) {
    return TraceEnd::kFailed;
  }
  if (status.find("cancel") != std::string::npos || status.find("kill") != std::string::npos) {
    return TraceEnd::kCancelled;
  }
  return TraceEnd::kCompleted;
}

StatusOr<Trace> ReadCsv(const Workload& w, std::istream& in) {
  Trace trace;
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(w.path + ": empty: no header line");
  std::map<std::string, size_t> column;
  std::vector<std::string> header = CsvFields(line);
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  auto index = [&](const std::string& name, const char* role) -> StatusOr<std::optional<size_t>> {
    if (name.empty()) return std::optional<size_t>();
    auto it = column.find(name);
    if (it == column.end()) {
      return InvalidArgument(w.path + ":1: no column \"" + name + "\" (workload.columns." + role +
                             ")");
    }
    return std::optional<size_t>(it->second);
  };
  TY_ASSIGN_OR_RETURN(auto submit_col, index(w.columns.submit, "submit"));
  TY_ASSIGN_OR_RETURN(auto duration_col, index(w.columns.duration, "duration"));
  TY_ASSIGN_OR_RETURN(auto gpus_col, index(w.columns.gpus, "gpus"));
  TY_ASSIGN_OR_RETURN(auto nodes_col, index(w.columns.nodes, "nodes"));
  TY_ASSIGN_OR_RETURN(auto project_col, index(w.columns.project, "project"));
  TY_ASSIGN_OR_RETURN(auto status_col, index(w.columns.status, "status"));
  TY_ASSIGN_OR_RETURN(auto limit_col, index(w.columns.limit, "limit"));
  int64_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> f = CsvFields(line);
    auto cell = [&](size_t i, const std::string& name) -> StatusOr<std::string> {
      if (i >= f.size()) return BadLine(w.path, number, "no value in column \"" + name + "\"");
      return f[i];
    };
    auto number_in = [&](size_t i, const std::string& name) -> StatusOr<double> {
      TY_ASSIGN_OR_RETURN(std::string text, cell(i, name));
      auto v = Number(text);
      if (!v) {
        return BadLine(w.path, number, "column \"" + name + "\" is not a number: \"" + text + "\"");
      }
      return *v;
    };
    TY_ASSIGN_OR_RETURN(std::string submit_text, cell(*submit_col, w.columns.submit));
    std::optional<double> submit =
        w.submit_is_timestamp ? TimestampSeconds(submit_text) : Number(submit_text);
    if (!submit) {
      return BadLine(w.path, number,
                     "column \"" + w.columns.submit + "\" is not " +
                         (w.submit_is_timestamp ? "a timestamp (YYYY-MM-DD HH:MM:SS)"
                                                : "a number of seconds") +
                         ": \"" + submit_text + "\"");
    }
    TY_ASSIGN_OR_RETURN(double duration, number_in(*duration_col, w.columns.duration));
    TY_ASSIGN_OR_RETURN(double gpus, number_in(*gpus_col, w.columns.gpus));
    if (duration <= 0 || gpus <= 0) {
      ++trace.skipped;
      continue;
    }
    TraceJob job;
    job.line = number;
    job.submit = Seconds(*submit);
    job.duration = Seconds(duration);
    // A fraction (Philly's and Helios's shared GPUs) takes whole GPUs, as Vertex sells them: the
    // job builder then picks the smallest shape that holds them.
    job.gpus = static_cast<int64_t>(std::ceil(gpus));
    if (nodes_col) {
      TY_ASSIGN_OR_RETURN(double nodes, number_in(*nodes_col, w.columns.nodes));
      job.nodes = std::max<int64_t>(0, static_cast<int64_t>(nodes));
    }
    if (project_col) {
      TY_ASSIGN_OR_RETURN(job.project, cell(*project_col, w.columns.project));
    }
    if (job.project.empty()) job.project = "default";
    if (status_col) {
      TY_ASSIGN_OR_RETURN(std::string status, cell(*status_col, w.columns.status));
      job.end = EndOf(status);
    }
    if (limit_col) {
      TY_ASSIGN_OR_RETURN(std::string text, cell(*limit_col, w.columns.limit));
      if (auto limit = Number(text); limit && *limit > 0) job.requested = Seconds(*limit);
    }
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

StatusOr<Trace> ReadJsonl(const Workload& w, std::istream& in) {
  Trace trace;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return BadLine(w.path, number, "not a JSON object");
    TraceJob job;
    job.line = number;
    if (!j.contains("submitOffset") || !j["submitOffset"].is_string()) {
      return BadLine(w.path, number, "submitOffset is required (a duration such as \"3600s\")");
    }
    auto offset = ParseDurationText(j["submitOffset"].get<std::string>());
    if (!offset) return BadLine(w.path, number, "submitOffset is not a duration");
    job.submit = *offset;
    job.project = j.value("project", "default");
    if (!j.contains("job")) return BadLine(w.path, number, "job (a CustomJob body) is required");
    auto body = DecodeCustomJob(j["job"], OutputOnlyFields::kIgnore, UnknownFields::kReject,
                                ApiVersion::kV1);
    if (!body.ok()) return BadLine(w.path, number, "job: " + body.status().message());
    job.body = std::make_shared<const CustomJob>(std::move(body).value());
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

}  // namespace

StatusOr<Trace> ReadTrace(const Workload& w) {
  // Read whole, as a regular file only (a FIFO or /dev/zero named as a trace would hang the
  // replay).
  TY_ASSIGN_OR_RETURN(std::string text, ReadScenarioFile(w.path, w.rules));
  std::istringstream in(std::move(text));
  Trace trace;
  switch (w.format) {
    case TraceFormat::kSwf: {
      TY_ASSIGN_OR_RETURN(trace, ReadSwf(w, in));
      break;
    }
    case TraceFormat::kCsv: {
      TY_ASSIGN_OR_RETURN(trace, ReadCsv(w, in));
      break;
    }
    case TraceFormat::kJsonl: {
      TY_ASSIGN_OR_RETURN(trace, ReadJsonl(w, in));
      break;
    }
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  if (w.skip_gpus_above > 0) {
    const size_t before = trace.jobs.size();
    std::erase_if(trace.jobs, [&](const TraceJob& j) { return j.gpus > w.skip_gpus_above; });
    trace.skipped_large = static_cast<int64_t>(before - trace.jobs.size());
  }
  if (w.limit > 0 && static_cast<int64_t>(trace.jobs.size()) > w.limit) {
    trace.jobs.resize(static_cast<size_t>(w.limit));
  }
  if (!trace.jobs.empty()) {
    const Duration first = trace.jobs.front().submit;
    for (TraceJob& j : trace.jobs) j.submit -= first;
  }
  if (w.duration_scale != 1) {
    const auto scaled = [&](Duration d) {
      return std::chrono::duration_cast<Duration>(d * w.duration_scale);
    };
    for (TraceJob& j : trace.jobs) {
      j.duration = scaled(j.duration);
      if (j.requested) j.requested = scaled(*j.requested);
    }
  }
  return trace;
}

}  // namespace trainyard::simulate
