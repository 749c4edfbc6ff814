// The queue manager alone: rank order, parking, deadlines and positions.
#include "services/scheduler/queue_manager.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using Parked = QueueManager::Parked;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

SchedulerJob Job(int64_t id, int priority, Timestamp queued, std::string project = "demo") {
  SchedulerJob job;
  job.id = id;
  job.version = 1;
  job.priority = priority;
  job.queue_time = queued;
  job.project_id = std::move(project);
  job.region = "us-central1";
  job.shape = "s" + std::to_string(priority);
  return job;
}

std::vector<int64_t> ActiveOrder(QueueManager& queues, int q) {
  std::vector<int64_t> ids;
  for (const auto& [key, entry] : queues[static_cast<size_t>(q)].order)
    ids.push_back(entry->job.id);
  return ids;
}

TEST(QueueManagerTest, OrdersByPriorityThenAge) {
  QueueManager queues;
  queues.Add(Job(1, 100, kT0));
  queues.Add(Job(2, 500, kT0 + 2min));
  queues.Add(Job(3, 500, kT0 + 1min));
  queues.Add(Job(4, 100, kT0 - 1min));
  queues.Add(Job(5, 100, kT0, "other"));  // a queue of its own
  ASSERT_EQ(queues.size(), 2u);
  const int q = queues.QueueFor("demo", "us-central1");
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{3, 2, 4, 1}));
  EXPECT_EQ(queues.pending_count(), 5u);
  EXPECT_EQ(queues.shape_count(), 2u);  // priorities 100 and 500
  EXPECT_TRUE(queues.Remove(2));
  EXPECT_FALSE(queues.Remove(2));
  EXPECT_EQ(queues.Find(2), nullptr);
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{3, 4, 1}));
}

TEST(QueueManagerTest, ParksAJobThatCannotFitUntilAChangeLiftsIt) {
  QueueManager queues;
  queues.Add(Job(1, 500, kT0));
  queues.Add(Job(2, 100, kT0));
  queues.Add(Job(3, 100, kT0 + 1min));
  const int q = queues.QueueFor("demo", "us-central1");
  // Over quota: out of the active order until the project's usage drops.
  QueueManager::Entry* parked = queues.Park(*queues.Find(1), Parked::kUntilQuotaFrees, {});
  EXPECT_EQ(parked->parked, Parked::kUntilQuotaFrees);
  EXPECT_EQ(queues.Find(1), parked);
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{2, 3}));
  // Never fits: parked, and failed at its deadline.
  queues.Park(*queues.Find(3), Parked::kUntilFleetChanges, kT0 + 1h);
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{2}));
  EXPECT_FALSE(queues.NeverFitsDue(kT0 + 59min));
  EXPECT_EQ(queues.NeverFitsDue(kT0 + 1h), 3);
  // Positions count every waiting job, parked or not, in rank order.
  std::vector<std::pair<int64_t, int64_t>> positions;
  queues.ForEachInRankOrder(queues[static_cast<size_t>(q)],
                            [&](QueueManager::Entry& e, int64_t position) {
                              positions.push_back({e.job.id, position});
                            });
  EXPECT_EQ(positions, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 2}, {3, 3}}));
  // Usage of another project dropped: nothing moves; of its own: back in the order.
  queues.QuotaFreed("other");
  queues.UnparkQuotaWaiters();
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{2}));
  queues.QuotaFreed("demo");
  queues.UnparkQuotaWaiters();
  EXPECT_EQ(ActiveOrder(queues, q), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(queues.Find(1)->parked, Parked::kNo);
  // A never-fit that leaves takes its deadline with it.
  EXPECT_TRUE(queues.Remove(3));
  EXPECT_FALSE(queues.NeverFitsDue(kT0 + 2h));
}

TEST(QueueManagerTest, AFlexStartJobFailsAtItsMaxWait) {
  QueueManager queues;
  SchedulerJob dws = Job(1, 100, kT0);
  dws.dws_deadline = kT0 + 24h;
  queues.Add(std::move(dws));
  EXPECT_FALSE(queues.DwsDue(kT0 + 23h));
  EXPECT_EQ(queues.DwsDue(kT0 + 24h), 1);
  queues.Clear();
  EXPECT_FALSE(queues.DwsDue(kT0 + 24h));
  EXPECT_EQ(queues.pending_count(), 0u);
}

TEST(QueueManagerTest, CompactionKeepsTheOrder) {
  QueueManager queues;
  for (int64_t id = 1; id <= 10000; ++id) queues.Add(Job(id, 100, kT0 + std::chrono::seconds(id)));
  for (int64_t id = 1; id <= 10000; ++id) {
    if (id % 10 != 0) queues.Park(*queues.Find(id), Parked::kUntilFleetChanges, {});
  }
  const size_t before = queues.active_entry_slots();
  queues.CompactIfSparse();
  EXPECT_LT(queues.active_entry_slots(), before);
  const std::vector<int64_t> order = ActiveOrder(queues, 0);
  ASSERT_EQ(order.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(queues.Find(10)->job.id, 10);
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// FirstQueuedAfter: when the next active job below a priority passes a wait counted from its
// queue time (a replay wakes then: the job may hold capacity).
TEST(QueueManagerTest, FirstQueuedAfterLooksAtEachPriorityBelowTheBound) {
  QueueManager queues;
  queues.Add(Job(1, 100, kT0));
  queues.Add(Job(2, 100, kT0 + 5min));
  queues.Add(Job(3, 500, kT0 + 2min));
  queues.Add(Job(4, 2000, kT0 + 1min));  // at or above the bound: holds without waiting
  queues.Add(Job(5, 100, kT0 + 3min, "other"));
  EXPECT_EQ(queues.FirstQueuedAfter(kT0 - 1min, 1000), kT0);
  EXPECT_EQ(queues.FirstQueuedAfter(kT0, 1000), kT0 + 2min);
  EXPECT_EQ(queues.FirstQueuedAfter(kT0 + 2min, 1000), kT0 + 3min);
  EXPECT_EQ(queues.FirstQueuedAfter(kT0 + 3min, 1000), kT0 + 5min);
  EXPECT_FALSE(queues.FirstQueuedAfter(kT0 + 5min, 1000).has_value());
  EXPECT_FALSE(queues.FirstQueuedAfter(kT0 - 1min, 100).has_value());
  // A parked job waits for a change elsewhere, not for the clock.
  queues.Park(*queues.Find(3), Parked::kUntilFleetChanges, std::nullopt);
  EXPECT_EQ(queues.FirstQueuedAfter(kT0, 1000), kT0 + 3min);
}

}  // namespace
}  // namespace trainyard
