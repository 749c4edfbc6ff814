// What a job's cost does through its life, as services/jobs applies and shows it: priced at
// admission, accrued when the admission ends, shown to now in between.
#include <gtest/gtest.h>

#include "services/cost/accrual.h"
#include "services/cost/price.h"
#include "services/jobs/job_record_update.h"
#include "services/jobs/job_service.h"
#include "services/jobs/job_state_machine.h"

namespace trainyard {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const Timestamp kT0 = FromUnixMicros(1'700'000'000'000'000);

JobRecord QueuedJob() {
  JobRecord record;
  record.id = 7;
  record.job.state = JobState::kQueued;
  record.job.create_time = kT0;
  record.job.update_time = kT0;
  record.state_since = kT0;
  return record;
}

void Apply(StatusOr<JobTransition> t, JobRecord& record) {
  ASSERT_TRUE(t.ok()) << t.status().message();
  ApplyToRecord(*t, record);
}

JobSnapshot Snapshot(const JobRecord& record) {
  return SnapshotOf(record.id, record.version, record.job);
}

// Two a3-megagpu-8g nodes (8 H100 Mega each) from a spot pool.
JobAdmission SpotAdmission() {
  JobAdmission a;
  a.zone = "us-central1-a";
  PlacedPoolStatus& pool = a.pools.emplace_back();
  pool.pool_id = "us-central1-a/a3-megagpu-8g/SPOT";
  pool.machine_type = "a3-megagpu-8g";
  pool.consumption_model = "SPOT";
  pool.units = 2;
  cost::PricedNode node;
  node.gpu = AcceleratorType::kNvidiaH100Mega80gb;
  node.gpus = 8;
  a.hourly_price_micros =
      cost::NodesHourlyMicros(cost::NodeHourPrice(node, ConsumptionModel::kSpot, ""), 2);
  return a;
}

TEST(JobCostTest, ASpotJobPaysTheSpotRateForTheHoursItWasAdmitted) {
  JobRecord record = QueuedJob();
  const JobAdmission admission = SpotAdmission();
  EXPECT_EQ(admission.hourly_price_micros, 73'600'000) << "2 × 8 × $11.50 × 40%";

  Apply(JobStateMachine::Admit(Snapshot(record), kT0, admission, "admitted"), record);
  EXPECT_DOUBLE_EQ(record.job.trainyard->hourly_price_usd, 73.6);
  Apply(JobStateMachine::Transition(Snapshot(record), JobState::kRunning, kT0 + minutes(5), "up"),
        record);
  EXPECT_EQ(record.cost_micros, 0) << "nothing is stored until the admission ends";

  JobRecord read = record;
  AccrueToNow(read, kT0 + minutes(30));
  EXPECT_DOUBLE_EQ(read.job.trainyard->cost_usd, 73.6 / 2) << "a read shows the cost to now";

  // Reclaimed after 90 minutes: the admission's cost is accrued and the job queues again.
  Apply(JobStateMachine::Requeue(Snapshot(record), kT0 + minutes(90), "reclaimed", true), record);
  EXPECT_EQ(record.cost_micros, 110'400'000) << "$73.60 an hour for 1.5 hours";
  EXPECT_EQ(record.cost_micros, cost::AccruedMicros(admission.hourly_price_micros, minutes(90)));
  EXPECT_DOUBLE_EQ(record.job.trainyard->cost_usd, 110.4);
  EXPECT_EQ(record.job.trainyard->hourly_price_usd, 0) << "queued again: no price";

  read = record;
  AccrueToNow(read, kT0 + hours(5));
  EXPECT_DOUBLE_EQ(read.job.trainyard->cost_usd, 110.4) << "a queued job costs nothing more";
}

TEST(JobCostTest, AnEndedAdmissionIsRoundedToTheMicroDollar) {
  JobRecord record = QueuedJob();
  JobAdmission admission = SpotAdmission();
  admission.hourly_price_micros = 3;
  Apply(JobStateMachine::Admit(Snapshot(record), kT0, admission, "admitted"), record);
  Apply(JobStateMachine::Transition(Snapshot(record), JobState::kRunning, kT0, "up"), record);
  Apply(JobStateMachine::Requeue(Snapshot(record), kT0 + minutes(30), "reclaimed", true), record);
  EXPECT_EQ(record.cost_micros, 2) << "1.5 µ$: halves away from zero";
}

}  // namespace
}  // namespace trainyard
