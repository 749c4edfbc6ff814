// Client::ListJobLogs and Client::StreamJobLogs: reading a job's log, and following it.
#include <set>
#include <utility>

#include <cpprest/base_uri.h>

#include "api/wire/log_entry_codec.h"
#include "sdk/client.h"
#include "services/logs/log_entry.h"
#include "services/model/custom_job.h"

namespace trainyard::sdk {

StatusOr<JobLogPage> Client::ListJobLogs(const std::string& name,
                                         const ListJobLogsOptions& options) {
  std::string query;
  auto add = [&query](const std::string& key, const std::string& value) {
    query += (query.empty() ? "?" : "&") + key + "=" + web::uri::encode_data_string(value);
  };
  if (!options.task.empty()) add("task", options.task);
  if (!options.after.empty()) add("after", options.after);
  if (options.page_size > 0) add("pageSize", std::to_string(options.page_size));
  if (!options.page_token.empty()) add("pageToken", options.page_token);
  TY_ASSIGN_OR_RETURN(
      auto reply,
      Call({"GET", "/trainyard/v1/" + ResourceName(name, "customJobs") + "/logs" + query,
            std::nullopt, /*idempotent=*/true}));
  JobLogPage page;
  if (auto entries = reply.find("entries"); entries != reply.end() && entries->is_array()) {
    for (auto& raw : *entries) {
      auto entry = DecodeLogEntry(raw);
      if (!entry.ok()) {
        return Internal("the server's log entry did not decode: " + entry.status().message());
      }
      page.entries.push_back(std::move(*entry));
      page.raw.push_back(std::move(raw));
    }
  }
  if (auto token = reply.find("nextPageToken"); token != reply.end() && token->is_string()) {
    page.next_page_token = token->get<std::string>();
  }
  return page;
}

Status Client::StreamJobLogs(const std::string& name, const StreamJobLogsOptions& options,
                             const LogEntryFn& on_entry) {
  const std::string full_name = ResourceName(name, "customJobs");
  // Printed insertIds within the overlap window; older ones can no longer come back.
  std::set<InsertId> printed;
  std::optional<InsertId> newest;
  Backoff backoff(options.poll, options_.timing.uniform01);
  for (;;) {
    // Whether the job had ended is read before the log, so a poll that finds nothing after it has
    // seen every line the job wrote.
    bool ended = false;
    if (options.follow) {
      TY_ASSIGN_OR_RETURN(Job job, GetJob(full_name));
      ended = IsTerminal(job.state());
    }
    ListJobLogsOptions list;
    list.task = options.task;
    list.page_size = kMaxLogPageSize;
    if (newest)
      list.after = FormatInsertId({newest->time - options.overlap, 0, LogSource::kServiceEvent});
    int fresh = 0;
    for (;;) {
      TY_ASSIGN_OR_RETURN(JobLogPage page, ListJobLogs(full_name, list));
      for (size_t i = 0; i < page.entries.size(); ++i) {
        const LogEntry& e = page.entries[i];
        if (!printed.insert(e.insert_id).second) continue;
        ++fresh;
        if (!newest || e.insert_id > *newest) newest = e.insert_id;
        on_entry(e, page.raw[i]);
      }
      if (page.next_page_token.empty()) break;
      list.page_token = page.next_page_token;
    }
    if (newest) {
      const InsertId horizon{newest->time - options.overlap, 0, LogSource::kServiceEvent};
      printed.erase(printed.begin(), printed.lower_bound(horizon));
    }
    if (!options.follow || (ended && fresh == 0)) return Status::Ok();
    if (fresh > 0) backoff = Backoff(options.poll, options_.timing.uniform01);
    options_.timing.sleep(backoff.Next());
  }
}

}  // namespace trainyard::sdk
