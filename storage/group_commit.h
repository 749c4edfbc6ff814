#pragma once
// Group commit: many threads' small writes share one transaction and one round trip.
//
// Every create used to be its own commit: a round trip and a commit per request, so the server
// spent its time in context switches between handler threads and PostgreSQL backends rather than
// in work (docs/performance.md has the profile). Here a caller hands in its statements and blocks;
// whichever waiting caller finds a flush slot free takes everything queued so far, sends it as one
// libpq pipeline (one sync = one transaction) and wakes the callers whose work it carried. At low
// load a batch is one item and nothing waits; under load batches grow by themselves.
//
// Each caller still learns its own outcome: a batch that fails on a statement (a unique violation,
// say) is rolled back whole and its items are re-run one by one, so one bad item never fails the
// others. A caller returns only after the transaction holding its statements committed.
#include <array>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "services/status.h"
#include "storage/pg.h"

namespace trainyard::storage {

inline constexpr std::array<double, 9> kBatchSizeBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

struct GroupCommitOptions {
  // Statements of more items wait for the next flush; also bounds a pipeline's unread replies.
  int max_batch = 256;
  // Flushes under way at once, each on its own pooled connection: while one batch waits for its
  // commit, the next is already being sent.
  int max_flushers = 2;
};

class GroupCommitter {
 public:
  explicit GroupCommitter(pg::Pool& pool, GroupCommitOptions options = {})
      : pool_(pool), options_(options) {}
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Runs `statements` (all or none of them) in a transaction shared with other callers' work and
  // returns once it committed. The params must stay valid until then (they do: the caller blocks).
  Status Commit(std::vector<pg::Statement> statements);

  struct Stats {
    int64_t items = 0;     // Commit calls completed
    int64_t batches = 0;   // pipelines sent (not counting one-by-one re-runs)
    int64_t largest = 0;   // most items one batch carried
    int64_t reruns = 0;    // batches re-run item by item after a failure
    int64_t queued = 0;    // items waiting for a flush right now
    int64_t flushing = 0;  // flushes under way right now
  };
  Stats stats() const;
  // Items per pipelined batch.
  const metrics::Histogram& batch_sizes() const { return batch_sizes_; }

 private:
  struct Item {
    std::vector<pg::Statement> statements;
    Status result;
    bool done = false;
    // Each waiter sleeps on its own: a flush wakes exactly the callers it carried and the one that
    // leads the next flush, not every handler thread (a thundering herd was the top cost).
    std::condition_variable wake;
  };

  void Flush(const std::vector<Item*>& batch);

  pg::Pool& pool_;
  const GroupCommitOptions options_;

  mutable std::mutex mu_;
  std::vector<Item*> queue_;  // guarded by mu_: waiting for a flusher
  int flushing_ = 0;          // guarded by mu_
  Stats stats_;               // guarded by mu_
  metrics::Histogram batch_sizes_{kBatchSizeBuckets};
};

}  // namespace trainyard::storage
