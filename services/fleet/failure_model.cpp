#include "services/fleet/failure_model.h"

#include <cmath>

namespace trainyard {
namespace {

// splitmix64's finalizer: a bijection that spreads every input bit over the output.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a: stable across builds and platforms, unlike std::hash.
uint64_t HashText(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

double HazardDraw(uint64_t seed, HazardStream stream, std::string_view pool_id, int64_t ordinal,
                  int64_t tick) {
  uint64_t h = Mix(seed);
  h = Mix(h ^ static_cast<uint64_t>(stream));
  h = Mix(h ^ HashText(pool_id));
  h = Mix(h ^ static_cast<uint64_t>(ordinal));
  h = Mix(h ^ static_cast<uint64_t>(tick));
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // the top 53 bits as a double in [0, 1)
}

double TickProbability(double per_node_hour, Duration tick) {
  if (per_node_hour <= 0) return 0;
  double hours = std::chrono::duration<double, std::ratio<3600>>(tick).count();
  return -std::expm1(-per_node_hour * hours);
}

int64_t CompletedTicks(Timestamp epoch, Timestamp now) {
  if (now < epoch) return 0;
  return (now - epoch) / std::chrono::duration_cast<std::chrono::microseconds>(kHazardTick);
}

Timestamp TickEnd(Timestamp epoch, int64_t tick) {
  return epoch + (tick + 1) * std::chrono::duration_cast<std::chrono::microseconds>(kHazardTick);
}

std::optional<int64_t> FirstHit(uint64_t seed, HazardStream stream, std::string_view pool_id,
                                int64_t ordinal, double per_node_hour, int64_t first,
                                int64_t last) {
  double p = TickProbability(per_node_hour);
  if (p <= 0) return std::nullopt;
  for (int64_t tick = first; tick <= last; ++tick) {
    if (HazardDraw(seed, stream, pool_id, ordinal, tick) < p) return tick;
  }
  return std::nullopt;
}

SpotPreemptionOutcome AfterSpotPreemption(int restarts_so_far, bool disable_retries,
                                          std::string_view node_name) {
  SpotPreemptionOutcome out;
  const std::string where = "spot capacity reclaimed (node " + std::string(node_name) + ")";
  if (disable_retries) {
    out.message = "STOCKOUT: " + where + "; scheduling.disableRetries is set, so the job is not " +
                  "restarted.";
    return out;
  }
  if (restarts_so_far >= kMaxSpotRestarts) {
    out.message = "STOCKOUT: " + where + "; the job was already restarted " +
                  std::to_string(kMaxSpotRestarts) + " times after spot preemptions (the most " +
                  "Vertex allows), so it fails.";
    return out;
  }
  out.restart = true;
  out.restart_number = restarts_so_far + 1;
  out.message = where + "; restart " + std::to_string(out.restart_number) + " of " +
                std::to_string(kMaxSpotRestarts) + ", back in the queue";
  return out;
}

}  // namespace trainyard
