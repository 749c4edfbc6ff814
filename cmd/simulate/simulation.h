#pragma once
// Replays a trace through the control plane `serve` runs (cmd/app/control_plane.h) on memory
// (cmd/app/memory_adapters.h), with the simulator's runtime (the registry entry `serve
// --runtime=sim` makes it from: cmd/app/runtimes.h), under a manual clock that jumps from
// event to event: arrivals, the executor's next due step (boots, ends, restarts), and while any
// job is live (or a persistent resource has work ahead) a pass every simulated minute (the failure
// simulator's hazards, DWS steps, the queue's deadlines and holds, autoscaling; ReplayWakes). At
// each time the scheduler
// and the executor pass until neither has more to do, as a server's loops run again at once after a
// pass that did work. Nothing reads the wall clock; the same scenario and seed give the same
// history.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cmd/simulate/job_builder.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/trace.h"
#include "services/jobs/job_repository.h"
#include "storage/memory/memory_database.h"

namespace trainyard::simulate {

// What the reports need of BuildJob's answer once the store has taken the body.
struct JobShape {
  std::string machine_type;
  int64_t nodes = 0;
  std::string model;
};

struct JobOutcome {
  const TraceJob* trace = nullptr;
  JobShape built;
  const JobRecord* record = nullptr;  // as the run left it, in SimulationResult::records
};

// Nodes in use by consumption model at an hour of the run (and a persistent resource's idle nodes,
// paid for, as their own series).
struct CapacitySample {
  Duration at{};
  std::map<std::string, int64_t> busy;
};

// What a persistent resource held over the run, in node-seconds: all its nodes (paid for), and
// those its jobs ran on.
struct ResourceUsage {
  double held_node_seconds = 0;
  double busy_node_seconds = 0;
  int64_t most_nodes = 0;
};

struct SimulationResult {
  std::vector<JobOutcome> jobs;
  // The store's jobs, taken whole when the run ends (no copy): what each outcome's record points
  // to.
  std::map<int64_t, storage::memory::MemoryJob> records;
  std::vector<CapacitySample> capacity;  // hourly
  // Node-seconds paid for per pool id (pools with node slots): held by jobs or by a persistent
  // resource; and available.
  std::map<std::string, double> busy_node_seconds;
  std::map<std::string, ResourceUsage> resources;  // by the scenario's resource id
  std::map<std::string, double> node_seconds;
  Duration simulated{};
  int64_t passes = 0;
  // Of the passes' scheduler cycles, those that returned at once: nothing had changed since one
  // that decided nothing (SchedulerConfig::skip_quiet_cycles).
  int64_t quiet_cycles = 0;
  // Event times at which the control plane was still changing after kSettlePasses passes, so the
  // replay moved on with work left for the next event (each should be 0; the report says so).
  int64_t unsettled_events = 0;
  // The most jobs waiting in the scheduler's queues at once (after an event time's passes).
  int64_t most_waiting = 0;
};

// Scheduler and runtime passes a replay runs at one event time before moving on. Chosen: every
// shipped scenario settles in a handful; the bound keeps a pathological one from spinning.
inline constexpr int kSettlePasses = 16;

// Called every simulated day and at the end: jobs created so far, jobs ended, simulated time.
using Progress = std::function<void(int64_t created, int64_t ended, Duration simulated)>;

// A trace's project (a user, a queue, a virtual cluster such as Philly's "6214e9") as a project id
// the API takes: itself when valid, else "p-" and the value with other characters as '-'. Reports
// keep the trace's own value.
std::string ProjectIdOf(const std::string& trace_value);

// The trace jobs that ended CANCELLED: each is cancelled once it has run its recorded time.
class TraceCancels {
 public:
  void Add(int64_t job_id, std::string project, Duration run);
  // The jobs to cancel now (job id, project); forgets them and the ones that have ended.
  std::vector<std::pair<int64_t, std::string>> Due(storage::memory::MemoryDatabase& db,
                                                   Timestamp now);
  // When the next started one is due.
  std::optional<Timestamp> Next(storage::memory::MemoryDatabase& db) const;

 private:
  struct Pending {
    std::string project;
    Duration run;
  };
  std::map<int64_t, Pending> pending_;
};

// Where a replay's clock starts (fixed, so reports repeat): 2026-01-01T00:00:00Z.
Timestamp ReplayEpoch();

// When a replay wakes between arrivals and due steps while jobs are live. kEveryMinute: every
// minute pass, as a server's loop runs (`simulate --every-minute`). kWhenDecisionsMayChange (the
// default): only at the minute passes at which something time-driven may be decided (the
// scheduler's NextTimeDrivenDecision, the failure simulator's next draw, a node's repair or
// reclaim, a resource settling), with quiet scheduler cycles skipped; the same decisions
// (docs/performance.md, "Waking only when the clock may decide").
enum class ReplayWakes { kWhenDecisionsMayChange, kEveryMinute };

StatusOr<SimulationResult> RunScenario(const Scenario& scenario, const Trace& trace,
                                       const Progress& progress,
                                       ReplayWakes wakes = ReplayWakes::kWhenDecisionsMayChange);

}  // namespace trainyard::simulate
