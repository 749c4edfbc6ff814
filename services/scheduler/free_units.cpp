#include "services/scheduler/free_units.h"

#include <algorithm>
#include <optional>

namespace trainyard {

FreeUnits::FreeUnits(int hosts_per_unit, const std::vector<FreeNode>& nodes, int block_nodes)
    : hosts_(std::max(1, hosts_per_unit)),
      block_units_(block_nodes > 0 ? std::max(1, block_nodes / std::max(1, hosts_per_unit)) : 0) {
  struct Unit {
    int free = 0;
    bool warm = true;
    std::vector<std::string> common;  // images cached on every node seen so far
  };
  std::map<int64_t, Unit> units;
  for (const FreeNode& n : nodes) {
    Unit& u = units[n.ordinal / hosts_];
    std::vector<std::string> cache = n.image_cache;
    std::sort(cache.begin(), cache.end());
    if (u.free == 0) {
      u.common = std::move(cache);
    } else {
      std::vector<std::string> both;
      std::set_intersection(u.common.begin(), u.common.end(), cache.begin(), cache.end(),
                            std::back_inserter(both));
      u.common = std::move(both);
    }
    ++u.free;
    u.warm = u.warm && n.warm;
  }
  for (auto& [unit, u] : units) {
    if (u.free != hosts_) continue;  // part of the slice is busy or down
    if (!u.warm) {
      cold_.insert(unit);
      continue;
    }
    warm_.insert(unit);
    for (const std::string& image : u.common) warm_by_image_[image].insert(unit);
    images_of_[unit] = std::move(u.common);
  }
}

void FreeUnits::Remove(int64_t unit) {
  warm_.erase(unit);
  cold_.erase(unit);
  auto it = images_of_.find(unit);
  if (it == images_of_.end()) return;
  for (const std::string& image : it->second) warm_by_image_[image].erase(unit);
  images_of_.erase(it);
}

FreeUnits::Taken FreeUnits::Take(int count, const std::string& image) {
  if (count <= 0 || units() < static_cast<size_t>(count)) return {};
  // One block when one holds them all: the fewest free units that still fit, lowest block first.
  // Else the fewest blocks: the freest first (a spread gang's all-reduce crosses fewer of them).
  std::set<int64_t> blocks_allowed;
  if (block_units_ > 0) {
    std::map<int64_t, int> free_in;
    for (int64_t u : warm_) ++free_in[u / block_units_];
    for (int64_t u : cold_) ++free_in[u / block_units_];
    std::optional<int64_t> block;
    for (const auto& [b, n] : free_in) {
      if (n >= count && (!block || n < free_in[*block])) block = b;
    }
    if (block) {
      blocks_allowed.insert(*block);
    } else {
      std::vector<std::pair<int, int64_t>> freest;  // (-free, block): freest, then lowest, first
      for (const auto& [b, n] : free_in) freest.push_back({-n, b});
      std::sort(freest.begin(), freest.end());
      int covered = 0;
      for (const auto& [neg, b] : freest) {
        if (covered >= count) break;
        blocks_allowed.insert(b);
        covered -= neg;
      }
    }
  }
  std::vector<int64_t> chosen;
  auto take_from = [&](const std::set<int64_t>& from) {
    for (auto it = from.begin(); it != from.end() && chosen.size() < static_cast<size_t>(count);
         ++it) {
      if (!blocks_allowed.empty() && !blocks_allowed.contains(*it / block_units_)) continue;
      if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
    }
  };
  if (auto cached = warm_by_image_.find(image); cached != warm_by_image_.end()) {
    take_from(cached->second);
  }
  take_from(warm_);
  take_from(cold_);
  Taken taken;
  if (block_units_ > 0) {
    std::set<int64_t> blocks;
    for (int64_t unit : chosen) blocks.insert(unit / block_units_);
    taken.blocks = static_cast<int>(blocks.size());
  }
  taken.ordinals.reserve(chosen.size() * static_cast<size_t>(hosts_));
  const auto cached = warm_by_image_.find(image);
  for (int64_t unit : chosen) {
    const bool warm = warm_.contains(unit);
    taken.cold = taken.cold || !warm;
    taken.uncached =
        taken.uncached || !warm || cached == warm_by_image_.end() || !cached->second.contains(unit);
    Remove(unit);
    for (int h = 0; h < hosts_; ++h) taken.ordinals.push_back(unit * hosts_ + h);
  }
  return taken;
}

}  // namespace trainyard
