#pragma once
// The fleet's Slurm pools as the cluster has them now (ExternalCapacity). Every `interval` it reads
// slurmrestd's nodes and counts, per partition, the nodes jobs can run on; a pool's units beyond
// those are out of service, so the scheduler admits only onto nodes Slurm can run. Pools that
// name one partition share its nodes, in fleet order. While slurmrestd cannot be asked, the last
// reading stands: an outage of the API is not a cluster gone down.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "services/fleet/external_capacity.h"
#include "services/fleet/fleet.h"
#include "workers/slurm/slurm_api.h"

namespace trainyard::slurm {

// Pool id → units down, for every pool that names a partition: its units less the usable nodes
// of its partition (times the replicas a node runs, --slurm-tasks-per-node) left to it by the
// pools before it. A partition Slurm does not have leaves its pools wholly down.
std::map<std::string, int64_t> SlurmUnitsDown(const Fleet& fleet,
                                              const std::vector<SlurmNode>& nodes,
                                              int units_per_node = 1);

class SlurmCapacity : public ExternalCapacity {
 public:
  SlurmCapacity(std::unique_ptr<SlurmApi> api, const Fleet& fleet,
                std::chrono::milliseconds interval, int units_per_node = 1);
  ~SlurmCapacity() override { Stop(); }

  // One reading now; Start() takes one every interval from then on (the first after an interval,
  // so call Refresh first).
  Status Refresh();
  void Start();
  void Stop();
  std::map<std::string, int64_t> UnitsDown() const override;

 private:
  std::unique_ptr<SlurmApi> api_;
  const Fleet& fleet_;
  std::chrono::milliseconds interval_;
  int units_per_node_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> down_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace trainyard::slurm
