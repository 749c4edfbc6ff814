-- Issue 50: a job's life in fewer, cheaper writes (docs/performance.md, "A job's life in fewer,
-- cheaper writes: per-row work").
--
-- Every job event checked its foreign key: a row trigger running a locking read of the job row,
-- at each create and transition. The only write that removes a job (storage/pg_job_store.cpp,
-- kDeleteWithOperation) removes its events in the same statement.
ALTER TABLE job_events DROP CONSTRAINT job_events_job_id_fkey;

-- A transition (storage/job_transition_sql.cpp; every version bump is one) stamps the change feed
-- in its own SET and notifies its jobs in its own statement, a few hundred ids a notification, so
-- per row neither trigger calls its function for it; the tests are in WHEN, evaluated without a
-- call. The stamp's update trigger covers a version bump written without a stamp; the
-- notification's covers the scheduler's verdicts and notices, which change what a reader sees
-- without a version bump. Claims and heartbeats call nothing, as before.
DROP TRIGGER custom_jobs_change_seq ON custom_jobs;
CREATE TRIGGER custom_jobs_change_seq_insert BEFORE INSERT ON custom_jobs
  FOR EACH ROW EXECUTE FUNCTION custom_jobs_change_seq();
CREATE TRIGGER custom_jobs_change_seq_update BEFORE UPDATE ON custom_jobs
  FOR EACH ROW WHEN (OLD.version <> NEW.version AND OLD.change_xid = NEW.change_xid)
  EXECUTE FUNCTION custom_jobs_change_seq();
DROP TRIGGER custom_jobs_notify_update ON custom_jobs;
CREATE TRIGGER custom_jobs_notify_update AFTER UPDATE ON custom_jobs
  FOR EACH ROW
  WHEN (OLD.version = NEW.version
        AND (OLD.sched_code IS DISTINCT FROM NEW.sched_code
             OR OLD.sched_message IS DISTINCT FROM NEW.sched_message
             OR OLD.queue_position IS DISTINCT FROM NEW.queue_position))
  EXECUTE FUNCTION custom_jobs_notify();
