-- Issue 35: the accelerators (GPUs, TPU chips) a job's placement holds, set at each admission and
-- kept after it (the count is the spec's, whatever the placement), so costs per productive
-- accelerator-hour sum over projects and consumption models in SQL.
ALTER TABLE custom_jobs ADD COLUMN accelerators integer NOT NULL DEFAULT 0;

-- What each periodic checkpoint save and each restore takes the job (the workload model's, set at
-- create), and the running time they took so far (ML Goodput's UNPRODUCTIVE_CHECKPOINT_SAVE_TIME
-- and _RESTORE_TIME), accrued when a run ends as the other goodput buckets are.
ALTER TABLE custom_jobs ADD COLUMN checkpoint_save_us bigint NOT NULL DEFAULT 0,
                        ADD COLUMN checkpoint_restore_us bigint NOT NULL DEFAULT 0,
                        ADD COLUMN checkpoint_saving_us bigint NOT NULL DEFAULT 0,
                        ADD COLUMN checkpoint_restoring_us bigint NOT NULL DEFAULT 0;
