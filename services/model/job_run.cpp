#include "services/model/job_run.h"

namespace trainyard {

std::string_view ReplicaPhaseName(ReplicaPhase phase) {
  switch (phase) {
    case ReplicaPhase::kPending:
      return "PENDING";
    case ReplicaPhase::kRunning:
      return "RUNNING";
    case ReplicaPhase::kExited:
      return "EXITED";
    case ReplicaPhase::kLost:
      return "LOST";
  }
  return "PENDING";
}

std::optional<ReplicaPhase> ParseReplicaPhase(std::string_view name) {
  for (ReplicaPhase p : {ReplicaPhase::kPending, ReplicaPhase::kRunning, ReplicaPhase::kExited,
                         ReplicaPhase::kLost}) {
    if (ReplicaPhaseName(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace trainyard
