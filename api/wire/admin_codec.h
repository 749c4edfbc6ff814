#pragma once
// JSON of the read-only admin view (/trainyard/v1/…). Our own resources, not Vertex's: camelCase,
// counts as numbers, ids and project numbers as strings (as int64 in proto3 JSON), money in USD.
#include <nlohmann/json.hpp>

#include "services/admin/admin_service.h"

namespace trainyard {

nlohmann::json EncodeFleetView(const FleetView& view);
nlohmann::json EncodeNodeRecord(const NodeRecord& node);
nlohmann::json EncodeReservations(const std::vector<ReservationView>& reservations);
nlohmann::json EncodeQueues(const std::vector<QueueView>& queues);
// {"counts": [{"state": "JOB_STATE_QUEUED", "jobs": 3}, …], "cap": 10000}: a count equal to the
// cap means at least that many.
nlohmann::json EncodeStateCounts(const std::vector<StateCount>& counts, int64_t cap);
nlohmann::json EncodeProjectCosts(const ProjectCostView& costs);
nlohmann::json EncodeJobEvents(const std::vector<JobEvent>& events);

}  // namespace trainyard
