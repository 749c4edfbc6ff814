#pragma once
// A trace's job as the CustomJob a user would have sent: the machine shape its GPUs fit (up to a
// node's GPUs: one node; more: whole nodes of the largest shape as a gang), the consumption model
// the scenario's placement rules give its project and size, and the simulator's run time.
#include "cmd/simulate/scenario.h"
#include "cmd/simulate/trace.h"

namespace trainyard::simulate {

struct BuiltJob {
  CustomJob body;
  std::string machine_type;
  int64_t nodes = 0;
  std::string model;  // the placement rule's (STANDARD, SPOT, …)
};

// How much longer than its recorded run a cancelled job's program is made to run: the replay
// cancels it at its recorded run time, well before the program would end by itself.
inline constexpr Duration kCancelledJobSlack = std::chrono::hours(24 * 365);

// INVALID_ARGUMENT naming the trace line when no shape fits the job.
StatusOr<BuiltJob> BuildJob(const Scenario& scenario, const TraceJob& job);

}  // namespace trainyard::simulate
