#pragma once
// How a statement tells the poll caches (storage/job_change_listener.h) which jobs it changed in
// a way a reader sees: the ids of the CTE it names, 300 to a notification (a payload must stay
// under PostgreSQL's 8000 bytes), sent at commit. One call a few hundred rows, where a row
// trigger made one a row (a storm's verdicts were thousands of calls and notifications).

// The channel the listener LISTENs on.
#define TY_JOB_CHANGES_CHANNEL "trainyard_job_changes"

// A SELECT over CTE (a name with an `id` column) that notifies its ids; a statement references it
// (`WHERE (SELECT count(*) FROM n) >= 0`) so that PostgreSQL runs it.
#define TY_NOTIFY_JOBS_OF(CTE)                  \
  "SELECT pg_notify('" TY_JOB_CHANGES_CHANNEL   \
  "', string_agg(id::text, ',')) FROM (SELECT " \
  "id, (row_number() OVER () - 1) / 300 AS g FROM " CTE ") b GROUP BY g"
