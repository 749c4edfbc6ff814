-- The scheduler follows job changes by (change_xid, change_seq), reading only transactions that
-- have all finished (xid below the snapshot's xmin), instead of re-reading a fixed overlap of
-- change_seq values: sequence values are taken before commit, and once creates were group-committed
-- (batches of up to 256) and the runtime applied whole passes in one transaction, a batch could
-- commit more than the old 256-value overlap behind what the leader had read, and its jobs were
-- never seen. Below xmin no new row can ever appear, so the cursor never skips one.
ALTER TABLE custom_jobs ADD COLUMN change_xid xid8 NOT NULL DEFAULT '1';  -- older rows sort first

CREATE OR REPLACE FUNCTION custom_jobs_change_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.version <> OLD.version THEN
    NEW.change_seq := nextval('job_change_seq');
    NEW.change_xid := pg_current_xact_id();
  END IF;
  RETURN NEW;
END $$;

DROP INDEX custom_jobs_by_change;
CREATE INDEX custom_jobs_by_change ON custom_jobs (change_xid, change_seq);
