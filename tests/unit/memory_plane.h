#pragma once
// A control plane over the memory stores with the sim runtime and a manual clock, as `simulate`
// builds it: for unit tests that drive the API's services, the scheduler or the executor.
#include <memory>
#include <string>
#include <vector>

#include "api/wire/fleet_codec.h"
#include "cmd/app/control_plane.h"
#include "cmd/app/memory_adapters.h"
#include "workers/sim/sim_runtime.h"

namespace trainyard::testing {

// One replica of an A3 Mega node (8 H100) running the sim image for `duration` ("3600s"), with
// `env` besides.
inline WorkerPoolSpec A3MegaReplica(const std::string& duration, std::vector<EnvVar> env = {}) {
  WorkerPoolSpec pool;
  pool.machine_spec = MachineSpec{};
  pool.machine_spec->machine_type = "a3-megagpu-8g";
  pool.machine_spec->accelerator_type = AcceleratorType::kNvidiaH100Mega80gb;
  pool.machine_spec->accelerator_count = 8;
  pool.replica_count = 1;
  pool.container_spec = ContainerSpec{};
  pool.container_spec->image_uri = "nemo:24.07";
  pool.container_spec->env = std::move(env);
  pool.container_spec->env.push_back({"TRAINYARD_SIM_DURATION", duration});
  return pool;
}

struct MemoryPlane {
  // Parses `fleet_json` and builds the plane on it with `options`; the executor leases as `owner`.
  Status Start(const char* fleet_json, const std::string& owner,
               app::ControlPlaneOptions options = {}) {
    auto fleet = ParseFleet(fleet_json, "test");
    if (!fleet.ok()) return fleet.status();
    this->fleet = std::move(fleet).value();
    options.executor.owner = owner;
    auto built = app::ControlPlane::Build(memory.ports(), this->fleet, clock, runtime, options);
    if (!built.ok()) return built.status();
    plane = std::move(built).value();
    return Status::Ok();
  }

  ManualClock clock{FromUnixMicros(1'800'000'000'000'000)};
  Fleet fleet;
  app::MemoryAdapters memory;
  sim::SimRuntime runtime;
  std::unique_ptr<app::ControlPlane> plane;
};

}  // namespace trainyard::testing
