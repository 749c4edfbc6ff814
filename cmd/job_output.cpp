#include "cmd/job_output.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "api/wire/enums.h"
#include "api/wire/json_reader.h"
#include "sdk/timing.h"

namespace trainyard::cmd {
namespace {

std::string Reason(const CustomJob& job) {
  if (!job.trainyard || job.trainyard->reason_code.empty()) return "";
  const SchedulingStatus& s = *job.trainyard;
  return s.reason_message.empty() ? s.reason_code : s.reason_code + ": " + s.reason_message;
}

std::string Money(double usd) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.2f", usd);
  return text;
}

void Line(std::ostream& out, const char* key, const std::string& value) {
  if (value.empty()) return;
  char label[24];
  std::snprintf(label, sizeof label, "%-15s", key);
  out << label << value << "\n";
}

std::string Time(const std::optional<Timestamp>& t) { return t ? FormatTimestamp(*t) : ""; }

// "8s", "5m8s", "2h5m": a model-time span as a person reads it.
std::string Span(Duration d) {
  const int64_t s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
}

// What an admitted job waits for before it runs, in model time: "booting 1 a3-highgpu-8g (5m0s),
// then pulling 10 GB (8.0s): ready in 5m8s", and then its program's start-up to the first step
// (", then the program starts (1m0s)"). Printed when the job turns PENDING, so the whole startup
// is still ahead.
std::string Starting(const CustomJob& job) {
  if (job.state != JobState::kPending || !job.trainyard ||
      (job.trainyard->startup <= Duration{} && job.trainyard->program_startup <= Duration{})) {
    return "";
  }
  const SchedulingStatus& s = *job.trainyard;
  const StartupDetail& d = s.startup_detail;
  std::string out;
  if (d.boot_nodes > 0) {
    out = "booting " + std::to_string(d.boot_nodes) + " " + d.machine_type + " (" + Span(d.boot) +
          ")";
  }
  if (d.image_gb > 0) {
    char gb[32];
    std::snprintf(gb, sizeof gb, "%g GB", d.image_gb);
    out += (out.empty() ? "pulling " : ", then pulling ") + std::string(gb) + " (" +
           Span(d.image_pull) + ")";
  }
  std::string program;
  if (s.program_startup > Duration{}) {
    program = ", then the program starts (" + Span(s.program_startup) + ")";
  }
  return (out.empty() ? "starting" : out) + ": ready in " + Span(s.startup) + " of model time" +
         program;
}

}  // namespace

void PrintJob(std::ostream& out, const sdk::Job& job) {
  const CustomJob& j = job.job;
  Line(out, "name:", j.name);
  Line(out, "displayName:", j.display_name);
  Line(out, "state:", std::string(JobStateName(j.state)));
  Line(out, "createTime:", Time(j.create_time));
  Line(out, "startTime:", Time(j.start_time));
  Line(out, "endTime:", Time(j.end_time));
  if (j.error) {
    Line(out, "error:", "code " + std::to_string(j.error->code) + ": " + j.error->message);
  }
  if (j.trainyard) {
    const SchedulingStatus& s = *j.trainyard;
    Line(out, "reason:", Reason(j));
    if (s.queue_position) Line(out, "queuePosition:", std::to_string(*s.queue_position));
    Line(out, "priority:", std::to_string(s.priority));
    for (const PlacedPoolStatus& pool : s.pools) {
      Line(out, "placement:", pool.pool_id + " × " + std::to_string(pool.units));
    }
    if (s.admitted_at)
      Line(out, "cost:", Money(s.cost_usd) + " (" + Money(s.hourly_price_usd) + "/h)");
  }
}

void PrintJobTable(std::ostream& out, const std::vector<sdk::Job>& jobs) {
  constexpr size_t kColumns = 5;
  using Row = std::array<std::string, kColumns>;
  std::vector<Row> rows = {{"ID", "DISPLAY NAME", "STATE", "CREATED", "REASON"}};
  for (const sdk::Job& job : jobs) {
    rows.push_back({sdk::JobId(job.name()), job.job.display_name,
                    std::string(JobStateName(job.state())), Time(job.job.create_time),
                    job.job.trainyard ? job.job.trainyard->reason_code : ""});
  }
  std::array<size_t, kColumns> width{};
  for (const Row& row : rows) {
    for (size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const Row& row : rows) {
    std::string line;
    for (size_t c = 0; c < kColumns; ++c) {
      line += row[c];
      if (c + 1 < kColumns) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
}

void PrintWaitLine(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job) {
  char head[64];
  std::snprintf(head, sizeof head, "%8s  %-22s", sdk::FormatElapsed(elapsed).c_str(),
                std::string(JobStateName(job.state())).c_str());
  std::string detail;
  if (job.job.trainyard && job.job.trainyard->queue_position) {
    detail = "queue position " + std::to_string(*job.job.trainyard->queue_position);
  }
  if (std::string starting = Starting(job.job); !starting.empty()) {
    detail += (detail.empty() ? "" : " · ") + starting;
  } else if (std::string reason = Reason(job.job); !reason.empty()) {
    detail += (detail.empty() ? "" : " · ") + reason;
  }
  std::string line = std::string(head) + detail;
  line.erase(line.find_last_not_of(' ') + 1);
  out << line << std::endl;  // flushed: someone is watching
}

void PrintJobOutcome(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job) {
  out << job.name() << " " << JobStateName(job.state()) << " after " << sdk::FormatElapsed(elapsed);
  if (job.job.error && !job.job.error->message.empty()) out << ": " << job.job.error->message;
  out << "\n";
}

void PrintOperation(std::ostream& out, const sdk::Operation& op) {
  Line(out, "name:", op.name);
  Line(out, "done:", op.done ? "true" : "false");
  if (op.metadata.is_object()) Line(out, "metadata:", op.metadata.value("@type", ""));
  if (op.error) {
    Line(out, "error:", "code " + std::to_string(op.error->code) + ": " + op.error->message);
  } else if (op.response && op.response->is_object()) {
    Line(out, "response:", op.response->value("@type", ""));
  }
}

void PrintLogEntry(std::ostream& out, const LogEntry& entry) {
  out << FormatTimestamp(entry.time) << ' ' << SeverityName(entry.severity) << ' '
      << entry.task_name << ' ';
  for (char c : entry.message) {
    out << c;
    if (c == '\n') out << "    ";
  }
  out << "\n";
}

}  // namespace trainyard::cmd
