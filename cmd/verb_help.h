#pragma once
// The help of the `trainyard` binary as a whole: `trainyard --help` lists every verb, nested ones
// as `jobs create`, one line each, walked from the CLI11 tree so that it cannot fall out of step
// with it; and every verb's --help ends with an example that runs as written
// (tests/e2e/cli_help_test.sh runs them all).
#include <CLI/CLI.hpp>

namespace trainyard::cmd {

// Call once, after every verb has been added to `app`: the top-level --help then lists the verbs
// (--help-all: CLI11's tree, each command's flags and each group's verbs), and each verb's footer
// ends with its example.
void AddVerbHelp(CLI::App& app);

}  // namespace trainyard::cmd
