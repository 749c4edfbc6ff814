#pragma once
// The arithmetic every simulate report shares: seconds of a duration, rounding as JSON prints it,
// and the nearest-rank percentile, so summary.json and its validation block agree on what p50 is.
#include <algorithm>
#include <cmath>
#include <vector>

#include "services/time.h"

namespace trainyard::simulate {

inline double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// To `digits` decimals, as JSON prints them (0.288, not 0.28800000000000003).
inline double Round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

// Nearest-rank percentile of sorted values (0 when there are none).
inline double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace trainyard::simulate
