-- A job's current run: which whole-job attempt it is and, per replica, its phase, exit code,
-- in-place restarts and the runtime's handle (services/runtime/job_run.h). NULL replicas: nothing
-- launched (a queued job, or one whose replicas were stopped by a preemption or a repair).
ALTER TABLE custom_jobs
  ADD COLUMN run_attempt  smallint NOT NULL DEFAULT 0,
  ADD COLUMN run_replicas jsonb;
