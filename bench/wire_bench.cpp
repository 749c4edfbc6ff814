// What a list page or a poll spends on one job's JSON: reading its stored spec back into a
// CustomJob (what every read from PostgreSQL does) and writing the job for the wire.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "api/wire/custom_job_codec.h"

namespace trainyard {
namespace {

CustomJob PayloadJob() {
  std::ifstream in(TRAINYARD_PAYLOADS_DIR "/jobs/lora-single-node.json");
  std::stringstream text;
  text << in.rdbuf();
  auto job = DecodeCustomJob(nlohmann::json::parse(text.str()), OutputOnlyFields::kIgnore,
                             UnknownFields::kReject, ApiVersion::kV1);
  CustomJob out = job.ok() ? *job : CustomJob{};
  out.name = "projects/100000000001/locations/us-central1/customJobs/1234567890123456789";
  out.state = JobState::kQueued;
  out.create_time = out.update_time = Timestamp{} + std::chrono::hours(500000);
  out.trainyard = SchedulingStatus{};  // as every stored job has: reason, goodput, cost
  out.trainyard->reason_code = "NO_CAPACITY";
  out.trainyard->reason_message = "waiting for capacity";
  return out;
}

void BM_DecodeStoredSpec(benchmark::State& state) {
  const std::string stored = EncodeCustomJobSpec(PayloadJob().job_spec).dump();
  for (auto _ : state) {
    auto spec = DecodeCustomJobSpec(nlohmann::json::parse(stored), "jobSpec");
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_DecodeStoredSpec);

void BM_EncodeJob(benchmark::State& state) {
  const CustomJob job = PayloadJob();
  for (auto _ : state) {
    std::string body = EncodeCustomJob(job, ApiVersion::kV1).dump();
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_EncodeJob);

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// A poll answered from memory copies the kept job out before it accrues cost to now.
void BM_CopyJob(benchmark::State& state) {
  const CustomJob job = PayloadJob();
  for (auto _ : state) {
    CustomJob copy = job;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_CopyJob);

}  // namespace
}  // namespace trainyard
