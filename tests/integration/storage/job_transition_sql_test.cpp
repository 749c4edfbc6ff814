// A pass's transitions in one statement (storage/job_transition_sql.h, TransitionsStatement):
// each job's compare-and-set holds on its own, and the values arrive as written, whatever they
// hold.
#include <gtest/gtest.h>

#include "services/jobs/job_state_machine.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 90}]}]})";

class JobTransitionSqlTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }

  static int64_t IdOf(const CustomJob& job) {
    return std::stoll(job.name.substr(job.name.rfind('/') + 1));
  }
  StateUpdate FailInQueue(const CustomJob& job, int64_t version, const std::string& message) {
    auto t = JobStateMachine::FailInQueue(JobSnapshot{IdOf(job), version, JobState::kQueued},
                                          clock_.Now(), message);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return StateUpdate{IdOf(job), version, std::move(t).value(), std::nullopt};
  }
  CustomJob Get(const CustomJob& job) {
    auto got = service_->Get(JobRef{ParentRef{"demo", "us-central1"}, std::to_string(IdOf(job))});
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : CustomJob{};
  }
  int64_t Events(const CustomJob& job) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec("SELECT count(*) FROM job_events WHERE job_id = $1::bigint",
                           {std::to_string(IdOf(job))});
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }
};

TEST_F(JobTransitionSqlTest, APassAppliesEachJobsTransitionOnItsOwnCompareAndSet) {
  CustomJob first = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob moved = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  CustomJob last = CreateGang("demo", SchedulingStrategy::kStandard, 1, "600s");
  const int64_t events_before = Events(moved);
  // Quotes, a backslash, braces, commas and the word NULL: an array literal's every special.
  const std::string odd = R"(quota "a,b" {x} \ NULL, and more)";
  auto applied = store_->ApplyTransitions({FailInQueue(first, 1, "plain"),
                                           FailInQueue(moved, 7, "stale"),  // the job is at 1
                                           FailInQueue(last, 1, odd)});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, (std::vector<bool>{true, false, true}));

  CustomJob got = Get(first);
  EXPECT_EQ(got.state, JobState::kFailed);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->message, "plain");
  EXPECT_EQ(Get(moved).state, JobState::kQueued);
  EXPECT_EQ(Events(moved), events_before) << "nothing recorded for a transition that did not apply";
  got = Get(last);
  EXPECT_EQ(got.state, JobState::kFailed);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->message, odd);
  EXPECT_EQ(Events(last), events_before + 1);
}

}  // namespace
}  // namespace trainyard
