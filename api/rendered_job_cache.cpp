#include "api/rendered_job_cache.h"

#include <algorithm>
#include <functional>

namespace trainyard::api {

std::string RenderJob(const CustomJob& job, ApiVersion version) {
  return EncodeCustomJob(job, version)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

RenderedJobCache::RenderedJobCache(size_t entries)
    : per_shard_(std::max<size_t>(1, entries / kShards)), shards_(kShards) {}

RenderedJobCache::Shard& RenderedJobCache::ShardOf(const std::string& key) {
  return shards_[std::hash<std::string>{}(key) % kShards];
}

std::shared_ptr<const std::string> RenderedJobCache::Render(const CustomJob& job,
                                                            ApiVersion version) {
  if (!IsTerminal(job.state) || !job.update_time) {
    return std::make_shared<const std::string>(RenderJob(job, version));
  }
  const std::string key = job.name + (version == ApiVersion::kV1 ? "#v1" : "#v1beta1");
  Shard& shard = ShardOf(key);
  {
    std::lock_guard lock(shard.mu);
    auto it = shard.by_key.find(key);
    // The same ended job: its state and last update are what its text was rendered from.
    if (it != shard.by_key.end() && it->second->state == job.state &&
        it->second->update_time == *job.update_time) {
      shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
      ++shard.hits;
      return it->second->text;
    }
    ++shard.misses;
  }
  auto text = std::make_shared<const std::string>(RenderJob(job, version));  // outside the lock
  std::lock_guard lock(shard.mu);
  auto it = shard.by_key.find(key);
  if (it != shard.by_key.end()) {
    shard.lru.erase(it->second);
    shard.by_key.erase(it);
  }
  shard.lru.push_front(Entry{key, job.state, *job.update_time, text});
  shard.by_key[key] = shard.lru.begin();
  while (shard.lru.size() > per_shard_) {
    shard.by_key.erase(shard.lru.back().key);
    shard.lru.pop_back();
  }
  return text;
}

RenderedJobCache::Stats RenderedJobCache::stats() const {
  Stats out;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    out.hits += s.hits;
    out.misses += s.misses;
  }
  return out;
}

}  // namespace trainyard::api
