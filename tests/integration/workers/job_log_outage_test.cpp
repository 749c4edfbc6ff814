// A job's replica lines survive appends that fail (PostgreSQL restarting under the executor): the
// runtime hands the same lines over until they are stored, and once stored never again.
#include <gtest/gtest.h>

#include "storage/pg_job_log_store.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using namespace std::chrono_literals;

constexpr const char* kFleet = R"({
  "seed": 7, "bootTime": {"default": "60s"}, "imagePullGbps": 10, "imageSizeGb": {"default": 10},
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 2, "pricePerNodeHour": 36}]}]})";

// The store behind the executor, which refuses appends while `down`.
class FlakyLogStore final : public JobLogRepository {
 public:
  explicit FlakyLogStore(JobLogRepository& inner) : inner_(inner) {}
  Status Append(const std::vector<LogLine>& lines) override {
    if (down) {
      ++refused;
      return Unavailable("the database is restarting");
    }
    return inner_.Append(lines);
  }
  StatusOr<LogPage> List(const LogQuery& query) override { return inner_.List(query); }
  bool down = false;
  int refused = 0;

 private:
  JobLogRepository& inner_;
};

class JobLogOutageTest : public testing::SimFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet)); }
  // The executor appends through a store that can be down.
  void AdjustPorts(app::ControlPlanePorts& ports) override {
    logs_ = ports.logs;
    flaky_ = std::make_unique<FlakyLogStore>(*logs_);
    ports.logs = flaky_.get();
  }

  std::vector<std::string> ReplicaLines(const CustomJob& job) { return StoredLines(*logs_, job); }

  JobLogRepository* logs_ = nullptr;
  std::unique_ptr<FlakyLogStore> flaky_;
};

TEST_F(JobLogOutageTest, LinesWhoseAppendFailedAreStoredOnceTheStoreIsBack) {
  CustomJob job = Create(0, SchedulingStrategy::kStandard, "", "600s");
  flaky_->down = true;
  for (int i = 0; i < 30 && Get(job).state != JobState::kSucceeded; ++i) {
    clock_.Advance(60s);
    Step();
  }
  ASSERT_EQ(Get(job).state, JobState::kSucceeded);
  EXPECT_GT(flaky_->refused, 0) << "the run's lines met a store that was down";
  EXPECT_TRUE(ReplicaLines(job).empty());

  flaky_->down = false;
  Step();
  const std::vector<std::string> lines = ReplicaLines(job);
  ASSERT_FALSE(lines.empty()) << "nothing the replicas printed is lost";
  EXPECT_EQ(lines.back(), "training finished");
  Step();
  EXPECT_EQ(ReplicaLines(job), lines) << "and nothing is stored twice";
}

}  // namespace
}  // namespace trainyard
