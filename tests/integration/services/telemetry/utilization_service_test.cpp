// A running gang's accelerator figures as the API and /metrics read them: one entry per host in
// placement order, nothing before RUNNING, and the straggler of TRAINYARD_SIM_SLOW_HOST flagged
// as the outlier, with the gang label every host of the job shares.
#include "services/telemetry/utilization_service.h"

#include <gtest/gtest.h>

#include "services/fleet/node_state.h"
#include "services/telemetry/utilization_metrics.h"
#include "storage/pg_admin_store.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

constexpr const char* kFleet = R"({
  "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 4, "pricePerNodeHour": 90}]}]})";

constexpr const char* kPool = "us-central1-a/a3-megagpu-8g/ON_DEMAND";

class UtilizationServiceTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
    admin_store_ = std::make_unique<storage::PgAdminStore>(*pool_);
    utilization_ =
        std::make_unique<UtilizationService>(*projects_, *store_, *admin_store_, fleet_, clock_);
  }

  static JobRef Ref(const CustomJob& job) {
    return JobRef{ParentRef{"demo", "us-central1"}, job.name.substr(job.name.rfind('/') + 1)};
  }

  std::unique_ptr<storage::PgAdminStore> admin_store_;
  std::unique_ptr<UtilizationService> utilization_;
};

TEST_F(UtilizationServiceTest, TheStragglerOfARunningGangIsItsOutlier) {
  primary_env_ = {{"TRAINYARD_SIM_SLOW_HOST", "2"}};
  CustomJob job = CreateGang("demo", SchedulingStrategy::kStandard, 3, "3600s");
  Step();
  auto pending = utilization_->ForJob(Ref(job));
  ASSERT_TRUE(pending.ok()) << pending.status().message();
  EXPECT_EQ(pending->state, JobState::kPending);
  EXPECT_TRUE(pending->hosts.empty()) << "nothing runs before RUNNING";

  for (int i = 0; i < 10 && Get(job).state != JobState::kRunning; ++i) {
    clock_.Advance(30s);
    Step();
  }
  ASSERT_EQ(Get(job).state, JobState::kRunning);
  clock_.Advance(5min);  // past the warm-up, before the first checkpoint

  auto u = utilization_->ForJob(Ref(job));
  ASSERT_TRUE(u.ok()) << u.status().message();
  ASSERT_EQ(u->hosts.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const HostUtilization& h = u->hosts[i];
    EXPECT_EQ(h.host, NodeName(kPool, i)) << "placement order";
    EXPECT_EQ(h.shape.accelerator, "NVIDIA_H100_MEGA_80GB");
    EXPECT_EQ(h.shape.chips, 8);
    EXPECT_EQ(h.outlier, i == 2) << "host " << i << " duty " << h.sample.duty_cycle;
  }
  EXPECT_NEAR(u->median_duty_cycle, 0.97 * 0.6, 0.02) << "the peers wait for host 2";

  metrics::Exposition e;
  ASSERT_TRUE(WriteUtilizationFamilies(*utilization_, e).ok());
  const std::string gang = "gang=\"" + NodeName(kPool, 0) + "\"";
  const std::string outlier = "\ntrainyard_accelerator_outlier{host=\"" + NodeName(kPool, 2) +
                              "\",zone=\"us-central1-a\",machine_type=\"a3-megagpu-8g\","
                              "accelerator=\"NVIDIA_H100_MEGA_80GB\"," +
                              gang + "} 1\n";
  EXPECT_NE(e.text().find(outlier), std::string::npos) << e.text();
  size_t duty_series = 0;
  for (size_t at = 0;
       (at = e.text().find("\ntrainyard_accelerator_duty_cycle{", at)) != std::string::npos; ++at) {
    ++duty_series;
  }
  EXPECT_EQ(duty_series, 4u);
}

TEST_F(UtilizationServiceTest, AnUnknownJobIsNotFound) {
  auto u = utilization_->ForJob(JobRef{ParentRef{"demo", "us-central1"}, "123"});
  EXPECT_EQ(u.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace trainyard
