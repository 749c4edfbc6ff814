#include "services/fleet/dws_queue_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace trainyard {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kPool = "us-central1-a/a3-megagpu-8g/FLEX_START";

double Minutes(Duration d) { return std::chrono::duration<double, std::ratio<60>>(d).count(); }

TEST(DwsQueueModelTest, TheSameRequestWaitsTheSameAndAnotherSeedDrawsAnew) {
  DwsQueueModel model;
  const Duration once = DwsTimeToCapacity(7, kPool, 42, 8, 0, model);
  EXPECT_EQ(DwsTimeToCapacity(7, kPool, 42, 8, 0, model), once);
  EXPECT_NE(DwsTimeToCapacity(8, kPool, 42, 8, 0, model), once);
  EXPECT_NE(DwsTimeToCapacity(7, kPool, 43, 8, 0, model), once) << "each request draws its own";
}

// At the same seed and request, a larger request waits longer, and so does one with more asked
// ahead of it: the draw's quantile is the request's, the median grows with the nodes.
TEST(DwsQueueModelTest, ALargerRequestAndOneBehindMoreDemandWaitLonger) {
  DwsQueueModel model;
  for (int64_t request = 1; request <= 50; ++request) {
    const Duration small = DwsTimeToCapacity(7, kPool, request, 2, 0, model);
    EXPECT_LT(small, DwsTimeToCapacity(7, kPool, request, 16, 0, model)) << request;
    EXPECT_LT(small, DwsTimeToCapacity(7, kPool, request, 2, 8, model)) << request;
  }
  EXPECT_EQ(DwsMedianWait(model, 8, 4), 10min + 12 * 5min);
}

// Over many requests the draws have the model's median and its p95 ÷ median.
TEST(DwsQueueModelTest, DrawsHaveTheModelsMedianAndTail) {
  DwsQueueModel model;
  std::vector<double> waits;
  for (int64_t request = 0; request < 4000; ++request) {
    waits.push_back(Minutes(DwsTimeToCapacity(7, kPool, request, 8, 0, model)));
  }
  std::sort(waits.begin(), waits.end());
  const double median = Minutes(DwsMedianWait(model, 8, 0));  // 50 min
  EXPECT_NEAR(waits[waits.size() / 2] / median, 1.0, 0.06);
  EXPECT_NEAR(waits[waits.size() * 95 / 100] / median, model.p95_ratio, 0.25);
}

TEST(DwsQueueModelTest, OutsideDemandAveragesItsMeanAndHoldsForAnHour) {
  DwsQueueModel model;
  double sum = 0;
  constexpr int kHours = 5000;
  for (int h = 0; h < kHours; ++h) sum += OutsideNodesAhead(7, kPool, model, std::chrono::hours(h));
  // floor() of an exponential of mean m averages about m - 0.5.
  EXPECT_NEAR(sum / kHours, model.outside_nodes_ahead - 0.5, 0.5);
  EXPECT_EQ(OutsideNodesAhead(7, kPool, model, 3h), OutsideNodesAhead(7, kPool, model, 3h + 59min));
  model.outside_nodes_ahead = 0;
  EXPECT_EQ(OutsideNodesAhead(7, kPool, model, 3h), 0);
}

}  // namespace
}  // namespace trainyard
