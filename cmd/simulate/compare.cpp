#include "cmd/simulate/compare.h"

#include <chrono>
#include <cstdio>

#include "cmd/simulate/report.h"
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/simulation.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {

Status CompareScenarios(const std::vector<std::string>& paths, std::optional<uint64_t> seed,
                        const std::string& out, const CompareProgress& progress,
                        const CompareLimits& limits, ReplayWakes wakes) {
  // Every scenario is read and checked before any runs: a bad one never leaves half a comparison.
  std::vector<Scenario> scenarios;
  std::vector<Trace> traces;
  for (const std::string& path : paths) {
    TY_ASSIGN_OR_RETURN(Scenario scenario, LoadScenario(path, seed, limits.files));
    for (const Scenario& other : scenarios) {
      if (other.name == scenario.name) {
        return InvalidArgument(path + ": name: \"" + other.name + "\" is also " + other.source +
                               "'s; each scenario needs its own");
      }
    }
    TY_ASSIGN_OR_RETURN(Trace trace, ReadTrace(scenario.workload));
    TY_RETURN_IF_ERROR(CheckScenarioBounds(scenario, trace, limits.bounds));
    for (const TraceJob& job : trace.jobs) TY_RETURN_IF_ERROR(BuildJob(scenario, job).status());
    scenarios.push_back(std::move(scenario));
    traces.push_back(std::move(trace));
  }
  std::vector<ScenarioReport> reports;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& scenario = scenarios[i];
    const auto started = std::chrono::steady_clock::now();
    auto wall = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    auto day = [&](int64_t created, int64_t ended, Duration simulated) {
      if (progress) {
        progress(scenario.name, std::chrono::duration<double>(simulated).count() / 86400, created,
                 traces[i].jobs.size(), ended, wall());
      }
    };
    TY_ASSIGN_OR_RETURN(SimulationResult result, RunScenario(scenario, traces[i], day, wakes));
    const double seconds = wall();
    if (result.unsettled_events > 0) {
      std::fprintf(stderr,
                   "simulate: %s: warning: at %lld event times the scheduler was still changing "
                   "after %d passes and the replay moved on (timing.json: unsettled_events)\n",
                   scenario.name.c_str(), static_cast<long long>(result.unsettled_events),
                   kSettlePasses);
    }
    TY_ASSIGN_OR_RETURN(ScenarioReport report, WriteScenario(out, scenario, traces[i], result));
    TY_RETURN_IF_ERROR(WriteTiming(out, scenario, result, seconds));
    reports.push_back(std::move(report));
  }
  return WriteComparison(out, reports);
}

}  // namespace trainyard::simulate
