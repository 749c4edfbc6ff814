#pragma once
// The whole of a what-if comparison: every scenario read and checked before any runs, each replayed
// through the control plane in memory, the reports written to `out` (docs/simulate.md). Shared by
// `trainyard simulate` and the server's what-if runs.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cmd/simulate/scenario_bounds.h"
#include "cmd/simulate/scenario_files.h"
#include "cmd/simulate/simulation.h"
#include "services/status.h"

namespace trainyard::simulate {

// Called as each simulated day passes: the scenario, simulated days, jobs submitted of the
// trace's, jobs ended, wall seconds.
using CompareProgress =
    std::function<void(const std::string& scenario, double days, int64_t submitted, size_t jobs,
                       int64_t ended, double wall)>;

// What a comparison may read and how large it may be (a server's what-if run: confined and
// bounded).
struct CompareLimits {
  FileRules files;
  ScenarioBounds bounds;
};

Status CompareScenarios(const std::vector<std::string>& paths, std::optional<uint64_t> seed,
                        const std::string& out, const CompareProgress& progress,
                        const CompareLimits& limits = {},
                        ReplayWakes wakes = ReplayWakes::kWhenDecisionsMayChange);

}  // namespace trainyard::simulate
