#include "services/metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace trainyard::metrics {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back as the same double: 0.1, not 0.10000000000000001.
  char buf[64];
  const auto [end, ec] = value == std::floor(value) && std::fabs(value) < 1e15
                             ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                             : std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

void Exposition::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes backslash and newline only.
  for (char c : help) {
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void Exposition::Line(std::string_view name, const Labels& labels, std::string_view extra_label,
                      std::string_view extra_value, double value) {
  out_ += name;
  if (!labels.empty() || !extra_label.empty()) {
    out_ += '{';
    bool first = true;
    auto label = [&](std::string_view k, std::string_view v) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      out_ += EscapeLabelValue(v);
      out_ += '"';
    };
    for (const auto& [k, v] : labels) label(k, v);
    if (!extra_label.empty()) label(extra_label, extra_value);
    out_ += '}';
  }
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

void Exposition::Sample(std::string_view name, const Labels& labels, double value) {
  Line(name, labels, "", "", value);
}

void Exposition::Counter(std::string_view name, std::string_view help, double value) {
  Family(name, "counter", help);
  Sample(name, {}, value);
}

void Exposition::Gauge(std::string_view name, std::string_view help, double value) {
  Family(name, "gauge", help);
  Sample(name, {}, value);
}

void Exposition::HistogramSamples(std::string_view name, const Labels& labels,
                                  const Histogram::Snapshot& snapshot) {
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < snapshot.cumulative.size(); ++i) {
    const std::string le = i < snapshot.bounds.size() ? FormatValue(snapshot.bounds[i]) : "+Inf";
    Line(bucket, labels, "le", le, static_cast<double>(snapshot.cumulative[i]));
  }
  Line(std::string(name) + "_sum", labels, "", "", snapshot.sum);
  Line(std::string(name) + "_count", labels, "", "", static_cast<double>(snapshot.count));
}

}  // namespace trainyard::metrics
