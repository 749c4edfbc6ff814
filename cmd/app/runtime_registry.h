#pragma once
// The runtimes a server can run jobs on, by the name `--runtime` gives: each entry says what its
// runtime brings (the factory, a reader of the cluster's capacity if it has one, whether admitted
// work waits out a simulated startup), so the composition root never reaches into a concrete
// runtime nor asks for one by name, and a command offers only the ones it registers (`simulate`
// offers the simulator alone: cmd/app/runtimes.h).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "services/fleet/external_capacity.h"
#include "services/fleet/fleet.h"
#include "services/runtime/runtime.h"
#include "services/status.h"

namespace trainyard::app {

// A runtime as made for a fleet, with what comes with it; the control plane built on it must not
// outlive it.
struct RuntimeBundle {
  std::unique_ptr<Runtime> runtime;
  // A real cluster's word on its nodes, which the scheduler takes as out of service (Slurm's
  // reader, already reading); null: the fleet file's word alone. Declared after the runtime, so
  // it stops first.
  std::unique_ptr<ExternalCapacity> capacity;
  // Admitted work waits out the fleet's simulated boot and image pull (the simulator); real
  // processes start at once.
  bool simulated_startup = false;
};

struct RuntimeEntry {
  using Factory = std::function<StatusOr<std::unique_ptr<Runtime>>(const Fleet& fleet)>;
  // Made after the runtime; it reads `fleet`, which must outlive it.
  using CapacityFactory =
      std::function<StatusOr<std::unique_ptr<ExternalCapacity>>(const Fleet& fleet)>;

  Factory make;
  CapacityFactory capacity;  // empty: none
  bool simulated_startup = false;
  // Replicas are processes of this host running what the job says: whoever may create a job may
  // run a command here (refused on a non-loopback address unless the operator says so).
  bool runs_commands_on_host = false;
};

class RuntimeRegistry {
 public:
  void Register(std::string name, RuntimeEntry entry);
  // The entry `name` names; INVALID_ARGUMENT naming the known ones otherwise.
  StatusOr<const RuntimeEntry*> Find(const std::string& name) const;
  // The runtime `name` names, made for `fleet` with its capacity reader; INVALID_ARGUMENT naming
  // the known ones for a name not registered.
  StatusOr<RuntimeBundle> Make(const std::string& name, const Fleet& fleet) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, RuntimeEntry> entries_;
};

}  // namespace trainyard::app
