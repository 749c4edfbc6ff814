#pragma once
// The client verb groups of the `trainyard` binary, built on the SDK (sdk/).
#include <CLI/CLI.hpp>

#include "cmd/client_cli.h"

namespace trainyard::cmd {

// `trainyard jobs create|get|list|cancel|delete|wait|logs`. Sets *run when one of them is chosen.
void AddJobsCommand(CLI::App& app, CommandRun* run);
// `trainyard ops get|list|wait|cancel|delete`.
void AddOpsCommand(CLI::App& app, CommandRun* run);
// `trainyard resources create|get|list|update|reboot|delete`.
void AddResourcesCommand(CLI::App& app, CommandRun* run);
// `trainyard tokens create|list|revoke`, on the database directly (not a client of the API).
void AddTokensCommand(CLI::App& app, CommandRun* run);

}  // namespace trainyard::cmd
