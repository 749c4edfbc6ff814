#pragma once
// Cloud Logging v2 LogEntry JSON for job logs, as entries:list returns it and gcloud reads it
// (resource ml_job with job_id/task_name labels, textPayload), shared by the server and the SDK.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "services/logs/log_entry.h"
#include "services/resource_names.h"
#include "services/status.h"

namespace trainyard {

// RFC 3339 with exactly nine fraction digits, "2026-01-02T03:04:05.120000000Z". Fixed width
// because gcloud compares entry timestamps as strings ("…05Z" would sort after "…05.5Z").
std::string FormatLogTimestamp(Timestamp t);

// `project` names the log (logName, resource.labels.project_id).
nlohmann::json EncodeLogEntry(const LogEntry& entry, const Project& project);
// {"entries":[…],"nextPageToken":"…"}; {} when both are empty, as Cloud Logging answers.
nlohmann::json EncodeLogEntries(const std::vector<LogEntry>& entries, const Project& project,
                                const std::string& next_page_token);

// Client side: reads what EncodeLogEntry writes, leniently (unknown fields are ignored; a
// jsonPayload.message stands in for textPayload). INVALID_ARGUMENT for a non-object or a bad
// timestamp or insertId.
StatusOr<LogEntry> DecodeLogEntry(const nlohmann::json& entry);

}  // namespace trainyard
