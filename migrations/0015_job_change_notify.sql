-- Issue 37: every server process keeps the jobs it was polled for in memory
-- (storage/job_record_cache.h) and drops one when this says it changed. One notification a
-- statement, after its commit and in commit order, with the ids of the rows whose shown fields
-- moved: a version bump (every state change), a new verdict or queue position. Lease heartbeats
-- and claims change nothing a reader sees and say nothing. Payloads stay under NOTIFY's 8,000
-- bytes: 400 ids of at most 19 digits and a comma each.
CREATE FUNCTION custom_jobs_notify_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
  FOR ids IN
    SELECT string_agg(id::text, ',')
    FROM (SELECT n.id, (row_number() OVER ()) / 400 AS chunk
          FROM new_rows n JOIN old_rows o USING (id)
          WHERE n.version <> o.version
             OR n.sched_code IS DISTINCT FROM o.sched_code
             OR n.sched_message IS DISTINCT FROM o.sched_message
             OR n.queue_position IS DISTINCT FROM o.queue_position) changed
    GROUP BY chunk
  LOOP
    PERFORM pg_notify('trainyard_job_changes', ids);
  END LOOP;
  RETURN NULL;
END $$;

CREATE FUNCTION custom_jobs_notify_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
  FOR ids IN
    SELECT string_agg(id::text, ',')
    FROM (SELECT id, (row_number() OVER ()) / 400 AS chunk FROM old_rows) gone
    GROUP BY chunk
  LOOP
    PERFORM pg_notify('trainyard_job_changes', ids);
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER custom_jobs_notify_update AFTER UPDATE ON custom_jobs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION custom_jobs_notify_update();
CREATE TRIGGER custom_jobs_notify_delete AFTER DELETE ON custom_jobs
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION custom_jobs_notify_delete();
