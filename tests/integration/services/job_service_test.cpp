// JobService, PgJobStore and JobExecutor against a real PostgreSQL, with a manual clock: every
// state the API shows is reached by advancing time by hand, never by sleeping.
#include <gtest/gtest.h>

#include <set>

#include "api/wire/fleet_codec.h"
#include "services/jobs/job_service.h"
#include "services/operations/operation_service.h"
#include "storage/pg.h"
#include "storage/pg_job_store.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_scheduler_store.h"
#include "tests/integration/sim_fixture.h"
#include "tests/integration/small_job.h"
#include "tests/integration/test_database.h"
#include "workers/job_executor.h"
#include "workers/scheduler_loop.h"

namespace trainyard {
namespace {

using testing::SmallJob;

using std::chrono::seconds;

// Booting an n1-standard-4 takes 3s; no image pull.
constexpr const char* kFleet = R"({"bootTime": {"default": "3s"}, "imageSizeGb": {"default": 0},
    "zones": [{"zone": "us-central1-a", "pools": [
      {"machineType": "n1-standard-4", "model": "ON_DEMAND", "nodes": 4}]}]})";

class JobServiceTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }

  // One scheduling cycle: QUEUED jobs that fit become PENDING on their nodes.
  void Schedule() {
    ASSERT_NO_FATAL_FAILURE(WaitForFeed());
    auto pass = scheduler_->RunOnce();
    ASSERT_TRUE(pass.ok()) << pass.status().message();
    EXPECT_TRUE(pass->leading);
  }

  JobExecutor Executor(const std::string& owner, seconds lease = seconds(60)) {
    JobExecutorOptions options;
    options.owner = owner;
    options.lease = lease;
    return JobExecutor(*store_, *store_, runtime_, clock_, options);
  }

  CustomJob Create(CustomJob job = SmallJob()) {
    auto created = service_->Create(parent_, std::move(job), "req-1");
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : CustomJob{};
  }

  JobRef Ref(const CustomJob& job) {
    return JobRef{parent_, job.name.substr(job.name.rfind('/') + 1)};
  }

  JobState StateOf(const CustomJob& job) {
    auto got = service_->Get(Ref(job));
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? got->state : JobState::kUnspecified;
  }

  ParentRef parent_{"demo-project", "us-central1"};
};

TEST_F(JobServiceTest, CreatedJobIsQueuedAndNamedByProjectNumber) {
  CustomJob job = Create();
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.create_time, clock_.Now());
  ASSERT_EQ(job.name.find("projects/"), 0u);
  std::string number = job.name.substr(9, job.name.find('/', 9) - 9);
  EXPECT_NE(number, "demo-project");
  // The project number and the project id name the same job.
  auto by_number = service_->Get(JobRef{{number, "us-central1"}, Ref(job).job_id});
  ASSERT_TRUE(by_number.ok()) << by_number.status().message();
  EXPECT_EQ(by_number->name, job.name);
  EXPECT_EQ(Ref(job).job_id.size(), 19u);
}

TEST_F(JobServiceTest, InvalidJobIsRefusedAndNothingIsWritten) {
  CustomJob bad = SmallJob();
  bad.job_spec.worker_pool_specs[0].machine_spec->machine_type = "no-such-machine";
  auto created = service_->Create(parent_, bad, "");
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), Code::kInvalidArgument);
  auto listed = service_->List(ListJobsRequest{parent_, std::nullopt, 100, std::nullopt});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->jobs.empty());
}

TEST_F(JobServiceTest, ExecutorDrivesAJobToSucceededOnTheClock) {
  CustomJob job = Create();
  JobExecutor executor = Executor("exec-a");
  ASSERT_TRUE(executor.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kQueued) << "only the scheduler admits";
  Schedule();
  EXPECT_EQ(StateOf(job), JobState::kPending);
  clock_.Advance(seconds(2));
  ASSERT_TRUE(executor.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kPending) << "provisioning takes 3s";
  clock_.Advance(seconds(1));
  ASSERT_TRUE(executor.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kRunning);
  Timestamp started = clock_.Now();
  clock_.Advance(seconds(10));
  ASSERT_TRUE(executor.RunOnce().ok());
  auto done = service_->Get(Ref(job));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, JobState::kSucceeded);
  EXPECT_EQ(done->start_time, started);
  EXPECT_EQ(done->end_time, clock_.Now());
  EXPECT_FALSE(done->error.has_value());
}

TEST_F(JobServiceTest, NextDueIsTheEarliestStepTheExecutorHolds) {
  EXPECT_EQ(*store_->NextDue("exec-a"), std::nullopt) << "nothing held";
  CustomJob job = Create();
  Schedule();
  JobExecutor executor = Executor("exec-a");
  ASSERT_TRUE(executor.RunOnce().ok());  // claims the admitted job: due when its nodes boot (3s)
  EXPECT_EQ(*store_->NextDue("exec-a"), clock_.Now() + seconds(3));
  EXPECT_EQ(*store_->NextDue("exec-b"), std::nullopt) << "another executor holds nothing";
  clock_.Advance(seconds(3));
  ASSERT_TRUE(executor.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kRunning);
  EXPECT_EQ(*store_->NextDue("exec-a"), clock_.Now() + seconds(10)) << "the run ends in 10s";
  clock_.Advance(seconds(10));
  ASSERT_TRUE(executor.RunOnce().ok());
  EXPECT_EQ(*store_->NextDue("exec-a"), std::nullopt) << "a finished job is given back";
}

TEST_F(JobServiceTest, CancelGoesThroughCancellingToCancelledWithCodeOne) {
  CustomJob job = Create();
  JobExecutor executor = Executor("exec-a");
  Schedule();  // PENDING
  ASSERT_TRUE(executor.RunOnce().ok());
  ASSERT_TRUE(service_->Cancel(Ref(job)).ok());
  EXPECT_EQ(StateOf(job), JobState::kCancelling);
  EXPECT_TRUE(service_->Cancel(Ref(job)).ok()) << "a second cancel while CANCELLING is a no-op";
  ASSERT_TRUE(executor.RunOnce().ok());
  auto done = service_->Get(Ref(job));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, JobState::kCancelled);
  ASSERT_TRUE(done->error.has_value());
  EXPECT_EQ(done->error->code, 1);
  EXPECT_TRUE(done->end_time.has_value());
  Status again = service_->Cancel(Ref(job));
  EXPECT_EQ(again.code(), Code::kFailedPrecondition);
}

TEST_F(JobServiceTest, ALeaseHeldByALiveExecutorIsNotTaken) {
  Create();
  Schedule();
  JobExecutor a = Executor("exec-a", seconds(60));
  JobExecutor b = Executor("exec-b", seconds(60));
  ASSERT_TRUE(a.RunOnce().ok());
  auto claimed = store_->Claim("exec-b", 100, seconds(60));
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->claimed, 0);
  auto steps = b.RunOnce();
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(*steps, 0);
}

TEST_F(JobServiceTest, AnExpiredLeaseIsTakenOverAndTheJobContinues) {
  CustomJob job = Create();
  Schedule();
  JobExecutor a = Executor("exec-a", seconds(60));
  ASSERT_TRUE(a.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kPending);
  // Executor A "died" right after its pass, long enough ago that its leases ran out.
  auto conn = pool_->Acquire();
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)
                  ->Exec("UPDATE custom_jobs SET lease_expires_at = now() - interval '1 second' "
                         "WHERE lease_owner = 'exec-a'")
                  .ok());
  JobExecutor b = Executor("exec-b", seconds(60));
  clock_.Advance(seconds(3));
  ASSERT_TRUE(b.RunOnce().ok());
  EXPECT_EQ(StateOf(job), JobState::kRunning);
  // /metrics counts the takeover.
  metrics::Exposition e;
  b.metrics().Write(e);
  EXPECT_NE(e.text().find("\ntrainyard_executor_leases_expired_total 1\n"), std::string::npos);
  EXPECT_NE(e.text().find("\ntrainyard_executor_leases_taken_over_total 1\n"), std::string::npos)
      << e.text();
  // A is fenced out: its stale view cannot move the job any more.
  auto a_steps = store_->Claim("exec-a", 100, seconds(60));
  ASSERT_TRUE(a_steps.ok());
  EXPECT_EQ(a_steps->claimed, 0);
}

TEST_F(JobServiceTest, AnExecutorWhoseLeaseMayHaveRunOutDoesNothing) {
  CustomJob job = Create();
  Schedule();
  // A lease of 0 s is never surely held: the executor neither launches nor moves the job, so
  // whoever takes the job over next is the only one acting on it.
  const int64_t id = std::stoll(Ref(job).job_id);
  auto before = store_->ByIds({id});
  ASSERT_TRUE(before.ok() && before->size() == 1);
  JobExecutor a = Executor("exec-a", seconds(0));
  ASSERT_TRUE(a.RunOnce().ok());
  auto after = store_->ByIds({id});
  ASSERT_TRUE(after.ok() && after->size() == 1);
  EXPECT_EQ(after->front().version, before->front().version) << "no transition was written";
  EXPECT_FALSE(after->front().run.has_value()) << "nothing was launched";
  // Another executor with a lease it holds launches the job.
  JobExecutor b = Executor("exec-b", seconds(60));
  clock_.Advance(seconds(3));
  ASSERT_TRUE(b.RunOnce().ok());
  auto taken = store_->ByIds({id});
  ASSERT_TRUE(taken.ok() && taken->size() == 1);
  EXPECT_TRUE(taken->front().run.has_value());
}

TEST_F(JobServiceTest, StaleVersionLosesTheCompareAndSet) {
  CustomJob job = Create();
  ASSERT_TRUE(service_->Cancel(Ref(job)).ok());  // version 1 → 2
  auto transition = JobStateMachine::Transition({std::stoll(Ref(job).job_id), 1, JobState::kQueued},
                                                JobState::kPending, clock_.Now(), "stale");
  ASSERT_TRUE(transition.ok());
  StateUpdate update;
  update.id = std::stoll(Ref(job).job_id);
  update.expected_version = 1;
  update.transition = *transition;
  auto applied = store_->ApplyTransition(update);
  ASSERT_TRUE(applied.ok());
  EXPECT_FALSE(*applied);
  EXPECT_EQ(StateOf(job), JobState::kCancelling);
}

TEST_F(JobServiceTest, DeleteNeedsATerminalJobAndReturnsAFinishedOperation) {
  CustomJob job = Create();
  auto early = service_->Delete(Ref(job));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), Code::kFailedPrecondition);

  ASSERT_TRUE(service_->Cancel(Ref(job)).ok());
  JobExecutor executor = Executor("exec-a");
  ASSERT_TRUE(executor.RunOnce().ok());
  auto op = service_->Delete(Ref(job));
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_TRUE(op->done);
  EXPECT_EQ(op->metadata_type, "google.cloud.aiplatform.v1.DeleteOperationMetadata");
  EXPECT_EQ(service_->Get(Ref(job)).status().code(), Code::kNotFound);
  // Its history goes with it (job_events has no foreign key to cascade: migrations/0020).
  auto conn = pool_->Acquire();
  ASSERT_TRUE(conn.ok());
  auto events =
      (*conn)->Exec("SELECT count(*) FROM job_events WHERE job_id = $1::bigint", {Ref(job).job_id});
  ASSERT_TRUE(events.ok()) << events.status().message();
  EXPECT_EQ(events->GetInt64(0, 0), 0);

  OperationRef ref{parent_, "", "", std::to_string(op->id)};
  OperationService operations(*projects_, *operations_, clock_);
  auto read = operations.Get(ref);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->id, op->id);
  EXPECT_TRUE(read->done);
}

TEST_F(JobServiceTest, ListPagesNewestFirstWithoutRepeatsOrGaps) {
  std::vector<std::string> created;
  for (int i = 0; i < 5; ++i) {
    created.push_back(Create(SmallJob("job-" + std::to_string(i))).name);
    clock_.Advance(seconds(1));
  }
  std::vector<std::string> seen;
  ListJobsRequest request{parent_, std::nullopt, 2, std::nullopt};
  int pages = 0;
  do {
    auto page = service_->List(request);
    ASSERT_TRUE(page.ok()) << page.status().message();
    for (const auto& job : page->jobs) seen.push_back(job.name);
    request.after = page->next;
    ++pages;
  } while (request.after);
  EXPECT_EQ(pages, 3);
  std::vector<std::string> newest_first(created.rbegin(), created.rend());
  EXPECT_EQ(seen, newest_first);
}

TEST_F(JobServiceTest, ListFiltersOnLabels) {
  CustomJob tagged = SmallJob("tagged");
  tagged.labels["team"] = "nlp";
  Create(tagged);
  Create(SmallJob("plain"));
  FilterExpr filter;
  filter.comparison.field = FilterField::kLabel;
  filter.comparison.label_key = "team";
  filter.comparison.op = FilterOp::kEq;
  filter.comparison.text = "nlp";
  auto page = service_->List(ListJobsRequest{parent_, filter, 100, std::nullopt});
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].display_name, "tagged");
}

TEST_F(JobServiceTest, UnknownProjectNumberIsNotFound) {
  auto got = service_->Get(JobRef{{"999999999999", "us-central1"}, "1234567890123456789"});
  EXPECT_EQ(got.status().code(), Code::kNotFound);
  auto created = service_->Create({"999999999999", "us-central1"}, SmallJob(), "");
  EXPECT_EQ(created.status().code(), Code::kNotFound);
}

TEST_F(JobServiceTest, AcknowledgedJobsSurviveANewProcessView) {
  CustomJob job = Create();
  // A fresh pool and fresh repositories: nothing is served from the old process's memory.
  auto pool = pg::Pool::Create(conninfo_, 1, std::chrono::milliseconds(2000));
  ASSERT_TRUE(pool.ok());
  storage::PgProjectRepository projects(**pool);
  storage::PgJobStore store(**pool);
  JobService restarted(projects, store, clock_);
  auto got = restarted.Get(Ref(job));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->display_name, job.display_name);
  EXPECT_EQ(got->create_time, job.create_time);
}

}  // namespace
}  // namespace trainyard
