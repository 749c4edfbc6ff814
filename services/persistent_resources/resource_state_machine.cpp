#include "services/persistent_resources/resource_state_machine.h"

#include <string>

namespace trainyard {

StatusOr<ResourceState> ResourceStateMachine::OnRequest(const PersistentResource& r,
                                                        ResourceRequest request) {
  const std::string state(ResourceStateText(r.state));
  switch (request) {
    case ResourceRequest::kEdit:
      if (r.state == ResourceState::kStopping) {
        return FailedPrecondition("PersistentResource " + r.name + " is being deleted");
      }
      return r.state;
    case ResourceRequest::kResize:
      if (r.state != ResourceState::kRunning) {
        return FailedPrecondition("PersistentResource " + r.name + " is " + state +
                                  "; its pools can change only while it is RUNNING");
      }
      return ResourceState::kUpdating;
    case ResourceRequest::kReboot:
      if (r.state != ResourceState::kRunning) {
        return FailedPrecondition("PersistentResource " + r.name + " is " + state +
                                  "; only a RUNNING resource can be rebooted");
      }
      return ResourceState::kRebooting;
    case ResourceRequest::kDelete:
      if (r.state == ResourceState::kStopping) {
        return FailedPrecondition("PersistentResource " + r.name + " is already being deleted");
      }
      return ResourceState::kStopping;
  }
  return FailedPrecondition("unknown request");
}

ResourceAction ResourceStateMachine::NextAction(ResourceState state, const ResourceFacts& f) {
  switch (state) {
    case ResourceState::kProvisioning:
      if (f.cancel_requested) return ResourceAction::kCancelCreation;
      return f.placed && f.booted ? ResourceAction::kMarkRunning : ResourceAction::kWait;
    case ResourceState::kRebooting:
      // The reboot request cleared ready_at: it has not begun yet.
      if (!f.boot_begun) return ResourceAction::kStartReboot;
      return f.booted ? ResourceAction::kMarkRunning : ResourceAction::kWait;
    case ResourceState::kUpdating:
      if (!f.boot_begun) return ResourceAction::kResize;
      return f.booted ? ResourceAction::kMarkRunning : ResourceAction::kWait;
    case ResourceState::kStopping:
      return ResourceAction::kRemove;
    case ResourceState::kRunning:
      return ResourceAction::kAutoscale;
    case ResourceState::kUnspecified:
    case ResourceState::kError:
      break;
  }
  return ResourceAction::kWait;
}

}  // namespace trainyard
