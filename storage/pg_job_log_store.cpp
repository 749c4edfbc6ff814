#include "storage/pg_job_log_store.h"

#include <algorithm>

#include "services/logs/log_text.h"
#include "services/logs/service_entries.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// One statement, so one round trip and one (implicit) transaction for a whole batch:
//  - `live` skips lines of jobs deleted meanwhile, and KEY SHARE makes a delete that starts now
//    wait for us, then remove what we stored (no foreign key: migrations/0021);
//  - `stats` counts the lines per job (the upsert serializes concurrent appends to one job and
//    numbers their lines without gaps or repeats); the retention bound is fixed at a job's first
//    line;
//  - `inserted` stores only lines retention keeps (the first head_limit, and those among the
//    newest tail_limit), so a batch larger than the bound never lands just to be deleted;
//  - `dropped` deletes older lines that just left the newest tail_limit. Sub-statements share one
//    snapshot: lines a concurrent append to the same job committed after it are not seen here and
//    are deleted by the job's next append instead.
constexpr const char* kAppend =
    "WITH input AS ("
    " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::text[], $5::text[])"
    " WITH ORDINALITY AS t(job_id, time_us, severity, task_name, message, ord)),"
    " live AS (SELECT id AS job_id FROM custom_jobs WHERE id IN (SELECT job_id FROM input)"
    " ORDER BY id FOR KEY SHARE),"
    " counts AS (SELECT job_id, count(*) AS n FROM input JOIN live USING (job_id) GROUP BY job_id),"
    " stats AS (INSERT INTO job_log_stats AS s (job_id, appended, head_limit, tail_limit)"
    " SELECT job_id, n, $6::bigint, $7::bigint FROM counts ORDER BY job_id"
    " ON CONFLICT (job_id) DO UPDATE SET appended = s.appended + EXCLUDED.appended"
    " RETURNING s.job_id, s.appended, s.head_limit, s.tail_limit),"
    " numbered AS (SELECT i.*, st.appended, st.head_limit, st.tail_limit,"
    " st.appended - c.n + row_number() OVER (PARTITION BY i.job_id ORDER BY i.ord) AS line_no"
    " FROM input i JOIN counts c USING (job_id) JOIN stats st USING (job_id)),"
    " inserted AS (INSERT INTO job_log_lines (job_id, line_no, time, severity, task_name, message)"
    " SELECT job_id, line_no, " TY_TS("time_us") ", severity, task_name, message FROM numbered"
    " WHERE line_no <= head_limit OR line_no > appended - tail_limit ORDER BY job_id, line_no"
    " RETURNING 1),"
    " dropped AS (DELETE FROM job_log_lines l USING stats st WHERE l.job_id = st.job_id"
    " AND l.line_no > st.head_limit AND l.line_no <= st.appended - st.tail_limit RETURNING 1)"
    " SELECT (SELECT count(*) FROM inserted), (SELECT count(*) FROM dropped)";

constexpr const char* kJobExists =
    "SELECT 1 FROM custom_jobs WHERE id = $1::bigint AND project_number = $2::bigint"
    " AND ($3::text IS NULL OR location = $3::text)";

// The job's entries from three sources: stored replica lines ('l'), its job_events as the
// service's entries ('e'), and, once retention dropped lines, one note ('n') placed right after
// the last line of the kept head, which is where the gap is. Columns that a source lacks are NULL.
// $12/$13 repeat the ownership check of kJobExists so that a job of another project reads empty.
#define TY_LOG_ENTRIES_SELECT \
  "SELECT " TY_MICROS("time") ", seq, src, severity, task_name, message, from_state, to_state,"  \
  " dropped, head_limit, tail_limit FROM ("                                                       \
  " SELECT time, seq, 'l'::text AS src, severity, task_name, message, NULL::smallint AS"         \
  " from_state, NULL::smallint AS to_state, NULL::bigint AS dropped, NULL::bigint AS head_limit," \
  " NULL::bigint AS tail_limit FROM job_log_lines WHERE job_id = $1::bigint"                      \
  " UNION ALL SELECT time, seq, 'e', NULL, 'service', reason, from_state, to_state, NULL, NULL,"  \
  " NULL FROM job_events WHERE job_id = $1::bigint"                                               \
  " UNION ALL SELECT l.time, l.seq, 'n', NULL, 'service', NULL, NULL, NULL,"                     \
  " s.appended - s.head_limit - s.tail_limit, s.head_limit, s.tail_limit FROM job_log_stats s"   \
  " JOIN job_log_lines l ON l.job_id = s.job_id AND l.line_no = s.head_limit"                    \
  " WHERE s.job_id = $1::bigint AND s.appended > s.head_limit + s.tail_limit) e"                  \
  " WHERE EXISTS (SELECT 1 FROM custom_jobs WHERE id = $1::bigint AND project_number ="          \
  " $12::bigint AND ($13::text IS NULL OR location = $13::text))"                                 \
  " AND ($2::text IS NULL OR task_name = $2::text)"                                               \
  " AND ($3::bigint IS NULL OR time >= " TY_TS("$3") ")"                                         \
  " AND ($4::bigint IS NULL OR time < " TY_TS("$4") ")"                                          \
  " AND ($5::bigint IS NULL OR (time, seq, src) > (" TY_TS("$5") ", $6::bigint, $7::text))"

constexpr const char* kEntriesAsc =
    TY_LOG_ENTRIES_SELECT
    " AND ($8::bigint IS NULL OR (time, seq, src) > (" TY_TS("$8") ", $9::bigint, $10::text))"
    " ORDER BY time, seq, src LIMIT $11::int";
constexpr const char* kEntriesDesc =
    TY_LOG_ENTRIES_SELECT
    " AND ($8::bigint IS NULL OR (time, seq, src) < (" TY_TS("$8") ", $9::bigint, $10::text))"
    " ORDER BY time DESC, seq DESC, src DESC LIMIT $11::int";

#undef TY_LOG_ENTRIES_SELECT

void AddPosition(pg::Params& params, const std::optional<InsertId>& id) {
  if (!id) {
    params.insert(params.end(), {std::nullopt, std::nullopt, std::nullopt});
    return;
  }
  params.push_back(MicrosParam(id->time));
  params.push_back(std::to_string(id->seq));
  params.push_back(std::string(1, static_cast<char>(id->source)));
}

LogEntry EntryFromRow(const pg::Result& r, int i, int64_t job_id) {
  InsertId id{FromUnixMicros(r.GetInt64(i, 0)), r.GetInt64(i, 1),
              static_cast<LogSource>(r.Get(i, 2).empty() ? 'l' : r.Get(i, 2)[0])};
  switch (id.source) {
    case LogSource::kServiceEvent:
      return ServiceEventEntry(job_id, id, static_cast<JobState>(r.GetInt64(i, 6)),
                               static_cast<JobState>(r.GetInt64(i, 7)), std::string(r.Get(i, 5)));
    case LogSource::kDropNotice:
      return DropNoticeEntry(job_id, id, r.GetInt64(i, 8), r.GetInt64(i, 9), r.GetInt64(i, 10));
    case LogSource::kReplicaLine:
      break;
  }
  LogEntry e;
  e.job_id = job_id;
  e.time = id.time;
  e.insert_id = id;
  e.severity = SeverityFromNumber(r.GetInt64(i, 3));
  e.task_name = std::string(r.Get(i, 4));
  e.message = std::string(r.Get(i, 5));
  return e;
}

}  // namespace

Status PgJobLogStore::Append(const std::vector<LogLine>& lines) {
  if (lines.empty()) return Status::Ok();
  std::vector<int64_t> job_ids, times, severities;
  std::vector<std::string> tasks, messages;
  job_ids.reserve(lines.size());
  times.reserve(lines.size());
  severities.reserve(lines.size());
  tasks.reserve(lines.size());
  messages.reserve(lines.size());
  for (const LogLine& line : lines) {
    job_ids.push_back(line.job_id);
    times.push_back(ToUnixMicros(line.time));
    severities.push_back(static_cast<int64_t>(line.severity));
    tasks.push_back(SanitizeLogMessage(line.task_name));
    messages.push_back(SanitizeLogMessage(line.message));
  }
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  return conn
      ->Exec(kAppend, {NumberArray(job_ids), NumberArray(times), NumberArray(severities),
                       TextArray(tasks), TextArray(messages), std::to_string(retention_.head()),
                       std::to_string(retention_.tail())})
      .status();
}

StatusOr<LogPage> PgJobLogStore::List(const LogQuery& query) {
  const int limit = std::clamp(query.page_size, 1, kMaxLogPageSize);
  pg::Params exists{std::to_string(query.job_id), std::to_string(query.project_number),
                    query.location};
  pg::Params params{std::to_string(query.job_id), query.task_name, MicrosParam(query.from)};
  params.push_back(MicrosParam(query.until));
  AddPosition(params, query.after);
  AddPosition(params, query.page_after);
  params.push_back(std::to_string(limit + 1));
  params.push_back(std::to_string(query.project_number));
  params.push_back(query.location);

  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  // One round trip for both: whether the job is there, and its page.
  TY_ASSIGN_OR_RETURN(
      std::vector<pg::Result> results,
      conn->ExecBatch({{kJobExists, std::move(exists)},
                       {query.descending ? kEntriesDesc : kEntriesAsc, std::move(params)}}));
  if (results[0].rows() == 0) return NotFound("job " + std::to_string(query.job_id) + " not found");
  const pg::Result& r = results[1];
  LogPage page;
  const int rows = std::min(r.rows(), limit);
  page.entries.reserve(rows);
  for (int i = 0; i < rows; ++i) page.entries.push_back(EntryFromRow(r, i, query.job_id));
  if (r.rows() > limit) page.next = page.entries.back().insert_id;
  return page;
}

}  // namespace trainyard::storage
