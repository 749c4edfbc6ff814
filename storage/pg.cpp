#include "storage/pg.h"

#include <libpq-fe.h>
#include <poll.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "services/log.h"
#include "services/span_trace.h"

namespace trainyard::pg {
namespace {

// A connection that has prepared this many distinct statements is running dynamically built SQL;
// dropping them all bounds server memory without a per-statement LRU.
constexpr size_t kMaxPreparedStatements = 512;

std::string TrimTrailingNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string ConnectionErrorMessage(PGconn* conn) {
  std::string msg = conn ? TrimTrailingNewlines(PQerrorMessage(conn)) : std::string();
  return msg.empty() ? "connection to the database lost" : msg;
}

// Server notices (e.g. "relation ... already exists, skipping") would otherwise go to stderr as
// unstructured text; route them into the JSON log instead.
void NoticeReceiver(void* /*arg*/, const PGresult* res) {
  const char* severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
  const char* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  bool warning = severity != nullptr && std::strcmp(severity, "WARNING") == 0;
  LogJson(warning ? LogLevel::kWarn : LogLevel::kDebug, "postgres_notice",
          {{"severity", severity ? severity : ""}, {"message", primary ? primary : ""}});
}

bool IsCachedPlanInvalidated(const PGresult* res) {
  const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  const char* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  return state != nullptr && std::strcmp(state, "0A000") == 0 && primary != nullptr &&
         std::strstr(primary, "cached plan must not change result type") != nullptr;
}

bool ResultOk(const PGresult* res) {
  if (res == nullptr) return false;
  switch (PQresultStatus(res)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_EMPTY_QUERY:
      return true;
    default:
      return false;
  }
}

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Error mapping

Code CodeForSqlState(std::string_view s) {
  if (s == "23505") return Code::kAlreadyExists;  // unique_violation: the row is already there
  // Serialization failures and deadlocks: the whole transaction may succeed if retried.
  if (s == "40001" || s == "40P01") return Code::kAborted;
  // lock_not_available (lock_timeout, NOWAIT): contention, retry the transaction.
  if (s == "55P03") return Code::kAborted;
  // query_canceled: statement_timeout fired, the server is too slow right now.
  if (s == "57014") return Code::kUnavailable;
  // protocol_violation is class 08 but means we sent a malformed message (wrong parameter count):
  // our bug, and the session is still usable.
  if (s == "08P01") return Code::kInternal;
  // Connection exceptions; admin/crash shutdown and "starting up"; out of connections, memory or
  // disk; a read-only standby after failover. All pass when the server recovers.
  if (s.starts_with("08") || s.starts_with("53") || s == "57P01" || s == "57P02" || s == "57P03" ||
      s == "25006") {
    return Code::kUnavailable;
  }
  // Everything else -- foreign key (23503), check (23514), not null (23502), data exceptions
  // (22xxx), syntax errors -- means storage sent something the schema rejects. Validation belongs
  // in services/, so reaching the database with it is our fault: kInternal, never a client 4xx.
  return Code::kInternal;
}

Status StatusFromError(const PGresult* res, PGconn* conn) {
  // A broken session trumps whatever SQLSTATE came with it (57P01 FATAL then EOF, for example):
  // the caller must treat the connection as gone.
  if (conn != nullptr && PQstatus(conn) == CONNECTION_BAD) {
    return Unavailable("database connection lost: " + ConnectionErrorMessage(conn));
  }
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  if (state == nullptr) {
    // libpq-side failures (out of memory, lost socket) carry no SQLSTATE.
    std::string msg = res ? TrimTrailingNewlines(PQresultErrorMessage(res)) : std::string();
    if (msg.empty()) msg = ConnectionErrorMessage(conn);
    return Unavailable("database error: " + msg);
  }
  const char* primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  std::string msg = primary ? primary : "unknown error";
  msg += " (SQLSTATE ";
  msg += state;
  msg += ")";
  return Status(CodeForSqlState(state), std::move(msg));
}

// ---------------------------------------------------------------------------------------------
// Result

Result::Result(Result&& other) noexcept : res_(std::exchange(other.res_, nullptr)) {}

Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    if (res_) PQclear(res_);
    res_ = std::exchange(other.res_, nullptr);
  }
  return *this;
}

Result::~Result() {
  if (res_) PQclear(res_);
}

int Result::rows() const { return res_ ? PQntuples(res_) : 0; }
int Result::columns() const { return res_ ? PQnfields(res_) : 0; }

int Result::ColumnIndex(const std::string& name) const {
  return res_ ? PQfnumber(res_, name.c_str()) : -1;
}

bool Result::IsNull(int r, int c) const {
  if (!res_ || r < 0 || r >= rows() || c < 0 || c >= columns()) return true;
  return PQgetisnull(res_, r, c) != 0;
}

std::string_view Result::Get(int r, int c) const {
  if (IsNull(r, c)) return {};
  return std::string_view(PQgetvalue(res_, r, c), static_cast<size_t>(PQgetlength(res_, r, c)));
}

int64_t Result::GetInt64(int r, int c) const {
  std::string_view v = Get(r, c);
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size()) return 0;
  return out;
}

double Result::GetDouble(int r, int c) const {
  std::string_view v = Get(r, c);
  double out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    // from_chars does not know PostgreSQL's spellings of the special values.
    if (v == "Infinity") return std::numeric_limits<double>::infinity();
    if (v == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (v == "NaN") return std::numeric_limits<double>::quiet_NaN();
    return 0;
  }
  return out;
}

bool Result::GetBool(int r, int c) const { return Get(r, c) == "t"; }

int64_t Result::affected() const {
  if (!res_) return 0;
  const char* n = PQcmdTuples(res_);
  if (n == nullptr || *n == '\0') return 0;
  int64_t out = 0;
  std::from_chars(n, n + std::strlen(n), out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Connection

StatusOr<std::unique_ptr<Connection>> Connection::Connect(const std::string& conninfo,
                                                          const SessionOptions& options) {
  // Parse the caller's string (keywords or URI) so our session settings can be merged into its
  // `options` instead of replacing them, and so its own choices win where both set something.
  char* err = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &err);
  if (parsed == nullptr) {
    std::string msg = err ? TrimTrailingNewlines(err) : "out of memory";
    if (err) PQfreemem(err);
    return InvalidArgument("invalid database connection string: " + msg);
  }
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::string user_options;
  bool has_connect_timeout = false;
  bool has_client_encoding = false;
  bool has_keepalive_setting = false;
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    std::string_view key = o->keyword;
    if (key == "options") {
      user_options = o->val;
      continue;
    }
    if (key == "connect_timeout") has_connect_timeout = true;
    if (key == "client_encoding") has_client_encoding = true;
    if (key.starts_with("keepalives") || key == "tcp_user_timeout") has_keepalive_setting = true;
    keys.emplace_back(o->keyword);
    values.emplace_back(o->val);
  }
  PQconninfoFree(parsed);

  std::string session =
      "-c statement_timeout=" + Millis(options.statement_timeout) +
      " -c lock_timeout=" + Millis(options.lock_timeout) +
      " -c idle_in_transaction_session_timeout=" + Millis(options.idle_in_transaction_timeout) +
      (options.parallel_query ? "" : " -c max_parallel_workers_per_gather=0");
  // Ours first: for a setting given twice the later -c wins, and an explicit choice in the
  // caller's conninfo (say a longer statement_timeout for a batch tool) should beat our default.
  keys.emplace_back("options");
  values.emplace_back(user_options.empty() ? session : session + " " + user_options);
  keys.emplace_back("fallback_application_name");
  values.emplace_back(options.application_name);
  // libpq waits forever for an unreachable host by default; start-up and checkouts must not.
  if (!has_connect_timeout) {
    keys.emplace_back("connect_timeout");
    values.emplace_back("5");
  }
  // A database host that vanishes (a cable, a dead VM) sends no reset: without keepalives a
  // request thread waits on its socket for the kernel's two hours. With these a dead peer is found
  // in about a minute (30 s idle, then 3 probes 10 s apart; unsent data gives up after 60 s).
  // Chosen; the caller's own keepalive settings replace them all.
  if (!has_keepalive_setting) {
    for (auto [key, value] :
         {std::pair{"keepalives", "1"}, std::pair{"keepalives_idle", "30"},
          std::pair{"keepalives_interval", "10"}, std::pair{"keepalives_count", "3"},
          std::pair{"tcp_user_timeout", "60000"}}) {
      keys.emplace_back(key);
      values.emplace_back(value);
    }
  }
  // Text crosses the wire as UTF-8 whatever the client's locale says.
  if (!has_client_encoding) {
    keys.emplace_back("client_encoding");
    values.emplace_back("UTF8");
  }

  std::vector<const char*> kw;
  std::vector<const char*> vals;
  for (size_t i = 0; i < keys.size(); ++i) {
    kw.push_back(keys[i].c_str());
    vals.push_back(values[i].c_str());
  }
  kw.push_back(nullptr);
  vals.push_back(nullptr);

  PGconn* conn = PQconnectdbParams(kw.data(), vals.data(), /*expand_dbname=*/0);
  if (conn == nullptr) return Unavailable("cannot connect to the database: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = ConnectionErrorMessage(conn);
    PQfinish(conn);
    return Unavailable("cannot connect to the database: " + msg);
  }
  PQsetNoticeReceiver(conn, &NoticeReceiver, nullptr);
  std::unique_ptr<Connection> connection(new Connection(conn));
  if (options.on_connect) options.on_connect(*connection);
  return connection;
}

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

bool Connection::broken() const {
  return poisoned_ || conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK;
}

bool Connection::in_transaction() const {
  if (conn_ == nullptr) return false;
  PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

int Connection::backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }

void Connection::PollForClose() {
  if (broken()) return;
  int fd = PQsocket(conn_);
  if (fd < 0) return;
  // An idle session that we never LISTEN on receives nothing unless the server is ending it (a
  // FATAL message, then EOF). Drain a few reads so libpq reaches the EOF and marks the connection
  // bad.
  for (int i = 0; i < 4 && PQstatus(conn_) == CONNECTION_OK; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    if (PQconsumeInput(conn_) == 0) break;
  }
}

StatusOr<std::string> Connection::Prepare(const std::string& sql) {
  auto it = prepared_.find(sql);
  if (it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxPreparedStatements && PQtransactionStatus(conn_) != PQTRANS_INERROR) {
    // DEALLOCATE is not transactional, so this is safe inside an open transaction too.
    PGresult* d = PQexec(conn_, "DEALLOCATE ALL");
    bool ok = ResultOk(d);
    PQclear(d);
    if (ok) prepared_.clear();
  }
  std::string name = "s" + std::to_string(next_statement_++);
  PGresult* p = PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr);
  if (!ResultOk(p)) {
    Status st = StatusFromError(p, conn_);
    PQclear(p);
    return st;
  }
  PQclear(p);
  prepared_.emplace(sql, name);
  return name;
}

StatusOr<Result> Connection::ExecPrepared(const std::string& sql, const Params& params,
                                          bool* retry) {
  *retry = false;
  TY_ASSIGN_OR_RETURN(std::string name, Prepare(sql));
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& v : params) values.push_back(v ? v->c_str() : nullptr);
  PGresult* res = PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                                 values.data(), nullptr, nullptr, 0);
  if (ResultOk(res)) return Result(res);

  Status st = StatusFromError(res, conn_);
  if (res != nullptr && IsCachedPlanInvalidated(res)) {
    // A migration changed a table under a cached `SELECT *`-style statement. Forget it so the next
    // use re-prepares (the old name stays allocated on the server until the session ends, which is
    // harmless). Outside a transaction we can retry at once; inside, the transaction is already
    // aborted, so report a retryable kAborted.
    prepared_.erase(sql);
    if (PQtransactionStatus(conn_) == PQTRANS_IDLE) {
      *retry = true;
    } else {
      st = Aborted(st.message());
    }
  }
  PQclear(res);
  return st;
}

namespace {

metrics::Histogram& MutableQueryLatency() {
  static metrics::Histogram latency(metrics::kLatencyBuckets);
  return latency;
}

// Observes the time from its construction to its end.
class QueryTimer {
 public:
  QueryTimer() : start_(std::chrono::steady_clock::now()) {}
  ~QueryTimer() {
    MutableQueryLatency().Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

const metrics::Histogram& QueryLatency() { return MutableQueryLatency(); }

StatusOr<Result> Connection::Exec(std::string_view sql, const Params& params) {
  if (broken()) return Unavailable("database connection lost: " + ConnectionErrorMessage(conn_));
  QueryTimer timer;
  SpanTimer trace(backend_pid(), 1, sql);
  std::string key(sql);
  bool retry = false;
  StatusOr<Result> r = ExecPrepared(key, params, &retry);
  if (retry) r = ExecPrepared(key, params, &retry);
  return r;
}

StatusOr<std::vector<Result>> Connection::ExecBatch(const std::vector<Statement>& statements) {
  if (broken()) return Unavailable("database connection lost: " + ConnectionErrorMessage(conn_));
  QueryTimer timer;
  std::vector<Result> results;
  results.reserve(statements.size());
  if (statements.empty()) return results;
  SpanTimer trace(backend_pid(), statements.size(), statements.front().sql);
  // Prepare first: PQprepare cannot run inside pipeline mode here without a sync of its own.
  std::vector<std::string> names;
  names.reserve(statements.size());
  for (const Statement& s : statements) {
    TY_ASSIGN_OR_RETURN(std::string name, Prepare(std::string(s.sql)));
    names.push_back(std::move(name));
  }
  if (PQenterPipelineMode(conn_) != 1) {
    return Unavailable("cannot enter pipeline mode: " + ConnectionErrorMessage(conn_));
  }
  // Blocking sends cannot deadlock here: each statement's reply is small next to the socket
  // buffers for the batch sizes callers use (GroupCommitter and the runtime cap them).
  for (size_t i = 0; i < statements.size(); ++i) {
    const Params& params = statements[i].params;
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& v : params) values.push_back(v ? v->c_str() : nullptr);
    if (PQsendQueryPrepared(conn_, names[i].c_str(), static_cast<int>(values.size()), values.data(),
                            nullptr, nullptr, 0) != 1) {
      // Replies may still be owed without a sync to end them: this session is unusable now.
      poisoned_ = true;
      return Unavailable("sending a pipeline failed: " + ConnectionErrorMessage(conn_));
    }
  }
  if (PQpipelineSync(conn_) != 1) {
    poisoned_ = true;
    return Unavailable("sending a pipeline failed: " + ConnectionErrorMessage(conn_));
  }
  // Drain every reply: per statement its result then NULL, and PGRES_PIPELINE_SYNC at the end.
  // The first failure aborts the rest (PGRES_PIPELINE_ABORTED) and its transaction.
  Status first_error = Status::Ok();
  for (size_t i = 0; i < statements.size(); ++i) {
    while (PGresult* res = PQgetResult(conn_)) {
      ExecStatusType st = PQresultStatus(res);
      if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        results.emplace_back(res);
        continue;
      }
      if (first_error.ok()) {
        first_error = StatusFromError(res, conn_);
        if (IsCachedPlanInvalidated(res)) prepared_.erase(std::string(statements[i].sql));
      }
      PQclear(res);
    }
  }
  for (;;) {
    PGresult* res = PQgetResult(conn_);
    if (res == nullptr) {
      if (PQstatus(conn_) != CONNECTION_OK) break;
      continue;
    }
    ExecStatusType st = PQresultStatus(res);
    PQclear(res);
    if (st == PGRES_PIPELINE_SYNC) break;
    if (st == PGRES_FATAL_ERROR && first_error.ok()) {
      first_error = Unavailable("the pipeline's commit failed: " + ConnectionErrorMessage(conn_));
    }
  }
  if (PQexitPipelineMode(conn_) != 1 && first_error.ok()) {
    first_error = Unavailable("cannot leave pipeline mode: " + ConnectionErrorMessage(conn_));
  }
  if (!first_error.ok()) return first_error;
  return results;
}

StatusOr<Result> Connection::ExecScript(std::string_view sql) {
  if (broken()) return Unavailable("database connection lost: " + ConnectionErrorMessage(conn_));
  std::string text(sql);
  SpanTimer trace(backend_pid(), 1, sql);
  PGresult* res = PQexec(conn_, text.c_str());
  if (ResultOk(res)) return Result(res);
  Status st = StatusFromError(res, conn_);
  PQclear(res);
  return st;
}

// ---------------------------------------------------------------------------------------------
// Pool

Pool::Pool(std::string conninfo, int size, std::chrono::milliseconds checkout_timeout,
           SessionOptions options)
    : conninfo_(std::move(conninfo)),
      size_(size),
      checkout_timeout_(checkout_timeout),
      options_(std::move(options)) {}

Pool::~Pool() = default;

StatusOr<std::unique_ptr<Pool>> Pool::Create(std::string conninfo, int size,
                                             std::chrono::milliseconds checkout_timeout,
                                             SessionOptions options) {
  if (size <= 0) return InvalidArgument("database pool size must be positive");
  std::unique_ptr<Pool> pool(new Pool(std::move(conninfo), size, checkout_timeout, options));
  TY_ASSIGN_OR_RETURN(std::unique_ptr<Connection> first,
                      Connection::Connect(pool->conninfo_, pool->options_));
  pool->idle_.push_back(std::move(first));
  pool->open_ = 1;
  return pool;
}

StatusOr<PooledConnection> Pool::Acquire() {
  const auto deadline = std::chrono::steady_clock::now() + checkout_timeout_;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      lock.unlock();
      // A session the server ended while idle (restart, pg_terminate_backend, idle timeout) is
      // replaced here rather than failing the caller's first statement.
      conn->PollForClose();
      if (!conn->broken()) return PooledConnection(this, std::move(conn));
      conn.reset();
      lock.lock();
      --open_;
      continue;  // room for a fresh connection now
    }
    if (open_ < size_) {
      ++open_;
      lock.unlock();
      auto conn = Connection::Connect(conninfo_, options_);
      if (!conn.ok()) {
        {
          std::lock_guard<std::mutex> relock(mu_);
          --open_;
        }
        cv_.notify_one();
        return conn.status();
      }
      return PooledConnection(this, std::move(conn).value());
    }
    ++waiting_;
    const bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    --waiting_;
    if (timed_out && idle_.empty() && open_ >= size_) {
      ++checkout_timeouts_;
      return Unavailable("database connection pool exhausted");
    }
  }
}

void Pool::Return(std::unique_ptr<Connection> conn) {
  // Whoever returned a connection mid-transaction lost track of it; never hand an open (and maybe
  // lock-holding) transaction to the next user.
  if (!conn->broken() && conn->in_transaction()) (void)conn->ExecScript("ROLLBACK");
  bool keep = !conn->broken() && !conn->in_transaction();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (keep) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
  }
  cv_.notify_one();
  // A discarded connection is closed here, outside the lock.
}

Status Pool::Ping() {
  TY_ASSIGN_OR_RETURN(PooledConnection conn, Acquire());
  TY_ASSIGN_OR_RETURN(Result r, conn->Exec("SELECT 1"));
  (void)r;
  return Status::Ok();
}

Pool::Stats Pool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{size_, open_, open_ - static_cast<int>(idle_.size()), waiting_, checkout_timeouts_};
}

PooledConnection::PooledConnection(PooledConnection&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), conn_(std::move(other.conn_)) {}

PooledConnection& PooledConnection::operator=(PooledConnection&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = std::exchange(other.pool_, nullptr);
    conn_ = std::move(other.conn_);
  }
  return *this;
}

PooledConnection::~PooledConnection() { Release(); }

void PooledConnection::Release() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_));
  pool_ = nullptr;
  conn_.reset();
}

// ---------------------------------------------------------------------------------------------
// Transaction

StatusOr<Transaction> Transaction::Begin(Connection& conn, IsolationLevel level) {
  if (conn.broken()) return Unavailable("database connection lost");
  if (conn.in_transaction()) return Internal("a transaction is already open on this connection");
  const char* sql = "BEGIN";
  switch (level) {
    case IsolationLevel::kReadCommitted:
      sql = "BEGIN";
      break;
    case IsolationLevel::kRepeatableRead:
      sql = "BEGIN ISOLATION LEVEL REPEATABLE READ";
      break;
    case IsolationLevel::kSerializable:
      sql = "BEGIN ISOLATION LEVEL SERIALIZABLE";
      break;
  }
  TY_ASSIGN_OR_RETURN(Result r, conn.ExecScript(sql));
  (void)r;
  Transaction tx(&conn);
  tx.open_ = true;
  return tx;
}

Transaction::Transaction(Transaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)), open_(std::exchange(other.open_, false)) {}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    if (open_) (void)Rollback();
    conn_ = std::exchange(other.conn_, nullptr);
    open_ = std::exchange(other.open_, false);
  }
  return *this;
}

Transaction::~Transaction() {
  if (open_) (void)Rollback();
}

Status Transaction::Commit() {
  if (!open_ || conn_ == nullptr) return Internal("commit without an open transaction");
  if (conn_->broken()) {
    open_ = false;
    return Unavailable("database connection lost before commit; the transaction did not commit");
  }
  if (PQtransactionStatus(conn_->raw()) == PQTRANS_INERROR) {
    (void)Rollback();
    return Internal(
        "transaction was aborted by an earlier failed statement and has been rolled back");
  }
  open_ = false;
  TY_ASSIGN_OR_RETURN(Result r, conn_->ExecScript("COMMIT"));
  (void)r;
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (!open_ || conn_ == nullptr) return Status::Ok();
  open_ = false;
  // A dead session has already rolled back on the server side.
  if (conn_->broken()) return Status::Ok();
  TY_ASSIGN_OR_RETURN(Result r, conn_->ExecScript("ROLLBACK"));
  (void)r;
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Quoting

std::string QuoteIdentifier(std::string_view ident) {
  std::string out = "\"";
  for (char c : ident) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string QuoteConninfoValue(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace trainyard::pg
