#pragma once
#include <memory>

#include "services/clock.h"
#include "storage/pg.h"

namespace trainyard::storage {

// The simulator's virtual clock, anchored in the database so that every process, and a restarted
// one, agrees on virtual now. A new speed re-anchors at the current virtual now, so time never
// jumps backwards across a restart.
StatusOr<std::unique_ptr<ScaledClock>> LoadSimClock(pg::Pool& pool, double speed);

}  // namespace trainyard::storage
