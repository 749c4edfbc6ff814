#pragma once
// The custom_jobs columns every job query reads, and their decoding into a JobRecord; shared by
// the API's store and the scheduler's.
#include <vector>

#include "services/jobs/job_repository.h"
#include "storage/pg.h"
#include "storage/row_codec.h"

namespace trainyard::storage {

// Columns read by DecodeJobRow, in this order. A reader with no use for the spec, the labels, the
// placement or the run names an expression that leaves it NULL where it has none (the scheduler's
// feed past the queue): DecodeJobRow then leaves that part of the record empty.
#define TY_JOB_COLUMNS \
  TY_JOB_COLUMNS_OF("job_spec::text", "labels::text", "placement::text", "run_replicas::text")
#define TY_JOB_COLUMNS_OF(SPEC, LABELS, PLACEMENT, RUN) \
  "id, project_number, location, display_name, state, " SPEC ", " LABELS ", "                 \
  "encryption_spec::text, error_code, error_message, " TY_MICROS("create_time") ", "         \
  TY_MICROS("start_time") ", " TY_MICROS("end_time") ", " TY_MICROS("update_time") ", "      \
  TY_MICROS("next_action_at") ", version, "                                                \
  "(SELECT p.project_id FROM projects p WHERE p.number = custom_jobs.project_number), "       \
  "change_seq, " PLACEMENT ", " TY_MICROS("admitted_at") ", hourly_price_micros, "             \
  "cost_micros, sched_code, sched_message, queue_position, checkpointed_us, spot_restarts, " \
  "change_xid::text, run_attempt, " RUN ", " TY_MICROS("state_since") ", "                      \
  "waiting_us, starting_us, restarting_us, running_us, redone_us, checkpoint_interval_us, "    \
  "checkpoint_save_us, checkpoint_restore_us, checkpoint_saving_us, checkpoint_restoring_us, " \
  "program_starting_us"

StatusOr<JobRecord> DecodeJobRow(const pg::Result& r, int row);
StatusOr<std::vector<JobRecord>> DecodeJobRows(const pg::Result& r);

}  // namespace trainyard::storage
