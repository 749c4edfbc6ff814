// Job log pieces with no database: insertIds and their order, severities, message sanitizing,
// the service's entries, the Cloud Logging LogEntry JSON and the virtual time of a wall instant.
#include <gtest/gtest.h>

#include <string>

#include "api/page_token.h"
#include "api/wire/json_reader.h"
#include "api/wire/log_entry_codec.h"
#include "services/clock.h"
#include "services/logs/insert_id.h"
#include "services/logs/log_entry.h"
#include "services/logs/log_text.h"
#include "services/logs/service_entries.h"

namespace trainyard {
namespace {

Timestamp T(const char* text) { return *ParseTimestamp(text); }

TEST(InsertIdTest, RoundTripsAndSortsAsItsEntryDoes) {
  InsertId a{T("2026-01-01T00:00:00Z"), 99, LogSource::kReplicaLine};
  InsertId b{T("2026-01-01T00:00:00Z"), 100, LogSource::kServiceEvent};
  InsertId c{T("2026-01-01T00:00:00Z"), 100, LogSource::kReplicaLine};
  InsertId d{T("2026-01-01T00:00:00.000001Z"), 1, LogSource::kServiceEvent};
  for (const InsertId& id : {a, b, c, d}) {
    std::string text = FormatInsertId(id);
    EXPECT_EQ(text.size(), 37u);
    EXPECT_EQ(ParseInsertId(text), id) << text;
  }
  EXPECT_LT(FormatInsertId(a), FormatInsertId(b));
  EXPECT_LT(FormatInsertId(b), FormatInsertId(c));
  EXPECT_LT(FormatInsertId(c), FormatInsertId(d));
  EXPECT_LT(a, b);
  EXPECT_LT(c, d);
}

TEST(InsertIdTest, RejectsAnythingElse) {
  EXPECT_FALSE(ParseInsertId(""));
  EXPECT_FALSE(ParseInsertId("abc"));
  std::string good = FormatInsertId({T("2026-01-01T00:00:00Z"), 5, LogSource::kDropNotice});
  EXPECT_TRUE(ParseInsertId(good));
  std::string bad_letter = good;
  bad_letter.back() = 'z';
  EXPECT_FALSE(ParseInsertId(bad_letter));
  std::string bad_digit = good;
  bad_digit[3] = 'x';
  EXPECT_FALSE(ParseInsertId(bad_digit));
  EXPECT_FALSE(ParseInsertId(good + "l"));
}

TEST(LogSeverityTest, NamesAndNumbers) {
  EXPECT_EQ(SeverityName(LogSeverity::kWarning), "WARNING");
  EXPECT_EQ(ParseSeverity("CRITICAL"), LogSeverity::kCritical);
  EXPECT_EQ(ParseSeverity("500"), LogSeverity::kError);
  EXPECT_FALSE(ParseSeverity("LOUD"));
  EXPECT_FALSE(ParseSeverity("450"));
  EXPECT_EQ(SeverityFromNumber(450), LogSeverity::kDefault);
}

TEST(LogTextTest, KeepsValidUtf8AndRepairsTheRest) {
  EXPECT_EQ(SanitizeLogMessage("loss=0.25 \xE2\x9C\x93"), "loss=0.25 \xE2\x9C\x93");
  EXPECT_EQ(SanitizeLogMessage(std::string("a\0b", 3)), "ab");
  EXPECT_EQ(SanitizeLogMessage("bad \xFF byte"), "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(SanitizeLogMessage("cut \xE2\x9C"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(SanitizeLogMessage("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SanitizeLogMessage("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

TEST(LogTextTest, TruncatesRunawayLinesAtACharacterBoundary) {
  std::string line(kMaxLogMessageBytes - 1, 'x');
  line += "\xE2\x9C\x93 and more";
  std::string out = SanitizeLogMessage(line);
  EXPECT_EQ(out.substr(0, kMaxLogMessageBytes - 1), std::string(kMaxLogMessageBytes - 1, 'x'));
  EXPECT_EQ(out.substr(kMaxLogMessageBytes - 1), "\xE2\x80\xA6[truncated]");
}

TEST(ServiceEntriesTest, EventsReadAsStateChangesWithSeverity) {
  InsertId id{T("2026-01-01T00:00:00Z"), 1, LogSource::kServiceEvent};
  LogEntry created = ServiceEventEntry(7, id, JobState::kUnspecified, JobState::kQueued, "created");
  EXPECT_EQ(created.message, "Job state JOB_STATE_QUEUED: created");
  EXPECT_EQ(created.task_name, "service");
  EXPECT_EQ(created.severity, LogSeverity::kInfo);
  EXPECT_EQ(created.time, id.time);
  LogEntry preempted =
      ServiceEventEntry(7, id, JobState::kRunning, JobState::kQueued, "spot preemption");
  EXPECT_EQ(preempted.message, "Job state JOB_STATE_RUNNING -> JOB_STATE_QUEUED: spot preemption");
  EXPECT_EQ(preempted.severity, LogSeverity::kWarning);
  EXPECT_EQ(ServiceEventEntry(7, id, JobState::kRunning, JobState::kFailed, "x").severity,
            LogSeverity::kError);
  EXPECT_EQ(ServiceEventEntry(7, id, JobState::kCancelling, JobState::kCancelled, "").message,
            "Job state JOB_STATE_CANCELLING -> JOB_STATE_CANCELLED");
  LogEntry note = DropNoticeEntry(7, id, 1234, 5000, 5000);
  EXPECT_EQ(note.severity, LogSeverity::kWarning);
  EXPECT_EQ(note.message.rfind("1234 lines dropped", 0), 0u) << note.message;
}

TEST(LogEntryCodecTest, TimestampsHaveNineFractionDigits) {
  EXPECT_EQ(FormatLogTimestamp(T("2026-01-02T03:04:05Z")), "2026-01-02T03:04:05.000000000Z");
  EXPECT_EQ(FormatLogTimestamp(T("2026-01-02T03:04:05.12Z")), "2026-01-02T03:04:05.120000000Z");
  EXPECT_EQ(FormatLogTimestamp(T("2026-01-02T03:04:05.123456Z")), "2026-01-02T03:04:05.123456000Z");
}

TEST(LogEntryCodecTest, EncodesWhatGcloudReadsAndDecodesIt) {
  LogEntry e;
  e.job_id = 42;
  e.time = T("2026-01-02T03:04:05.5Z");
  e.insert_id = {e.time, 7, LogSource::kReplicaLine};
  e.severity = LogSeverity::kError;
  e.task_name = "workerpool0-0";
  e.message = "CUDA out of memory";
  nlohmann::json j = EncodeLogEntry(e, Project{100000000001, "demo"});
  EXPECT_EQ(j["logName"], "projects/demo/logs/workerpool0-0");
  EXPECT_EQ(j["resource"]["type"], "ml_job");
  EXPECT_EQ(j["resource"]["labels"]["job_id"], "42");
  EXPECT_EQ(j["resource"]["labels"]["task_name"], "workerpool0-0");
  EXPECT_EQ(j["resource"]["labels"]["project_id"], "demo");
  EXPECT_EQ(j["timestamp"], "2026-01-02T03:04:05.500000000Z");
  EXPECT_EQ(j["severity"], "ERROR");
  EXPECT_EQ(j["insertId"], FormatInsertId(e.insert_id));
  EXPECT_EQ(j["textPayload"], "CUDA out of memory");
  auto back = DecodeLogEntry(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->job_id, 42);
  EXPECT_EQ(back->time, e.time);
  EXPECT_EQ(back->insert_id, e.insert_id);
  EXPECT_EQ(back->severity, e.severity);
  EXPECT_EQ(back->task_name, e.task_name);
  EXPECT_EQ(back->message, e.message);

  e.task_name = "service";
  EXPECT_EQ(EncodeLogEntry(e, Project{1, "demo"})["logName"],
            "projects/demo/logs/ml.googleapis.com%2F42");
}

TEST(LogEntryCodecTest, ListIsEmptyObjectWhenNothingMatched) {
  EXPECT_EQ(EncodeLogEntries({}, Project{}, ""), nlohmann::json::object());
  EXPECT_EQ(EncodeLogEntries({}, Project{}, "tok"), nlohmann::json({{"nextPageToken", "tok"}}));
}

TEST(LogEntryCodecTest, DecodeTakesJsonPayloadMessageAndRejectsGarbage) {
  auto e = DecodeLogEntry({{"timestamp", "2026-01-02T03:04:05Z"},
                           {"jsonPayload", {{"message", "hi"}}},
                           {"somethingNew", 1}});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->message, "hi");
  EXPECT_FALSE(DecodeLogEntry(nlohmann::json::array()).ok());
  EXPECT_FALSE(DecodeLogEntry({{"timestamp", "soon"}}).ok());
  EXPECT_FALSE(DecodeLogEntry({{"timestamp", "2026-01-02T03:04:05Z"}, {"insertId", "x"}}).ok());
}

TEST(LogPageTokenTest, RoundTripsAndIsBoundToItsRequest) {
  InsertId last{T("2026-01-02T03:04:05Z"), 12, LogSource::kServiceEvent};
  std::string token = api::EncodeLogPageToken(last, "task=a");
  auto back = api::DecodeLogPageToken(token, "task=a");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, last);
  auto other = api::DecodeLogPageToken(token, "task=b");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().violations()[0].field, "pageToken");
  EXPECT_FALSE(api::DecodeLogPageToken("!!", "task=a").ok());
}

TEST(ClockTest, AtWallTimeIsTheVirtualTimeOfAWallInstant) {
  Timestamp wall_epoch = T("2026-01-01T00:00:00Z");
  Timestamp virtual_epoch = T("2026-06-01T00:00:00Z");
  ScaledClock clock(wall_epoch, virtual_epoch, 100);
  EXPECT_EQ(clock.AtWallTime(wall_epoch + std::chrono::seconds(5)),
            virtual_epoch + std::chrono::seconds(500));
  ManualClock manual(virtual_epoch);
  EXPECT_EQ(manual.AtWallTime(wall_epoch), wall_epoch);
}

}  // namespace
}  // namespace trainyard
