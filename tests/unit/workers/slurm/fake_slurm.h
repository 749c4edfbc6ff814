#pragma once
// A Slurm cluster in memory, for the Slurm runtime's tests and the runtime contract.
#include <string>
#include <utility>
#include <vector>

#include "workers/slurm/slurm_api.h"

namespace trainyard::slurm {

// A Slurm cluster in memory: what was submitted, what was cancelled; jobs' states are set by
// the test; `down` makes every call fail as an unreachable slurmrestd does.
struct FakeSlurm : SlurmApi {
  std::vector<SlurmSubmit> submitted;
  std::vector<SlurmJob> jobs;
  std::vector<int64_t> cancelled;
  std::vector<std::chrono::milliseconds> timeouts;  // each submit's
  bool down = false;
  bool submit_fails = false;  // the job list answers, a submit does not (a timeout, say)
  int64_t next_id = 100;

  StatusOr<int64_t> Submit(const SlurmSubmit& job, std::chrono::milliseconds timeout) override {
    if (down || submit_fails) return Unavailable("slurmrestd at http://x cannot be reached");
    submitted.push_back(job);
    timeouts.push_back(timeout);
    // A heterogeneous job's components are listed as jobs of their own, under its name; the
    // first one's id is the job's.
    const int64_t id = next_id;
    for (size_t c = 0; c < job.components.size(); ++c) {
      SlurmJob j;
      j.job_id = next_id++;
      j.name = job.name;
      j.comment = job.comment;
      j.user_name = "alice";  // the user the runtime submits as
      j.state = "PENDING";
      j.reason = "Priority";
      if (job.components.size() > 1) {
        j.het_job_id = id;
        j.het_job_offset = static_cast<int>(c);
      }
      jobs.push_back(j);
    }
    return id;
  }
  StatusOr<std::vector<SlurmJob>> Jobs() override {
    if (down) return Unavailable("slurmrestd at http://x cannot be reached");
    return jobs;
  }
  Status Cancel(int64_t id) override {
    if (down) return Unavailable("slurmrestd at http://x cannot be reached");
    cancelled.push_back(id);
    for (SlurmJob& j : jobs) {
      if (j.job_id == id) j.state = "CANCELLED";
    }
    return Status::Ok();
  }
  // What `scancel --signal --full` was asked: (job id, signal); the job keeps running.
  std::vector<std::pair<int64_t, std::string>> signalled;
  Status Signal(int64_t id, const std::string& signal) override {
    if (down) return Unavailable("slurmrestd at http://x cannot be reached");
    signalled.push_back({id, signal});
    return Status::Ok();
  }
  StatusOr<std::vector<SlurmNode>> Nodes() override { return std::vector<SlurmNode>{}; }
  void Set(int64_t id, const std::string& state) {
    for (SlurmJob& j : jobs) {
      if (j.job_id == id) j.state = state;
    }
  }
};

}  // namespace trainyard::slurm
