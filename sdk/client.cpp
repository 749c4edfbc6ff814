#include "sdk/client.h"

#include <utility>

#include "api/wire/custom_job_codec.h"
#include "api/wire/enums.h"
#include "sdk/reply.h"

namespace trainyard::sdk {
namespace {

// What a wait line is about: the state, and why the job waits or where it is queued.
std::string JobChangeKey(const Job& job) {
  std::string key(JobStateName(job.state()));
  if (job.job.trainyard) {
    key += "|" + job.job.trainyard->reason_code;
    if (job.job.trainyard->queue_position) {
      key += "|" + std::to_string(*job.job.trainyard->queue_position);
    }
  }
  return key;
}

}  // namespace

StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  if (options.project.empty()) return InvalidArgument("project is required");
  if (options.location.empty()) return InvalidArgument("location is required");
  if (!options.timing.now || !options.timing.sleep || !options.timing.uniform01) {
    return InvalidArgument("timing needs now, sleep and uniform01");
  }
  TransportOptions transport_options{options.endpoint,        options.bearer_token, options.ca_file,
                                     options.request_timeout, options.retry,        options.timing};
  TY_ASSIGN_OR_RETURN(auto transport, HttpTransport::Create(std::move(transport_options)));
  return std::unique_ptr<Client>(new Client(std::move(options), std::move(transport)));
}

Client::Client(ClientOptions options, std::unique_ptr<HttpTransport> transport)
    : options_(std::move(options)), transport_(std::move(transport)) {}

StatusOr<nlohmann::json> Client::Call(HttpCall call) { return transport_->Call(call); }

std::string Client::ResourceName(const std::string& name_or_id,
                                 const std::string& collection) const {
  if (name_or_id.rfind("projects/", 0) == 0) return name_or_id;
  return "projects/" + options_.project + "/locations/" + options_.location + "/" + collection +
         "/" + name_or_id;
}

StatusOr<Job> Client::CreateJob(const nlohmann::json& body) {
  const std::string parent = "projects/" + options_.project + "/locations/" + options_.location;
  TY_ASSIGN_OR_RETURN(auto reply,
                      Call({"POST", "/v1/" + parent + "/customJobs", body, /*idempotent=*/false}));
  return Decoded(DecodeJob(std::move(reply)), "job");
}

StatusOr<Job> Client::CreateJob(const CustomJob& job) { return CreateJob(EncodeCustomJob(job)); }

StatusOr<Job> Client::GetJob(const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reply, Call({"GET", "/v1/" + ResourceName(name, "customJobs"),
                                        std::nullopt, /*idempotent=*/true}));
  return Decoded(DecodeJob(std::move(reply)), "job");
}

JobList Client::ListJobs(ListJobsOptions options) { return JobList(this, std::move(options)); }

Status Client::CancelJob(const std::string& name) {
  auto reply = Call({"POST", "/v1/" + ResourceName(name, "customJobs") + ":cancel",
                     nlohmann::json::object(), /*idempotent=*/false});
  return reply.ok() ? Status::Ok() : reply.status();
}

StatusOr<Operation> Client::DeleteJob(const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reply, Call({"DELETE", "/v1/" + ResourceName(name, "customJobs"),
                                        std::nullopt, /*idempotent=*/false}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<Job> Client::WaitJob(const std::string& name, const WaitOptions& options) {
  const std::string full_name = ResourceName(name, "customJobs");
  PollHooks<Job> hooks;
  hooks.fetch = [&] { return GetJob(full_name); };
  hooks.done = [](const Job& job) { return IsTerminal(job.state()); };
  hooks.change_key = JobChangeKey;
  hooks.describe = [](const Job& job) {
    return job.name() + " is still " + std::string(JobStateName(job.state()));
  };
  return PollUntilDone(options_.timing, options, hooks);
}

StatusOr<Operation> Client::GetOperation(const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reply, Call({"GET", "/v1/" + ResourceName(name, "operations"),
                                        std::nullopt, /*idempotent=*/true}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<Operation> Client::WaitOperation(const std::string& name,
                                          const OperationWaitOptions& options) {
  const std::string full_name = ResourceName(name, "operations");
  PollHooks<Operation> hooks;
  hooks.fetch = [&] { return GetOperation(full_name); };
  hooks.done = [](const Operation& op) { return op.done; };
  hooks.change_key = [](const Operation& op) { return op.done ? "done" : "running"; };
  hooks.describe = [](const Operation& op) { return op.name + " is not done"; };
  return PollUntilDone(options_.timing, options, hooks);
}

Status JobList::FetchPage() {
  std::string path = "/v1/projects/" + client_->options_.project + "/locations/" +
                     client_->options_.location + "/customJobs";
  std::string query;
  auto add = [&query](const std::string& key, const std::string& value) {
    query += (query.empty() ? "?" : "&") + key + "=" + Encode(value);
  };
  if (!options_.filter.empty()) add("filter", options_.filter);
  if (options_.page_size > 0) add("pageSize", std::to_string(options_.page_size));
  if (!page_token_.empty()) add("pageToken", page_token_);
  TY_ASSIGN_OR_RETURN(auto reply,
                      client_->Call({"GET", path + query, std::nullopt, /*idempotent=*/true}));
  ++pages_fetched_;
  if (auto jobs = reply.find("customJobs"); jobs != reply.end() && jobs->is_array()) {
    for (auto& raw : *jobs) {
      TY_ASSIGN_OR_RETURN(Job job, Decoded(DecodeJob(std::move(raw)), "job"));
      buffer_.push_back(std::move(job));
    }
  }
  auto token = reply.find("nextPageToken");
  page_token_ = token != reply.end() && token->is_string() ? token->get<std::string>() : "";
  last_page_ = page_token_.empty();
  return Status::Ok();
}

StatusOr<std::optional<Job>> JobList::Next() {
  // An empty page with a token is legal (AIP-158): keep going until a job or the last page.
  while (buffer_.empty() && !last_page_) TY_RETURN_IF_ERROR(FetchPage());
  if (buffer_.empty()) return std::optional<Job>();
  Job job = std::move(buffer_.front());
  buffer_.pop_front();
  return std::optional<Job>(std::move(job));
}

}  // namespace trainyard::sdk
