#pragma once
// Writes the Prometheus text format 0.0.4: one HELP and TYPE line per family, then its samples,
// label values escaped (backslash, double quote, newline).
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/metrics/histogram.h"

namespace trainyard::metrics {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

class Exposition {
 public:
  // type: "counter", "gauge" or "histogram". Each family once, its samples right after.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  // A family of one unlabelled sample.
  void Counter(std::string_view name, std::string_view help, double value);
  void Gauge(std::string_view name, std::string_view help, double value);
  // name_bucket{…, le="…"}, name_sum and name_count, from one snapshot.
  void HistogramSamples(std::string_view name, const Labels& labels,
                        const Histogram::Snapshot& snapshot);

  const std::string& text() const { return out_; }

 private:
  void Line(std::string_view name, const Labels& labels, std::string_view extra_label,
            std::string_view extra_value, double value);
  std::string out_;
};

// A counter's current value as a sample.
inline double Load(const std::atomic<uint64_t>& v) {
  return static_cast<double>(v.load(std::memory_order_relaxed));
}

// "a\\b\"c\nd" for a\b"c<newline>d.
std::string EscapeLabelValue(std::string_view value);
// A sample value: integers without a fraction, "+Inf", "NaN".
std::string FormatValue(double value);

inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace trainyard::metrics
