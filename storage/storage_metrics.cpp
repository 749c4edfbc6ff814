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

}  // namespace trainyard::storage
