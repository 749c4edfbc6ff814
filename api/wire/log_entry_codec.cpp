#include "api/wire/log_entry_codec.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "api/wire/json_reader.h"

namespace trainyard {
namespace {

using json = nlohmann::json;

// Task names are [a-z0-9-]; a log id must be URL-encoded in logName all the same.
std::string LogId(const LogEntry& e) {
  if (e.task_name == kServiceTask) return "ml.googleapis.com%2F" + std::to_string(e.job_id);
  std::string out;
  for (char c : e.task_name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
      out.push_back(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out;
}

const std::string* StringAt(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at->is_string() ? &at->get_ref<const std::string&>() : nullptr;
}

}  // namespace

std::string FormatLogTimestamp(Timestamp t) {
  std::string text = FormatTimestamp(t);  // 0, 3 or 6 fraction digits, then "Z"
  text.pop_back();
  size_t dot = text.find('.');
  size_t digits = dot == std::string::npos ? 0 : text.size() - dot - 1;
  if (dot == std::string::npos) text.push_back('.');
  text.append(9 - digits, '0');
  return text + "Z";
}

json EncodeLogEntry(const LogEntry& e, const Project& project) {
  const std::string job_id = std::to_string(e.job_id);
  const std::string time = FormatLogTimestamp(e.time);
  return {
      {"logName", "projects/" + project.id + "/logs/" + LogId(e)},
      {"resource",
       {{"type", "ml_job"},
        {"labels", {{"job_id", job_id}, {"task_name", e.task_name}, {"project_id", project.id}}}}},
      {"timestamp", time},
      {"receiveTimestamp", time},
      {"severity", std::string(SeverityName(e.severity))},
      {"insertId", FormatInsertId(e.insert_id)},
      {"textPayload", e.message},
      {"labels",
       {{"ml.googleapis.com/job_id", job_id}, {"ml.googleapis.com/task_name", e.task_name}}}};
}

json EncodeLogEntries(const std::vector<LogEntry>& entries, const Project& project,
                      const std::string& next_page_token) {
  json out = json::object();
  if (!entries.empty()) {
    json list = json::array();
    for (const LogEntry& e : entries) list.push_back(EncodeLogEntry(e, project));
    out["entries"] = std::move(list);
  }
  if (!next_page_token.empty()) out["nextPageToken"] = next_page_token;
  return out;
}

StatusOr<LogEntry> DecodeLogEntry(const json& j) {
  if (!j.is_object()) return InvalidArgument("a log entry is not a JSON object");
  LogEntry e;
  const std::string* time = StringAt(j, {"timestamp"});
  if (time == nullptr) return InvalidArgument("a log entry has no timestamp");
  TY_ASSIGN_OR_RETURN(e.time, ParseTimestamp(*time));
  if (const std::string* id = StringAt(j, {"insertId"})) {
    auto parsed = ParseInsertId(*id);
    if (!parsed) return InvalidArgument("log entry insertId \"" + *id + "\" is not recognized");
    e.insert_id = *parsed;
  }
  if (const std::string* s = StringAt(j, {"severity"})) {
    e.severity = ParseSeverity(*s).value_or(LogSeverity::kDefault);
  }
  if (const std::string* t = StringAt(j, {"resource", "labels", "task_name"})) e.task_name = *t;
  if (const std::string* id = StringAt(j, {"resource", "labels", "job_id"})) {
    e.job_id = std::strtoll(id->c_str(), nullptr, 10);
  }
  if (const std::string* text = StringAt(j, {"textPayload"})) {
    e.message = *text;
  } else if (const std::string* m = StringAt(j, {"jsonPayload", "message"})) {
    e.message = *m;
  }
  return e;
}

}  // namespace trainyard
