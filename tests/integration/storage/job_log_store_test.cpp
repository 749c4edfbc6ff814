// Job logs on a real PostgreSQL (storage/pg_job_log_store, services/logs/job_log_service): batched
// appends, the merge with job_events, paging and gcloud's bounds over equal timestamps, retention,
// and what an unknown job or project reads.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "services/jobs/job_service.h"
#include "services/logs/job_log_service.h"
#include "storage/pg.h"
#include "storage/pg_job_log_store.h"
#include "storage/pg_job_store.h"
#include "storage/pg_operation_store.h"
#include "storage/pg_project_repository.h"
#include "storage/row_codec.h"
#include "tests/integration/small_job.h"
#include "tests/integration/test_database.h"

namespace trainyard {
namespace {

using testing::SmallJob;

using std::chrono::seconds;

constexpr const char* kInsertEvent =
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) VALUES "
    "($1::bigint, " TY_TS("$2") ", $3::smallint, $4::smallint, $5)";

class JobLogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(JobLogRetention{}); }

  void Open(JobLogRetention retention) {
    if (!pool_) {
      auto pool = pg::Pool::Create(testing::FreshDatabase(), 4, std::chrono::milliseconds(2000));
      ASSERT_TRUE(pool.ok()) << pool.status().message();
      pool_ = std::move(pool).value();
      projects_ = std::make_unique<storage::PgProjectRepository>(*pool_);
      jobs_ = std::make_unique<storage::PgJobStore>(*pool_);
      operations_ = std::make_unique<storage::PgOperationStore>(*pool_);
      service_ = std::make_unique<JobService>(*projects_, *jobs_, clock_);
    }
    logs_ = std::make_unique<storage::PgJobLogStore>(*pool_, retention);
    log_service_ = std::make_unique<JobLogService>(*logs_, *projects_, clock_);
  }

  // A job created now: its job_events start with the "created" entry at clock_.Now().
  int64_t CreateJob(const std::string& project = "demo") {
    auto created = service_->Create(ParentRef{project, "us-central1"}, SmallJob("logs"), "req");
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (!created.ok()) return 0;
    return std::stoll(created->name.substr(created->name.rfind('/') + 1));
  }

  // The store's delete, as the API's DELETE of the job runs it.
  Status DeleteJob(int64_t job) {
    Operation op;
    op.id = 4242;  // each test has a database of its own and deletes once
    op.project_number = project_number_;
    op.location = "us-central1";
    op.metadata_type = "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata";
    op.response_json = "{}";
    op.create_time = clock_.Now();
    const int64_t version =
        Count("SELECT version FROM custom_jobs WHERE id = " + std::to_string(job));
    return jobs_->DeleteWithOperation(project_number_, "us-central1", job, version, op);
  }

  void AddEvent(int64_t job, Timestamp at, JobState from, JobState to, const std::string& reason) {
    auto conn = pool_->Acquire();
    ASSERT_TRUE(conn.ok());
    auto r = (*conn)->Exec(kInsertEvent, {std::to_string(job), storage::MicrosParam(at),
                                          std::to_string(static_cast<int>(from)),
                                          std::to_string(static_cast<int>(to)), reason});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }

  int64_t Count(const std::string& sql) {
    auto conn = pool_->Acquire();
    EXPECT_TRUE(conn.ok());
    auto r = (*conn)->Exec(sql);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }

  static LogLine Line(int64_t job, Timestamp at, std::string message,
                      std::string task = "workerpool0-0") {
    return LogLine{job, at, LogSeverity::kInfo, std::move(task), std::move(message)};
  }

  LogQuery Query(int64_t job) {
    LogQuery q;
    q.job_id = job;
    q.project_number = project_number_;
    q.page_size = kMaxLogPageSize;
    return q;
  }

  std::vector<LogEntry> ListAll(LogQuery q) {
    auto page = logs_->List(q);
    EXPECT_TRUE(page.ok()) << page.status().message();
    return page.ok() ? page->entries : std::vector<LogEntry>{};
  }

  static std::vector<std::string> Messages(const std::vector<LogEntry>& entries) {
    std::vector<std::string> out;
    for (const LogEntry& e : entries) out.push_back(e.message);
    return out;
  }

  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  Timestamp t0_ = clock_.Now();
  const int64_t project_number_ = 100000000001;  // the first project registered
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<storage::PgProjectRepository> projects_;
  std::unique_ptr<storage::PgJobStore> jobs_;
  std::unique_ptr<storage::PgOperationStore> operations_;
  std::unique_ptr<JobService> service_;
  std::unique_ptr<storage::PgJobLogStore> logs_;
  std::unique_ptr<JobLogService> log_service_;
};

TEST_F(JobLogStoreTest, AppendsABatchOfSeveralJobsAndMergesTheServiceEntries) {
  int64_t a = CreateJob();
  int64_t b = CreateJob();
  ASSERT_TRUE(
      logs_
          ->Append({Line(a, t0_ + seconds(2), "a: step 2"), Line(b, t0_ + seconds(1), "b: hello"),
                    Line(a, t0_ + seconds(1), "a: step 1"),
                    Line(a, t0_ + seconds(4), "a: done", "workerpool1-0")})
          .ok());
  AddEvent(a, t0_ + seconds(3), JobState::kRunning, JobState::kFailed, "replica exited 1");

  std::vector<LogEntry> entries = ListAll(Query(a));
  EXPECT_EQ(Messages(entries), (std::vector<std::string>{
                                   "Job state JOB_STATE_QUEUED: created", "a: step 1", "a: step 2",
                                   "Job state JOB_STATE_RUNNING -> JOB_STATE_FAILED: replica "
                                   "exited 1",
                                   "a: done"}));
  EXPECT_EQ(entries[0].task_name, "service");
  EXPECT_EQ(entries[3].severity, LogSeverity::kError);
  EXPECT_EQ(entries[4].task_name, "workerpool1-0");
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_LT(FormatInsertId(entries[i - 1].insert_id), FormatInsertId(entries[i].insert_id));
  }
  EXPECT_EQ(Messages(ListAll(Query(b))),
            (std::vector<std::string>{"Job state JOB_STATE_QUEUED: created", "b: hello"}));

  LogQuery only = Query(a);
  only.task_name = "workerpool0-0";
  EXPECT_EQ(Messages(ListAll(only)), (std::vector<std::string>{"a: step 1", "a: step 2"}));
  only.task_name = "service";
  EXPECT_EQ(ListAll(only).size(), 2u);

  LogQuery desc = Query(a);
  desc.descending = true;
  EXPECT_EQ(ListAll(desc).front().message, "a: done");
}

TEST_F(JobLogStoreTest, PagesAndGcloudBoundsOverEqualTimestamps) {
  int64_t job = CreateJob();  // "created" at t0
  const Timestamp t = t0_ + seconds(1);
  std::vector<LogLine> lines;
  for (int i = 0; i < 25; ++i) lines.push_back(Line(job, t, "line " + std::to_string(i)));
  ASSERT_TRUE(logs_->Append(lines).ok());
  AddEvent(job, t, JobState::kQueued, JobState::kPending, "admitted");

  std::vector<LogEntry> all = ListAll(Query(job));
  ASSERT_EQ(all.size(), 27u);
  // Lines of one batch keep their order within one timestamp.
  std::vector<std::string> lines_read;
  for (const LogEntry& e : all) {
    if (e.task_name != "service") lines_read.push_back(e.message);
  }
  for (int i = 0; i < 25; ++i) EXPECT_EQ(lines_read[i], "line " + std::to_string(i));

  // Pages of 7 visit every entry once, in order, in both directions.
  for (bool descending : {false, true}) {
    LogQuery q = Query(job);
    q.page_size = 7;
    q.descending = descending;
    std::vector<InsertId> seen;
    for (int pages = 0; pages < 10; ++pages) {
      auto page = logs_->List(q);
      ASSERT_TRUE(page.ok()) << page.status().message();
      for (const LogEntry& e : page->entries) seen.push_back(e.insert_id);
      if (!page->next) break;
      q.page_after = page->next;
    }
    ASSERT_EQ(seen.size(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(seen[i], all[descending ? all.size() - 1 - i : i].insert_id);
    }
  }

  // gcloud's later poll: ((timestamp=T AND insertId>I) OR timestamp>T) with I the 11th entry.
  LogQuery after = Query(job);
  after.after = all[10].insert_id;
  std::vector<LogEntry> rest = ListAll(after);
  ASSERT_EQ(rest.size(), all.size() - 11);
  EXPECT_EQ(rest.front().insert_id, all[11].insert_id);

  // timestamp >= t is inclusive; timestamp < t excludes all of t.
  LogQuery from = Query(job);
  from.from = t;
  EXPECT_EQ(ListAll(from).size(), 26u);
  LogQuery until = Query(job);
  until.until = t;
  EXPECT_EQ(Messages(ListAll(until)),
            (std::vector<std::string>{"Job state JOB_STATE_QUEUED: created"}));
}

TEST_F(JobLogStoreTest, RetentionKeepsTheFirstAndNewestHalfAndSaysHowManyWentMissing) {
  Open(JobLogRetention{10});  // 5 first, 5 newest
  int64_t job = CreateJob();
  int64_t quiet = CreateJob();
  auto batch = [&](int from, int to) {
    std::vector<LogLine> lines;
    for (int i = from; i < to; ++i) {
      lines.push_back(Line(job, t0_ + seconds(1 + i), "line " + std::to_string(i)));
    }
    lines.push_back(Line(quiet, t0_ + seconds(1), "quiet " + std::to_string(from)));
    ASSERT_TRUE(logs_->Append(lines).ok());
  };
  batch(0, 8);
  batch(8, 15);
  batch(15, 40);  // a batch larger than the bound: its middle never lands

  LogQuery q = Query(job);
  q.task_name = "workerpool0-0";
  EXPECT_EQ(Messages(ListAll(q)),
            (std::vector<std::string>{"line 0", "line 1", "line 2", "line 3", "line 4", "line 35",
                                      "line 36", "line 37", "line 38", "line 39"}));
  q.task_name = "service";
  std::vector<LogEntry> service = ListAll(q);
  ASSERT_EQ(service.size(), 2u);
  EXPECT_EQ(service[1].message.rfind("30 lines dropped", 0), 0u) << service[1].message;
  EXPECT_EQ(service[1].severity, LogSeverity::kWarning);

  // The note sits in the gap: right after the last kept head line.
  std::vector<LogEntry> all = ListAll(Query(job));
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[5].message, "line 4");
  EXPECT_EQ(all[6].insert_id.source, LogSource::kDropNotice);
  EXPECT_EQ(all[7].message, "line 35");

  EXPECT_EQ(Count("SELECT count(*) FROM job_log_lines WHERE job_id = " + std::to_string(job)), 10);
  EXPECT_EQ(ListAll(Query(quiet)).size(), 4u);  // created + 3 lines, nothing dropped
}

TEST_F(JobLogStoreTest, UnknownJobsProjectsAndDeletedJobs) {
  int64_t job = CreateJob();
  // A line of a job that does not exist (deleted meanwhile) is skipped; the rest lands.
  ASSERT_TRUE(
      logs_->Append({Line(123456789, t0_, "orphan"), Line(job, t0_ + seconds(1), "kept")}).ok());
  EXPECT_EQ(ListAll(Query(job)).size(), 2u);

  LogQuery wrong_project = Query(job);
  wrong_project.project_number = 999;
  EXPECT_EQ(logs_->List(wrong_project).status().code(), Code::kNotFound);
  LogQuery wrong_location = Query(job);
  wrong_location.location = "europe-west4";
  EXPECT_EQ(logs_->List(wrong_location).status().code(), Code::kNotFound);

  // The curl route: NOT_FOUND naming the job; Cloud Logging: an empty list.
  JobLogsRequest curl;
  curl.job = JobRef{ParentRef{"demo", "us-central1"}, "123456789"};
  EXPECT_EQ(log_service_->ListJobLogs(curl).status().code(), Code::kNotFound);
  curl.job.job_id = std::to_string(job);
  auto found = log_service_->ListJobLogs(curl);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->project.id, "demo");
  EXPECT_EQ(found->page.entries.size(), 2u);

  LogEntriesRequest logging;
  logging.projects = {"no-such-project"};
  logging.filter.job_id = std::to_string(job);
  auto none = log_service_->ListEntries(logging);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->page.entries.empty());
  logging.projects = {"demo"};
  auto some = log_service_->ListEntries(logging);
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->page.entries.size(), 2u);
  logging.filter.job_id = "not-a-number";
  EXPECT_TRUE(log_service_->ListEntries(logging)->page.entries.empty());

  // Lines go with their job, deleted as the API deletes it (no foreign key cascades).
  ASSERT_TRUE(DeleteJob(job).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM custom_jobs"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_lines"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_stats"), 0);
}

// The lines have no foreign key (migrations/0021): an append locks its jobs FOR KEY SHARE, and a
// delete that waited on that lock removes, in a statement after its own, the lines the append
// committed meanwhile. (Removed in the delete's own statement, they would stay: its snapshot
// predates them.)
TEST_F(JobLogStoreTest, ADeleteThatWaitedOnAnAppendRemovesTheLinesItStored) {
  const int64_t job = CreateJob();
  const std::string id = std::to_string(job);
  // An append in flight, as kAppend runs it: the job locked, its count and a line written.
  auto appender = pool_->Acquire();
  ASSERT_TRUE(appender.ok());
  auto append = pg::Transaction::Begin(**appender);
  ASSERT_TRUE(append.ok());
  ASSERT_TRUE(
      append->Exec("SELECT id FROM custom_jobs WHERE id = $1::bigint FOR KEY SHARE", {id}).ok());
  ASSERT_TRUE(append
                  ->Exec("INSERT INTO job_log_stats (job_id, appended, head_limit, tail_limit) "
                         "VALUES ($1::bigint, 1, 100, 100)",
                         {id})
                  .ok());
  ASSERT_TRUE(append
                  ->Exec("INSERT INTO job_log_lines (job_id, line_no, time, severity, task_name, "
                         "message) VALUES ($1::bigint, 1, now(), 200, 'workerpool0-0', 'late')",
                         {id})
                  .ok());

  Status deleted = Internal("not run");
  std::thread deleter([&] { deleted = DeleteJob(job); });
  // The delete waits on the append's lock (polled with a deadline, never slept on).
  auto deletes_waiting = [&] {
    return Count(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
        "query LIKE 'WITH d AS (DELETE FROM custom_jobs%'");
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (deletes_waiting() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  EXPECT_EQ(deletes_waiting(), 1);
  ASSERT_TRUE(append->Commit().ok());
  deleter.join();
  ASSERT_TRUE(deleted.ok()) << deleted.message();
  EXPECT_EQ(Count("SELECT count(*) FROM custom_jobs WHERE id = " + id), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_lines WHERE job_id = " + id), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_stats WHERE job_id = " + id), 0);
}

TEST_F(JobLogStoreTest, MessagesAreSanitizedSoOneBadLineCannotFailTheBatch) {
  int64_t job = CreateJob();
  ASSERT_TRUE(logs_
                  ->Append({Line(job, t0_ + seconds(1), std::string("nul\0here \xFF", 10)),
                            Line(job, t0_ + seconds(2), "quote \" backslash \\ {braces,}")})
                  .ok());
  LogQuery q = Query(job);
  q.task_name = "workerpool0-0";
  EXPECT_EQ(Messages(ListAll(q)),
            (std::vector<std::string>{"nulhere \xEF\xBF\xBD", "quote \" backslash \\ {braces,}"}));
}

TEST_F(JobLogStoreTest, ChattyJobsInBatchesOfAThousandStayWithinTheBound) {
  // The writer's shape: a loop appending what its replicas printed, many jobs per batch.
  int64_t a = CreateJob();
  int64_t b = CreateJob();
  const auto start = std::chrono::steady_clock::now();
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<LogLine> lines;
    for (int i = 0; i < 1000; ++i) {
      int n = batch * 1000 + i;
      lines.push_back(Line(i % 2 == 0 ? a : b, t0_ + std::chrono::milliseconds(n),
                           "step " + std::to_string(n) + " loss=1.93 lr=3e-4 tokens/s=41234"));
    }
    ASSERT_TRUE(logs_->Append(lines).ok());
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "appended 12000 lines in " << secs << " s (" << static_cast<int>(12000 / secs)
            << " lines/s)\n";
  // 6000 lines each: under the default bound of 10000, nothing dropped.
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_lines"), 12000);
  LogQuery last_page = Query(a);
  last_page.after = InsertId{t0_ + seconds(11), 0, LogSource::kServiceEvent};
  const auto read = std::chrono::steady_clock::now();
  EXPECT_EQ(ListAll(last_page).size(), 500u);
  std::cout
      << "read the last 500 of 6000 lines in "
      << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - read).count()
      << " ms\n";
  Open(JobLogRetention{1000});
  int64_t c = CreateJob();
  std::vector<LogLine> lines;
  for (int i = 0; i < 5000; ++i) lines.push_back(Line(c, t0_ + seconds(1), std::to_string(i)));
  ASSERT_TRUE(logs_->Append(lines).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM job_log_lines WHERE job_id = " + std::to_string(c)), 1000);
  LogQuery q = Query(c);
  q.task_name = "service";
  EXPECT_EQ(ListAll(q).back().message.rfind("4000 lines dropped", 0), 0u);
}

}  // namespace
}  // namespace trainyard
