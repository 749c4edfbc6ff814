#include "services/whatif/whatif_service.h"
#include "services/thread_name.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace trainyard {

WhatIfService::WhatIfService(std::vector<std::string> offered, std::unique_ptr<WhatIfRunner> runner,
                             std::function<Timestamp()> now)
    : offered_(std::move(offered)), runner_(std::move(runner)), now_(std::move(now)) {}

WhatIfService::~WhatIfService() {
  {
    std::lock_guard lock(mu_);
    if (running_) running_->Cancel();
  }
  Join();
}

void WhatIfService::Join() {
  if (thread_.joinable()) thread_.join();
}

namespace {

bool SafeFileName(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

StatusOr<WhatIfRun> WhatIfService::Start(std::vector<std::string> scenarios,
                                         std::optional<uint64_t> seed,
                                         std::optional<WhatIfUpload> upload) {
  if (scenarios.empty() && !upload) {
    return InvalidField("scenarios", "name at least one scenario the server offers, or upload one");
  }
  if (upload) {
    if (upload->scenario.empty()) return InvalidField("upload.scenario", "is required");
    if (!SafeFileName(upload->trace_name)) {
      return InvalidField("upload.traceName",
                          "must be a file name of letters, digits, '.', '_' and '-', like "
                          "\"mine.csv\"");
    }
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const std::string field = "scenarios[" + std::to_string(i) + "]";
    if (std::find(offered_.begin(), offered_.end(), scenarios[i]) == offered_.end()) {
      return InvalidField(field, "\"" + scenarios[i] + "\" is not a scenario this server offers");
    }
    if (!seen.insert(scenarios[i]).second) {
      return InvalidField(field, "\"" + scenarios[i] + "\" is named twice");
    }
  }
  {
    std::lock_guard lock(mu_);
    if (busy_) {
      return Status(Code::kResourceExhausted,
                    "a what-if run is under way; one runs at a time (retry when it ends)");
    }
    busy_ = true;  // held while staging, outside the lock: a second Start is refused meanwhile
  }
  StatusOr<std::unique_ptr<WhatIfExecution>> staged = runner_->Stage(scenarios, upload, seed);
  std::lock_guard lock(mu_);
  if (!staged.ok()) {
    busy_ = false;
    return staged.status();
  }
  if (thread_.joinable()) thread_.join();  // the last run has ended: its thread is done
  WhatIfRun run;
  run.id = next_id_++;
  run.scenarios = scenarios;
  run.uploaded = upload.has_value();
  run.seed = seed;
  run.create_time = now_();
  run.progress = "starting";
  runs_[run.id] = run;
  while (runs_.size() > kKeptRuns) runs_.erase(runs_.begin());
  running_id_ = run.id;
  running_ = std::shared_ptr<WhatIfExecution>(std::move(staged).value());
  thread_ = std::thread([this, id = run.id, execution = running_] {
    NameThisThread("ty-whatif");
    auto progress = [this, id](std::string line) {
      std::lock_guard lock(mu_);
      if (auto it = runs_.find(id); it != runs_.end()) it->second.progress = std::move(line);
    };
    StatusOr<WhatIfOutput> output = execution->Run(progress);
    std::lock_guard lock(mu_);
    busy_ = false;
    running_.reset();
    running_id_ = 0;
    auto it = runs_.find(id);
    if (it == runs_.end()) return;
    WhatIfRun& r = it->second;
    r.end_time = now_();
    if (output.ok()) {
      r.state = WhatIfRun::State::kSucceeded;
      r.output = std::move(output).value();
      r.progress = "done";
    } else {
      r.state = output.status().code() == Code::kCancelled ? WhatIfRun::State::kCancelled
                                                           : WhatIfRun::State::kFailed;
      r.error = output.status();
    }
  });
  return run;
}

StatusOr<WhatIfRun> WhatIfService::Cancel(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  if (it == runs_.end()) return NotFound("what-if run " + std::to_string(id) + " not found");
  if (it->second.state != WhatIfRun::State::kRunning) {
    return FailedPrecondition("what-if run " + std::to_string(id) + " has already ended");
  }
  if (running_ && running_id_ == id) {
    running_->Cancel();
    it->second.progress = "cancelling";
  }
  return it->second;
}

StatusOr<WhatIfRun> WhatIfService::Get(int64_t id) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  if (it == runs_.end()) return NotFound("what-if run " + std::to_string(id) + " not found");
  return it->second;
}

}  // namespace trainyard
