#include "services/scheduler/told_shared_check.h"

namespace trainyard {

std::vector<int64_t> JobsWithStaleSharedVerdict(QueueManager& queues,
                                                const SharedVerdicts& shared) {
  std::vector<int64_t> stale;
  for (size_t q = 0; q < queues.size(); ++q) {
    // The walk's copy of the claim, which a visit reads instead of the entry's.
    const auto& walk = queues[q].walk;
    for (size_t i = walk.LiveFrom(0); i < walk.size(); i = walk.LiveFrom(i + 1)) {
      const QueueManager::Entry& entry = *walk[i].item;
      if (walk[i].hot.told_shared != entry.told_shared || walk[i].hot.shape != entry.shape) {
        stale.push_back(entry.job.id);
      }
    }
  }
  for (size_t q = 0; q < queues.size(); ++q) {
    queues.ForEachInRankOrder(queues[q], [&](const QueueManager::Entry& entry, int64_t) {
      // Its shape's key either way (may hold capacity or not): serials are never reused, so at
      // most one of them can be the claim's.
      const Verdict* claimed = nullptr;
      for (bool may_reserve : {false, true}) {
        const int64_t key = SharedVerdicts::ShapeKey(entry.shape, may_reserve);
        if (claimed == nullptr) claimed = shared.OfSerial(key, entry.told_shared);
      }
      if (claimed == nullptr) return;
      const bool holds = entry.verdict.SharesWith(*claimed) && entry.reported &&
                         entry.reported->SharesWith(*claimed) &&
                         entry.reported->position == entry.verdict.position;
      if (!holds) stale.push_back(entry.job.id);
    });
  }
  return stale;
}

}  // namespace trainyard
