#pragma once
// The subset of the Cloud Logging query language that `gcloud ai custom-jobs stream-logs` sends to
// entries:list, parsed and then read as a JobLogFilter:
//
//   resource.type="ml_job" AND resource.labels.job_id="123" [AND resource.labels.task_name="t"]
//   AND timestamp>="1970-01-01T01:00:00.000000000Z" AND timestamp<"2026-…"
//
// and on later polls `((timestamp="T" AND insertId>"I") OR timestamp>"T")` as the lower bound.
// Grammar: comparisons `field OP value` (OP one of = > >= < <=; value a "quoted string" or a bare
// word), AND, OR, parentheses; juxtaposition means AND and, as in Logging, OR binds tighter than
// AND. Anything else, or a comparison we cannot serve, is INVALID_ARGUMENT naming `filter`.
#include <string>
#include <string_view>
#include <vector>

#include "services/logs/job_log_service.h"
#include "services/status.h"

namespace trainyard::api {

struct LoggingFilterNode {
  enum class Kind { kAnd, kOr, kCompare };
  Kind kind = Kind::kCompare;
  std::string field;                        // kCompare: "resource.labels.job_id"
  std::string op;                           // kCompare: "=", ">", ">=", "<", "<="
  std::string value;                        // kCompare: unquoted
  std::vector<LoggingFilterNode> children;  // kAnd, kOr: two or more
};

// The syntax tree; INVALID_ARGUMENT naming `filter` and the byte position where parsing broke.
StatusOr<LoggingFilterNode> ParseLoggingFilter(std::string_view text);

// What the tree says about one job's entries. It must name resource.labels.job_id; comparisons
// on other fields, or other shapes of OR than the insertId bound above, are INVALID_ARGUMENT.
StatusOr<JobLogFilter> ToJobLogFilter(const LoggingFilterNode& root);

}  // namespace trainyard::api
