#include "workers/slurm/slurm_wire.h"

#include <nlohmann/json.hpp>

namespace trainyard::slurm {
namespace {

using nlohmann::json;

// Slurm's error numbers that matter here (slurm_errno.h).
constexpr int kInvalidJobId = 2017;

struct SlurmError {
  int number = 0;
  std::string text;
};

// v0.0.38 says error_number in most answers and error_code in submit's.
std::vector<SlurmError> ErrorsOf(const json& body) {
  std::vector<SlurmError> out;
  if (!body.is_object() || !body.contains("errors") || !body["errors"].is_array()) return out;
  for (const json& e : body["errors"]) {
    if (!e.is_object()) continue;
    SlurmError err;
    for (const char* key : {"error_number", "error_code"}) {
      if (e.contains(key) && e[key].is_number_integer()) err.number = e[key].get<int>();
    }
    for (const char* key : {"description", "error"}) {
      if (e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty()) {
        if (!err.text.empty()) err.text += ": ";
        err.text += e[key].get<std::string>();
      }
    }
    out.push_back(std::move(err));
  }
  return out;
}

std::string Describe(const std::vector<SlurmError>& errors) {
  std::string text;
  for (const SlurmError& e : errors) {
    if (!text.empty()) text += "; ";
    text += e.text + " (Slurm error " + std::to_string(e.number) + ")";
  }
  return text;
}

// What an answer that is not a success means for us. 401: no or bad credentials headers. A
// rejected or expired token is a 500 with error -1 and no reason (only slurmctld's log says
// which): both are the cluster not serving us now, not the job's fault, so UNAVAILABLE (retried).
Status FailureOf(int http_status, std::string_view body, const std::string& what) {
  json parsed = json::parse(body, nullptr, false);
  std::vector<SlurmError> errors = ErrorsOf(parsed);
  const std::string detail = errors.empty() ? std::string(body.substr(0, 200)) : Describe(errors);
  if (http_status == 401 || http_status == 403) {
    return Unavailable("slurmrestd refused the credentials for " + what + " (HTTP " +
                       std::to_string(http_status) + "): check the token");
  }
  if (http_status >= 400 && http_status < 500) {
    return Internal("slurmrestd could not read our " + what + " request (HTTP " +
                    std::to_string(http_status) + "): " + detail);
  }
  for (const SlurmError& e : errors) {
    if (e.number == -1) {
      return Unavailable("slurmrestd failed " + what +
                         " without a reason (an expired or "
                         "rejected token looks like this): " +
                         detail);
    }
  }
  return Unavailable("slurmrestd failed " + what + " (HTTP " + std::to_string(http_status) +
                     "): " + detail);
}

int64_t IntOr(const json& o, const char* key, int64_t fallback) {
  return o.contains(key) && o[key].is_number_integer() ? o[key].get<int64_t>() : fallback;
}

std::string StringOr(const json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

}  // namespace

std::string EncodeSubmit(const SlurmSubmit& job) {
  auto component = [&](const SlurmComponent& c) {
    json j = {{"name", job.name},
              {"comment", job.comment},
              {"current_working_directory", job.current_working_directory},
              {"environment", job.environment},
              {"standard_output", job.standard_output},
              {"tasks", c.tasks},
              {"nodes", c.nodes},
              // Trainyard's failure rules decide retries; a job Slurm requeued by itself would
              // run an attempt nobody asked for.
              {"requeue", false}};
    if (!c.partition.empty()) j["partition"] = c.partition;
    if (job.time_limit_minutes) j["time_limit"] = *job.time_limit_minutes;
    if (job.environment.empty()) j["environment"] = json::object();
    return j;
  };
  if (job.components.size() == 1) {
    return json{{"job", component(job.components[0])}, {"script", job.script}}.dump();
  }
  json components = json::array();
  for (const SlurmComponent& c : job.components) components.push_back(component(c));
  return json{{"jobs", std::move(components)}, {"script", job.script}}.dump();
}

StatusOr<int64_t> DecodeSubmitReply(int http_status, std::string_view body) {
  json parsed = json::parse(body, nullptr, false);
  if (http_status == 200 && parsed.is_object() && parsed.contains("job_id") &&
      parsed["job_id"].is_number_integer()) {
    return parsed["job_id"].get<int64_t>();
  }
  std::vector<SlurmError> errors = ErrorsOf(parsed);
  // Slurm refused the job itself (a partition it does not have, a script it cannot take): that
  // will not change by asking again.
  for (const SlurmError& e : errors) {
    if (e.number >= 2000 && e.number < 3000) {
      return InvalidArgument("Slurm refused the job: " + Describe(errors));
    }
  }
  return FailureOf(http_status, body, "the submit");
}

StatusOr<std::vector<SlurmJob>> DecodeJobs(int http_status, std::string_view body) {
  json parsed = json::parse(body, nullptr, false);
  if (http_status != 200 || !parsed.is_object() || !parsed.contains("jobs") ||
      !parsed["jobs"].is_array()) {
    return FailureOf(http_status, body, "the job listing");
  }
  std::vector<SlurmJob> jobs;
  for (const json& j : parsed["jobs"]) {
    if (!j.is_object()) continue;
    SlurmJob job;
    job.job_id = IntOr(j, "job_id", 0);
    if (job.job_id <= 0) continue;
    job.name = StringOr(j, "name");
    job.comment = StringOr(j, "comment");
    job.state = StringOr(j, "job_state");
    job.reason = StringOr(j, "state_reason");
    job.exit_status = static_cast<int>(IntOr(j, "exit_code", 0));
    job.nodes = StringOr(j, "nodes");
    job.het_job_id = IntOr(j, "het_job_id", 0);
    job.het_job_offset = static_cast<int>(IntOr(j, "het_job_offset", 0));
    job.user_name = StringOr(j, "user_name");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

StatusOr<std::vector<SlurmNode>> DecodeNodes(int http_status, std::string_view body) {
  json parsed = json::parse(body, nullptr, false);
  if (http_status != 200 || !parsed.is_object() || !parsed.contains("nodes") ||
      !parsed["nodes"].is_array()) {
    return FailureOf(http_status, body, "the node listing");
  }
  auto strings = [](const json& o, const char* key) {
    std::vector<std::string> out;
    if (!o.contains(key) || !o[key].is_array()) return out;
    for (const json& v : o[key]) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
    return out;
  };
  std::vector<SlurmNode> nodes;
  for (const json& n : parsed["nodes"]) {
    if (!n.is_object()) continue;
    SlurmNode node;
    node.name = StringOr(n, "name");
    node.state = StringOr(n, "state");
    node.state_flags = strings(n, "state_flags");
    node.partitions = strings(n, "partitions");
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Status DecodeCancelReply(int http_status, std::string_view body) {
  if (http_status == 200) return Status::Ok();
  json parsed = json::parse(body, nullptr, false);
  for (const SlurmError& e : ErrorsOf(parsed)) {
    if (e.number == kInvalidJobId) return Status::Ok();  // gone already
  }
  return FailureOf(http_status, body, "the cancel");
}

}  // namespace trainyard::slurm
