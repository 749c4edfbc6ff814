// A persistent resource's lifecycle: which requests each state takes, and what the fleet does next.
#include "services/persistent_resources/resource_state_machine.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

using S = ResourceState;
using A = ResourceAction;
using R = ResourceRequest;

PersistentResource In(S state) {
  PersistentResource r;
  r.name = "projects/1/locations/us-central1/persistentResources/pr";
  r.state = state;
  return r;
}

TEST(ResourceStateMachineTest,
     OnlyARunningResourceIsResizedOrRebootedAndAnyButAStoppingOneDeleted) {
  EXPECT_EQ(*ResourceStateMachine::OnRequest(In(S::kRunning), R::kResize), S::kUpdating);
  EXPECT_EQ(*ResourceStateMachine::OnRequest(In(S::kRunning), R::kReboot), S::kRebooting);
  for (S s : {S::kProvisioning, S::kRunning, S::kError, S::kRebooting, S::kUpdating}) {
    EXPECT_EQ(*ResourceStateMachine::OnRequest(In(s), R::kDelete), S::kStopping);
    EXPECT_EQ(*ResourceStateMachine::OnRequest(In(s), R::kEdit), s) << "labels change, state stays";
  }
  auto resize = ResourceStateMachine::OnRequest(In(S::kProvisioning), R::kResize);
  ASSERT_FALSE(resize.ok());
  EXPECT_EQ(resize.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(resize.status().message(),
            "PersistentResource projects/1/locations/us-central1/persistentResources/pr is "
            "PROVISIONING; its pools can change only while it is RUNNING");
  EXPECT_EQ(ResourceStateMachine::OnRequest(In(S::kUpdating), R::kReboot).status().message(),
            "PersistentResource projects/1/locations/us-central1/persistentResources/pr is "
            "UPDATING; only a RUNNING resource can be rebooted");
  EXPECT_FALSE(ResourceStateMachine::OnRequest(In(S::kStopping), R::kDelete).ok());
  EXPECT_FALSE(ResourceStateMachine::OnRequest(In(S::kStopping), R::kEdit).ok());
}

TEST(ResourceStateMachineTest, TheFleetBootsRebootsResizesAndRemovesInTurn) {
  auto next = [](S s, bool placed, bool begun, bool booted, bool cancel = false) {
    return ResourceStateMachine::NextAction(s, ResourceFacts{placed, begun, booted, cancel});
  };
  EXPECT_EQ(next(S::kProvisioning, false, false, false), A::kWait) << "not placed yet";
  EXPECT_EQ(next(S::kProvisioning, true, true, false), A::kWait) << "still booting";
  EXPECT_EQ(next(S::kProvisioning, true, true, true), A::kMarkRunning);
  EXPECT_EQ(next(S::kProvisioning, true, true, false, /*cancel=*/true), A::kCancelCreation);
  EXPECT_EQ(next(S::kRebooting, true, false, false), A::kStartReboot);
  EXPECT_EQ(next(S::kRebooting, true, true, true), A::kMarkRunning);
  EXPECT_EQ(next(S::kUpdating, true, false, false), A::kResize);
  EXPECT_EQ(next(S::kUpdating, true, true, false), A::kWait);
  EXPECT_EQ(next(S::kRunning, true, true, true), A::kAutoscale);
  EXPECT_EQ(next(S::kStopping, true, true, true), A::kRemove);
  EXPECT_EQ(next(S::kError, false, false, false), A::kWait) << "an ERROR resource waits for delete";
}

}  // namespace
}  // namespace trainyard
