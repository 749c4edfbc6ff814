#include "cmd/simulate/scenario_bounds.h"

#include <algorithm>

namespace trainyard::simulate {

int64_t FleetNodes(const Fleet& fleet) {
  int64_t nodes = 0;
  for (const CapacityPool& pool : fleet.pools) {
    if (!pool.elastic) nodes += int64_t{pool.units} * std::max(1, pool.hosts_per_unit);
  }
  return nodes;
}

Status CheckScenarioBounds(const Scenario& scenario, const Trace& trace,
                           const ScenarioBounds& bounds) {
  const std::string& src = scenario.source;
  if (const int64_t nodes = FleetNodes(scenario.fleet);
      bounds.max_nodes > 0 && nodes > bounds.max_nodes) {
    return InvalidArgument(src + ": fleet: holds " + std::to_string(nodes) +
                           " nodes (after fleetScale); a run takes at most " +
                           std::to_string(bounds.max_nodes));
  }
  const int64_t jobs = static_cast<int64_t>(trace.jobs.size());
  if (bounds.max_jobs > 0 && jobs > bounds.max_jobs) {
    return InvalidArgument(src + ": workload: the trace has " + std::to_string(jobs) +
                           " jobs; a run takes at most " + std::to_string(bounds.max_jobs) +
                           " (workload.limit takes the first N)");
  }
  Duration span{};
  for (const TraceJob& job : trace.jobs) span = std::max(span, job.submit + job.duration);
  if (bounds.max_span.count() > 0 && span > bounds.max_span) {
    const auto days = [](Duration d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::hours>(d).count() / 24);
    };
    return InvalidArgument(src + ": workload: the trace spans " + days(span) +
                           " days; a run takes at most " + days(bounds.max_span));
  }
  return Status::Ok();
}

}  // namespace trainyard::simulate
