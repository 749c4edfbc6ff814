#pragma once
// A `trainyard simulate` scenario: a fleet (the fleet-file format, by path or inline, scaled), a
// workload trace and how it maps onto jobs (machine shapes, consumption models by project and
// size, persistent resources kept for a project's jobs), and the knobs a platform team turns
// (reservation owners, checkpoint interval). Read from
// JSON; every error names the field (docs/simulate.md has the format).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cmd/simulate/scenario_files.h"
#include "services/fleet/fleet.h"
#include "services/model/custom_job.h"
#include "services/scheduler/scheduler.h"
#include "services/status.h"

namespace trainyard::simulate {

enum class TraceFormat { kSwf, kCsv, kJsonl };

// Which trace column is which (CSV). Empty: the trace has none.
struct CsvColumns {
  std::string submit;    // seconds, or a timestamp (submit_format)
  std::string duration;  // seconds of running
  std::string gpus;
  std::string nodes;    // optional: GPUs are spread over this many nodes
  std::string project;  // the queue, virtual cluster or user that becomes the project
  std::string status;   // optional: how the job ended (failed, killed/cancelled, else completed)
  std::string limit;    // optional: the user's requested time, in seconds
};

struct Workload {
  std::string path;  // resolved against the scenario's folder
  FileRules rules;   // how the trace is read (the scenario's own)
  TraceFormat format = TraceFormat::kSwf;
  CsvColumns columns;
  bool submit_is_timestamp = false;  // CSV: "2020-03-01 00:00:07" rather than seconds
  std::string swf_project = "user";  // SWF: user, group, queue or partition
  int64_t limit = 0;                 // the first N jobs only (0: all)
  int64_t skip_gpus_above = 0;       // 0: none skipped (a job no shape fits is an error)
  // Run and requested times are multiplied by this (a trace from older hardware, replayed on
  // faster accelerators: below 1).
  double duration_scale = 1;
};

// Which consumption model a job asks for: the first rule whose projects and GPU range match.
struct PlacementRule {
  std::vector<std::string> projects;  // empty: any
  int64_t min_gpus = 0;
  int64_t max_gpus = 0;  // 0: no bound
  // STANDARD (reservation, then on-demand), ON_DEMAND (never a reservation), SPOT,
  // SPOT_THEN_ON_DEMAND (Vertex's LOW_COST), FLEX_START.
  std::string model = "STANDARD";
  // Set: the jobs run on this persistent resource of their project (its nodes, its machine type).
  std::string persistent_resource;
};

// A persistent resource the scenario keeps for one project's jobs, created when the replay starts
// as a client would create it: its nodes boot once and stay up (and are paid for) between jobs.
struct ResourcePlan {
  std::string id;
  std::string project;
  std::string machine_type;
  int64_t replicas = 0;  // nodes it starts with (autoscaling: its minimum when 0)
  std::optional<int64_t> min_replicas, max_replicas;  // autoscaling
  int64_t MostNodes() const { return std::max(replicas, max_replicas.value_or(0)); }
};

struct Scenario {
  std::string name;
  std::string source;  // the file it came from
  Fleet fleet;
  Workload workload;
  std::vector<std::string> shapes;  // machine types with built-in GPUs, smallest first
  std::vector<PlacementRule> placement;
  std::vector<ResourcePlan> resources;
  std::optional<Duration> checkpoint_interval;
  // What each checkpoint save and restore takes the replayed jobs (a trace has no model size).
  std::optional<Duration> checkpoint_save;
  std::optional<Duration> checkpoint_restore;
  std::optional<Duration> max_wait;  // FLEX_START's maxWaitDuration
  // The scheduler's knobs the scenario may turn (`scheduler`: `holdAfter`, `holdsPerCycle`), so a
  // replay can run under a policy closer to the one a log's machine ran; the server's by default.
  SchedulerConfig scheduler;
  uint64_t seed = 1;
};

// Reads a scenario file. `seed` (when set) overrides the fleet's; `rules` say which files it may
// name (a caller's scenario: only below its folder).
StatusOr<Scenario> LoadScenario(const std::string& path, std::optional<uint64_t> seed,
                                const FileRules& rules = {});

}  // namespace trainyard::simulate
