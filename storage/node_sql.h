#pragma once
// Node statements shared by the stores that move nodes with their jobs.
#include "storage/row_codec.h"

namespace trainyard::storage {

// A job leaves its nodes ($1 job id, $2 virtual time): reservation nodes and the nodes a
// persistent resource holds stay warm with their image cache, the rest are given back (DELETED). A
// node that is down (PREEMPTED, FAILED, REPAIRING) stays down; the failure simulator gives it back
// once it is repaired or gone.
inline constexpr const char* kReleaseJobNodes =
    "UPDATE nodes SET job_id = NULL, preempt_at = NULL, "
    "state = CASE WHEN state IN (4, 5, 6) THEN state "
    "WHEN keep_warm OR resource_uid IS NOT NULL THEN 2 ELSE 7 END, "
    "image_cache = CASE WHEN (keep_warm OR resource_uid IS NOT NULL) AND state NOT IN (4, 5, 6) "
    "THEN image_cache ELSE '{}' END, "
    "state_since = CASE WHEN state IN (4, 5, 6) THEN state_since ELSE " TY_TS("$2") " END "
    "WHERE job_id = $1::bigint";

}  // namespace trainyard::storage
