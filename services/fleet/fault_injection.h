#pragma once
// Faults asked for by tests and demos (POST /trainyard/v1/fleet:inject…): checked against the
// fleet, stored durably, and applied by the scheduler leader's failure simulator in virtual time.
#include <cstdint>
#include <optional>
#include <string>

#include "services/clock.h"
#include "services/fleet/fleet.h"
#include "services/status.h"

namespace trainyard {

enum class FaultKind { kNodeFailure, kSpotPreemption };
std::string_view FaultKindName(FaultKind kind);  // "NODE_FAILURE", "SPOT_PREEMPTION"
std::optional<FaultKind> ParseFaultKind(std::string_view name);

struct FaultInjection {
  int64_t id = 0;
  FaultKind kind = FaultKind::kNodeFailure;
  // Target: one node (by name), or for spot preemptions a pool or a zone.
  std::string node;
  std::string pool_id;
  std::string zone;
  // How many of the target's live spot nodes: a count, or a fraction (rounded up).
  std::optional<int64_t> count;
  std::optional<double> fraction;
  Timestamp request_time{};
  std::optional<Timestamp> apply_time;
  std::string outcome;  // what the simulator did, once applied
};

// INVALID_ARGUMENT naming the field when `request` does not fit `fleet`.
Status ValidateFaultInjection(const Fleet& fleet, const FaultInjection& request);

class FaultInjectionRepository {
 public:
  virtual ~FaultInjectionRepository() = default;
  // Stores the request and returns it with its id; committed when this returns.
  virtual StatusOr<FaultInjection> Insert(const FaultInjection& request) = 0;
  virtual StatusOr<FaultInjection> Get(int64_t id) = 0;
};

class FaultInjector {
 public:
  FaultInjector(const Fleet& fleet, FaultInjectionRepository& repository, const Clock& clock)
      : fleet_(fleet), repository_(repository), clock_(clock) {}
  StatusOr<FaultInjection> Inject(FaultInjection request);
  StatusOr<FaultInjection> Get(int64_t id) { return repository_.Get(id); }

 private:
  const Fleet& fleet_;
  FaultInjectionRepository& repository_;
  const Clock& clock_;
};

}  // namespace trainyard
