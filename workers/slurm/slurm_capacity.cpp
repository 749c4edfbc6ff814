#include "workers/slurm/slurm_capacity.h"

#include <algorithm>

#include "services/log.h"
#include "services/thread_name.h"

namespace trainyard::slurm {

std::map<std::string, int64_t> SlurmUnitsDown(const Fleet& fleet,
                                              const std::vector<SlurmNode>& nodes,
                                              int units_per_node) {
  std::map<std::string, int64_t> usable;  // partition → usable units not yet given to a pool
  for (const SlurmNode& node : nodes) {
    if (!SlurmNodeUsable(node)) continue;
    for (const std::string& partition : node.partitions) usable[partition] += units_per_node;
  }
  std::map<std::string, int64_t> down;
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.slurm_partition.empty()) continue;
    int64_t& left = usable[pool.slurm_partition];
    const int64_t units = pool.units;
    const int64_t taken = std::min(left, units);
    left -= taken;
    down[pool.id] = units - taken;
  }
  return down;
}

SlurmCapacity::SlurmCapacity(std::unique_ptr<SlurmApi> api, const Fleet& fleet,
                             std::chrono::milliseconds interval, int units_per_node)
    : api_(std::move(api)),
      fleet_(fleet),
      interval_(interval),
      units_per_node_(std::max(1, units_per_node)) {}

Status SlurmCapacity::Refresh() {
  TY_ASSIGN_OR_RETURN(std::vector<SlurmNode> nodes, api_->Nodes());
  std::map<std::string, int64_t> down = SlurmUnitsDown(fleet_, nodes, units_per_node_);
  std::lock_guard lock(mu_);
  if (down != down_) {
    for (const auto& [pool, units] : down) {
      auto was = down_.find(pool);
      if (was != down_.end() && was->second == units) continue;
      LogJson(LogLevel::kInfo, "slurm_capacity", {{"pool", pool}, {"units_down", units}});
    }
    down_ = std::move(down);
  }
  return Status::Ok();
}

void SlurmCapacity::Start() {
  thread_ = std::thread([this] {
    NameThisThread("ty-slurm-cap");
    // The first reading is the caller's (Refresh before Start): this one waits an interval first.
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      if (Status s = Refresh(); !s.ok()) {
        LogJson(LogLevel::kWarn, "slurm_capacity_failed", {{"error", s.message()}});
      }
      lock.lock();
    }
  });
}

void SlurmCapacity::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::map<std::string, int64_t> SlurmCapacity::UnitsDown() const {
  std::lock_guard lock(mu_);
  return down_;
}

}  // namespace trainyard::slurm
