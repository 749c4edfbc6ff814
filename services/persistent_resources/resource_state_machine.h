#pragma once
// The one owner of a persistent resource's lifecycle, as JobStateMachine is of a job's: which
// requests a resource in each state takes and the state they move it to (the API's), and what the
// fleet does next for it (the reconciler's, workers/resource_reconciler.cpp, which only carries
// the action out). The stores apply each move as a compare-and-set on the resource's version and
// state, with the states named (storage/state_sql.h).
//
//   PROVISIONING ──booted──▶ RUNNING ──resize / autoscale──▶ UPDATING ──resized──▶ RUNNING
//        │                     └──reboot──▶ REBOOTING ──booted again──▶ RUNNING
//        └──never placed──▶ ERROR          any but STOPPING ──delete──▶ STOPPING ──▶ (removed)
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

enum class ResourceRequest {
  kEdit,    // display name or labels: the state stays
  kResize,  // new replica counts or autoscaling bounds
  kReboot,
  kDelete,
};

// What the reconciler does for a resource now.
enum class ResourceAction {
  kWait,            // nothing is due
  kMarkRunning,     // its nodes are up: RUNNING (and its operation done)
  kStartReboot,     // a reboot asked and not begun: its nodes boot again
  kResize,          // a resize asked and not begun: take or give back nodes
  kAutoscale,       // RUNNING: grow for waiting jobs or shrink idle nodes
  kRemove,          // STOPPING: stop its jobs, give its nodes back, remove it
  kCancelCreation,  // its creation was cancelled while PROVISIONING: as kRemove, with CANCELLED
};

// What the reconciler knows of a resource besides its state.
struct ResourceFacts {
  bool placed = false;            // the scheduler placed its hold
  bool boot_begun = false;        // ready_at is set: its nodes boot until then
  bool booted = false;            // ready_at has passed
  bool cancel_requested = false;  // a client asked to cancel its operation
};

class ResourceStateMachine {
 public:
  // The state `request` moves a resource to, or FAILED_PRECONDITION saying why not (the API's
  // answer, naming the resource and its state).
  static StatusOr<ResourceState> OnRequest(const PersistentResource& resource,
                                           ResourceRequest request);
  static ResourceAction NextAction(ResourceState state, const ResourceFacts& facts);
};

}  // namespace trainyard
