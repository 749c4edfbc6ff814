#pragma once
// A fresh database with a fleet on it: the API's job service, the scheduler loop and the executor,
// all under one manual clock. Tests of the scheduler's stories and of the views over them derive
// from it and call StartFleet from SetUp.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "services/job_service.h"
#include "services/logs/job_log_repository.h"
#include "services/operations/operation_service.h"
#include "services/persistent_resources/resource_service.h"
#include "storage/pg.h"
#include "storage/pg_failure_store.h"
#include "storage/pg_job_store.h"
#include "storage/pg_operation_store.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_resource_fleet_store.h"
#include "storage/pg_resource_store.h"
#include "storage/pg_scheduler_store.h"
#include "workers/failure_simulator.h"
#include "workers/job_executor.h"
#include "workers/resource_reconciler.h"
#include "workers/scheduler_loop.h"
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
  int64_t NodesInState(int state);
  // What `logs` holds of the job's replica `task`, in order.
  std::vector<std::string> StoredLines(JobLogRepository& logs, const CustomJob& job,
                                       const std::string& task = "workerpool0-0");

  // TRAINYARD_CHECKPOINT_INTERVAL of the jobs created from now on; empty: the default.
  std::string checkpoint_interval_;
  // More env of the primary pool of the jobs created from now on.
  std::vector<EnvVar> primary_env_;

  std::string conninfo_;
  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<storage::PgProjectRepository> projects_;
  std::unique_ptr<storage::PgJobStore> store_;
  std::unique_ptr<storage::PgOperationStore> operations_;
  std::unique_ptr<storage::PgResourceStore> resource_store_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<OperationService> operation_service_;
  std::unique_ptr<ResourceService> resource_service_;
  Fleet fleet_;
  std::unique_ptr<storage::PgSchedulerStore> scheduler_store_;
  std::unique_ptr<SchedulerLoop> scheduler_;
  std::unique_ptr<storage::PgFailureStore> failure_store_;
  std::unique_ptr<FailureSimulator> failures_;
  std::unique_ptr<storage::PgResourceFleetStore> resource_fleet_;
  std::unique_ptr<ResourceReconciler> reconciler_;
  sim::SimRuntime runtime_;
  std::unique_ptr<JobExecutor> executor_;
};

}  // namespace trainyard::testing
