#pragma once
// slurmrestd's openapi/v0.0.38 (Slurm 22.05, what Debian 12 ships) in JSON, both ways. The one
// place that knows its field names: a newer plugin (v0.0.39+ renames and nests several) is
// another codec beside this one. Shapes as recorded from a real slurmrestd (docs/runtimes.md,
// "slurmrestd v0.0.38, as Trainyard speaks it").
#include <string>
#include <string_view>
#include <vector>

#include "services/status.h"
#include "workers/slurm/slurm_api.h"

namespace trainyard::slurm {

inline constexpr std::string_view kOpenApiVersion = "v0.0.38";

std::string EncodeSubmit(const SlurmSubmit& job);
// The submit answer: the job id, or why not. A job id with `errors` is still a submitted job
// (a held job, or one that waits for a partition that is too small, answers that way).
StatusOr<int64_t> DecodeSubmitReply(int http_status, std::string_view body);
StatusOr<std::vector<SlurmJob>> DecodeJobs(int http_status, std::string_view body);
StatusOr<std::vector<SlurmNode>> DecodeNodes(int http_status, std::string_view body);
// A cancel's answer: OK also when Slurm no longer knows the job (error 2017).
Status DecodeCancelReply(int http_status, std::string_view body);

}  // namespace trainyard::slurm
