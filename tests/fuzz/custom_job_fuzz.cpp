// The customJobs.create body as the server takes it: depth pre-scan, parse, decode, validate.
// A body the server accepts must survive its own encoding: what GET returns is what create took.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/wire/custom_job_codec.h"
#include "services/jobs/custom_job_validator.h"
#include "services/scheduler/scheduler_job.h"
#include "tests/fuzz/request_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard;
  auto body = fuzz::ParseRequestBody(data, size);
  if (!body) return 0;
  for (ApiVersion version : {ApiVersion::kV1, ApiVersion::kV1beta1}) {
    auto job = DecodeCustomJob(*body, OutputOnlyFields::kIgnore, UnknownFields::kReject, version);
    if (!job.ok()) continue;
    if (!ValidateCustomJob(*job).ok() || !ParsePriorityLabel(job->labels).ok()) continue;
    // Accepted: its wire form must decode and validate again.
    nlohmann::json encoded = EncodeCustomJob(*job, version);
    auto again =
        DecodeCustomJob(encoded, OutputOnlyFields::kIgnore, UnknownFields::kReject, version);
    if (!again.ok() || !ValidateCustomJob(*again).ok()) std::abort();
    if (EncodeCustomJob(*again, version) != encoded) std::abort();
  }
  return 0;
}
