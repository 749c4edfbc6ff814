#pragma once
// What the Slurm runtime needs of a Slurm cluster: submit a batch job, read jobs, cancel one. The
// REST client (slurmrestd, slurm_rest_client.h) implements it; tests use a fake. Errors are ours:
// UNAVAILABLE when the cluster cannot be reached or will not answer (slurmrestd down, a token
// rejected), which the executor retries; INVALID_ARGUMENT when Slurm refuses the job itself.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/status.h"

namespace trainyard::slurm {

// Part of a job on one partition. A job of several is a heterogeneous job (one allocation per
// component, started together): replicas whose pools lie on different partitions.
struct SlurmComponent {
  std::string partition;  // empty: the cluster's default
  int tasks = 1;
  int nodes = 1;
};

struct SlurmSubmit {
  std::string name;
  std::string comment;
  std::vector<SlurmComponent> components = {SlurmComponent{}};  // one at least
  std::string current_working_directory;
  std::map<std::string, std::string> environment;  // Slurm requires at least PATH
  std::string standard_output;
  std::optional<int> time_limit_minutes;
  std::string script;
};

struct SlurmJob {
  int64_t job_id = 0;
  std::string name;
  std::string comment;
  std::string state;    // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT …
  std::string reason;   // state_reason: Priority, Resources, JobHeldUser, NonZeroExitCode …
  int exit_status = 0;  // the raw wait status of the batch script
  std::string nodes;
  // A heterogeneous job's components are listed as jobs of their own; the first (offset 0, whose
  // id is the heterogeneous job's) runs the batch script and stands for the whole.
  int64_t het_job_id = 0;  // 0: not heterogeneous
  int het_job_offset = 0;
  std::string user_name;  // whose job it is
};

struct SlurmNode {
  std::string name;
  std::string state;                     // idle, allocated, mixed, down, …
  std::vector<std::string> state_flags;  // DRAIN, NOT_RESPONDING, …
  std::vector<std::string> partitions;
};

// Whether jobs can run on the node now: up (idle, mixed, allocated, completing) and neither
// drained nor unreachable.
bool SlurmNodeUsable(const SlurmNode& node);

// Whether Slurm is done with the job (it will not run again: our jobs never requeue).
bool SlurmJobEnded(const std::string& state);

class SlurmApi {
 public:
  virtual ~SlurmApi() = default;
  // Gives up (UNAVAILABLE) after `timeout`, or sooner where the client's own timeout is shorter: a
  // submit that ran out may still have reached Slurm, which a later launch finds by its name.
  virtual StatusOr<int64_t> Submit(const SlurmSubmit& job, std::chrono::milliseconds timeout) = 0;
  // Every job slurmctld still knows (finished ones for MinJobAge, 5 minutes by default).
  virtual StatusOr<std::vector<SlurmJob>> Jobs() = 0;
  // Idempotent: a job Slurm no longer knows is already gone.
  virtual Status Cancel(int64_t job_id) = 0;
  // Sends `signal` ("SIGTERM") to the batch shell and every step of the job, which keeps running:
  // `scancel --signal=TERM --full <job_id>`. A job Slurm no longer knows has nothing to warn.
  virtual Status Signal(int64_t job_id, const std::string& signal) = 0;
  virtual StatusOr<std::vector<SlurmNode>> Nodes() = 0;
};

}  // namespace trainyard::slurm
