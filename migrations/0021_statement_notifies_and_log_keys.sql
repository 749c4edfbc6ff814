-- Issue 50: a job's life in fewer, cheaper writes (docs/performance.md, "Verdicts and notices
-- that notify per statement; log lines without key checks").
--
-- The scheduler's verdicts and notices, and the failure simulator's notices, notify the poll
-- caches in their own statements, a few hundred ids a notification (storage/job_change_notify.h),
-- as transitions have since 0020: the row trigger called a function and queued a notification for
-- every verdict, thousands in a storm's first pass. Deletes still notify through their trigger.
DROP TRIGGER custom_jobs_notify_update ON custom_jobs;

-- A verdict changes no indexed column: with room on the page it is a HOT update, which writes no
-- index entry (seven indexes otherwise) and leaves none dead for the change feed and the due read
-- to step over. Pages already full keep their rows until they are rewritten.
ALTER TABLE custom_jobs SET (fillfactor = 70);

-- Each stored log line and its job's count checked their foreign key, a locking read of the job
-- row, besides the append's own lock of the job (FOR KEY SHARE, once a job a batch). The only
-- write that removes a job (storage/pg_job_store.cpp, kDeleteWithOperation) removes its lines in
-- a statement after it, which sees every line an append that held the lock committed.
ALTER TABLE job_log_lines DROP CONSTRAINT job_log_lines_job_id_fkey;
ALTER TABLE job_log_stats DROP CONSTRAINT job_log_stats_job_id_fkey;
