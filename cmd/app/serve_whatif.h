#pragma once
// The console's what-if runs as `serve` offers them: the scenarios of a directory, one run at a
// time in the background, each by this binary's `simulate` in a child process.
#include <memory>
#include <string>

#include "services/clock.h"
#include "services/whatif/whatif_service.h"

namespace trainyard::app {

// Runs as the replicas' user when the server is root; without that user they are refused (and
// the refusal logged, `whatif_refused`) rather than run as root. `clock` must outlive it.
std::unique_ptr<WhatIfService> MakeWhatIfService(const std::string& dir, const Clock& clock);

}  // namespace trainyard::app
