#pragma once
// What the tests of the scheduler's parts share: a fleet of one on-demand A3 Mega pool and a gang
// of A3 Mega nodes asking for it.
#include <cstdint>

#include "services/fleet/fleet.h"
#include "services/scheduler/fleet_index.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard::test {

inline const Timestamp kPartsT0 = FromUnixMicros(1'800'000'000'000'000);

// One on-demand pool "b/od" of `units` A3 Mega nodes in us-central1-b.
inline Fleet OneA3MegaPool(int64_t units) {
  Fleet f;
  f.epoch = kPartsT0;
  CapacityPool p;
  p.zone = "us-central1-b";
  p.region = "us-central1";
  p.machine_type = "a3-megagpu-8g";
  p.model = ConsumptionModel::kOnDemand;
  p.units = units;
  p.id = "b/od";
  f.pools.push_back(p);
  return f;
}

// Project demo's job `id`: one gang of `nodes` A3 Mega nodes, no reservation.
inline SchedulerJob A3MegaGang(const FleetIndex& index, int64_t id, int64_t nodes) {
  SchedulerJob job;
  job.id = id;
  job.project_id = "demo";
  job.region = "us-central1";
  job.affinity = ReservationAffinityType::kNoReservation;
  GangPool gp;
  gp.machine_type = "a3-megagpu-8g";
  gp.units = nodes;
  gp.type_id = index.TypeIdOf(gp);
  job.pools.push_back(gp);
  return job;
}

}  // namespace trainyard::test
