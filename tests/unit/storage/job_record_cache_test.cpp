// JobRecordCache: a row read from the database is kept only if no change to it was heard after
// the read began, and nothing is served while the change feed is down.
#include "storage/job_record_cache.h"

#include <gtest/gtest.h>

namespace trainyard::storage {
namespace {

std::shared_ptr<const JobRecord> Row(int64_t id, int64_t version) {
  auto r = std::make_shared<JobRecord>();
  r->id = id;
  r->version = version;
  return r;
}

TEST(JobRecordCacheTest, ServesNothingUntilTheFeedIsLive) {
  JobRecordCache cache(100);
  cache.Put(cache.BeginRead(), Row(1, 1));
  EXPECT_EQ(cache.Find(1), nullptr);
  cache.SetLive(true);
  cache.Put(cache.BeginRead(), Row(1, 1));
  ASSERT_NE(cache.Find(1), nullptr);
  EXPECT_EQ(cache.Find(1)->version, 1);
}

TEST(JobRecordCacheTest, AChangeHeardDropsTheRow) {
  JobRecordCache cache(100);
  cache.SetLive(true);
  cache.Put(cache.BeginRead(), Row(1, 1));
  cache.Put(cache.BeginRead(), Row(2, 1));
  cache.Invalidate(1);
  EXPECT_EQ(cache.Find(1), nullptr);
  EXPECT_NE(cache.Find(2), nullptr);
}

// The race a poll cache must not lose: a read starts, the job changes and the change is heard,
// then the (older) row read arrives. Keeping it would serve the old state until the next change.
TEST(JobRecordCacheTest, ARowReadBeforeAChangeWasHeardIsNotKept) {
  JobRecordCache cache(100);
  cache.SetLive(true);
  auto ticket = cache.BeginRead();
  cache.Invalidate(7);
  cache.Put(ticket, Row(7, 1));
  EXPECT_EQ(cache.Find(7), nullptr);
  // A read that began after the change was heard saw it, and is kept.
  cache.Put(cache.BeginRead(), Row(7, 2));
  ASSERT_NE(cache.Find(7), nullptr);
  EXPECT_EQ(cache.Find(7)->version, 2);
}

TEST(JobRecordCacheTest, AFeedThatWentDownDropsEverythingAndRefusesOlderReads) {
  JobRecordCache cache(100);
  cache.SetLive(true);
  cache.Put(cache.BeginRead(), Row(1, 1));
  auto ticket = cache.BeginRead();
  cache.SetLive(false);
  EXPECT_EQ(cache.Find(1), nullptr);
  cache.SetLive(true);
  EXPECT_EQ(cache.Find(1), nullptr);
  cache.Put(ticket, Row(2, 1));  // read while the feed was down: it may have missed a change
  EXPECT_EQ(cache.Find(2), nullptr);
}

TEST(JobRecordCacheTest, KeepsAtMostItsEntriesDroppingTheLeastRecentlyRead) {
  JobRecordCache cache(16);  // one a shard: ids 0 and 16 share one
  cache.SetLive(true);
  cache.Put(cache.BeginRead(), Row(0, 1));
  cache.Put(cache.BeginRead(), Row(16, 1));
  EXPECT_EQ(cache.Find(0), nullptr);
  EXPECT_NE(cache.Find(16), nullptr);
  EXPECT_LE(cache.stats().entries, 16u);
}

TEST(JobRecordCacheTest, CountsHitsAndMisses) {
  JobRecordCache cache(100);
  cache.SetLive(true);
  cache.Put(cache.BeginRead(), Row(1, 1));
  cache.Find(1);
  cache.Find(2);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

}  // namespace
}  // namespace trainyard::storage
