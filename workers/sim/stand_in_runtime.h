#pragma once
// The foundation's stand-in for the simulator: every job is admitted at once onto unlimited
// capacity, spends a fixed time PENDING (provisioning) and a fixed time RUNNING. The fleet and
// scheduler issue replaces admission and timings; the knobs below stay.
//
// Knobs, read from the env of workerPoolSpecs[0] (containerSpec or pythonPackageSpec):
//   TRAINYARD_SIM_DURATION   how long the job RUNs, as a duration string ("3600s", "0.5s")
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

// What the runtime does next with `job` at virtual time `now`; nullopt when nothing is left.
// The image the job's nodes pull (and then cache): the first worker pool's.
std::optional<std::string> PrimaryImage(const CustomJob& job);

std::optional<RuntimeStep> NextStep(const CustomJob& job, Timestamp now,
                                    const StandInTimings& timings);

}  // namespace trainyard::sim
