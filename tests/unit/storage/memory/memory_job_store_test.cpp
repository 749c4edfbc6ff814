#include "storage/memory/memory_job_store.h"

#include <gtest/gtest.h>

namespace trainyard::storage::memory {
namespace {

JobRecord Queued(int64_t id, std::map<std::string, std::string> labels) {
  JobRecord record;
  record.id = id;
  record.project_number = 100000000001;
  record.location = "us-central1";
  record.job.name = "projects/100000000001/locations/us-central1/customJobs/" + std::to_string(id);
  record.job.state = JobState::kQueued;
  record.job.labels = std::move(labels);
  record.job.create_time = FromUnixMicros(1'800'000'000'000'000);
  return record;
}

// A new job shows its label's priority at once, as a read on PostgreSQL does (found by
// StorePropertyTest: memory showed 500 until the job's first write).
TEST(MemoryJobStoreTest, ANewJobShowsItsPriorityLabel) {
  MemoryDatabase db;
  MemoryJobStore store(db);
  ASSERT_TRUE(store.Insert(Queued(1, {{"trainyard-priority", "300"}}), "").ok());
  ASSERT_TRUE(store.Insert(Queued(2, {{"trainyard-priority", "high"}}), "").ok());
  ASSERT_TRUE(store.Insert(Queued(3, {}), "").ok());
  auto read = store.ByIds({1, 2, 3});
  ASSERT_TRUE(read.ok()) << read.status().message();
  std::map<int64_t, int> priority;
  for (const JobRecord& r : *read) priority[r.id] = r.job.trainyard->priority;
  EXPECT_EQ(priority, (std::map<int64_t, int>{{1, 300}, {2, 1000}, {3, 500}}));
}

}  // namespace
}  // namespace trainyard::storage::memory
