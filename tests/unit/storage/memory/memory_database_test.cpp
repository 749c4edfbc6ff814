#include "storage/memory/memory_database.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "storage/memory/memory_job_store.h"

namespace trainyard::storage::memory {
namespace {

JobRecord Queued(int64_t id) {
  JobRecord record;
  record.id = id;
  record.project_number = 100000000001;
  record.location = "us-central1";
  record.job.state = JobState::kQueued;
  record.job.create_time = FromUnixMicros(1'800'000'000'000'000);
  return record;
}

// The index of jobs by id finds each stored job where the map holds it, through inserts in any
// id order and deletes, and nothing for ids not stored (any more).
TEST(MemoryDatabaseTest, TheJobIndexFindsExactlyTheStoredJobs) {
  MemoryDatabase db;
  MemoryJobStore store(db);
  std::mt19937_64 rng(51);
  std::set<int64_t> ids;
  while (ids.size() < 2000) ids.insert(static_cast<int64_t>(rng() % 1'000'000) + 1);
  for (int64_t id : ids) ASSERT_TRUE(store.Insert(Queued(id), "").ok());
  std::set<int64_t> deleted;
  for (int64_t id : ids) {
    if (rng() % 3 != 0) continue;
    int64_t version = 0;
    {
      std::lock_guard lock(db.mu);
      version = db.FindJobLocked(id)->record.version;
    }
    Operation op;
    op.id = id;
    ASSERT_TRUE(store.DeleteWithOperation(100000000001, "us-central1", id, version, op).ok());
    deleted.insert(id);
  }
  std::lock_guard lock(db.mu);
  EXPECT_EQ(db.JobsLocked().size(), ids.size() - deleted.size());
  for (const auto& [id, job] : db.JobsLocked()) {
    EXPECT_EQ(deleted.count(id), 0u) << id;
    EXPECT_EQ(db.FindJobLocked(id), &job) << id;
  }
  for (int64_t id : deleted) EXPECT_EQ(db.FindJobLocked(id), nullptr) << id;
  EXPECT_EQ(db.FindJobLocked(0), nullptr);
  EXPECT_EQ(db.FindJobLocked(2'000'000), nullptr);

  // A finished replay takes the jobs out: none is found after, by id or in order.
  const int64_t kept =
      *std::find_if(ids.begin(), ids.end(), [&](int64_t id) { return deleted.count(id) == 0; });
  const std::map<int64_t, MemoryJob> taken = db.TakeJobsLocked();
  EXPECT_EQ(taken.size(), ids.size() - deleted.size());
  EXPECT_TRUE(db.JobsLocked().empty());
  EXPECT_EQ(db.FindJobLocked(kept), nullptr);
}

}  // namespace
}  // namespace trainyard::storage::memory
