#pragma once
// Node statements shared by the stores that move nodes with their jobs.
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {

// The columns of a node given back by its holder (`warm`: the SQL condition under which it stays
// READY with its image cache; `now`: the parameter with the virtual time): a node that is down
// (PREEMPTED, FAILED, REPAIRING) stays down, and the failure simulator gives it back once it is
// repaired or gone; a warm one stays READY and cached; any other is given back (DELETED).
#define TY_NODE_DOWN "state IN (:node_preempted, :node_failed, :node_repairing)"
#define TY_NODE_GIVEN_BACK(warm, now)                        \
  "state = CASE WHEN " TY_NODE_DOWN " THEN state WHEN " warm \
  " THEN :node_ready ELSE :node_deleted END, "               \
  "image_cache = CASE WHEN (" warm ") AND NOT " TY_NODE_DOWN \
  " THEN image_cache "                                       \
  "ELSE '{}' END, state_since = CASE WHEN " TY_NODE_DOWN     \
  " THEN state_since ELSE " TY_TS(now) " END "

// A job leaves its nodes ($1 job id, $2 virtual time): reservation nodes and the nodes a
// persistent resource holds stay warm.
inline const StateSql kReleaseJobNodes(
    "UPDATE nodes SET job_id = NULL, preempt_at = NULL, " TY_NODE_GIVEN_BACK(
        "keep_warm OR resource_uid IS NOT NULL", "$2") "WHERE job_id = $1::bigint");

}  // namespace trainyard::storage
