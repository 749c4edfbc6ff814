#include "storage/group_commit.h"

#include <algorithm>

#include "services/span_trace.h"

namespace trainyard::storage {

Status GroupCommitter::Commit(std::vector<pg::Statement> statements) {
  // Traced as pid 0: from the queue to the commit, so its time less the pipeline's is the wait.
  SpanTimer trace(0, statements.size(), "group commit");
  Item item;
  item.statements = std::move(statements);
  std::unique_lock lock(mu_);
  queue_.push_back(&item);
  ++stats_.queued;
  while (!item.done) {
    if (flushing_ >= options_.max_flushers || queue_.empty()) {
      item.wake.wait(lock);
      continue;
    }
    // Become the flusher for the oldest queued items (ours among them unless another flusher
    // already took it; then we carry others' work and keep waiting for ours).
    const size_t take = std::min(queue_.size(), static_cast<size_t>(options_.max_batch));
    std::vector<Item*> batch(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(take));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(take));
    stats_.queued -= static_cast<int64_t>(take);
    ++flushing_;
    lock.unlock();
    Flush(batch);
    lock.lock();
    --flushing_;
    ++stats_.batches;
    stats_.items += static_cast<int64_t>(batch.size());
    stats_.largest = std::max<int64_t>(stats_.largest, static_cast<int64_t>(batch.size()));
    batch_sizes_.Observe(static_cast<double>(batch.size()));
    for (Item* done : batch) {
      done->done = true;
      if (done != &item) done->wake.notify_one();
    }
    // Hand the free slot to the oldest waiter; it takes everything queued behind it.
    if (!queue_.empty() && queue_.front() != &item) queue_.front()->wake.notify_one();
  }
  return item.result;
}

void GroupCommitter::Flush(const std::vector<Item*>& batch) {
  auto conn = pool_.Acquire();
  if (!conn.ok()) {
    for (Item* item : batch) item->result = conn.status();
    return;
  }
  std::vector<pg::Statement> all;
  for (Item* item : batch) {
    all.insert(all.end(), item->statements.begin(), item->statements.end());
  }
  Status status = (*conn)->ExecBatch(all).status();
  // A lost session may or may not have committed: re-running could write twice, so every item
  // reports the loss (the edge answers 503 and the client decides).
  if (status.ok() || batch.size() == 1 || (*conn)->broken()) {
    for (Item* item : batch) item->result = status;
    return;
  }
  // A statement failed and rolled the whole batch back: give each item its own verdict.
  {
    std::lock_guard lock(mu_);
    ++stats_.reruns;
  }
  for (Item* item : batch) {
    item->result = (*conn)->broken() ? Unavailable("database connection lost during a re-run")
                                     : (*conn)->ExecBatch(item->statements).status();
  }
}

GroupCommitter::Stats GroupCommitter::stats() const {
  std::lock_guard lock(mu_);
  Stats stats = stats_;
  stats.flushing = flushing_;
  return stats;
}

}  // namespace trainyard::storage
