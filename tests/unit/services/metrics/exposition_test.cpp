// The Prometheus text format as scrapers parse it: escaped label values, integral values without
// a fraction, histograms with cumulative buckets that end in +Inf and agree with _count.
#include "services/metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>

#include "services/metrics/registry.h"

namespace trainyard::metrics {
namespace {

TEST(ExpositionTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  Exposition e;
  e.Family("x_total", "counter", "Help with a \\ and a\nnewline.");
  e.Sample("x_total", {{"route", "/{version}/a\"b"}}, 3);
  EXPECT_EQ(e.text(),
            "# HELP x_total Help with a \\\\ and a\\nnewline.\n"
            "# TYPE x_total counter\n"
            "x_total{route=\"/{version}/a\\\"b\"} 3\n");
}

TEST(ExpositionTest, ValuesKeepTheirPrecision) {
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatValue(1e300), "1e+300");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndEndInInf) {
  const double bounds[] = {0.1, 1};
  Histogram h(bounds);
  h.Observe(0.05);
  h.Observe(0.1);  // le is inclusive
  h.Observe(0.5);
  h.Observe(7);
  Exposition e;
  e.HistogramSamples("d_seconds", {{"phase", "x"}}, h.Read());
  EXPECT_EQ(e.text(),
            "d_seconds_bucket{phase=\"x\",le=\"0.1\"} 2\n"
            "d_seconds_bucket{phase=\"x\",le=\"1\"} 3\n"
            "d_seconds_bucket{phase=\"x\",le=\"+Inf\"} 4\n"
            "d_seconds_sum{phase=\"x\"} 7.65\n"
            "d_seconds_count{phase=\"x\"} 4\n");
}

TEST(RegistryTest, ACollectorThatFailsIsLeftOutAndCounted) {
  Registry r;
  r.Add([](Exposition& e) {
    e.Family("a", "gauge", "A.");
    e.Sample("a", {}, 1);
    return Status::Ok();
  });
  r.Add([](Exposition&) { return Unavailable("database down"); });
  const std::string text = r.Render();
  EXPECT_NE(text.find("\na 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("trainyard_metrics_collector_errors_total 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace trainyard::metrics
