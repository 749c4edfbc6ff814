#pragma once
// The Trainyard client: submit custom jobs, poll them, read operations, from C++.
//
//   auto client = sdk::Client::Create({.endpoint = "http://127.0.0.1:8080", .project = "demo"});
//   auto job = (*client)->CreateJob(body);
//   auto done = (*client)->WaitJob(job->name(), {.timeout = std::chrono::minutes(30)});
//
// Every call returns a Status on failure (never throws): the server's canonical code, message and
// field violations, UNAVAILABLE when it cannot be reached, DEADLINE_EXCEEDED when a wait runs out.
// GETs and polls are retried on 429/503/connection failures; creates, cancels and deletes are sent
// once (see http_transport.h). A Client is safe to use from several threads.
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sdk/http_transport.h"
#include "sdk/poll.h"
#include "sdk/resources.h"
#include "sdk/timing.h"
#include "services/logs/log_entry.h"
#include "services/status.h"

namespace trainyard::sdk {

struct ClientOptions {
  std::string endpoint = "http://127.0.0.1:8080";
  std::string project;  // id or number
  std::string location = "us-central1";
  std::string bearer_token;
  std::string ca_file;  // https: PEM CA certificates to trust besides the system's
  std::chrono::milliseconds request_timeout{30000};
  RetryPolicy retry;
  Timing timing = SystemTiming();
};

struct ListJobsOptions {
  std::string filter;  // AIP-160, e.g. "state=JOB_STATE_SUCCEEDED AND labels.team=nlp"
  int page_size = 0;   // 0: the server's default
};

struct ListJobLogsOptions {
  std::string task;        // "workerpool0-0", "service"; "" = every task
  std::string after;       // an insertId: entries after it (each insertId is a full position)
  int page_size = 0;       // 0: the server's default (100); at most 1000
  std::string page_token;  // nextPageToken of the previous page (same task and after)
};

// One page of a job's log, oldest first.
struct JobLogPage {
  std::vector<LogEntry> entries;
  std::vector<nlohmann::json> raw;  // the entries as the server sent them
  std::string next_page_token;      // "" on the last page
};

struct StreamJobLogsOptions {
  std::string task;
  // Keep polling until the job has ended and a poll after that brings nothing new.
  bool follow = false;
  BackoffPolicy poll{std::chrono::milliseconds(1000), 1.5, std::chrono::milliseconds(10000), 0.2};
  // Each poll re-reads this much virtual time before the newest entry printed (and skips what it
  // printed already), so an entry that commits a moment after a later one still shows.
  std::chrono::seconds overlap{60};
};

using WaitOptions = WaitOptionsFor<Job>;
using OperationWaitOptions = WaitOptionsFor<Operation>;

class JobList;

class Client {
 public:
  // INVALID_ARGUMENT for an endpoint that is not an http(s) URL or an empty project.
  static StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);

  const ClientOptions& options() const { return options_; }

  // `body` is a CustomJob as JSON, sent as given (the server validates it).
  StatusOr<Job> CreateJob(const nlohmann::json& body);
  StatusOr<Job> CreateJob(const CustomJob& job);
  // `name` is a full job name or just the job id (then under this client's project/location).
  StatusOr<Job> GetJob(const std::string& name);
  // Lazily follows page tokens; the list must not outlive the client.
  JobList ListJobs(ListJobsOptions options = {});
  Status CancelJob(const std::string& name);
  StatusOr<Operation> DeleteJob(const std::string& name);
  // Polls until the job is terminal (SUCCEEDED, FAILED, CANCELLED, …) and returns it, whatever
  // its state; DEADLINE_EXCEEDED when options.timeout passes first.
  StatusOr<Job> WaitJob(const std::string& name, const WaitOptions& options = {});

  // One page of a job's log (GET /trainyard/v1/…/customJobs/{id}/logs).
  StatusOr<JobLogPage> ListJobLogs(const std::string& name, const ListJobLogsOptions& options = {});
  // Every entry of the job's log, in order, to `on_entry` (raw: as the server sent it); with
  // options.follow, then new ones as they come, polling with backoff (reset by new entries), until
  // the job is terminal and a later poll finds nothing new.
  using LogEntryFn = std::function<void(const LogEntry& entry, const nlohmann::json& raw)>;
  Status StreamJobLogs(const std::string& name, const StreamJobLogsOptions& options,
                       const LogEntryFn& on_entry);

  // `name` is a full operation name or an id under this client's project/location.
  StatusOr<Operation> GetOperation(const std::string& name);
  // Polls until done; the result is the operation (see OperationResult for its outcome).
  StatusOr<Operation> WaitOperation(const std::string& name,
                                    const OperationWaitOptions& options = {});

  // Persistent resources. `name` is a full resource name or an id under this client's
  // project/location; every change returns its Operation (WaitOperation waits for the work).
  StatusOr<Operation> CreateResource(const std::string& id, const nlohmann::json& body);
  StatusOr<PersistentResource> GetResource(const std::string& name);
  // Every page.
  StatusOr<std::vector<PersistentResource>> ListResources();
  // `update_mask`: "displayName,labels", "resourcePools.replicaCount" …
  StatusOr<Operation> UpdateResource(const std::string& name, const nlohmann::json& body,
                                     const std::string& update_mask);
  StatusOr<Operation> RebootResource(const std::string& name);
  StatusOr<Operation> DeleteResource(const std::string& name);

  // Every page of this project/location's operations; `filter`: "", "done=true", "done=false".
  StatusOr<std::vector<Operation>> ListOperations(const std::string& filter = "");
  Status CancelOperation(const std::string& name);
  Status DeleteOperation(const std::string& name);

  // The full resource name for a name or bare id in `collection` ("customJobs", "operations").
  std::string ResourceName(const std::string& name_or_id, const std::string& collection) const;

 private:
  friend class JobList;
  Client(ClientOptions options, std::unique_ptr<HttpTransport> transport);
  StatusOr<nlohmann::json> Call(HttpCall call);
  // GETs `path` page by page, passing each page's `key` array to `on_item`.
  Status ListAll(const std::string& path, const std::string& query, const std::string& key,
                 const std::function<Status(nlohmann::json)>& on_item);

  ClientOptions options_;
  std::unique_ptr<HttpTransport> transport_;
};

// for (;;) { auto next = list.Next(); if (!next.ok()) …; if (!*next) break; use(**next); }
class JobList {
 public:
  // The next job; std::nullopt after the last one; or the error that stopped the listing.
  StatusOr<std::optional<Job>> Next();
  int pages_fetched() const { return pages_fetched_; }

 private:
  friend class Client;
  JobList(Client* client, ListJobsOptions options) : client_(client), options_(options) {}
  Status FetchPage();

  Client* client_;
  ListJobsOptions options_;
  std::deque<Job> buffer_;
  std::string page_token_;
  bool last_page_ = false;
  int pages_fetched_ = 0;
};

}  // namespace trainyard::sdk
