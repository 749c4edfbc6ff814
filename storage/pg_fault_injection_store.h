#pragma once
// Fault injection requests on PostgreSQL, for the API: insert and read back. The scheduler
// leader applies them (storage/pg_failure_store).
#include "services/fleet/fault_injection.h"
#include "storage/pg.h"
#include "storage/row_codec.h"

namespace trainyard::storage {

// Columns read by DecodeFaultInjection, in this order.
#define TY_INJECTION_COLUMNS                                                                   \
  "id, kind, node, pool_id, zone, count, fraction, " TY_MICROS("request_time") ", " TY_MICROS( \
      "apply_time") ", outcome"

FaultInjection DecodeFaultInjection(const pg::Result& r, int row);

class PgFaultInjectionStore final : public FaultInjectionRepository {
 public:
  explicit PgFaultInjectionStore(pg::Pool& pool) : pool_(pool) {}
  StatusOr<FaultInjection> Insert(const FaultInjection& request) override;
  StatusOr<FaultInjection> Get(int64_t id) override;

 private:
  pg::Pool& pool_;
};

}  // namespace trainyard::storage
