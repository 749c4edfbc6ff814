-- The simulated fleet's nodes, and what the scheduler records on each job.

-- One row per node slot of the fleet file: (pool, ordinal). A slot that holds no VM is DELETED
-- (never provisioned, or given back after its job); reservation pools keep their nodes warm.
-- state: 1 PROVISIONING, 2 READY, 3 BUSY, 4 PREEMPTED, 5 FAILED, 6 REPAIRING, 7 DELETED.
CREATE TABLE nodes (
  pool_id      text NOT NULL,
  ordinal      integer NOT NULL,
  zone         text NOT NULL,
  machine_type text NOT NULL,
  keep_warm    boolean NOT NULL,            -- reservations: READY (and cached) between jobs
  state        smallint NOT NULL,
  job_id       bigint,
  state_since  timestamptz NOT NULL,
  image_cache  text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (pool_id, ordinal)
);
CREATE INDEX nodes_by_job ON nodes (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX nodes_free ON nodes (pool_id, ordinal) WHERE job_id IS NULL;

ALTER TABLE custom_jobs
  ADD COLUMN placement           jsonb,        -- where the admitted job runs (zone, pools, nodes)
  ADD COLUMN admitted_at         timestamptz,  -- virtual time of admission; billing starts here
  ADD COLUMN hourly_price_micros bigint NOT NULL DEFAULT 0,
  ADD COLUMN cost_micros         bigint NOT NULL DEFAULT 0,  -- accrued by finished admissions
  ADD COLUMN sched_code          text,         -- the last verdict: ReasonCode name
  ADD COLUMN sched_message       text,
  ADD COLUMN queue_position      bigint,
  ADD COLUMN change_seq          bigint;

-- The scheduler follows jobs by change_seq: every insert and every version bump takes the next
-- value, so the leader reads only what moved (sequence order is not commit order; it re-reads an
-- overlap). Verdict writes do not bump the version and so do not feed back.
CREATE SEQUENCE job_change_seq;
CREATE FUNCTION custom_jobs_change_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.version <> OLD.version THEN
    NEW.change_seq := nextval('job_change_seq');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER custom_jobs_change_seq BEFORE INSERT OR UPDATE ON custom_jobs
  FOR EACH ROW EXECUTE FUNCTION custom_jobs_change_seq();
CREATE INDEX custom_jobs_by_change ON custom_jobs (change_seq);

-- The virtual time the fleet's DWS steps and relative calendar windows count from: fixed at the
-- first start, so a restart replays the same capacity.
CREATE TABLE fleet_epoch (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  epoch     timestamptz NOT NULL
);
