-- Goodput: where a job's wall time went, accrued by every state change (storage/
-- job_transition_sql.cpp). state_since is when the job entered its current state; waiting and
-- starting are QUEUED and PENDING time before the first start, restarting is QUEUED and PENDING
-- time after it (preemptions, repairs, retries), running is RUNNING time, and redone is the part
-- of running whose work was lost to an interruption and done again.
-- checkpoint_interval_us: TRAINYARD_CHECKPOINT_INTERVAL of the job (0: it never checkpoints).
-- checkpointed_us: the run time whose work the job's checkpoints hold; a gang relaunched after an
-- interruption resumes from there. It replaces run_remaining_us (the exact run time left, as if
-- every step were saved): a job stopped mid-run while this migration runs starts its work again.
ALTER TABLE custom_jobs
  ADD COLUMN state_since            timestamptz,
  ADD COLUMN waiting_us             bigint NOT NULL DEFAULT 0,
  ADD COLUMN starting_us            bigint NOT NULL DEFAULT 0,
  ADD COLUMN restarting_us          bigint NOT NULL DEFAULT 0,
  ADD COLUMN running_us             bigint NOT NULL DEFAULT 0,
  ADD COLUMN redone_us              bigint NOT NULL DEFAULT 0,
  ADD COLUMN checkpoint_interval_us bigint NOT NULL DEFAULT 600000000,
  ADD COLUMN checkpointed_us        bigint NOT NULL DEFAULT 0,
  DROP COLUMN run_remaining_us;

UPDATE custom_jobs SET state_since = update_time;
