#include "storage/job_record_cache.h"

#include <algorithm>

namespace trainyard::storage {

JobRecordCache::JobRecordCache(size_t max_entries)
    : max_per_shard_(std::max<size_t>(1, (max_entries + kShards - 1) / kShards)) {}

std::shared_ptr<const JobRecord> JobRecordCache::Find(int64_t id) {
  if (!live()) return nullptr;
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second.position);
  hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second.record;
}

JobRecordCache::ReadTicket JobRecordCache::BeginRead() const {
  return ReadTicket{epoch_.load(std::memory_order_acquire)};
}

void JobRecordCache::Put(const ReadTicket& ticket, std::shared_ptr<const JobRecord> record) {
  const int64_t id = record->id;
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  // Checked under the shard's lock, which Invalidate takes after raising the epochs: either this
  // sees the raise and refuses, or Invalidate erases what this put.
  if (!live() || StripeOf(id).load(std::memory_order_acquire) > ticket.epoch ||
      all_invalidated_at_.load(std::memory_order_acquire) > ticket.epoch) {
    return;
  }
  auto it = shard.entries.find(id);
  if (it != shard.entries.end()) {
    it->second.record = std::move(record);
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second.position);
    return;
  }
  if (shard.entries.size() >= max_per_shard_) {
    shard.entries.erase(shard.lru.back());
    shard.lru.pop_back();
  }
  shard.lru.push_front(id);
  shard.entries.emplace(id, Shard::Entry{std::move(record), shard.lru.begin()});
}

void JobRecordCache::Invalidate(int64_t id) {
  const uint64_t epoch = epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
  StripeOf(id).store(epoch, std::memory_order_release);
  invalidations_.fetch_add(1, std::memory_order_relaxed);
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(id);
  if (it == shard.entries.end()) return;
  shard.lru.erase(it->second.position);
  shard.entries.erase(it);
}

void JobRecordCache::InvalidateAll() {
  const uint64_t epoch = epoch_.fetch_add(1, std::memory_order_acq_rel) + 1;
  all_invalidated_at_.store(epoch, std::memory_order_release);
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    shard.entries.clear();
    shard.lru.clear();
  }
}

void JobRecordCache::SetLive(bool live) {
  if (!live) live_.store(false, std::memory_order_release);
  // Whatever was kept may have missed changes while the feed was (or is going) down.
  InvalidateAll();
  if (live) live_.store(true, std::memory_order_release);
}

JobRecordCache::Stats JobRecordCache::stats() const {
  Stats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.invalidations = invalidations_.load(std::memory_order_relaxed);
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    s.entries += shard.entries.size();
  }
  return s;
}

}  // namespace trainyard::storage
