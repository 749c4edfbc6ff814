#include "api/rendered_job_cache.h"

#include <algorithm>
#include <functional>

namespace trainyard::api {

RenderedJobCache::RenderedJobCache(size_t entries)
    : per_shard_(std::max<size_t>(1, entries / kShards)), shards_(kShards) {}

RenderedJobCache::Shard& RenderedJobCache::ShardOf(const std::string& key) {
  return shards_[std::hash<std::string>{}(key) % kShards];
}

namespace {

constexpr std::string_view kTrainyardPlaceholder = "\"trainyard\":null";

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string RenderJob(const CustomJob& job, ApiVersion version) {
  return Dump(EncodeCustomJob(job, version));
}

std::optional<RenderedJobCache::Entry> RenderedJobCache::Find(const std::string& key,
                                                              const Fingerprint& fingerprint) {
  Shard& shard = ShardOf(key);
  std::lock_guard lock(shard.mu);
  auto it = shard.by_key.find(key);
  if (it != shard.by_key.end() && it->second->fingerprint == fingerprint) {
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
    ++shard.hits;
    return *it->second;
  }
  ++shard.misses;
  return std::nullopt;
}

void RenderedJobCache::Keep(Entry entry) {
  Shard& shard = ShardOf(entry.key);
  std::lock_guard lock(shard.mu);
  auto it = shard.by_key.find(entry.key);
  if (it != shard.by_key.end()) {
    shard.lru.erase(it->second);
    shard.by_key.erase(it);
  }
  shard.lru.push_front(std::move(entry));
  shard.by_key[shard.lru.front().key] = shard.lru.begin();
  while (shard.lru.size() > per_shard_) {
    shard.by_key.erase(shard.lru.back().key);
    shard.lru.pop_back();
  }
}

std::shared_ptr<const std::string> RenderedJobCache::Render(const CustomJob& job,
                                                            ApiVersion version) {
  return Render(job, job.trainyard ? &*job.trainyard : nullptr, version);
}

std::shared_ptr<const std::string> RenderedJobCache::Render(const CustomJob& job,
                                                            const SchedulingStatus* status,
                                                            ApiVersion version) {
  const bool ended = IsTerminal(job.state);
  if (!job.update_time || (!ended && status == nullptr)) {
    CustomJob as_shown = job;  // rare: a job never stored, or without scheduling status
    as_shown.trainyard = status ? std::optional(*status) : std::nullopt;
    return std::make_shared<const std::string>(RenderJob(as_shown, version));
  }
  const std::string key = job.name + (version == ApiVersion::kV1 ? "#v1" : "#v1beta1");
  const Fingerprint fingerprint{job.state, *job.update_time, job.start_time, job.end_time};
  std::optional<Entry> kept = Find(key, fingerprint);
  if (!kept) {
    // Rendered outside the shard's lock.
    Entry entry{key, fingerprint, nullptr, nullptr};
    if (ended) {
      entry.text = std::make_shared<const std::string>(RenderJob(job, version));
    } else {
      // The job's text with a placeholder where `trainyard`'s value goes, cut around it. The last
      // match is the job's own key: only updateTime and webAccessUris (strings) follow it.
      nlohmann::json encoded = EncodeCustomJob(job, version);
      encoded["trainyard"] = nullptr;
      std::string text = Dump(encoded);
      const size_t at = text.rfind(kTrainyardPlaceholder);
      const size_t value_at = at + kTrainyardPlaceholder.size() - 4;  // where "null" starts
      entry.after = std::make_shared<const std::string>(text.substr(value_at + 4));
      text.resize(value_at);
      entry.text = std::make_shared<const std::string>(std::move(text));
    }
    Keep(entry);
    kept = std::move(entry);
  }
  // An ended job's status no longer accrues: its kept text is whole.
  if (ended) return kept->text;
  const std::string object = Dump(EncodeSchedulingStatus(*status));
  auto text = std::make_shared<std::string>();
  text->reserve(kept->text->size() + object.size() + kept->after->size());
  text->append(*kept->text).append(object).append(*kept->after);
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
