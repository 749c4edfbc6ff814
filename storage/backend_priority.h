#pragma once
// The database side of giving requests priority. The scheduler's thread runs at a lower CPU
// priority (workers/background_priority.h), but most of its work is done by the PostgreSQL
// backend serving its session; on the embedded cluster, which shares this machine's cores with
// the API, that backend is lowered the same way, so a create's backend is not kept waiting for a
// core behind a scheduler pass's (pg_prioritize does this by hand). Not the runtime's: its pass
// heartbeats its leases, which must not wait for a core. Only a backend of our own cluster: for a
// database elsewhere the pid is another machine's.
#include "storage/pg.h"

namespace trainyard::storage {

// Session options for a background pass (no parallel workers: pg.h), whose new sessions'
// backends run `nice` steps below the postmaster's own priority (at most nice 19) when they are
// children of the postmaster `postmaster_pid` (0: none known, nothing is changed). A backend that
// cannot be lowered (not ours, no permission) is left as it is and logged once.
pg::SessionOptions BackgroundSession(int postmaster_pid, int nice = 10);

// The backend serving `conn`, when it is a child of `postmaster_pid`: lowered `nice` steps below
// the postmaster (at most to nice 19).
Status LowerBackendPriority(pg::Connection& conn, int postmaster_pid, int nice);

}  // namespace trainyard::storage
