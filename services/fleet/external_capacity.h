#pragma once
// What a real cluster says of the fleet's capacity now, for pools whose nodes it runs (the Slurm
// runtime: a partition's nodes that are down or drained). The scheduler takes those units as out
// of service, on top of the failures it knows of itself, so it admits only onto nodes the cluster
// can run. Read by the scheduler leader every pass: answers from memory, never blocks on I/O.
#include <cstdint>
#include <map>
#include <string>

namespace trainyard {

class ExternalCapacity {
 public:
  virtual ~ExternalCapacity() = default;
  // Fleet pool id → its units out of service by the cluster's word; a pool not named has none.
  virtual std::map<std::string, int64_t> UnitsDown() const = 0;
};

}  // namespace trainyard
