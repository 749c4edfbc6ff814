#include "services/scheduler/dws_queue.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

Fleet DwsFleet() {
  Fleet fleet;
  fleet.seed = 7;
  fleet.epoch = kT0;
  for (const char* zone : {"us-central1-a", "us-central1-b"}) {
    CapacityPool pool;
    pool.zone = zone;
    pool.region = "us-central1";
    pool.machine_type = "a3-megagpu-8g";
    pool.model = ConsumptionModel::kFlexStart;
    pool.units = 32;
    pool.id = std::string(zone) + "/a3-megagpu-8g/FLEX_START";
    fleet.pools.push_back(pool);
  }
  return fleet;
}

SchedulerJob Request(int64_t id, int64_t nodes, Timestamp at) {
  SchedulerJob job;
  job.id = id;
  job.region = "us-central1";
  job.queue_time = at;
  job.strategy = SchedulingStrategy::kFlexStart;
  GangPool gp;
  gp.machine_type = "a3-megagpu-8g";
  gp.units = nodes;
  job.pools.push_back(gp);
  return job;
}

// The same request waits longer behind this fleet's demand than alone, at the same seed, and
// moves up when the request ahead leaves the queue.
TEST(DwsQueueTest, ARequestBehindOthersIsGrantedLaterAndMovesUpWhenTheyGo) {
  const Fleet fleet = DwsFleet();
  DwsQueue queue;
  const SchedulerJob ahead = Request(1, 16, kT0);
  const SchedulerJob behind = Request(2, 4, kT0 + 1s);
  queue.Add(behind);
  const Timestamp alone = queue.GrantAt(fleet, 0, behind);
  queue.Add(ahead);
  EXPECT_EQ(queue.NodesAhead(behind), 16);
  EXPECT_EQ(queue.NodesAhead(ahead), 0);
  EXPECT_GT(queue.GrantAt(fleet, 0, behind), alone);
  queue.Remove(ahead);
  EXPECT_EQ(queue.GrantAt(fleet, 0, behind), alone);
}

// A requeued job asks again: it joins the queue at its requeue, behind a request made while it
// ran, and is not granted at once as its first request would have been.
TEST(DwsQueueTest, ARequeuedJobAsksAgainFromItsRequeue) {
  const Fleet fleet = DwsFleet();
  DwsQueue queue;
  SchedulerJob requeued = Request(1, 4, kT0);
  requeued.requeued_at = kT0 + 48h;
  const SchedulerJob meanwhile = Request(2, 8, kT0 + 24h);
  queue.Add(requeued);
  queue.Add(meanwhile);
  EXPECT_EQ(queue.NodesAhead(requeued), 8);
  EXPECT_EQ(queue.NodesAhead(meanwhile), 0);
  EXPECT_GT(queue.GrantAt(fleet, 0, requeued), kT0 + 48h);
}

// The next grant is the earliest of any waiting request in any pool it may use, after `now`.
TEST(DwsQueueTest, TheNextGrantIsTheEarliestOfAnyRequestInAnyZone) {
  const Fleet fleet = DwsFleet();
  DwsQueue queue;
  EXPECT_EQ(queue.NextGrant(fleet, kT0), std::nullopt);
  const SchedulerJob one = Request(1, 8, kT0);
  const SchedulerJob two = Request(2, 2, kT0 + 1s);
  queue.Add(one);
  queue.Add(two);
  Timestamp earliest = Timestamp::max();
  for (int pool : {0, 1}) {
    earliest =
        std::min({earliest, queue.GrantAt(fleet, pool, one), queue.GrantAt(fleet, pool, two)});
  }
  EXPECT_EQ(queue.NextGrant(fleet, kT0), earliest);
  EXPECT_NE(queue.GrantAt(fleet, 0, one), queue.GrantAt(fleet, 1, one))
      << "each zone's queue draws apart";
  const std::optional<Timestamp> later = queue.NextGrant(fleet, earliest);
  ASSERT_TRUE(later);
  EXPECT_GT(*later, earliest) << "a grant already past is not the next";
}

TEST(DwsQueueTest, OnlyFlexStartRequestsQueue) {
  DwsQueue queue;
  SchedulerJob spot = Request(1, 8, kT0);
  spot.strategy = SchedulingStrategy::kSpot;
  queue.Add(spot);
  EXPECT_EQ(queue.size(), 0u);
}

}  // namespace
}  // namespace trainyard
