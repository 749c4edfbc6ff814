#pragma once
// The server's what-if runs (services/whatif) as `trainyard simulate` runs them: the scenarios a
// directory holds (payloads/simulate by default), compared in a scratch directory whose
// comparison.json and plots are the run's output.
#include <string>
#include <vector>

#include "services/whatif/whatif_service.h"

namespace trainyard::simulate {

// The scenario files of `dir` (JSON with a "workload"), by name without ".json", sorted.
std::vector<std::string> OfferedScenarios(const std::string& dir);

WhatIfRunner MakeWhatIfRunner(std::string dir);

}  // namespace trainyard::simulate
