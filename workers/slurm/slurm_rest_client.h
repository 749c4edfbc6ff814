#pragma once
// SlurmApi over slurmrestd's REST API (openapi/v0.0.38) with cpprestsdk's client. Every request
// carries X-SLURM-USER-NAME and X-SLURM-USER-TOKEN. The token is read again when its file
// changes, so a rotated token (`scontrol token` run by cron) is picked up without a restart.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "workers/slurm/slurm_api.h"

namespace trainyard::slurm {

struct SlurmRestOptions {
  std::string url;         // http://host:port of slurmrestd
  std::string user;        // X-SLURM-USER-NAME: whom the jobs run as
  std::string token;       // a token given directly (SLURM_JWT)…
  std::string token_file;  // …or a file that holds one (`SLURM_JWT=…` or the bare token)
  std::string ca_file;  // https: the PEM CA that signed slurmrestd's certificate (or its proxy's)
  std::chrono::milliseconds timeout{10000};
};

class SlurmRestClient : public SlurmApi {
 public:
  // INVALID_ARGUMENT for a URL that is not http(s):// or no token at all.
  static StatusOr<std::unique_ptr<SlurmRestClient>> Create(SlurmRestOptions options);
  ~SlurmRestClient() override;

  StatusOr<int64_t> Submit(const SlurmSubmit& job, std::chrono::milliseconds timeout) override;
  StatusOr<std::vector<SlurmJob>> Jobs() override;
  Status Cancel(int64_t job_id) override;
  Status Signal(int64_t job_id, const std::string& signal) override;
  StatusOr<std::vector<SlurmNode>> Nodes() override;

 private:
  struct Impl;
  explicit SlurmRestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The token in a file written by `scontrol token` ("SLURM_JWT=…") or holding the token alone.
std::string TokenFromFileText(const std::string& text);

}  // namespace trainyard::slurm
