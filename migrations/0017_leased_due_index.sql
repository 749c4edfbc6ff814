-- Issue 37, from auto_explain over `make bench`'s every-role creates: a runtime's due read
-- (`lease_owner = $1 AND next_action_at <= $2 ORDER BY next_action_at LIMIT 500`) had one index
-- for each condition, so it ANDed two bitmaps, fetched every due job the runtime held (4,500 of
-- its 8,000 leases, 25-30 ms) and sorted them for the first 500. One index on both walks the
-- runtime's own jobs in due order and stops at the limit; it also serves every other read by
-- owner (heartbeats, the next due time, the release at shutdown). The two it replaces were one
-- more index entry on every non-HOT update of a job; nothing else reads them.
CREATE INDEX custom_jobs_leased_due ON custom_jobs (lease_owner, next_action_at)
  WHERE lease_owner IS NOT NULL;
DROP INDEX custom_jobs_due;
DROP INDEX custom_jobs_by_lease_owner;
