#include "cmd/app/serve_whatif.h"

#include <filesystem>

#include "cmd/simulate/simulate_child.h"
#include "cmd/simulate/whatif_runner.h"
#include "services/log.h"
#include "workers/local/replica_sandbox.h"

namespace trainyard::app {

std::unique_ptr<WhatIfService> MakeWhatIfService(const std::string& dir, const Clock& clock) {
  simulate::WhatIfRunnerOptions options;
  options.dir = dir;
  std::error_code ec;
  options.program = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  auto user = simulate::WhatIfUser(local::kReplicaUser);
  if (user.ok()) {
    options.user = *user;
  } else {
    options.refused = user.status();
    LogJson(LogLevel::kWarn, "whatif_refused", {{"error", user.status().message()}});
  }
  return std::make_unique<WhatIfService>(simulate::OfferedScenarios(dir),
                                         simulate::MakeWhatIfRunner(std::move(options)),
                                         [&clock] { return clock.Now(); });
}

}  // namespace trainyard::app
