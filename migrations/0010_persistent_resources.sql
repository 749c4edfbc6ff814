-- Persistent resources (issue 18) on operations that finish when their work does.

-- Operations: a client's cancel request (the work ends the operation as CANCELLED where it can),
-- the metadata's progressMessage, and the unfinished ones found fast.
ALTER TABLE operations
  ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false,
  ADD COLUMN progress_message text NOT NULL DEFAULT '';
CREATE INDEX operations_unfinished ON operations (id) WHERE NOT done;

-- uid is the row's own number: nodes and the scheduler name the resource by it (a resource id
-- is only unique within its project and location). resource is the PersistentResource in its
-- wire form (pools, labels, runtime spec); state, error and times are columns, kept true by
-- every change. The rest is the fleet's bookkeeping, never on the wire.
CREATE SEQUENCE persistent_resource_uid_seq;
CREATE TABLE persistent_resources (
  uid                 bigint PRIMARY KEY DEFAULT nextval('persistent_resource_uid_seq'),
  project_number      bigint NOT NULL REFERENCES projects(number),
  location            text NOT NULL,
  resource_id         text NOT NULL,
  state               smallint NOT NULL,  -- google.cloud.aiplatform.v1.PersistentResource.State
  resource            jsonb NOT NULL,
  error_code          integer,
  error_message       text,
  create_time         timestamptz NOT NULL,
  start_time          timestamptz,
  update_time         timestamptz NOT NULL,
  version             bigint NOT NULL DEFAULT 1,
  operation_id        bigint,       -- the unfinished operation the fleet is carrying out
  placement           jsonb,        -- zone and held pools, as custom_jobs.placement
  ready_at            timestamptz,  -- virtual time the held nodes finish booting
  held_since          timestamptz,  -- billing: since when it holds nodes
  hourly_price_micros bigint NOT NULL DEFAULT 0,
  cost_micros         bigint NOT NULL DEFAULT 0,  -- accrued by earlier holds
  sched_code          text,         -- why it is not placed yet (the scheduler's reason codes)
  sched_message       text,
  UNIQUE (project_number, location, resource_id)
);
CREATE INDEX persistent_resources_by_parent
  ON persistent_resources (project_number, location, create_time DESC, uid DESC);

-- A node a persistent resource holds: never given to a job that does not name the resource; it
-- stays READY with its image cache between that resource's jobs.
ALTER TABLE nodes ADD COLUMN resource_uid bigint;
CREATE INDEX nodes_by_resource ON nodes (resource_uid) WHERE resource_uid IS NOT NULL;
