#pragma once
// The simulator as a Runtime (services/runtime/runtime.h): replicas are not processes but planned
// end times, kept as each replica's handle in the job's row, so the simulation needs no memory of
// its own and any executor can take a job over. A replica runs from its launch (the scheduler has
// already waited for boot and image pull) for the job's run time: TRAINYARD_SIM_DURATION or the
// workload model (services/jobs/workload_model.h), or what a preempted or repaired job had left.
// Then it exits: the primary with TRAINYARD_SIM_EXIT_CODE (0 when unset), the others with 0.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "services/runtime/runtime.h"

namespace trainyard::sim {

struct SimTimings {
  Duration run = std::chrono::seconds(10);  // for jobs stored before the workload knobs existed
  // The training output a job prints (Applied). false: none, where no one reads it (a replay drops
  // every log line; writing them cost each of its jobs a dozen formatted lines).
  bool training_log = true;
};

// How long the job's work takes on its placement.
Duration SimRunTime(const CustomJob& job, const SimTimings& timings);

class SimRuntime : public Runtime {
 public:
  explicit SimRuntime(SimTimings timings = {}) : timings_(timings) {}

  std::string_view name() const override { return "sim"; }
  StatusOr<JobRun> Launch(const JobRecord& job, int attempt, Timestamp now,
                          LeaseDeadline lease_deadline) override;
  StatusOr<Observation> Observe(const JobRecord& job, Timestamp now) override;
  StatusOr<std::string> RestartReplica(const JobRecord& job, const ReplicaRun& replica,
                                       Timestamp now, LeaseDeadline lease_deadline) override;
  Status Stop(const JobRecord&) override { return Status::Ok(); }
  std::vector<ReplicaOwner> JobsWithReplicas() override { return {}; }
  Status StopOtherAttempts(int64_t, int) override { return Status::Ok(); }
  // Plausible training output for a simulated job: its start, then steps, loss, throughput and
  // checkpoints across its run, written when the run ends (times spread over the run).
  void Applied(const JobRecord& job, const JobTransition& transition) override;
  std::vector<LogLine> CollectLogs(Timestamp now) override;
  void LogsStored() override;
  // Nothing runs on this host: simulated replicas end with the process.
  void Shutdown(const std::vector<int64_t>&) override {}

 private:
  SimTimings timings_;
  std::mutex mu_;
  std::vector<LogLine> pending_;
  size_t collected_ = 0;  // how many of pending_ the last CollectLogs handed over
};

}  // namespace trainyard::sim
