// Jobs' JSON kept rendered: the text is always what encoding the job gives; an ended job is
// rendered once, a live one keeps everything but its `trainyard` object (its cost and goodput move
// with the clock), a job that changed is rendered again, and the cache stays within its bound.
#include "api/rendered_job_cache.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

CustomJob Job(const std::string& id, JobState state, int64_t updated_s) {
  CustomJob job;
  job.name = "projects/1/locations/us-central1/customJobs/" + id;
  job.display_name = "j" + id;
  job.state = state;
  job.create_time = FromUnixMicros(1'700'000'000'000'000);
  job.update_time = FromUnixMicros(1'700'000'000'000'000 + updated_s * 1'000'000);
  return job;
}

TEST(RenderedJobCacheTest, AnEndedJobIsRenderedOnceAsEncodingItGives) {
  RenderedJobCache cache;
  const CustomJob job = Job("1", JobState::kSucceeded, 60);
  auto first = cache.Render(job, ApiVersion::kV1);
  EXPECT_EQ(*first, EncodeCustomJob(job, ApiVersion::kV1).dump());
  auto again = cache.Render(job, ApiVersion::kV1);
  EXPECT_EQ(first.get(), again.get()) << "the kept text, not a new rendering";
  EXPECT_EQ(cache.stats().hits, 1);
  // The other API version is its own text.
  EXPECT_EQ(*cache.Render(job, ApiVersion::kV1beta1),
            EncodeCustomJob(job, ApiVersion::kV1beta1).dump());
}

TEST(RenderedJobCacheTest, ALiveJobsCostAndGoodputAreRenderedAtEachReadAndTheRestKept) {
  RenderedJobCache cache;
  CustomJob running = Job("2", JobState::kRunning, 60);
  running.start_time = *running.update_time;
  running.labels = {{"trainyard", "null"}, {"team", "nlp"}};  // a label named like the object
  running.job_spec.worker_pool_specs.emplace_back().replica_count = 2;
  running.trainyard.emplace().cost_usd = 1.5;
  running.trainyard->reason_code = "RUNNING";
  EXPECT_EQ(*cache.Render(running, ApiVersion::kV1),
            EncodeCustomJob(running, ApiVersion::kV1).dump());
  // Accrued meanwhile: the same job (state and times), new cost and goodput.
  running.trainyard->cost_usd = 2.5;
  running.trainyard->goodput.running = std::chrono::seconds(90);
  EXPECT_EQ(*cache.Render(running, ApiVersion::kV1),
            EncodeCustomJob(running, ApiVersion::kV1).dump());
  EXPECT_EQ(cache.stats().hits, 1) << "the text around the object was kept";
  EXPECT_EQ(*cache.Render(running, ApiVersion::kV1beta1),
            EncodeCustomJob(running, ApiVersion::kV1beta1).dump());
}

TEST(RenderedJobCacheTest, AnAccruedStatusIsRenderedInPlaceOfTheKeptJobs) {
  RenderedJobCache cache;
  CustomJob kept = Job("4", JobState::kQueued, 60);
  kept.trainyard.emplace().reason_code = "NO_CAPACITY";
  SchedulingStatus accrued = *kept.trainyard;
  accrued.goodput.waiting = std::chrono::seconds(42);  // the poll's clock, not the stored one
  CustomJob shown = kept;
  shown.trainyard = accrued;
  for (int i = 0; i < 2; ++i) {  // a miss, then a hit
    EXPECT_EQ(*cache.Render(kept, &accrued, ApiVersion::kV1),
              EncodeCustomJob(shown, ApiVersion::kV1).dump());
  }
  EXPECT_EQ(cache.stats().hits, 1);
}

TEST(RenderedJobCacheTest, AJobThatChangedIsRenderedAgain) {
  RenderedJobCache cache;
  CustomJob job = Job("3", JobState::kQueued, 60);
  job.trainyard.emplace();
  cache.Render(job, ApiVersion::kV1);
  job.state = JobState::kPending;  // admitted
  job.update_time = *job.update_time + std::chrono::seconds(5);
  EXPECT_EQ(*cache.Render(job, ApiVersion::kV1), EncodeCustomJob(job, ApiVersion::kV1).dump());
  job.state = JobState::kRunning;  // started, in the same microsecond
  job.start_time = *job.update_time;
  EXPECT_EQ(*cache.Render(job, ApiVersion::kV1), EncodeCustomJob(job, ApiVersion::kV1).dump());
  job.state = JobState::kCancelled;
  job.end_time = *job.update_time + std::chrono::seconds(1);
  job.update_time = job.end_time;
  EXPECT_EQ(*cache.Render(job, ApiVersion::kV1), EncodeCustomJob(job, ApiVersion::kV1).dump());
  EXPECT_EQ(cache.stats().hits, 0);
}

TEST(RenderedJobCacheTest, KeepsAtMostItsEntriesTheMostRecentlyRead) {
  RenderedJobCache cache(64);
  auto job = [](int i) { return Job(std::to_string(i), JobState::kFailed, i); };
  for (int i = 0; i < 1000; ++i) cache.Render(job(i), ApiVersion::kV1);
  auto hits = [&](int from, int to) {
    const int64_t before = cache.stats().hits;
    for (int i = from; i < to; ++i) cache.Render(job(i), ApiVersion::kV1);
    return cache.stats().hits - before;
  };
  EXPECT_EQ(hits(992, 1000), 8) << "the newest are kept";
  EXPECT_EQ(hits(0, 8), 0) << "the oldest went";
}

}  // namespace
}  // namespace trainyard::api
