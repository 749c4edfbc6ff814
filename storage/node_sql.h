#pragma once
// Node statements shared by the stores that move nodes with their jobs.
#include "storage/row_codec.h"

namespace trainyard::storage {

// The columns of a node given back by its holder (`warm`: the SQL condition under which it stays
// READY with its image cache; `now`: the parameter with the virtual time): a node that is down
// (PREEMPTED, FAILED, REPAIRING) stays down, and the failure simulator gives it back once it is
// repaired or gone; a warm one stays READY and cached; any other is given back (DELETED).
#define TY_NODE_GIVEN_BACK(warm, now)                                                       \
  "state = CASE WHEN state IN (4, 5, 6) THEN state WHEN " warm                              \
  " THEN 2 ELSE 7 END, "                                                                    \
  "image_cache = CASE WHEN (" warm                                                          \
  ") AND state NOT IN (4, 5, 6) THEN image_cache "                                          \
  "ELSE '{}' END, state_since = CASE WHEN state IN (4, 5, 6) THEN state_since ELSE " TY_TS( \
      now) " END "

// A job leaves its nodes ($1 job id, $2 virtual time): reservation nodes and the nodes a
// persistent resource holds stay warm.
inline constexpr const char* kReleaseJobNodes =
    "UPDATE nodes SET job_id = NULL, preempt_at = NULL, " TY_NODE_GIVEN_BACK(
        "keep_warm OR resource_uid IS NOT NULL", "$2") "WHERE job_id = $1::bigint";

}  // namespace trainyard::storage
