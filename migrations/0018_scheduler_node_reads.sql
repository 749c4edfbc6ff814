-- Issue 37, from pg_stat_statements and a profile of the scheduler's backend under one client's
-- creates (every role, ~1,000 jobs/s): two reads the scheduler's leader makes every pass had no
-- index, the units out of service (storage/pg_scheduler_store.cpp, kUnhealthy) and the failed
-- nodes whose repair starts (storage/pg_failure_store.cpp, kStartRepairs). Each walked the whole
-- nodes table, and every claim, release and boot leaves a dead row version in it until vacuum:
-- 1.4 and 0.8 ms a pass, 40 passes a second, though nearly always nothing is out of service.
-- The states: PREEMPTED 4, FAILED 5, REPAIRING 6; PROVISIONING 1 (services/fleet/node_state.h).
CREATE INDEX nodes_unwell ON nodes (pool_id, ordinal)
  WHERE state IN (4, 5, 6) OR (resource_uid IS NOT NULL AND state = 1);

-- A commit read every free node of the pools it admitted into (8,000 rows for the bench's two
-- reservations, at every pass with one client creating); for single-host units it now reads the
-- lowest few of each state (storage/pg_scheduler_store.cpp, kLowestFreeNodes): with the state in
-- the key, the few READY nodes of a pool of DELETED ones are found without walking the rest. It
-- serves every read of a pool's free nodes the old one, (pool_id, ordinal), did.
CREATE INDEX nodes_free_by_state ON nodes (pool_id, state, ordinal) WHERE job_id IS NULL;
DROP INDEX nodes_free;
