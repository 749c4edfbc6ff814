-- Issue 37: every server process keeps the jobs it was polled for in memory
-- (storage/job_record_cache.h) and drops one when this says it changed: a notification carrying
-- the job's id, delivered after the commit and in commit order, when a shown field moved (a
-- version bump, which every state change is; a new verdict or queue position) or the job went.
-- Lease heartbeats and claims change nothing a reader sees and say nothing. Row triggers with the
-- test in WHEN (evaluated without calling the function): measured against one notification a
-- statement over transition tables, they cost the every-role creates of `make bench` less.
CREATE FUNCTION custom_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('trainyard_job_changes', OLD.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER custom_jobs_notify_update AFTER UPDATE ON custom_jobs
  FOR EACH ROW
  WHEN (OLD.version <> NEW.version
        OR OLD.sched_code IS DISTINCT FROM NEW.sched_code
        OR OLD.sched_message IS DISTINCT FROM NEW.sched_message
        OR OLD.queue_position IS DISTINCT FROM NEW.queue_position)
  EXECUTE FUNCTION custom_jobs_notify();
CREATE TRIGGER custom_jobs_notify_delete AFTER DELETE ON custom_jobs
  FOR EACH ROW EXECUTE FUNCTION custom_jobs_notify();
