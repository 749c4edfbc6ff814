// The Cloud Logging filter subset gcloud stream-logs sends (api/logging_filter): the syntax tree,
// and what it says about one job's entries.
#include <gtest/gtest.h>

#include <string>

#include "api/logging_filter.h"
#include "api/wire/json_reader.h"

namespace trainyard::api {
namespace {

using Kind = LoggingFilterNode::Kind;

Timestamp T(const char* text) { return *ParseTimestamp(text); }

StatusOr<JobLogFilter> Filter(const std::string& text) {
  auto tree = ParseLoggingFilter(text);
  if (!tree.ok()) return tree.status();
  return ToJobLogFilter(*tree);
}

void ExpectFilterError(const std::string& text, const std::string& fragment) {
  auto f = Filter(text);
  ASSERT_FALSE(f.ok()) << text;
  EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(f.status().violations().size(), 1u) << f.status().message();
  EXPECT_EQ(f.status().violations()[0].field, "filter");
  EXPECT_NE(f.status().message().find(fragment), std::string::npos) << f.status().message();
}

TEST(LoggingFilterTest, GcloudFirstPoll) {
  auto f = Filter(R"(resource.type="ml_job" AND resource.labels.job_id="7177292591700382611" AND )"
                  R"(timestamp>="1970-01-01T01:00:00.000000000Z" AND )"
                  R"(timestamp<"2026-11-23T22:31:20.123456+00:00")");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->job_id, "7177292591700382611");
  EXPECT_FALSE(f->task_name);
  EXPECT_EQ(f->from, T("1970-01-01T01:00:00Z"));
  EXPECT_EQ(f->until_wall, T("2026-11-23T22:31:20.123456Z"));
  EXPECT_FALSE(f->after);
  EXPECT_FALSE(f->matches_nothing);
}

TEST(LoggingFilterTest, GcloudLaterPollWithInsertIdBound) {
  const std::string id = "017954730329133830000000000000000002e";
  auto f = Filter(R"(resource.type="ml_job" AND resource.labels.job_id="5" AND )"
                  R"(resource.labels.task_name="workerpool0-0" AND )"
                  R"(((timestamp="2026-11-23T22:30:32.913383000Z" AND insertId>")" +
                  id + R"(") OR timestamp>"2026-11-23T22:30:32.913383000Z"))" +
                  R"( AND timestamp<"2026-11-23T22:40:00.000000+00:00")");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->task_name, "workerpool0-0");
  ASSERT_TRUE(f->after);
  EXPECT_EQ(FormatInsertId(*f->after), id);
  EXPECT_FALSE(f->from);
}

TEST(LoggingFilterTest, InsertIdBoundFromAnotherTimeReducesToATimeBound) {
  // I older than T: every entry at T is after it (>= T); I newer: none is (> T).
  const std::string older = FormatInsertId({T("2026-01-01T00:00:00Z"), 9, LogSource::kReplicaLine});
  auto f = Filter(R"(resource.labels.job_id="5" AND (timestamp>"2026-01-01T00:00:01Z" OR )"
                  R"((insertId>")" +
                  older + R"(" AND timestamp="2026-01-01T00:00:01Z")))");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->from, T("2026-01-01T00:00:01Z"));
  const std::string newer = FormatInsertId({T("2026-01-01T00:00:02Z"), 9, LogSource::kReplicaLine});
  f = Filter(R"(resource.labels.job_id="5" AND ((timestamp="2026-01-01T00:00:01Z" AND )"
             R"(insertId>")" +
             newer + R"(") OR timestamp>"2026-01-01T00:00:01Z"))");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->from, T("2026-01-01T00:00:01.000001Z"));
}

TEST(LoggingFilterTest, LabelsTaskNameAndStrictBounds) {
  auto f = Filter(R"(resource.labels.job_id=5 labels.task_name="service" )"
                  R"(timestamp>"2026-01-01T00:00:00Z" timestamp<="2026-01-02T00:00:00Z")");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->job_id, "5");
  EXPECT_EQ(f->task_name, "service");
  EXPECT_EQ(f->from, T("2026-01-01T00:00:00.000001Z"));
  EXPECT_EQ(f->until_wall, T("2026-01-02T00:00:00.000001Z"));
}

TEST(LoggingFilterTest, OtherResourceTypeOrConflictingIdsMatchNothing) {
  auto f = Filter(R"(resource.type="gce_instance" AND resource.labels.job_id="5")");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->matches_nothing);
  f = Filter(R"(resource.labels.job_id="5" AND resource.labels.job_id="6")");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->matches_nothing);
}

TEST(LoggingFilterTest, OrBindsTighterThanAnd) {
  auto tree = ParseLoggingFilter(R"(a="1" AND b="2" OR c="3")");
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  ASSERT_EQ(tree->kind, Kind::kAnd);
  ASSERT_EQ(tree->children.size(), 2u);
  EXPECT_EQ(tree->children[0].field, "a");
  ASSERT_EQ(tree->children[1].kind, Kind::kOr);
  EXPECT_EQ(tree->children[1].children[1].value, "3");
}

TEST(LoggingFilterTest, QuotedStringsUnescape) {
  auto tree = ParseLoggingFilter(R"(labels.task_name="a \"b\" \\ c")");
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(tree->value, R"(a "b" \ c)");
}

TEST(LoggingFilterTest, RejectsWhatItCannotServe) {
  ExpectFilterError("", "empty");
  ExpectFilterError(R"(resource.type="ml_job")", "resource.labels.job_id");
  ExpectFilterError(R"(resource.labels.job_id="5" AND severity>=ERROR)", "cannot filter on");
  ExpectFilterError(R"(resource.labels.job_id="5" AND textPayload:"loss")", "not supported");
  ExpectFilterError(R"(resource.labels.job_id="5" AND NOT timestamp<"2026-01-01T00:00:00Z")",
                    "NOT");
  ExpectFilterError(R"(resource.labels.job_id="5" OR resource.labels.job_id="6")", "OR");
  ExpectFilterError(R"(resource.labels.job_id="5" AND (timestamp>"x")", "')'");
  ExpectFilterError(R"(resource.labels.job_id="5" AND timestamp>"yesterday")", "timestamp");
  ExpectFilterError(R"(resource.labels.job_id="5 AND)", "unterminated");
  ExpectFilterError(R"(resource.labels.job_id="5" AND ((timestamp="2026-01-01T00:00:00Z" AND )"
                    R"(insertId>"abc") OR timestamp>"2026-01-01T00:00:00Z"))",
                    "not one this server returned");
  ExpectFilterError(std::string(40, '(') + "a=1" + std::string(40, ')'), "deeply");
}

}  // namespace
}  // namespace trainyard::api
