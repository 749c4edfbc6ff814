#pragma once
// How large a scenario a run takes: the server's what-if runs replay scenarios callers send, so
// the fleet, the trace and the simulated span are bounded before anything runs.
#include <cstdint>

#include "cmd/simulate/scenario.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {

struct ScenarioBounds {
  int64_t max_nodes = 0;  // the fleet's nodes after fleetScale; 0: no bound
  int64_t max_jobs = 0;   // the trace's jobs; 0: no bound
  Duration max_span{};    // from the first submit to the last job's recorded end; 0: no bound
};

// The nodes the scenario's fleet holds (elastic CPU pools, which have no node count, aside).
int64_t FleetNodes(const Fleet& fleet);

// INVALID_ARGUMENT naming the scenario's file, the field (fleet, workload) and the bound.
Status CheckScenarioBounds(const Scenario& scenario, const Trace& trace,
                           const ScenarioBounds& bounds);

}  // namespace trainyard::simulate
