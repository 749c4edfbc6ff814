-- Job logs: what the replicas (and the simulated training) print, read back through Cloud Logging's
-- entries:list and /trainyard/v1/…/logs. The service's own entries are not stored here: they are
-- the job's rows in job_events, merged in at read time.

-- One row per stored replica line. line_no is the line's position in its job's output (1, 2, …),
-- which is what retention cuts on; seq orders lines that share a timestamp and is part of insertId.
CREATE TABLE job_log_lines (
  job_id    bigint NOT NULL REFERENCES custom_jobs(id) ON DELETE CASCADE,
  line_no   bigint NOT NULL,
  seq       bigserial,
  time      timestamptz NOT NULL,  -- virtual time, like every other timestamp
  severity  smallint NOT NULL,     -- google.logging.type.LogSeverity number (0, 100, …, 800)
  task_name text NOT NULL,         -- "workerpool0-0"
  message   text NOT NULL,
  PRIMARY KEY (job_id, line_no)
);
-- Reading order: (time, seq) within a job.
CREATE INDEX job_log_lines_by_time ON job_log_lines (job_id, time, seq);

-- Per job: how many lines were ever appended, and the retention bound that was in force when its
-- first line arrived (kept per job, so changing --log-lines-per-job never reinterprets the line
-- numbers of a job already logging). Lines head_limit < line_no <= appended - tail_limit are the
-- dropped ones: appended - head_limit - tail_limit of them once that is positive.
CREATE TABLE job_log_stats (
  job_id     bigint PRIMARY KEY REFERENCES custom_jobs(id) ON DELETE CASCADE,
  appended   bigint NOT NULL,
  head_limit bigint NOT NULL,
  tail_limit bigint NOT NULL
);
