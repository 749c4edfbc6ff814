#pragma once
// What-if runs on the server (the console's what-if page): a comparison of chosen scenarios, run
// as `trainyard simulate` runs it, as a job of its own in the background. Bounded: one run at a
// time (a second is RESOURCE_EXHAUSTED until the first ends), only the scenarios the server
// offers, and the last few runs kept. How a comparison is run is the composition root's
// (WhatIfRunner): this service keeps the runs and their thread.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "services/model/time.h"
#include "services/status.h"

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
  enum class State { kRunning, kSucceeded, kFailed };
  int64_t id = 0;
  std::vector<std::string> scenarios;
  bool uploaded = false;  // one more scenario, the caller's own
  std::optional<uint64_t> seed;
  State state = State::kRunning;
  std::string progress;  // the latest progress line
  Status error;          // kFailed: why
  Timestamp create_time{};
  std::optional<Timestamp> end_time;
  WhatIfOutput output;  // kSucceeded
};

// Runs the named scenarios (names the server offers) with `seed`, reporting progress lines.
using WhatIfRunner = std::function<StatusOr<WhatIfOutput>(
    const std::vector<std::string>& scenarios, const std::optional<WhatIfUpload>& upload,
    std::optional<uint64_t> seed, const std::function<void(std::string)>& progress)>;

class WhatIfService {
 public:
  // `offered`: the scenario names a run may choose from.
  WhatIfService(std::vector<std::string> offered, WhatIfRunner runner,
                std::function<Timestamp()> now);
  ~WhatIfService();
  WhatIfService(const WhatIfService&) = delete;
  WhatIfService& operator=(const WhatIfService&) = delete;

  const std::vector<std::string>& Offered() const { return offered_; }
  // INVALID_ARGUMENT naming scenarios[i] for a name not offered (or a repeat), upload.* for an
  // upload without a scenario or with a bad trace name, scenarios when there is nothing to run;
  // RESOURCE_EXHAUSTED while another run is under way.
  StatusOr<WhatIfRun> Start(std::vector<std::string> scenarios, std::optional<uint64_t> seed,
                            std::optional<WhatIfUpload> upload = std::nullopt);
  StatusOr<WhatIfRun> Get(int64_t id) const;
  // Waits for the run under way, if any (tests; the destructor).
  void Join();

 private:
  static constexpr size_t kKeptRuns = 10;

  std::vector<std::string> offered_;
  WhatIfRunner runner_;
  std::function<Timestamp()> now_;
  mutable std::mutex mu_;
  std::map<int64_t, WhatIfRun> runs_;  // the last kKeptRuns
  int64_t next_id_ = 1;
  bool busy_ = false;
  std::thread thread_;
};

}  // namespace trainyard
