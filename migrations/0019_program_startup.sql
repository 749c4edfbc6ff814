-- Issue 51: each run's start-up from its nodes being ready to its first step (ML Goodput's
-- PROGRAM_STARTUP), accrued when a run ends as the other goodput buckets are. What one run takes
-- is the admission's, kept in its placement (programStartupUs).
ALTER TABLE custom_jobs ADD COLUMN program_starting_us bigint NOT NULL DEFAULT 0;
