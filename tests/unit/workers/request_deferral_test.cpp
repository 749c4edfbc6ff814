// A background pass gives way to busy writes, and never for longer than its bound or past a Stop.
#include "workers/request_deferral.h"

#include <gtest/gtest.h>

#include <future>

#include "workers/executor_metrics.h"
#include "workers/scheduler_metrics.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

struct Loop {
  std::mutex mu;
  std::condition_variable wake;
  std::atomic<bool> stop{false};
};

std::future<SteadyClock::duration> Defer(const RequestDeferral& deferral,
                                         SteadyClock::time_point last_pass, Loop& loop) {
  return std::async(std::launch::async, [&deferral, last_pass, &loop] {
    return DeferToRequests(deferral, last_pass, loop.mu, loop.wake, loop.stop);
  });
}

TEST(RequestDeferralTest, APassRunsAtOnceWithoutAGaugeOrWhileWritesAreFew) {
  Loop loop;
  EXPECT_EQ(DeferToRequests({}, SteadyClock::now(), loop.mu, loop.wake, loop.stop).count(), 0);
  RequestGauge gauge(2);
  gauge.Enter();
  EXPECT_FALSE(gauge.busy());
  EXPECT_EQ(DeferToRequests({.requests = &gauge}, SteadyClock::now(), loop.mu, loop.wake, loop.stop)
                .count(),
            0);
}

TEST(RequestDeferralTest, APassWaitsWhileWritesAreBusyAndGoesOnceTheyAreNot) {
  Loop loop;
  RequestGauge gauge(2);
  gauge.Enter();
  gauge.Enter();
  const RequestDeferral deferral{.requests = &gauge, .max_defer = std::chrono::hours(1)};
  const auto called = SteadyClock::now();
  auto deferred = Defer(deferral, called, loop);
  EXPECT_EQ(deferred.wait_for(50ms), std::future_status::timeout) << "went while writes were busy";
  gauge.Leave();
  ASSERT_EQ(deferred.wait_for(10s), std::future_status::ready) << "still waiting, writes quiet";
  // The pass's thread starts at some point after `called`, so the time it reports lies inside the
  // test's own window: counted (not zero) and never more than the test saw go by.
  const auto window = SteadyClock::now() - called;
  const auto waited = deferred.get();
  EXPECT_GT(waited, SteadyClock::duration::zero()) << "the time it waited, for the metrics";
  EXPECT_LE(waited, window);
}

TEST(RequestDeferralTest, APassWaitsNoLongerThanItsBoundAfterTheLastOne) {
  Loop loop;
  RequestGauge gauge(1);
  gauge.Enter();
  const RequestDeferral deferral{.requests = &gauge, .max_defer = 1s};
  // The last pass began two seconds ago: the bound has passed, so this one goes now.
  auto deferred = Defer(deferral, SteadyClock::now() - 2s, loop);
  ASSERT_EQ(deferred.wait_for(10s), std::future_status::ready);
  EXPECT_LT(deferred.get(), 1s);
}

TEST(RequestDeferralTest, AStopEndsTheWait) {
  Loop loop;
  RequestGauge gauge(1);
  gauge.Enter();
  const RequestDeferral deferral{.requests = &gauge, .max_defer = std::chrono::hours(1)};
  auto deferred = Defer(deferral, SteadyClock::now(), loop);
  {
    std::lock_guard lock(loop.mu);
    loop.stop = true;
  }
  loop.wake.notify_all();
  ASSERT_EQ(deferred.wait_for(10s), std::future_status::ready) << "a Stop did not end the wait";
}

// The time the passes waited is on /metrics, so a storm's delay to admissions shows.
TEST(RequestDeferralTest, TheTimeWaitedIsCountedForEachLoop) {
  SchedulerMetrics scheduler;
  ExecutorMetrics executor;
  scheduler.Deferred(1500ms);
  scheduler.Deferred(250ms);
  executor.Deferred(500ms);
  metrics::Exposition e;
  scheduler.Write(e);
  executor.Write(e);
  EXPECT_NE(e.text().find("\ntrainyard_scheduler_deferred_seconds_total 1.75\n"), std::string::npos)
      << e.text();
  EXPECT_NE(e.text().find("\ntrainyard_executor_deferred_seconds_total 0.5\n"), std::string::npos);
}

}  // namespace
}  // namespace trainyard
