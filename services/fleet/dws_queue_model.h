#pragma once
// DWS flex-start as a queue (docs/capacity-model.md, "DWS flex-start"): a request for a zone's
// machine type waits for its whole size to be provisioned at once, and the time it waits is drawn
// rather than read off a timetable. Its median grows with the nodes it asks for and with the
// nodes asked for ahead of it (this fleet's pending requests and a seeded outside demand); the
// draw around the median is log-normal. Everything depends on the fleet's seed, the pool and the
// request alone, so both stores and every replay of a scenario grant at the same times.
#include <cstdint>
#include <string_view>

#include "services/time.h"

namespace trainyard {

// A FLEX_START pool's `queue` in the fleet file. The defaults are chosen (Google publishes no
// flex-start wait distribution): Compute Engine queues a flex-start VM request for at most two
// hours, so a small request is had well within that, and Vertex waits a day by default
// (maxWaitDuration), so a large one behind others may take hours.
struct DwsQueueModel {
  Duration base_wait = std::chrono::minutes(10);     // median of a request with nothing asked
  Duration wait_per_node = std::chrono::minutes(5);  // added to the median per node asked/ahead
  double p95_ratio = 3;                              // the draw's p95 ÷ median
  double outside_nodes_ahead = 8;                    // mean of the outside demand ahead
};

// The nodes other customers have queued ahead of a request that joins `pool_id`'s queue at
// `since_epoch`: exponential with the model's mean, drawn per pool and hour of virtual time (the
// outside demand level holds for an hour).
int64_t OutsideNodesAhead(uint64_t seed, std::string_view pool_id, const DwsQueueModel& model,
                          Duration since_epoch);

// The median time to capacity of a request for `nodes` with `nodes_ahead` queued before it.
Duration DwsMedianWait(const DwsQueueModel& model, int64_t nodes, int64_t nodes_ahead);

// The time request `request_id` for `nodes` waits in `pool_id`'s queue with `nodes_ahead` ahead:
// a log-normal draw around DwsMedianWait, in whole seconds. The draw's quantile depends on (seed,
// pool, request) only, so a request whose queue moves up keeps its luck and waits less.
Duration DwsTimeToCapacity(uint64_t seed, std::string_view pool_id, int64_t request_id,
                           int64_t nodes, int64_t nodes_ahead, const DwsQueueModel& model);

}  // namespace trainyard
