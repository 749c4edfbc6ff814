#pragma once
// `trainyard simulate SCENARIO.json [SCENARIO.json …] --out DIR [--seed N]`: replays each
// scenario's trace through the server's control plane in memory and compares them side by side.
#include <CLI/CLI.hpp>

#include "cmd/client_cli.h"

namespace trainyard::cmd {

void AddSimulateCommand(CLI::App& app, CommandRun* run);

}  // namespace trainyard::cmd
