#pragma once
// How long a placement takes to start, drawn rather than fixed: each node boots and pulls its image
// in a log-normal time around the fleet's figure, a gang waits for its slowest node, and a
// multi-host TPU slice provisions as one, longer the more hosts it has (docs/capacity-model.md,
// "Start-up"). A draw depends only on the fleet's seed, the pool and the admission it is for, so
// both stores and every replay of a scenario see the same start-up.
#include <cstdint>
#include <string_view>

#include "services/time.h"

namespace trainyard {

struct Fleet;
struct CapacityPool;

// The fleet file's `startupSpread`. All 1 and 0: every node takes exactly its figure (a fleet
// file without the block, as the tests' fleets are).
struct StartupSpread {
  double boot_p95_ratio = 1;  // one node's boot: p95 ÷ median
  double pull_p95_ratio = 1;  // one node's image pull: p95 ÷ median
  // A multi-host TPU slice's provisioning median grows by this share per doubling of its hosts.
  double tpu_slice_growth_per_doubling = 0;
  // One failed node's repair: p95 ÷ median, the median being the fleet's repairTime.
  double repair_p95_ratio = 1;
};

// The fleet file's `programStartup`: a run's time from its nodes being ready to its first step
// (containers start, the framework imports and builds the model, NCCL or jax.distributed
// initializes across the hosts), `base` for one host and `per_doubling` more for each doubling of
// the gang's hosts. All 0 (a fleet file without the block): the first step comes at once.
struct ProgramStartupModel {
  Duration base{};
  Duration per_doubling{};
};

// Which admission a draw is for: a job's (its id) or a persistent resource's hold (its uid), at
// the row version it was admitted from, so a re-admitted job draws anew.
struct StartupKey {
  bool resource = false;
  int64_t id = 0;
  int64_t version = 0;
};

// The slowest of `nodes` independent log-normal draws with `median` and p95 ÷ median `p95_ratio`,
// drawn at once from the order statistic (u^(1/nodes) is the maximum's quantile). `u` in (0, 1).
Duration SlowestOf(double u, int64_t nodes, Duration median, double p95_ratio);

// The standard normal distribution's quantile function (Acklam's rational approximation, relative
// error below 1.2e-9), for p in (0, 1).
double NormalQuantile(double p);

// How long the failure of node `ordinal` of `pool_id` at `at` takes to repair: a log-normal draw
// around the fleet's repairTime (the median) with startupSpread's repairP95Ratio, determined by the
// seed, the node and the minute it failed, so a replay and both stores see the same repairs.
Duration DrawRepair(const Fleet& fleet, std::string_view pool_id, int64_t ordinal, Timestamp at);

// A run's program start-up on a gang of `hosts` hosts: base + per_doubling × log2(hosts).
Duration ProgramStartup(const Fleet& fleet, int64_t hosts);

// A pool's slowest boot for `nodes` cold nodes of `machine_type`.
Duration DrawBoot(const Fleet& fleet, const CapacityPool& pool, std::string_view machine_type,
                  int64_t nodes, const StartupKey& key);
// A pool's slowest image pull of `image_uri` on `nodes` nodes of `machine_type`: the image's size
// at the fleet's registry rate or the machine's network, whichever is slower.
Duration DrawImagePull(const Fleet& fleet, const CapacityPool& pool, std::string_view machine_type,
                       std::string_view image_uri, int64_t nodes, const StartupKey& key);

}  // namespace trainyard
