#pragma once
// The custom_jobs columns every job query reads, and their decoding into a JobRecord; shared by
// the API's store and the scheduler's.
#include <vector>

#include "services/jobs/job_repository.h"
#include "storage/pg.h"
#include "storage/row_codec.h"

namespace trainyard::storage {

// Columns read by DecodeJobRow, in this order; SPEC is the spec's column (job_spec::text, or an
// expression that leaves it NULL where a reader has no use for it: DecodeJobRow then leaves the
// record's spec empty).
#define TY_JOB_COLUMNS TY_JOB_COLUMNS_WITH_SPEC("job_spec::text")
#define TY_JOB_COLUMNS_WITH_SPEC(SPEC) \
  "id, project_number, location, display_name, state, " SPEC ", labels::text, "              \
  "encryption_spec::text, error_code, error_message, " TY_MICROS("create_time") ", "         \
  TY_MICROS("start_time") ", " TY_MICROS("end_time") ", " TY_MICROS("update_time") ", "      \
  TY_MICROS("next_action_at") ", version, "                                                \
  "(SELECT p.project_id FROM projects p WHERE p.number = custom_jobs.project_number), "       \
  "change_seq, placement::text, " TY_MICROS("admitted_at") ", hourly_price_micros, "         \
  "cost_micros, sched_code, sched_message, queue_position, checkpointed_us, spot_restarts, " \
  "change_xid::text, run_attempt, run_replicas::text, " TY_MICROS("state_since") ", "          \
  "waiting_us, starting_us, restarting_us, running_us, redone_us, checkpoint_interval_us, "    \
  "checkpoint_save_us, checkpoint_restore_us, checkpoint_saving_us, checkpoint_restoring_us, " \
  "program_starting_us"

StatusOr<JobRecord> DecodeJobRow(const pg::Result& r, int row);
StatusOr<std::vector<JobRecord>> DecodeJobRows(const pg::Result& r);

}  // namespace trainyard::storage
