#pragma once
// A check of what the walk trusts without looking (QueueManager::Entry::told_shared): a waiting
// job that claims its shape's shared verdict is skipped by every visit, so a path that changed
// its verdict, or what was reported, without clearing the claim would go unseen for good. For
// tests: it walks every waiting job.
#include <cstdint>
#include <vector>

#include "services/scheduler/queue_manager.h"
#include "services/scheduler/shared_verdicts.h"

namespace trainyard {

// The waiting jobs (parked or not) whose claim names their shape's current shared verdict while
// their verdict, or the one last reported, is not that verdict at the same position, and the
// active ones whose walk slot's copy of the claim is not their entry's.
std::vector<int64_t> JobsWithStaleSharedVerdict(QueueManager& queues, const SharedVerdicts& shared);

}  // namespace trainyard
