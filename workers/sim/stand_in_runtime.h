#pragma once
// The simulated runtime after admission: PENDING until the admitted job's nodes are booted and
// the image pulled (the scheduler sets when), then RUNNING for the job's run time. The scheduler
// owns QUEUED → PENDING; this owns the rest.
//
// Knobs, read from the env of workerPoolSpecs[0] (containerSpec or pythonPackageSpec):
//   TRAINYARD_SIM_DURATION   how long the job RUNs, as a duration string ("3600s", "0.5s"); or
//                            steps, step time and a compute model (services/workload_model.h)
//   TRAINYARD_SIM_EXIT_CODE  exit code of the primary replica; non-zero → JOB_STATE_FAILED
#include <optional>
#include <string>

#include "services/model/custom_job.h"

namespace trainyard::sim {

struct StandInTimings {
  Duration provision = std::chrono::seconds(3);
  Duration run = std::chrono::seconds(10);
};

struct RuntimeStep {
  JobState to = JobState::kUnspecified;
  std::string reason;
  std::optional<Timestamp> next_action_at;  // nullopt once terminal
  std::optional<RpcStatus> error;
};

// The image the job's nodes pull (and then cache): the first worker pool's.
std::optional<std::string> PrimaryImage(const CustomJob& job);

// What the runtime does next with `job` at virtual time `now`; nullopt when nothing is left.
std::optional<RuntimeStep> NextStep(const CustomJob& job, Timestamp now,
                                    const StandInTimings& timings);

}  // namespace trainyard::sim
