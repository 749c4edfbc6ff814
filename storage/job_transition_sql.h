#pragma once
// The one statement that applies a job transition (services/jobs/job_state_machine.h), shared by
// every store that moves jobs: a compare-and-set on (id, version, from-state), optionally fenced by
// the executor's lease, that writes every effect the transition carries and records the event with
// its true from-state, all in one statement. States travel as parameters, never as SQL literals.
#include <optional>

#include "services/jobs/job_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

// What a transition writes is computed from the row at the version it expects
// (services/jobs/job_record_update.h's WriteOf, the memory stores' rule too), so each update
// carries that row's basis: the caller's read when it made one at that version, else the rows as
// read here, in the same transaction, right before. The compare-and-set makes either exact: if
// the row moved on, the write is not applied. An update without the basis of its version loses.
bool LacksBasis(const StateUpdate& update);
// The read of the bases `updates` lack, one statement; none when none lacks one.
std::optional<pg::Statement> TransitionBasesStatement(const std::vector<StateUpdate*>& updates);
// Gives each update that lacks its basis the one `read` (that statement's result) holds.
void TakeTransitionBases(const pg::Result& read, const std::vector<StateUpdate*>& updates);
// Both, one round trip when any lacks one.
Status ReadTransitionBases(pg::Connection& conn, const std::vector<StateUpdate*>& updates);

// The statement for `update`; it affects one row when it applied and none when the job moved on.
pg::Statement TransitionStatement(const StateUpdate& update);
// The same for many updates of different jobs in one statement: it returns a row with the id of
// each job it applied to.
pg::Statement TransitionsStatement(const std::vector<StateUpdate>& updates);

// What the applied transitions of different jobs do to their nodes: BUSY with the image cached
// once a job runs; given back once it ends or goes back to the queue (both in one node write, for
// a run that started and ended in one transition). At most two statements: those now running,
// those that gave their nodes back.
std::vector<pg::Statement> TransitionNodeStatements(const std::vector<const StateUpdate*>& applied);

// The placement as stored in custom_jobs.placement, and back (storage/pg_job_store.cpp).
std::string EncodePlacement(const JobAdmission& admission);
void DecodePlacement(std::string_view text, SchedulingStatus& status);

// A run's replicas as stored in custom_jobs.run_replicas, and back.
std::string EncodeJobRunReplicas(const JobRun& run);
JobRun DecodeJobRun(std::string_view replicas_json, int attempt);

}  // namespace trainyard::storage
