#pragma once
// The wire JSON of jobs, kept rendered. An ended job's JSON never changes (its cost and goodput
// stopped with it; nothing but a delete touches it again), and the jobs a list page shows are
// mostly ended, so a page is their texts joined instead of 100 encodes and dumps. A job not ended
// keeps the text around its `trainyard` object, which alone is rendered at each read: its cost and
// goodput move with the clock, and everything else changes only with a transition (its state and
// times). Bounded (LRU), sharded by name; a delete needs no invalidation (ids are never reused;
// the entry ages out).
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/wire/custom_job_codec.h"

namespace trainyard::api {

class RenderedJobCache {
 public:
  // Chosen: 40 pages of 100 ended jobs at ~2 KB each, about 8 MiB.
  static constexpr size_t kDefaultEntries = 4096;
  explicit RenderedJobCache(size_t entries = kDefaultEntries);

  // The job's JSON text as EncodeCustomJob(job, version).dump() writes it.
  std::shared_ptr<const std::string> Render(const CustomJob& job, ApiVersion version);
  // The same with `status` as the job's `trainyard` object (its accrued copy: a poll shares the
  // kept job and accrues only that; none: no such object).
  std::shared_ptr<const std::string> Render(const CustomJob& job, const SchedulingStatus* status,
                                            ApiVersion version);

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
  };
  Stats stats() const;

 private:
  // What the kept text was rendered from, besides what moves with the clock: a transition
  // changes the state or one of the times.
  struct Fingerprint {
    JobState state = JobState::kUnspecified;
    Timestamp update_time;
    std::optional<Timestamp> start_time;
    std::optional<Timestamp> end_time;
    bool operator==(const Fingerprint&) const = default;
  };
  struct Entry {
    std::string key;  // name and API version
    Fingerprint fingerprint;
    // Ended: the whole text. Not ended: the text before the `trainyard` object's value, and in
    // `after` the text after it.
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const std::string> after;
  };
  struct Shard {
    mutable std::mutex mu;
    std::list<Entry> lru;  // most recent first
    std::unordered_map<std::string, std::list<Entry>::iterator> by_key;
    int64_t hits = 0;
    int64_t misses = 0;
  };
  static constexpr size_t kShards = 8;
  Shard& ShardOf(const std::string& key);
  // The kept entry's texts, or none (and a miss counted).
  std::optional<Entry> Find(const std::string& key, const Fingerprint& fingerprint);
  void Keep(Entry entry);

  size_t per_shard_;
  std::vector<Shard> shards_;
};

// The JSON text of a job as the API sends it.
std::string RenderJob(const CustomJob& job, ApiVersion version);

}  // namespace trainyard::api
