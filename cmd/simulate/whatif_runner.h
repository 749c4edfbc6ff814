#pragma once
// The server's what-if runs (services/whatif) as `trainyard simulate` runs them, in a child
// process of their own (simulate_child.h): the scenarios a directory holds (payloads/simulate by
// default) and the caller's upload are staged in a scratch folder that the run's user owns, the
// upload checked there first, and the child's comparison.json and plots are the run's output.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/simulate/scenario_bounds.h"
#include "cmd/simulate/simulate_child.h"
#include "services/whatif/whatif_service.h"

namespace trainyard::simulate {

// The scenario files of `dir` (JSON with a "workload"), by name without ".json", sorted.
std::vector<std::string> OfferedScenarios(const std::string& dir);

struct WhatIfRunnerOptions {
  std::string dir;                // the offered scenarios
  std::string program;            // the trainyard binary each run executes
  std::optional<ChildUser> user;  // set: runs drop to this user (the server is root)
  Status refused;                 // not OK: every run is refused with it (a root server, no user)
  ChildLimits limits;
  // Chosen: the shipped fleets hold a few hundred nodes and a published trace a few hundred
  // thousand jobs over years; far past that a what-if run is not what this page is for.
  ScenarioBounds bounds{100'000, 500'000, std::chrono::hours(24 * 366 * 5)};
  // An upload is bounded by the request (1 MiB); an offered scenario's files by this.
  uint64_t max_file_bytes = uint64_t{256} << 20;
};

std::unique_ptr<WhatIfRunner> MakeWhatIfRunner(WhatIfRunnerOptions options);

}  // namespace trainyard::simulate
