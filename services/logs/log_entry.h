#pragma once
// A job's log as the domain sees it: lines its replicas print (appended by the runtime) and the
// service's own entries (the job's state changes, kept in job_events), read back in one order.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/logs/insert_id.h"
#include "services/time.h"

namespace trainyard {

// The most entries one page of a log list holds: Cloud Logging's own cap (the API and the SDK
// page by it).
inline constexpr int kMaxLogPageSize = 1000;  // Cloud Logging's own cap

// google.logging.type.LogSeverity, with its numbers (stored as they are).
enum class LogSeverity : int {
  kDefault = 0,
  kDebug = 100,
  kInfo = 200,
  kNotice = 300,
  kWarning = 400,
  kError = 500,
  kCritical = 600,
  kAlert = 700,
  kEmergency = 800,
};

// "INFO", as Cloud Logging spells it.
std::string_view SeverityName(LogSeverity severity);
// A name ("WARNING") or a number of the enum; nullopt otherwise.
std::optional<LogSeverity> ParseSeverity(std::string_view text);
// A stored number back to the enum; DEFAULT for a number the enum does not have.
LogSeverity SeverityFromNumber(int64_t number);

// The task the service's own entries are filed under (Vertex uses the same name).
inline constexpr std::string_view kServiceTask = "service";

// One line to append: the store gives it its insertId.
struct LogLine {
  int64_t job_id = 0;
  Timestamp time{};  // virtual time (the simulator's clock), like every other timestamp
  LogSeverity severity = LogSeverity::kInfo;
  std::string task_name;  // "workerpool0-0"
  std::string message;
};

// One entry as read: a stored line, a job event, or the note that lines were dropped.
struct LogEntry {
  int64_t job_id = 0;
  Timestamp time{};
  InsertId insert_id;
  LogSeverity severity = LogSeverity::kDefault;
  std::string task_name;  // "workerpool0-0", or "service"
  std::string message;
};

}  // namespace trainyard
