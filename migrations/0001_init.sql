-- Foundation schema: projects, custom jobs with their leases and events, operations, the sim clock.

-- A project is named by its id ("demo") or its number (123456789012); both name the same row.
CREATE SEQUENCE project_number_seq START WITH 100000000001;
CREATE TABLE projects (
  number      bigint PRIMARY KEY DEFAULT nextval('project_number_seq'),
  project_id  text NOT NULL UNIQUE,
  create_time timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE custom_jobs (
  id               bigint PRIMARY KEY,            -- 19-digit, random
  project_number   bigint NOT NULL REFERENCES projects(number),
  location         text NOT NULL,
  display_name     text NOT NULL,
  state            smallint NOT NULL,             -- google.cloud.aiplatform.v1.JobState number
  job_spec         jsonb NOT NULL,                -- CustomJobSpec in its wire form
  labels           jsonb NOT NULL DEFAULT '{}',
  encryption_spec  jsonb,
  error_code       integer,
  error_message    text,
  create_time      timestamptz NOT NULL,
  start_time       timestamptz,
  end_time         timestamptz,
  update_time      timestamptz NOT NULL,
  -- Runtime bookkeeping (never on the wire). next_action_at is in virtual time: when the runtime
  -- must next look at the job; NULL once the job is terminal.
  next_action_at   timestamptz,
  lease_owner      text,
  lease_expires_at timestamptz,
  version          bigint NOT NULL DEFAULT 1,
  request_id       text
);
-- List order (newest first) per parent, and keyset pagination on (create_time, id).
CREATE INDEX custom_jobs_by_parent ON custom_jobs (project_number, location, create_time DESC, id DESC);
CREATE INDEX custom_jobs_due ON custom_jobs (next_action_at) WHERE next_action_at IS NOT NULL;
CREATE INDEX custom_jobs_by_lease_owner ON custom_jobs (lease_owner) WHERE lease_owner IS NOT NULL;

-- Every state transition with its reason; the job's history for users and for debugging.
CREATE TABLE job_events (
  job_id     bigint NOT NULL REFERENCES custom_jobs(id) ON DELETE CASCADE,
  seq        bigserial,
  time       timestamptz NOT NULL,
  from_state smallint NOT NULL,
  to_state   smallint NOT NULL,
  reason     text NOT NULL,
  PRIMARY KEY (job_id, seq)
);

-- Long-running operations. parent is the resource the operation nests under ("customJobs/123"),
-- or '' for a flat name.
CREATE TABLE operations (
  id             bigint PRIMARY KEY,
  project_number bigint NOT NULL REFERENCES projects(number),
  location       text NOT NULL,
  parent         text NOT NULL DEFAULT '',
  metadata_type  text NOT NULL,
  done           boolean NOT NULL DEFAULT false,
  response       jsonb,
  error_code     integer,
  error_message  text,
  create_time    timestamptz NOT NULL,
  update_time    timestamptz NOT NULL
);
CREATE INDEX operations_by_parent ON operations (project_number, location, create_time DESC, id DESC);

-- Virtual time shared by every process: now = virtual_epoch + (wall_now - wall_epoch) * speed.
CREATE TABLE sim_clock (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  wall_epoch    timestamptz NOT NULL,
  virtual_epoch timestamptz NOT NULL,
  speed         double precision NOT NULL CHECK (speed > 0)
);
