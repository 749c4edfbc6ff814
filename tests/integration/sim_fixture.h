#pragma once
// A fresh database with a fleet on it and the control plane over it, built as `serve` builds it
// (cmd/app/control_plane.h) but under one manual clock and with no loop running: tests step the
// scheduler and the executor themselves. Tests of the scheduler's stories and of the views over
// them derive from it and call StartFleet from SetUp.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "cmd/app/control_plane.h"
#include "cmd/app/pg_adapters.h"
#include "services/jobs/job_service.h"
#include "services/logs/job_log_repository.h"
#include "storage/pg.h"
#include "workers/sim/sim_runtime.h"

namespace trainyard::testing {

class SimFixture : public ::testing::Test {
 protected:
  // Creates the database, loads `fleet_json` (a fleet file's text) and syncs its nodes. Fails the
  // test (check with ASSERT_NO_FATAL_FAILURE) when any of it does not come up.
  void StartFleet(const char* fleet_json);
  // An A3 Mega gang in us-central1: a chief plus `workers` nodes, RUNNING for `run` once started.
  CustomJob CreateGang(const std::string& project, SchedulingStrategy strategy, int64_t workers,
                       const std::string& run, std::map<std::string, std::string> labels = {});
  // A gang in project `project` with the `trainyard-priority` label when `priority` is set.
  CustomJob Create(int64_t workers, SchedulingStrategy strategy, const std::string& priority = "",
                   const std::string& run = "600s", const std::string& project = "demo");
  CustomJob Get(const CustomJob& job, const std::string& project = "demo");
  // One scheduling cycle (with the fleet's failures) and one executor pass at the current
  // virtual time.
  void Step();
  // Before a scheduler pass whose decisions a test asserts: every committed write is in its feed.
  void WaitForFeed();
  int64_t NodesInState(int state);
  // What `logs` holds of the job's replica `task`, in order.
  std::vector<std::string> StoredLines(JobLogRepository& logs, const CustomJob& job,
                                       const std::string& task = "workerpool0-0");

  // TRAINYARD_CHECKPOINT_INTERVAL of the jobs created from now on; empty: the default.
  std::string checkpoint_interval_;
  // More env of the primary pool of the jobs created from now on.
  std::vector<EnvVar> primary_env_;
  // How often the scheduler reports queue positions (StartFleet reads it); 0: every step.
  std::chrono::milliseconds positions_period_{0};

  // What the control plane runs jobs on (the simulator unless a test says otherwise), and where
  // a test may swap a port for its own before the plane is built over them.
  virtual Runtime& FleetRuntime() { return runtime_; }
  virtual void AdjustPorts(app::ControlPlanePorts&) {}
  // Tears the control plane and the database connections down (StartFleet builds them again).
  void StopFleet();

  std::string conninfo_;
  SeededIds ids_{7};  // job ids repeat from run to run (they break ties in the queue's order)
  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  std::unique_ptr<pg::Pool> pool_;
  Fleet fleet_;
  sim::SimRuntime runtime_;
  std::unique_ptr<app::PgAdapters> adapters_;
  std::unique_ptr<app::ControlPlane> plane_;
  // The plane's parts, by the names the tests use.
  storage::PgProjectRepository* projects_ = nullptr;
  storage::PgJobStore* store_ = nullptr;
  storage::PgOperationStore* operations_ = nullptr;
  storage::PgResourceStore* resource_store_ = nullptr;
  storage::PgSchedulerStore* scheduler_store_ = nullptr;
  JobService* service_ = nullptr;
  OperationService* operation_service_ = nullptr;
  ResourceService* resource_service_ = nullptr;
  SchedulerLoop* scheduler_ = nullptr;
  FailureSimulator* failures_ = nullptr;
  ResourceReconciler* reconciler_ = nullptr;
  JobExecutor* executor_ = nullptr;
};

}  // namespace trainyard::testing
