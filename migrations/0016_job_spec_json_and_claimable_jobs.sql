-- Issue 37, from pg_stat_statements over `make bench`'s every-role creates:
-- Every read of a job (a poll that misses, a list page, the scheduler's change feed, the runtime's
-- due jobs) turned the stored jsonb spec back into text, and every create parsed it into jsonb;
-- nothing queries inside it but one ->> (which json has too). json keeps the text as written.
ALTER TABLE custom_jobs ALTER COLUMN job_spec TYPE json USING job_spec::json;

-- The runtime's claim walked every leased job in next_action_at order to find the few free ones
-- (12-25 ms a claim with a few thousand jobs running). Free jobs and expired leases now each have
-- an index of their own. Heartbeats move lease_expires_at, which this makes non-HOT; they touch
-- each leased job once a heartbeat period, far fewer writes than the state changes.
CREATE INDEX custom_jobs_claimable ON custom_jobs (next_action_at)
  WHERE next_action_at IS NOT NULL AND lease_owner IS NULL;
CREATE INDEX custom_jobs_lease_expiry ON custom_jobs (lease_expires_at)
  WHERE lease_owner IS NOT NULL;
