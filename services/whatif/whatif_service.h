#pragma once
// What-if runs on the server (the console's what-if page): a comparison of chosen scenarios, run
// as `trainyard simulate` runs it, as a job of its own in the background. Bounded: one run at a
// time (a second is RESOURCE_EXHAUSTED until the first ends), only the scenarios the server
// offers, and the last few runs kept.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "services/status.h"
#include "services/time.h"

namespace trainyard {

// What a comparison produced: comparison.json's text and the plots (file name → SVG).
struct WhatIfOutput {
  std::string comparison_json;
  std::map<std::string, std::string> plots;
};

// A scenario of the caller's own, compared beside the offered ones: its JSON (its workload is the
// trace sent with it; its fleet an inline object or a fleet file the server offers) and its trace.
struct WhatIfUpload {
  std::string scenario;    // the scenario file's text
  std::string trace;       // the trace file's text (CSV, SWF or JSONL, as the scenario says)
  std::string trace_name;  // e.g. "mine.csv": letters, digits, '.', '_' and '-'
};

struct WhatIfRun {
  enum class State { kRunning, kSucceeded, kFailed, kCancelled };
  int64_t id = 0;
  std::vector<std::string> scenarios;
  bool uploaded = false;  // one more scenario, the caller's own
  std::optional<uint64_t> seed;
  State state = State::kRunning;
  std::string progress;  // the latest progress line
  Status error;          // kFailed, kCancelled: why
  Timestamp create_time{};
  std::optional<Timestamp> end_time;
  WhatIfOutput output;  // kSucceeded
};

// One staged comparison: its files in place, ready to run.
class WhatIfExecution {
 public:
  virtual ~WhatIfExecution() = default;
  // Runs it to its end, reporting progress lines; CANCELLED after Cancel.
  virtual StatusOr<WhatIfOutput> Run(const std::function<void(std::string)>& progress) = 0;
  // From any thread, before or during Run: ends it soon.
  virtual void Cancel() = 0;
};

// How a comparison is run is the composition root's (a child process running `trainyard
// simulate`): this service keeps the runs and their thread.
class WhatIfRunner {
 public:
  virtual ~WhatIfRunner() = default;
  // Checks what the caller sent and stages it: INVALID_ARGUMENT naming the field (upload.*) for
  // anything the run would refuse, so a bad request is a 400 rather than a failed run.
  virtual StatusOr<std::unique_ptr<WhatIfExecution>> Stage(
      const std::vector<std::string>& scenarios, const std::optional<WhatIfUpload>& upload,
      std::optional<uint64_t> seed) = 0;
};

class WhatIfService {
 public:
  // `offered`: the scenario names a run may choose from.
  WhatIfService(std::vector<std::string> offered, std::unique_ptr<WhatIfRunner> runner,
                std::function<Timestamp()> now);
  // Cancels the run under way: a stuck run never holds up shutdown.
  ~WhatIfService();
  WhatIfService(const WhatIfService&) = delete;
  WhatIfService& operator=(const WhatIfService&) = delete;

  const std::vector<std::string>& Offered() const { return offered_; }
  // INVALID_ARGUMENT naming scenarios[i] for a name not offered (or a repeat), upload.* for an
  // upload without a scenario, with a bad trace name or one the runner refuses, scenarios when
  // there is nothing to run; RESOURCE_EXHAUSTED while another run is under way.
  StatusOr<WhatIfRun> Start(std::vector<std::string> scenarios, std::optional<uint64_t> seed,
                            std::optional<WhatIfUpload> upload = std::nullopt);
  StatusOr<WhatIfRun> Get(int64_t id) const;
  // Ends the run under way (it turns CANCELLED when its process has gone); FAILED_PRECONDITION
  // for a run that has already ended.
  StatusOr<WhatIfRun> Cancel(int64_t id);
  // Waits for the run under way, if any (tests; the destructor).
  void Join();

 private:
  static constexpr size_t kKeptRuns = 10;

  std::vector<std::string> offered_;
  std::unique_ptr<WhatIfRunner> runner_;
  std::function<Timestamp()> now_;
  mutable std::mutex mu_;
  std::map<int64_t, WhatIfRun> runs_;  // the last kKeptRuns
  int64_t next_id_ = 1;
  bool busy_ = false;
  int64_t running_id_ = 0;
  std::shared_ptr<WhatIfExecution> running_;  // the run under way, for Cancel
  std::thread thread_;
};

}  // namespace trainyard
