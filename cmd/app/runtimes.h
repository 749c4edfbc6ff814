#pragma once
// The runtimes there are, each as its registry entry (cmd/app/runtime_registry.h): what `serve`
// offers by --runtime's name, and the simulator alone for `simulate`.
#include "cmd/app/runtime_registry.h"
#include "cmd/app/serve_options.h"

namespace trainyard::app {

// The simulator (workers/sim/): replicas in simulated time, startup simulated; with or without
// its jobs' training output.
RuntimeEntry SimulatorEntry(bool training_log = true);
// Processes of this host (workers/local/), as isolated as the host allows; refused where they
// would not keep projects apart and the API takes tokens. Runs commands on this host.
RuntimeEntry LocalEntry(const ServeOptions& options);
// A Slurm cluster through slurmrestd (workers/slurm/), with the reader of its nodes, so the
// scheduler admits only onto nodes the cluster can run.
RuntimeEntry SlurmEntry(const ServeOptions& options);

// Every runtime `serve` can run jobs on: sim, local, slurm. `options` must outlive it.
RuntimeRegistry ServeRuntimes(const ServeOptions& options);
// What `simulate` replays on: sim.
RuntimeRegistry SimulateRuntimes();

}  // namespace trainyard::app
