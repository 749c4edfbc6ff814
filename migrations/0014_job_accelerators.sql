-- Issue 35: the accelerators (GPUs, TPU chips) a job's placement holds, set at each admission and
-- kept after it (the count is the spec's, whatever the placement), so costs per productive
-- accelerator-hour sum over projects and consumption models in SQL.
ALTER TABLE custom_jobs ADD COLUMN accelerators integer NOT NULL DEFAULT 0;
