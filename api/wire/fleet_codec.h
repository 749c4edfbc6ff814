#pragma once
// Reads a fleet description (payloads/fleets/*.json) into a Fleet. Every error names the file and
// the JSON path of the bad field, and stops start-up: a fleet half-understood is worse than none.
//
// {
//   "name": "default", "seed": 7,
//   "bootTime": {"default": "300s", "a3-megagpu-8g": "360s"},   // boot + driver, per machine type
//   "imagePullGbps": 10, "imageSizeGb": {"default": 8, "<imageUri>": 20},
//   "startupSpread": {"bootP95Ratio": 1.3, "pullP95Ratio": 1.5,   // a node's p95 ÷ median
//                     "tpuSliceGrowthPerDoubling": 0.1,   // a TPU slice's median, per doubling
//                     "repairP95Ratio": 4},   // a repair's p95 ÷ repairTime (its median)
//   "programStartup": {"base": "60s", "perDoubling": "10s"},   // nodes ready → first step
//   "spotNotice": "30s", "repairTime": "900s",
//   "terminationGracePeriod": "30s",   // what a preempted job runs on after its notice
//   "neverFitsTimeout": "3600s",   // a job that can never fit fails after this wait; 0s: never
//   "catalogPools": {"nodes": 2},   // a small ON_DEMAND and SPOT pool of every accelerator type
//                                  // (TPU: single-host slice) a zone has no explicit pool of
//   "elasticCpu": true,   // CPU-only machine types on demand and spot in every zone, bounded by
//                         // the CPUS quota instead of a node count (explicit pools still bound)
//   "quotas": {"default": {"NVIDIA_H100_MEGA_80GB": 512}, "projects": {"demo": {"TPU_V5P": 256}}},
//   "zones": [{"zone": "us-central1-a", "pools": [
//     {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r-a3m",
//      "term": "1y" | "3y" | "calendar", "projects": ["demo"],
//      "window": {"start": "2026-12-01T00:00:00Z", "end": "2026-12-15T00:00:00Z"}, "nodes": 16},
//     {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 8},
//     {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 16, "preemptionsPerNodeHour":
//     0.05},
//     {"machineType": "a3-megagpu-8g", "model": "FLEX_START", "nodes": 32,   // most at once
//      "queue": {"baseWait": "600s", "waitPerNode": "300s", "p95Ratio": 3,   // DWS queue: the
//                "outsideNodesAhead": 8}},   // median wait grows with nodes asked and ahead
//     {"machineType": "ct5p-hightpu-4t", "model": "ON_DEMAND", "tpuTopology": "4x4x4", "slices":
//     2},
//     ... "pricePerNodeHour": 42.0 overrides the list price,
//     "failuresPerNodeHour": 0.001 (any pool: node failures, repaired in repairTime) ],
//    "capacity": [{"machineType": "a3-megagpu-8g", "nodes": 48,   // one count the zone's
//                  "outsideOnDemand": {"meanAvailable": "43200s", "meanConstrained": "7200s",
//                                      "minShareLeft": 0.1, "maxShareLeft": 0.5}}]}],
//   // on-demand and spot pools of the type share: on-demand first, spot what is left
//   "zoneCorrelation": 0.5   // how much the zones of a region move together (0..1)
// }
#include <string>

#include "services/fleet/fleet.h"
#include "services/status.h"

namespace trainyard {

StatusOr<Fleet> ParseFleet(const std::string& json_text, const std::string& source);
StatusOr<Fleet> LoadFleetFile(const std::string& path);

}  // namespace trainyard
