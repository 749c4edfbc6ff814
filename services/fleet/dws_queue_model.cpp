#include "services/fleet/dws_queue_model.h"

#include <algorithm>
#include <cmath>

#include "services/fleet/failure_model.h"
#include "services/fleet/startup_model.h"

namespace trainyard {
namespace {

constexpr double kZ95 = 1.6448536269514722;  // the standard normal's 95th percentile

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

int64_t OutsideNodesAhead(uint64_t seed, std::string_view pool_id, const DwsQueueModel& model,
                          Duration since_epoch) {
  if (model.outside_nodes_ahead <= 0) return 0;
  const int64_t hour = std::chrono::duration_cast<std::chrono::hours>(since_epoch).count();
  const double u = HazardDraw(seed, HazardStream::kDwsOutsideDemand, pool_id, 0, hour);
  return static_cast<int64_t>(std::floor(-std::log1p(-u) * model.outside_nodes_ahead));
}

Duration DwsMedianWait(const DwsQueueModel& model, int64_t nodes, int64_t nodes_ahead) {
  const int64_t asked = std::max<int64_t>(0, nodes) + std::max<int64_t>(0, nodes_ahead);
  return model.base_wait + asked * model.wait_per_node;
}

Duration DwsTimeToCapacity(uint64_t seed, std::string_view pool_id, int64_t request_id,
                           int64_t nodes, int64_t nodes_ahead, const DwsQueueModel& model) {
  const double median = Seconds(DwsMedianWait(model, nodes, nodes_ahead));
  double seconds = median;
  if (model.p95_ratio > 1) {
    const double u = std::clamp(HazardDraw(seed, HazardStream::kDwsWait, pool_id, request_id, 0),
                                1e-12, 1 - 1e-12);
    seconds = median * std::exp(std::log(model.p95_ratio) / kZ95 * NormalQuantile(u));
  }
  return std::chrono::seconds(static_cast<int64_t>(std::llround(seconds)));
}

}  // namespace trainyard
