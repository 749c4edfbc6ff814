#pragma once
// The libpq layer: results, connections with a per-connection prepared-statement cache, a bounded
// connection pool and RAII transactions. Everything returns Status; nothing here throws. This is
// the only place (with the rest of storage/) that sees SQLSTATEs, so the mapping to google.rpc
// codes lives here and callers reason about kAlreadyExists / kAborted / kUnavailable, never
// "23505".
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "services/metrics/histogram.h"
#include "services/status.h"

// libpq's opaque types, declared the way libpq-fe.h does so that includers of this header do not
// need the libpq include path; redeclaring an identical typedef is legal C++.
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace trainyard::pg {

// Owns one PGresult. Values come back in text format; accessors never throw.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* res) : res_(res) {}
  Result(Result&& other) noexcept;
  Result& operator=(Result&& other) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result();

  int rows() const;
  int columns() const;
  // -1 when the result has no such column.
  int ColumnIndex(const std::string& name) const;
  bool IsNull(int r, int c) const;
  // Empty for SQL NULL; the view lives as long as this Result.
  std::string_view Get(int r, int c) const;
  // 0 for NULL or text that is not an integer: check IsNull first where NULL is meaningful.
  int64_t GetInt64(int r, int c) const;
  double GetDouble(int r, int c) const;
  // PostgreSQL's text form of boolean is "t" / "f".
  bool GetBool(int r, int c) const;
  // Rows touched by INSERT/UPDATE/DELETE/... (PQcmdTuples); 0 for other commands.
  int64_t affected() const;

 private:
  PGresult* res_ = nullptr;
};

// Text parameters, $1..$n in order; nullopt is SQL NULL. The SQL casts explicitly ($1::bigint) so
// the server never has to guess a type.
using Params = std::vector<std::optional<std::string>>;

// One statement of a pipeline: SQL built from constants, values as parameters.
struct Statement {
  std::string_view sql;
  Params params;
};

// Per-session settings sent in the startup packet, so they hold from the first statement on and
// RESET returns to them.
class Connection;

struct SessionOptions {
  // Bounds any single statement; a timeout surfaces as kUnavailable (the caller may retry).
  std::chrono::milliseconds statement_timeout{5000};
  // Bounds waits for row/table locks; surfaces as kAborted (retry the transaction).
  std::chrono::milliseconds lock_timeout{2000};
  // Kills sessions that a bug left idle inside a transaction, so they stop holding locks.
  std::chrono::milliseconds idle_in_transaction_timeout{30000};
  // Used only when the conninfo does not name one itself.
  std::string application_name = "trainyard";
  // false: no parallel workers for this session's plans. The background passes read a few
  // hundred rows at a time, and a parallel plan starts two worker processes for each read
  // (the scheduler's change feed: 7.8 ms that way, 2.4 ms without, on the same rows).
  bool parallel_query = true;
  // Run on each new session once it is up (storage/backend_priority.h lowers its backend's CPU
  // priority); what it does is its own business: it cannot fail the connection.
  std::function<void(Connection&)> on_connect;
};

// One libpq connection. Not thread-safe: use it from one thread at a time (the pool guarantees
// this).
class Connection {
 public:
  // conninfo is a libpq keyword string or a postgresql:// URI. Never logs it (it may hold a
  // password).
  static StatusOr<std::unique_ptr<Connection>> Connect(const std::string& conninfo,
                                                       const SessionOptions& options = {});
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // One statement with parameters. Prepared on first use and cached on this connection keyed by the
  // SQL text, so every later call skips parse and plan; build SQL from constants, never from
  // values.
  StatusOr<Result> Exec(std::string_view sql, const Params& params = {});
  StatusOr<Result> Exec(const Statement& statement) {
    return Exec(statement.sql, statement.params);
  }
  // Sends every statement at once, with one sync at the end (libpq pipeline mode), so N statements
  // cost one round trip; returns their results in order. Outside a transaction they run and commit
  // as one implicit transaction; inside one (a pg::Transaction) they join it. All or nothing: on
  // failure it returns the first failing statement's status, and nothing of the batch (outside a
  // transaction) or of the transaction (inside) will commit.
  StatusOr<std::vector<Result>> ExecBatch(const std::vector<Statement>& statements);
  // Any number of statements without parameters, in one round trip (PQexec). For migrations and
  // test fixtures; not for anything carrying user input.
  StatusOr<Result> ExecScript(std::string_view sql);

  // The socket is gone or the server closed the session.
  bool broken() const;
  // Inside BEGIN ... (including a transaction aborted by an error).
  bool in_transaction() const;
  // Server process id of this session (pg_backend_pid()), for tests and diagnostics.
  int backend_pid() const;
  // Reads whatever the server sent while we were idle, so a session the server terminated is seen
  // as broken() before it is handed out again. Never blocks.
  void PollForClose();
  // Number of statements currently prepared on this connection.
  size_t prepared_count() const { return prepared_.size(); }

  PGconn* raw() { return conn_; }

 private:
  explicit Connection(PGconn* conn) : conn_(conn) {}
  // The server-side name of `sql`, preparing it on first use.
  StatusOr<std::string> Prepare(const std::string& sql);
  StatusOr<Result> ExecPrepared(const std::string& sql, const Params& params, bool* retry);

  PGconn* conn_ = nullptr;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
  uint64_t next_statement_ = 1;
  bool poisoned_ = false;  // a pipeline broke half-sent: never reuse this session
};

class Pool;

// A connection checked out of a Pool; returns it on destruction (or when moved-from storage dies).
class PooledConnection {
 public:
  PooledConnection(PooledConnection&& other) noexcept;
  PooledConnection& operator=(PooledConnection&& other) noexcept;
  PooledConnection(const PooledConnection&) = delete;
  PooledConnection& operator=(const PooledConnection&) = delete;
  ~PooledConnection();

  Connection* operator->() { return conn_.get(); }
  Connection& operator*() { return *conn_; }

 private:
  friend class Pool;
  PooledConnection(Pool* pool, std::unique_ptr<Connection> conn)
      : pool_(pool), conn_(std::move(conn)) {}
  void Release();

  Pool* pool_ = nullptr;
  std::unique_ptr<Connection> conn_;
};

// At most `size` connections, created on demand. A checkout that finds none free within the timeout
// fails with kUnavailable, which the edge renders as 503: a bounded wait instead of a pile-up of
// handler threads. The Pool must outlive every PooledConnection taken from it.
class Pool {
 public:
  // Opens the first connection eagerly so a bad URL or a down server fails start-up, not the first
  // request.
  static StatusOr<std::unique_ptr<Pool>> Create(std::string conninfo, int size,
                                                std::chrono::milliseconds checkout_timeout,
                                                SessionOptions options = {});
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  StatusOr<PooledConnection> Acquire();
  // Round trip to the server on a pooled connection (for /readyz).
  Status Ping();

  struct Stats {
    int size = 0;                   // the cap
    int open = 0;                   // connections that exist (idle + in use)
    int in_use = 0;                 // checked out right now
    int waiting = 0;                // callers waiting for a connection right now
    int64_t checkout_timeouts = 0;  // checkouts that gave up (503 at the edge)
  };
  Stats stats() const;

 private:
  friend class PooledConnection;
  Pool(std::string conninfo, int size, std::chrono::milliseconds checkout_timeout,
       SessionOptions options);
  void Return(std::unique_ptr<Connection> conn);

  const std::string conninfo_;
  const int size_;
  const std::chrono::milliseconds checkout_timeout_;
  const SessionOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
  int open_ = 0;                   // guarded by mu_; idle + checked out + connecting
  int waiting_ = 0;                // guarded by mu_
  int64_t checkout_timeouts_ = 0;  // guarded by mu_
};

// Round trips of every connection of this process (Exec and ExecBatch), in seconds: one histogram
// for all pools, recorded with relaxed atomics.
const metrics::Histogram& QueryLatency();

enum class IsolationLevel { kReadCommitted, kRepeatableRead, kSerializable };

// BEGIN ... COMMIT on one connection; rolls back in the destructor unless committed, so an early
// `return status;` never leaves a transaction open.
class Transaction {
 public:
  static StatusOr<Transaction> Begin(Connection& conn,
                                     IsolationLevel level = IsolationLevel::kReadCommitted);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&& other) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  StatusOr<Result> Exec(std::string_view sql, const Params& params = {}) {
    return conn_->Exec(sql, params);
  }
  StatusOr<Result> Exec(const Statement& statement) { return conn_->Exec(statement); }
  Connection& connection() { return *conn_; }

  // Fails (and rolls back) if any statement in the transaction failed: PostgreSQL would otherwise
  // turn the COMMIT into a silent ROLLBACK.
  Status Commit();
  Status Rollback();

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_ = nullptr;
  bool open_ = false;
};

// Maps a failed PGresult (or a connection failure when res is null) to a Status; exposed for tests.
Status StatusFromError(const PGresult* res, PGconn* conn);
// The code that a SQLSTATE maps to (see pg.cpp for why each class maps where it does).
Code CodeForSqlState(std::string_view sqlstate);

// "my ""table""" -- for the rare dynamic identifier (database names in tests); values are always
// parameters instead.
std::string QuoteIdentifier(std::string_view ident);
// A value for a libpq keyword/value conninfo string: single-quoted, with ' and \ backslash-escaped,
// so paths with spaces or quotes survive.
std::string QuoteConninfoValue(std::string_view value);

}  // namespace trainyard::pg
