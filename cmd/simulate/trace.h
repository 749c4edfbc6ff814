#pragma once
// Workload traces, read as they are published: SWF v2.2 (the Parallel Workloads Archive's
// Standard Workload Format), CSV with a column mapping (Philly-derived, Helios, Acme), and JSONL
// of CustomJob bodies with a submit offset. Errors name the file, the line and the field.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/simulate/scenario.h"

namespace trainyard::simulate {

// How the job ended in the trace: a replay ends it the same way at its recorded run time.
enum class TraceEnd { kCompleted, kFailed, kCancelled };

struct TraceJob {
  int64_t line = 0;   // 1-based, in the trace file
  std::string id;     // the trace's own job id, when it has one
  Duration submit{};  // after the trace's first submit
  Duration duration{};
  int64_t gpus = 0;
  int64_t nodes = 0;  // 0: the shape decides
  std::string project;
  // JSONL: the job as given. Behind a pointer: a CustomJob is over a kilobyte even when empty, and
  // an SWF or CSV log of 200,000 jobs has none.
  std::shared_ptr<const CustomJob> body;
  // The user's requested time (SWF field 9, a CSV limit column): the job's scheduling.timeout, so
  // backfill plans with it as the trace's scheduler did.
  std::optional<Duration> requested;
  TraceEnd end = TraceEnd::kCompleted;
  // What the trace's machine made it wait (SWF field 3), for validation against history.
  std::optional<Duration> recorded_wait;
};

struct Trace {
  std::vector<TraceJob> jobs;  // by submit time, then line
  int64_t skipped = 0;         // jobs that never ran (no run time) or asked for no GPU
  int64_t skipped_large = 0;   // more GPUs than the scenario's skipGpusAbove
  int64_t max_procs = 0;       // SWF header's MaxProcs: the machine the log came from (0: none)
};

StatusOr<Trace> ReadTrace(const Workload& workload);

}  // namespace trainyard::simulate
