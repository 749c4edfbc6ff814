#include "services/fleet/node_state_machine.h"

namespace trainyard {

using S = NodeState;

bool NodeStateMachine::IsLive(NodeState s) {
  return s == S::kProvisioning || s == S::kReady || s == S::kBusy;
}

bool NodeStateMachine::IsDown(NodeState s) {
  return s == S::kPreempted || s == S::kFailed || s == S::kRepairing;
}

bool NodeStateMachine::IsFree(NodeState s) { return s == S::kReady || s == S::kDeleted; }

NodeState NodeStateMachine::Initial(bool warm) { return warm ? S::kReady : S::kDeleted; }

NodeGivenBack NodeStateMachine::GiveBack(NodeState from, bool warm) {
  const bool down = IsDown(from);
  return NodeGivenBack{*Next(from, NodeEvent::kGivenBack, NodeFacts{false, warm}), warm && !down,
                       down};
}

NodeGivenBack NodeStateMachine::RunThenGiveBack(NodeState from, bool warm) {
  const std::optional<NodeState> busy = Next(from, NodeEvent::kJobRunning);
  NodeGivenBack back = GiveBack(busy.value_or(from), warm);
  back.ran = busy.has_value();
  return back;
}

std::optional<NodeState> NodeStateMachine::Next(NodeState from, NodeEvent event, NodeFacts facts) {
  switch (event) {
    case NodeEvent::kClaimed:
      if (!IsFree(from)) return std::nullopt;
      return from == S::kReady ? S::kBusy : S::kProvisioning;
    case NodeEvent::kHeld:
      if (!IsFree(from)) return std::nullopt;
      return from == S::kReady ? S::kReady : S::kProvisioning;
    case NodeEvent::kUnclaimed:
      if (from == S::kBusy) return S::kReady;
      if (from == S::kProvisioning) return S::kDeleted;
      return std::nullopt;
    case NodeEvent::kUnheld:
      if (from == S::kProvisioning) return S::kDeleted;
      return from == S::kReady ? std::optional<NodeState>(S::kReady) : std::nullopt;
    case NodeEvent::kJobRunning:
      return IsLive(from) ? std::optional<NodeState>(S::kBusy) : std::nullopt;
    case NodeEvent::kGivenBack:
      if (IsDown(from)) return from;  // the failure simulator gives it back once repaired or gone
      return facts.warm ? S::kReady : S::kDeleted;
    case NodeEvent::kReclaimed:
      return IsLive(from) ? std::optional<NodeState>(S::kPreempted) : std::nullopt;
    case NodeEvent::kFailed:
      return IsLive(from) ? std::optional<NodeState>(S::kFailed) : std::nullopt;
    case NodeEvent::kRepairStarted:
      return from == S::kFailed ? std::optional<NodeState>(S::kRepairing) : std::nullopt;
    case NodeEvent::kRepaired:
      if (from != S::kRepairing) return std::nullopt;
      return facts.holds_job ? S::kBusy : facts.warm ? S::kReady : S::kDeleted;
    case NodeEvent::kPreemptedGone:
      if (from != S::kPreempted || facts.holds_job) return std::nullopt;
      return S::kDeleted;
    case NodeEvent::kResourceBooted:
      if (facts.holds_job || (from != S::kProvisioning && from != S::kReady)) return std::nullopt;
      return S::kReady;
    case NodeEvent::kResourceReboot:
      if (facts.holds_job || from != S::kReady) return std::nullopt;
      return S::kProvisioning;
  }
  return std::nullopt;
}

}  // namespace trainyard
