-- Failures of the simulated fleet: spot preemption notices, node failures and repairs, injected
-- faults, and what a job keeps across restarts.

-- preempt_at: a spot notice was given; the VM is reclaimed at this virtual time.
-- ready_at: FAILED/REPAIRING nodes are repaired, PREEMPTED ones given back (DELETED), at this time.
ALTER TABLE nodes
  ADD COLUMN preempt_at timestamptz,
  ADD COLUMN ready_at   timestamptz;
CREATE INDEX nodes_timed ON nodes (pool_id, ordinal)
  WHERE preempt_at IS NOT NULL OR ready_at IS NOT NULL;

-- spot_restarts: spot preemptions the job was restarted after (Vertex: STOCKOUT, up to 6).
-- run_remaining_us: run time still to go when the job was stopped by a preemption or a node
-- failure; the stand-in runtime resumes from it (it checkpoints continuously). NULL: all of it.
ALTER TABLE custom_jobs
  ADD COLUMN spot_restarts    integer NOT NULL DEFAULT 0,
  ADD COLUMN run_remaining_us bigint;

-- Faults asked for over HTTP (/trainyard/v1/fleet:inject…). The API only inserts; the scheduler
-- leader applies them in virtual time and records what happened.
CREATE TABLE fault_injections (
  id           bigserial PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('NODE_FAILURE', 'SPOT_PREEMPTION')),
  node         text,              -- a node name (as in a job's placement)
  pool_id      text,
  zone         text,
  count        integer,
  fraction     double precision,
  request_time timestamptz NOT NULL,
  apply_time   timestamptz,
  outcome      text
);
CREATE INDEX fault_injections_pending ON fault_injections (id) WHERE apply_time IS NULL;

-- The last hazard tick whose draws were made: a restarted leader continues from it, so every
-- (node, tick) is drawn once and a scenario replays the same.
CREATE TABLE fleet_hazard_progress (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  tick      bigint NOT NULL
);
