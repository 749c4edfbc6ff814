#pragma once
// The database's figures for /metrics: the connection pool (in use, idle, waiting, timed-out
// checkouts), every round trip's latency, and the batches group commit sends.
#include "services/metrics/exposition.h"
#include "storage/group_commit.h"
#include "storage/job_record_cache.h"
#include "storage/pg.h"

namespace trainyard::storage {

void WriteDatabaseFamilies(const pg::Pool& pool, const GroupCommitter& creates,
                           metrics::Exposition& e);
// The polled jobs kept in memory (nothing when there is no cache).
void WriteJobCacheFamilies(const JobRecordCache* cache, metrics::Exposition& e);

}  // namespace trainyard::storage
