#pragma once
// The one statement that applies a job transition (services/jobs/job_state_machine.h), shared by every
// store that moves jobs: a compare-and-set on (id, version, from-state), optionally fenced by the
// executor's lease, that writes every effect the transition carries and records the event with its
// true from-state, all in one statement. States travel as parameters, never as SQL literals.
#include <optional>

#include "services/jobs/job_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

// The statement for `update`; it affects one row when it applied and none when the job moved on.
pg::Statement TransitionStatement(const StateUpdate& update);
// The same for many updates of different jobs in one statement: it returns a row with the id of
// each job it applied to.
pg::Statement TransitionsStatement(const std::vector<StateUpdate>& updates);

// What an applied transition does to the job's nodes, if anything: BUSY with the image cached once
// it runs; given back once it ends or goes back to the queue.
std::optional<pg::Statement> TransitionNodeStatement(const StateUpdate& update);
// The same for the applied transitions of a pass: at most two statements (those now running,
// those that gave their nodes back).
std::vector<pg::Statement> TransitionNodeStatements(const std::vector<const StateUpdate*>& applied);

// The placement as stored in custom_jobs.placement, and back (storage/pg_job_store.cpp).
std::string EncodePlacement(const JobAdmission& admission);
void DecodePlacement(std::string_view text, SchedulingStatus& status);

// A run's replicas as stored in custom_jobs.run_replicas, and back.
std::string EncodeJobRunReplicas(const JobRun& run);
JobRun DecodeJobRun(std::string_view replicas_json, int attempt);

}  // namespace trainyard::storage
