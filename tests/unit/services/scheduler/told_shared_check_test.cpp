#include "services/scheduler/told_shared_check.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

SchedulerJob Job(int64_t id) {
  SchedulerJob job;
  job.id = id;
  job.version = 1;
  job.queue_time = kT0 + std::chrono::seconds(id);
  job.project_id = "demo";
  job.region = "us-central1";
  job.shape = "one shape";
  return job;
}

// Three jobs of one shape that hold its shared verdict, as told, and claim it.
struct Claims {
  QueueManager queues;
  SharedVerdicts shared;
  std::vector<QueueManager::Entry*> entries;

  Claims() {
    Verdict v;
    v.code = ReasonCode::kNoCapacity;
    v.message = "no free capacity";
    shared.RememberShape(1, 0, v, 4);
    const Verdict& kept = *shared.OfShape(1, 0);
    for (int64_t id = 1; id <= 3; ++id) {
      QueueManager::Entry& e = queues.Add(Job(id));
      e.verdict = kept;
      e.verdict.position = id;
      e.reported = e.verdict;
      queues.SetToldShared(e, shared.ShapeSerial(0));
      entries.push_back(&e);
    }
  }
};

TEST(ToldSharedCheckTest, ClaimsThatHoldPass) {
  Claims c;
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), std::vector<int64_t>{});
}

// A verdict changed behind the claim's back (a path other than Evaluate and Report that forgot
// to clear it): the walk would skip the job for good; the check names it.
TEST(ToldSharedCheckTest, AVerdictChangedUnderAClaimIsCaught) {
  Claims c;
  c.entries[1]->verdict.code = ReasonCode::kQuotaExceeded;
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), std::vector<int64_t>{2});
}

TEST(ToldSharedCheckTest, AReportChangedUnderAClaimIsCaught) {
  Claims c;
  c.entries[0]->reported->message = std::string("no free capacity");  // equal words, another copy
  c.entries[2]->reported->position = 40;
  c.entries[1]->reported.reset();
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), (std::vector<int64_t>{1, 2, 3}));
}

// The walk reads its slot's copy of the claim: a claim set on the entry alone is caught.
TEST(ToldSharedCheckTest, AClaimTheWalkDoesNotSeeIsCaught) {
  Claims c;
  c.entries[2]->told_shared = 0;
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), std::vector<int64_t>{3});
  c.queues.SetToldShared(*c.entries[2], 0);
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), std::vector<int64_t>{});
}

// A claim of a serial the shape no longer has matches no visit again: not stale, whatever the
// job holds. A cleared claim claims nothing.
TEST(ToldSharedCheckTest, AnOldSerialOrNoClaimIsNotStale) {
  Claims c;
  Verdict next;
  next.code = ReasonCode::kNoZoneFitsGang;
  next.message = "no zone fits the gang";
  c.shared.RememberShape(2, 0, next, 4);
  c.entries[0]->verdict.code = ReasonCode::kQuotaExceeded;
  c.queues.SetToldShared(*c.entries[1], 0);
  c.entries[1]->verdict.code = ReasonCode::kQuotaExceeded;
  EXPECT_EQ(JobsWithStaleSharedVerdict(c.queues, c.shared), std::vector<int64_t>{});
}

}  // namespace
}  // namespace trainyard
