// Ended jobs' JSON kept rendered: the text is what encoding the job gives, an ended job is rendered
// once, a job still live every time (its cost moves with the clock), a job that changed is rendered
// again, and the cache stays within its bound.
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

TEST(RenderedJobCacheTest, ALiveJobIsRenderedAtEachReadAndAChangedOneAgain) {
  RenderedJobCache cache;
  CustomJob running = Job("2", JobState::kRunning, 60);
  running.trainyard.emplace().cost_usd = 1.5;
  EXPECT_NE(cache.Render(running, ApiVersion::kV1).get(),
            cache.Render(running, ApiVersion::kV1).get());
  running.trainyard->cost_usd = 2.5;  // accrued meanwhile
  EXPECT_EQ(*cache.Render(running, ApiVersion::kV1), EncodeCustomJob(running).dump());
  EXPECT_EQ(cache.stats().hits, 0);

  CustomJob ended = Job("3", JobState::kCancelling, 60);
  cache.Render(ended, ApiVersion::kV1);
  ended.state = JobState::kCancelled;
  ended.update_time = *ended.update_time + std::chrono::seconds(5);
  EXPECT_EQ(*cache.Render(ended, ApiVersion::kV1), EncodeCustomJob(ended, ApiVersion::kV1).dump());
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
