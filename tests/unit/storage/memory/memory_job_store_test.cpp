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

StateUpdate Admitted(const JobRecord& queued, std::optional<LeaseGrant> grant) {
  JobAdmission admission;
  admission.zone = "us-central1-a";
  auto t = JobStateMachine::Admit(JobSnapshot{queued.id, queued.version, JobState::kQueued},
                                  *queued.job.create_time, admission, "admitted");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return StateUpdate{queued.id, queued.version, std::move(t).value(), {}, {}, std::move(grant)};
}

// An admission that hands its job to a runtime leaves it that runtime's, as a claim would: due
// for it at once, and not claimed by another; one handed to nobody is anyone's to claim.
TEST(MemoryJobStoreTest, AnAdmissionHandsItsJobToTheRuntimeItNames) {
  MemoryDatabase db;
  MemoryJobStore store(db);
  const JobRecord handed = Queued(1, {});
  const JobRecord unhanded = Queued(2, {});
  ASSERT_TRUE(store.Insert(handed, "").ok());
  ASSERT_TRUE(store.Insert(unhanded, "").ok());
  auto applied = store.ApplyTransitions(
      {Admitted(handed, LeaseGrant{"exec-a", std::chrono::seconds(30)}), Admitted(unhanded, {})});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  ASSERT_EQ(*applied, (std::vector<bool>{true, true}));

  auto claimed = store.Claim("exec-b", 10, std::chrono::seconds(30));
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->claimed, 1) << "only the job handed to nobody";
  const Timestamp later = *handed.job.create_time + std::chrono::hours(1);
  auto a = store.Due("exec-a", later, 10);
  auto b = store.Due("exec-b", later, 10);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ(a->front().id, 1);
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ(b->front().id, 2);
}

}  // namespace
}  // namespace trainyard::storage::memory
