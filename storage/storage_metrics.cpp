#include "storage/storage_metrics.h"

namespace trainyard::storage {

void WriteDatabaseFamilies(const pg::Pool& pool, const GroupCommitter& creates,
                           metrics::Exposition& e) {
  const pg::Pool::Stats s = pool.stats();
  e.Gauge("trainyard_db_pool_size", "The most connections the pool opens.", s.size);
  e.Family("trainyard_db_pool_connections", "gauge", "Open connections, checked out or idle.");
  e.Sample("trainyard_db_pool_connections", {{"state", "in_use"}}, s.in_use);
  e.Sample("trainyard_db_pool_connections", {{"state", "idle"}}, s.open - s.in_use);
  e.Gauge("trainyard_db_pool_waiting",
          "Callers waiting for a connection now (all are checked out).", s.waiting);
  e.Counter("trainyard_db_pool_checkout_timeouts_total",
            "Checkouts that found no connection in time; each was a 503 at the edge.",
            static_cast<double>(s.checkout_timeouts));
  e.Family("trainyard_db_query_duration_seconds", "histogram",
           "Round trips to PostgreSQL (a statement, or a pipelined batch), in seconds.");
  e.HistogramSamples("trainyard_db_query_duration_seconds", {}, pg::QueryLatency().Read());
  e.Family("trainyard_group_commit_batch_size", "histogram",
           "Creates that shared one transaction and one round trip.");
  e.HistogramSamples("trainyard_group_commit_batch_size", {}, creates.batch_sizes().Read());
  e.Counter("trainyard_group_commit_reruns_total",
            "Batches rolled back by one bad item and re-run item by item.",
            static_cast<double>(creates.stats().reruns));
}

void WriteJobCacheFamilies(const JobRecordCache* cache, metrics::Exposition& e) {
  if (cache == nullptr) return;
  const JobRecordCache::Stats s = cache->stats();
  e.Family("trainyard_job_cache_lookups_total", "counter",
           "Job reads (polls) by whether memory answered them or the database did.");
  e.Sample("trainyard_job_cache_lookups_total", {{"result", "hit"}}, static_cast<double>(s.hits));
  e.Sample("trainyard_job_cache_lookups_total", {{"result", "miss"}},
           static_cast<double>(s.misses));
  e.Counter("trainyard_job_cache_invalidations_total",
            "Job changes heard from the database (any server's) or made here, each dropping the "
            "job from memory.",
            static_cast<double>(s.invalidations));
  e.Gauge("trainyard_job_cache_entries", "Jobs kept in memory.", static_cast<double>(s.entries));
  e.Gauge("trainyard_job_cache_live",
          "1 while the change feed listens (memory answers polls), 0 while it reconnects.",
          cache->live() ? 1 : 0);
}

}  // namespace trainyard::storage
