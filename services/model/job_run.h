#pragma once
// A job's current run as its row stores it: which attempt this is and, per replica, its last known
// phase, exit code, restarts and the runtime's handle. Written with the job's transitions
// (JobTransition::run), so it is as durable as the job's state.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard {

enum class ReplicaPhase {
  kPending,  // launched, not started yet (pulling the image, waiting for a host)
  kRunning,
  kExited,  // with an exit code
  kLost,    // its host is gone: no exit code will ever come
};

std::string_view ReplicaPhaseName(ReplicaPhase phase);  // "PENDING", "RUNNING", …
std::optional<ReplicaPhase> ParseReplicaPhase(std::string_view name);

struct ReplicaRun {
  std::string task_name;  // workerpoolN-i
  ReplicaPhase phase = ReplicaPhase::kPending;
  std::optional<int> exit_code;
  int restarts = 0;    // in-place restarts in this attempt
  std::string handle;  // the runtime's own reference (simulator: planned end; local: process)
};

struct JobRun {
  int attempt = 0;  // whole-job retries so far: 0 is the first run
  std::vector<ReplicaRun> replicas;
};

}  // namespace trainyard
