#pragma once
// The jobs a server process was polled for, kept in memory so a poll takes no pool connection and
// no round trip. Bounded by entries (least recently read go first). Correct only together with a
// feed of what changed (storage/job_change_listener.h): a row read from the database is kept only
// if no change to it was heard since the read began, and nothing is served while the feed is down.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "services/jobs/job_repository.h"

namespace trainyard::storage {

class JobRecordCache {
 public:
  // Taken before a read from the database; Put keeps the row only if nothing it covers was
  // invalidated after it.
  struct ReadTicket {
    uint64_t epoch = 0;
  };
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t invalidations = 0;
    uint64_t entries = 0;
  };

  explicit JobRecordCache(size_t max_entries);

  // The kept row, or null (not kept, or the feed is down).
  std::shared_ptr<const JobRecord> Find(int64_t id);
  ReadTicket BeginRead() const;
  void Put(const ReadTicket& ticket, std::shared_ptr<const JobRecord> record);

  // The job changed or went: drop it, and refuse rows of it read before now.
  void Invalidate(int64_t id);
  // The feed may have missed changes (it reconnected): drop everything, refuse older reads.
  void InvalidateAll();
  // Whether the feed is up; while it is not, nothing is served or kept.
  void SetLive(bool live);
  bool live() const { return live_.load(std::memory_order_acquire); }

  Stats stats() const;

 private:
  static constexpr size_t kShards = 16;
  static constexpr size_t kStripes = 4096;  // invalidation epochs, by id: few false refusals
  struct Shard {
    mutable std::mutex mu;
    std::list<int64_t> lru;  // most recently read first
    struct Entry {
      std::shared_ptr<const JobRecord> record;
      std::list<int64_t>::iterator position;
    };
    std::unordered_map<int64_t, Entry> entries;
  };
  Shard& ShardOf(int64_t id) { return shards_[static_cast<uint64_t>(id) % kShards]; }
  std::atomic<uint64_t>& StripeOf(int64_t id) {
    return stripes_[(static_cast<uint64_t>(id) / kShards) % kStripes];
  }

  const size_t max_per_shard_;
  std::atomic<uint64_t> epoch_{1};
  std::atomic<uint64_t> all_invalidated_at_{0};
  std::atomic<bool> live_{false};
  std::array<std::atomic<uint64_t>, kStripes> stripes_{};
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, invalidations_{0};
};

}  // namespace trainyard::storage
