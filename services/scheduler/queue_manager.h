#pragma once
// The queue manager (docs/scheduler.md, "Parts"; Kueue's queue manager): one queue per (project,
// region) of pending jobs in rank order (priority, queue time, id), the jobs parked out of that
// order until a change elsewhere can lift them, the deadlines a waiting job fails at, and the
// memory the entries live on (the active ones dense, in the order a cycle walks them).
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "services/scheduler/dws_queue.h"
#include "services/scheduler/scheduler_job.h"
#include "services/scheduler/slab_pool.h"
#include "services/scheduler/verdict.h"
#include "services/scheduler/walk_order.h"

namespace trainyard {

// Puts `v`'s elements on `to` (an allocator-extended move), unless they are there already.
template <typename PmrVector>
void Rehome(PmrVector& v, std::pmr::memory_resource* to) {
  if (v.get_allocator().resource() == to) return;
  PmrVector moved(std::move(v), to);
  std::destroy_at(&v);
  std::construct_at(&v, std::move(moved));  // a move keeps the allocator
}

class QueueManager {
 public:
  using RankKey = std::tuple<int, int64_t, int64_t>;  // (-priority, queue time µs, id)
  struct Entry;
  // What a walk reads of a job to find it holds its shape's verdict, as told, without reading its
  // entry: the entry's told_shared (kept equal by SetToldShared), its shape and whether it is a
  // FLEX_START request; its priority, queue time and id are its rank key.
  struct Visit {
    uint64_t told_shared = 0;
    int shape = 0;
    bool flex = false;
  };
  // Rank → the job's entry, so walks need no lookups. Its nodes come from the manager's pools.
  using OrderedKeys = std::map<RankKey, Entry*, std::less<RankKey>,
                               PoolAllocator<std::pair<const RankKey, Entry*>>>;

  // Why a job is out of the active order (Kueue's inadmissible workloads): it waits for a change
  // elsewhere, costs nothing per cycle until then and takes no place in the lookback.
  enum class Parked : uint8_t {
    kNo,
    kUntilQuotaFrees,    // QUOTA_EXCEEDED: until its project's usage drops
    kUntilFleetChanges,  // NEVER_FITS: until the fleet (pools, quotas) is another one
  };
  struct Queue {
    Queue(NodePool* active, NodePool* parked)
        : order(OrderedKeys::allocator_type(active)),
          quota_parked(OrderedKeys::allocator_type(parked)),
          never_parked(OrderedKeys::allocator_type(parked)) {}
    std::string project_id;
    std::string region;
    OrderedKeys order;         // active: looked at in this order, at most `lookback` a cycle
    OrderedKeys quota_parked;  // Parked::kUntilQuotaFrees
    OrderedKeys never_parked;  // Parked::kUntilFleetChanges
    // `order` again, as a dense array: what a cycle walks (walk_order.h says why).
    WalkOrder<RankKey, Entry, Visit> walk;
    // Its admitted jobs, with their priority beside them: preemption planning filters on it
    // without loading every job (each a cache miss in a deep queue's heap).
    struct RunningRef {
      int priority = 0;
      const RunningJob* job = nullptr;  // owned by the scheduler, whose nodes never move
    };
    std::vector<RunningRef> running;
    // Jobs joined or left since positions were last reported: positions are walked again.
    bool positions_stale = true;
  };
  struct Entry {
    // What the walk reads first, then the job (whose first line holds its rank and strategy).
    int64_t evaluated_in = -1;  // the cycle that last evaluated it
    int queue = 0;
    int shape = 0;          // job.shape's number: jobs of one shape get one verdict a cycle
    bool admitted = false;  // this cycle
    Parked parked = Parked::kNo;
    // The serial number of the shape's shared verdict (SharedVerdicts::ShapeSerial) that both
    // `verdict` and `reported` are, position and all; 0: not known to be one. A visit that finds
    // the shape's serial here changes nothing and reads nothing else of the entry.
    uint64_t told_shared = 0;
    SchedulerJob job;
    Verdict verdict;                  // the latest decided (this cycle's, when evaluated)
    std::optional<Verdict> reported;  // as last reported
    std::optional<Timestamp> never_fits_deadline;
  };

  QueueManager() = default;
  ~QueueManager();
  QueueManager(const QueueManager&) = delete;
  QueueManager& operator=(const QueueManager&) = delete;

  static RankKey KeyOf(const SchedulerJob& job) {
    return {-job.priority, ToUnixMicros(job.queue_time), job.id};
  }
  int QueueFor(const std::string& project_id, const std::string& region);  // made if new
  Queue& operator[](size_t q) { return queues_[q]; }
  const Queue& operator[](size_t q) const { return queues_[q]; }
  size_t size() const { return queues_.size(); }

  // Sets `entry`'s told_shared and its walk slot's copy (an active entry's: a parked one has none).
  void SetToldShared(Entry& entry, uint64_t serial);
  // A new pending job (none of its id waits), at its rank in its queue's active order.
  Entry& Add(SchedulerJob job);
  // Takes a waiting job out (its entry is gone); false when none of that id waits.
  bool Remove(int64_t id);
  Entry* Find(int64_t id) const {
    auto it = pending_.find(id);
    return it == pending_.end() ? nullptr : it->second;
  }
  size_t pending_count() const { return pending_.size(); }
  size_t shape_count() const { return shape_ids_.size(); }
  // Slots the active jobs' entries take: compaction keeps them under twice the active jobs once
  // many have parked (and at least a few slabs' worth).
  size_t active_entry_slots() const { return active_entries_->slots(); }

  // Takes `entry` out of the active order to wait `to`, and its memory out of the active pool
  // (`entry` is gone then): where it lives now. A never-fit may fail at `deadline`.
  Entry* Park(Entry& entry, Parked to, std::optional<Timestamp> deadline);
  // A project's usage dropped: its quota-parked jobs go back to the active order at the next
  // UnparkQuotaWaiters.
  void QuotaFreed(const std::string& project_id) { quota_freed_.insert(project_id); }
  void UnparkQuotaWaiters();
  // The waiting job whose FLEX_START max wait, or whose never-fits wait, has run out by `now`.
  std::optional<int64_t> DwsDue(Timestamp now) const;
  // The pending FLEX_START requests in queue order: when each is granted DWS capacity.
  const DwsQueue& dws() const { return dws_; }
  std::optional<int64_t> NeverFitsDue(Timestamp now) const;
  // When the earliest FLEX_START max wait or never-fits wait runs out (none: no job has one).
  std::optional<Timestamp> NextDeadline() const;
  // The earliest queue time after `since` of an active job (not parked) of a priority below
  // `below_priority`: when such a job next passes a wait that counts from its queue time. Each
  // queue's order is by priority, then queue time: one search per priority a queue has.
  std::optional<Timestamp> FirstQueuedAfter(Timestamp since, int below_priority) const;
  // An admitted job of the queue (project, region) starts (+1) or stops (-1) counting.
  void SetRunning(const RunningJob& job, int sign);
  // Moves the active entries into fresh memory in walk order once most of their slots went to
  // parked jobs.
  void CompactIfSparse();
  // Drops the gaps that admissions and parking left in the queues' walks; never during a walk
  // (it moves the walk's indices).
  void PackWalks() {
    for (Queue& queue : queues_) queue.walk.PackIfSparse();
  }
  void Clear();

  // The queue's waiting jobs, parked or not, in rank order: f(entry, 1-based position).
  template <typename F>
  void ForEachInRankOrder(Queue& queue, F&& f);

 private:
  // Entries live in one of two pools, by whether they are parked; pending_ and the orders point
  // at them.
  using EntryPool = SlabPool<sizeof(Entry)>;
  using JobArena = std::pmr::unsynchronized_pool_resource;
  EntryPool& PoolOf(Parked parked);
  // The memory a job's pools and quota live on, by whether it is parked.
  std::pmr::memory_resource* ArenaOf(Parked parked) const;
  Entry* NewEntry(EntryPool& pool, std::pmr::memory_resource* arena, Entry&& from);
  void DeleteEntry(EntryPool& pool, Entry* entry);
  void DeleteEntries();  // all of pending_
  // Moves `entry` to the pool and arena of its new state `to`, and points pending_ at it.
  Entry* MoveEntry(Entry* entry, Parked to);
  // Moves the active entries and order nodes into fresh pools, and their jobs' pools and quota
  // into a fresh arena, in the order a cycle walks them (rank across all queues): the walk then
  // reads dense memory at ascending addresses. Costs O(active log active).
  void CompactActive();
  OrderedKeys& SetOf(Queue& queue, Parked parked);

  // The entries and order nodes of the active jobs apart from the parked, which a cycle never
  // walks. Declared before the queues, which give their nodes back when they go.
  std::unique_ptr<NodePool> active_nodes_ = std::make_unique<NodePool>();
  std::unique_ptr<NodePool> parked_nodes_ = std::make_unique<NodePool>();
  std::unique_ptr<EntryPool> active_entries_ = std::make_unique<EntryPool>();
  std::unique_ptr<EntryPool> parked_entries_ = std::make_unique<EntryPool>();
  // The active jobs' pools and quota (SchedulerJob::pools, ::quota), which every evaluation reads,
  // on memory of their own rather than among all the jobs' allocations on the heap; the parked
  // jobs' on another, so that parking thousands does not spread what later cycles read (the
  // admitted jobs, the messages) across the heap.
  std::unique_ptr<JobArena> job_arena_ = std::make_unique<JobArena>();
  std::unique_ptr<JobArena> parked_arena_ = std::make_unique<JobArena>();
  std::vector<Queue> queues_;
  std::unordered_map<std::string, int> shape_ids_;
  std::unordered_map<std::string, int> queue_index_;
  std::unordered_map<int64_t, Entry*> pending_;  // in active_entries_ or parked_entries_
  std::set<std::pair<Timestamp, int64_t>> dws_deadlines_;
  DwsQueue dws_;
  std::set<std::pair<Timestamp, int64_t>> never_fits_deadlines_;
  std::unordered_set<std::string> quota_freed_;  // projects whose usage dropped since the cycle
};

template <typename F>
void QueueManager::ForEachInRankOrder(Queue& queue, F&& f) {
  using Range = std::pair<OrderedKeys::iterator, OrderedKeys::iterator>;
  std::array<Range, 3> sets = {Range{queue.order.begin(), queue.order.end()},
                               Range{queue.quota_parked.begin(), queue.quota_parked.end()},
                               Range{queue.never_parked.begin(), queue.never_parked.end()}};
  int64_t position = 0;
  while (true) {
    Range* next = nullptr;
    for (Range& set : sets) {
      if (set.first != set.second && (next == nullptr || set.first->first < next->first->first)) {
        next = &set;
      }
    }
    if (next == nullptr) break;
    f(*next->first->second, ++position);
    ++next->first;
  }
}

}  // namespace trainyard
