// storage/ infrastructure against a real PostgreSQL: the libpq wrappers, the pool, transactions,
// SQLSTATE mapping, the migrator and the embedded cluster launcher.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <libpq-fe.h>

#include "storage/embedded_postgres.h"
#include "storage/migrator.h"
#include "storage/pg.h"
#include "tests/integration/test_database.h"

namespace trainyard {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::unique_ptr<pg::Connection> MustConnect(const std::string& conninfo,
                                            const pg::SessionOptions& options = {}) {
  auto conn = pg::Connection::Connect(conninfo, options);
  EXPECT_TRUE(conn.ok()) << conn.status().message();
  return conn.ok() ? std::move(conn).value() : nullptr;
}

int64_t QueryInt(pg::Connection& conn, const std::string& sql, const pg::Params& params = {}) {
  auto r = conn.Exec(sql, params);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status().message();
  return r.ok() ? r->GetInt64(0, 0) : -1;
}

void MustRun(pg::Connection& conn, const std::string& script) {
  auto r = conn.ExecScript(script);
  ASSERT_TRUE(r.ok()) << script << ": " << r.status().message();
}

// Ends another session and waits until it is gone, as a server restart or an admin would.
void Terminate(int backend_pid) {
  auto admin = MustConnect(testing::AdminConninfo());
  ASSERT_NE(admin, nullptr);
  auto r = admin->Exec("SELECT pg_terminate_backend($1::int, 5000)", {std::to_string(backend_pid)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->GetBool(0, 0));
}

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = testing::FreshDatabase();
    conn_ = MustConnect(conninfo_);
    ASSERT_NE(conn_, nullptr);
  }
  std::string conninfo_;
  std::unique_ptr<pg::Connection> conn_;
};

// ------------------------------------------------------------------------------------------------
// Connection and Result

TEST_F(DbTest, ExecBindsTextParamsAndNulls) {
  MustRun(*conn_, "CREATE TABLE t (id bigint PRIMARY KEY, name text, ok boolean, x float8)");
  auto ins = conn_->Exec(
      "INSERT INTO t VALUES ($1::bigint, $2::text, $3::boolean, $4::float8), "
      "($5::bigint, $6::text, $7::boolean, $8::float8)",
      {"9007199254740993", "it's \"quoted\"", "true", "2.5", "2", std::nullopt, "false",
       std::nullopt});
  ASSERT_TRUE(ins.ok()) << ins.status().message();
  EXPECT_EQ(ins->affected(), 2);

  auto r = conn_->Exec("SELECT id, name, ok, x FROM t ORDER BY id DESC");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows(), 2);
  EXPECT_EQ(r->columns(), 4);
  EXPECT_EQ(r->ColumnIndex("ok"), 2);
  EXPECT_EQ(r->ColumnIndex("nope"), -1);
  EXPECT_EQ(r->GetInt64(0, 0), 9007199254740993);
  EXPECT_EQ(r->Get(0, 1), "it's \"quoted\"");
  EXPECT_TRUE(r->GetBool(0, 2));
  EXPECT_DOUBLE_EQ(r->GetDouble(0, 3), 2.5);
  EXPECT_FALSE(r->IsNull(0, 1));
  EXPECT_TRUE(r->IsNull(1, 1));
  EXPECT_EQ(r->Get(1, 1), "");
  EXPECT_TRUE(r->IsNull(1, 3));
  EXPECT_FALSE(r->GetBool(1, 2));
  // Out of range reads are NULL, not a crash.
  EXPECT_TRUE(r->IsNull(5, 0));
  EXPECT_EQ(r->Get(0, 9), "");

  auto upd = conn_->Exec("UPDATE t SET ok = NOT ok");
  ASSERT_TRUE(upd.ok());
  EXPECT_EQ(upd->affected(), 2);
}

TEST_F(DbTest, StatementsArePreparedOncePerConnection) {
  const std::string sql = "SELECT $1::int + 1";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(QueryInt(*conn_, sql, {std::to_string(i)}), i + 1);
  EXPECT_EQ(conn_->prepared_count(), 1u);
  // The server agrees: that statement plus the one asking.
  EXPECT_EQ(QueryInt(*conn_, "SELECT count(*) FROM pg_prepared_statements"), 2);
}

TEST_F(DbTest, CachedStatementSurvivesSchemaChange) {
  MustRun(*conn_, "CREATE TABLE t (a int); INSERT INTO t VALUES (1)");
  auto before = conn_->Exec("SELECT * FROM t");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->columns(), 1);
  MustRun(*conn_, "ALTER TABLE t ADD COLUMN b int DEFAULT 7");
  auto after = conn_->Exec("SELECT * FROM t");
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->columns(), 2);
  EXPECT_EQ(after->GetInt64(0, 1), 7);
}

TEST_F(DbTest, ExecScriptRunsManyStatements) {
  auto r = conn_->ExecScript(
      "CREATE TABLE s (a int); INSERT INTO s VALUES (1), (2); "
      "SELECT sum(a) FROM s");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->GetInt64(0, 0), 3);
  // A failing statement stops the script and rolls the implicit transaction back.
  auto bad = conn_->ExecScript("INSERT INTO s VALUES (3); SELECT 1/0");
  EXPECT_EQ(bad.status().code(), Code::kInternal);
  EXPECT_EQ(QueryInt(*conn_, "SELECT count(*) FROM s"), 2);
}

TEST(SqlStateMapping, MapsEachClassWhereCallersExpectIt) {
  EXPECT_EQ(pg::CodeForSqlState("23505"), Code::kAlreadyExists);
  EXPECT_EQ(pg::CodeForSqlState("23503"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("23514"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("23502"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("22P02"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("42601"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("40001"), Code::kAborted);
  EXPECT_EQ(pg::CodeForSqlState("40P01"), Code::kAborted);
  EXPECT_EQ(pg::CodeForSqlState("55P03"), Code::kAborted);
  EXPECT_EQ(pg::CodeForSqlState("57014"), Code::kUnavailable);
  EXPECT_EQ(pg::CodeForSqlState("08006"), Code::kUnavailable);
  EXPECT_EQ(pg::CodeForSqlState("57P01"), Code::kUnavailable);
  EXPECT_EQ(pg::CodeForSqlState("53300"), Code::kUnavailable);
  EXPECT_EQ(pg::CodeForSqlState("08P01"), Code::kInternal);
  EXPECT_EQ(pg::CodeForSqlState("XX000"), Code::kInternal);
}

TEST_F(DbTest, ErrorsFromTheServerAreMapped) {
  MustRun(*conn_,
          "CREATE TABLE parent (id int PRIMARY KEY);"
          "CREATE TABLE child (id int PRIMARY KEY, parent int REFERENCES parent(id),"
          " n int CHECK (n > 0))");
  ASSERT_TRUE(conn_->Exec("INSERT INTO parent VALUES ($1::int)", {"1"}).ok());

  auto dup = conn_->Exec("INSERT INTO parent VALUES ($1::int)", {"1"});
  EXPECT_EQ(dup.status().code(), Code::kAlreadyExists);
  EXPECT_NE(dup.status().message().find("parent_pkey"), std::string::npos)
      << dup.status().message();
  EXPECT_NE(dup.status().message().find("23505"), std::string::npos);

  auto fk = conn_->Exec("INSERT INTO child VALUES ($1::int, $2::int, 1)", {"1", "42"});
  EXPECT_EQ(fk.status().code(), Code::kInternal);
  auto check = conn_->Exec("INSERT INTO child VALUES ($1::int, $2::int, 0)", {"1", "1"});
  EXPECT_EQ(check.status().code(), Code::kInternal);
  auto cast = conn_->Exec("SELECT $1::int", {"not a number"});
  EXPECT_EQ(cast.status().code(), Code::kInternal);
  auto syntax = conn_->Exec("SELEC 1");
  EXPECT_EQ(syntax.status().code(), Code::kInternal);
  // Wrong parameter count is a protocol error (class 08) but our bug, not an outage.
  auto params = conn_->Exec("SELECT $1::int", {"1", "2"});
  EXPECT_EQ(params.status().code(), Code::kInternal) << params.status().message();

  // Raised SQLSTATEs travel the same path as real ones.
  const std::vector<std::pair<std::string, Code>> raised = {{"40001", Code::kAborted},
                                                            {"40P01", Code::kAborted},
                                                            {"55P03", Code::kAborted},
                                                            {"57014", Code::kUnavailable},
                                                            {"23505", Code::kAlreadyExists}};
  for (const auto& [state, code] : raised) {
    auto r = conn_->ExecScript("DO $$ BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = '" + state +
                               "'; END $$");
    EXPECT_EQ(r.status().code(), code) << state << ": " << r.status().message();
  }
  // None of that broke the session.
  EXPECT_FALSE(conn_->broken());
  EXPECT_EQ(QueryInt(*conn_, "SELECT 1"), 1);
}

TEST_F(DbTest, StatementTimeoutIsUnavailable) {
  pg::SessionOptions fast;
  fast.statement_timeout = milliseconds(100);
  auto conn = MustConnect(conninfo_, fast);
  ASSERT_NE(conn, nullptr);
  auto r = conn->Exec("SELECT pg_sleep(2)");
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().message();
  EXPECT_EQ(QueryInt(*conn, "SELECT 1"), 1);
}

TEST_F(DbTest, SessionSettingsApply) {
  auto r = conn_->ExecScript(
      "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'),"
      " current_setting('idle_in_transaction_session_timeout'),"
      " current_setting('application_name')");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->Get(0, 0), "5s");
  EXPECT_EQ(r->Get(0, 1), "2s");
  EXPECT_EQ(r->Get(0, 2), "30s");
  EXPECT_EQ(r->Get(0, 3), "trainyard");
}

TEST_F(DbTest, LockTimeoutIsAborted) {
  MustRun(*conn_, "CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)");
  auto holder = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(holder->Exec("SELECT * FROM t WHERE id = 1 FOR UPDATE").ok());

  pg::SessionOptions impatient;
  impatient.lock_timeout = milliseconds(100);
  auto other = MustConnect(conninfo_, impatient);
  ASSERT_NE(other, nullptr);
  auto r = other->Exec("UPDATE t SET v = v + 1 WHERE id = 1");
  EXPECT_EQ(r.status().code(), Code::kAborted) << r.status().message();
}

TEST(ConnectionTest, ConnectFailuresAreReported) {
  auto down = pg::Connection::Connect("host=/nonexistent/socket/dir port=5432 dbname=x");
  EXPECT_EQ(down.status().code(), Code::kUnavailable);
  auto garbage = pg::Connection::Connect("this is = not ' a conninfo");
  EXPECT_EQ(garbage.status().code(), Code::kInvalidArgument) << garbage.status().message();
}

TEST_F(DbTest, CallerOptionsAreKeptAlongsideOurs) {
  auto conn = MustConnect(conninfo_ +
                          " application_name=mine options='-c work_mem=7MB -c lock_timeout=9s'");
  ASSERT_NE(conn, nullptr);
  auto r = conn->ExecScript(
      "SELECT current_setting('application_name'), current_setting('work_mem'),"
      " current_setting('statement_timeout'), current_setting('lock_timeout')");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Get(0, 0), "mine");
  EXPECT_EQ(r->Get(0, 1), "7MB");
  EXPECT_EQ(r->Get(0, 2), "5s");  // ours where the caller is silent
  EXPECT_EQ(r->Get(0, 3), "9s");  // the caller's where it is not
}

// ------------------------------------------------------------------------------------------------
// Transaction

class TransactionTest : public DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    MustRun(*conn_, "CREATE TABLE t (id int PRIMARY KEY)");
  }
  int64_t Rows() { return QueryInt(*conn_, "SELECT count(*) FROM t"); }
};

TEST_F(TransactionTest, CommitPersists) {
  auto tx = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(tx->Exec("INSERT INTO t VALUES ($1::int)", {"1"}).ok());
  EXPECT_TRUE(conn_->in_transaction());
  ASSERT_TRUE(tx->Commit().ok());
  EXPECT_FALSE(conn_->in_transaction());
  EXPECT_EQ(Rows(), 1);
}

TEST_F(TransactionTest, DestructorRollsBack) {
  {
    auto tx = pg::Transaction::Begin(*conn_);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(tx->Exec("INSERT INTO t VALUES ($1::int)", {"1"}).ok());
  }
  EXPECT_FALSE(conn_->in_transaction());
  EXPECT_EQ(Rows(), 0);
}

TEST_F(TransactionTest, ExplicitRollbackAndMove) {
  auto tx = pg::Transaction::Begin(*conn_, pg::IsolationLevel::kSerializable);
  ASSERT_TRUE(tx.ok());
  auto level = tx->Exec("SELECT current_setting('transaction_isolation')");
  ASSERT_TRUE(level.ok());
  EXPECT_EQ(level->Get(0, 0), "serializable");
  pg::Transaction moved = std::move(tx).value();
  ASSERT_TRUE(moved.Exec("INSERT INTO t VALUES (1)").ok());
  ASSERT_TRUE(moved.Rollback().ok());
  EXPECT_EQ(Rows(), 0);
  EXPECT_EQ(moved.Commit().code(), Code::kInternal);  // nothing left to commit
}

TEST_F(TransactionTest, CommitAfterAFailedStatementFailsAndRollsBack) {
  auto tx = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(tx->Exec("INSERT INTO t VALUES (1)").ok());
  EXPECT_FALSE(tx->Exec("INSERT INTO t VALUES (1)").ok());  // duplicate: aborts the transaction
  Status st = tx->Commit();
  EXPECT_EQ(st.code(), Code::kInternal) << st.message();
  EXPECT_FALSE(conn_->in_transaction());
  EXPECT_EQ(Rows(), 0);
}

TEST_F(TransactionTest, DeferredConstraintFailsAtCommit) {
  MustRun(*conn_, "CREATE TABLE d (a int UNIQUE DEFERRABLE INITIALLY DEFERRED)");
  auto tx = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(tx->Exec("INSERT INTO d VALUES (1)").ok());
  ASSERT_TRUE(tx->Exec("INSERT INTO d VALUES (1)").ok());
  EXPECT_EQ(tx->Commit().code(), Code::kAlreadyExists);
  EXPECT_FALSE(conn_->in_transaction());
}

TEST_F(TransactionTest, NoNestedBegin) {
  auto tx = pg::Transaction::Begin(*conn_);
  ASSERT_TRUE(tx.ok());
  auto nested = pg::Transaction::Begin(*conn_);
  EXPECT_EQ(nested.status().code(), Code::kInternal);
  EXPECT_TRUE(tx->Commit().ok());
}

// ------------------------------------------------------------------------------------------------
// Pool

TEST_F(DbTest, PoolCheckoutTimesOutWithUnavailable) {
  auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(150));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  {
    auto held = (*pool)->Acquire();
    ASSERT_TRUE(held.ok());
    const auto start = steady_clock::now();
    auto second = (*pool)->Acquire();
    const auto waited = steady_clock::now() - start;
    EXPECT_EQ(second.status().code(), Code::kUnavailable);
    EXPECT_EQ(second.status().message(), "database connection pool exhausted");
    EXPECT_GE(waited, milliseconds(140));
    EXPECT_LT(waited, milliseconds(2000));
    EXPECT_EQ((*pool)->stats().in_use, 1);
  }
  EXPECT_EQ((*pool)->stats().in_use, 0);
  EXPECT_TRUE((*pool)->Acquire().ok());
}

TEST_F(DbTest, PoolWaiterGetsTheReturnedConnection) {
  auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(3000));
  ASSERT_TRUE(pool.ok());
  auto held = (*pool)->Acquire();
  ASSERT_TRUE(held.ok());
  std::thread releaser([c = std::move(held).value()]() mutable {
    std::this_thread::sleep_for(milliseconds(100));
    pg::PooledConnection drop = std::move(c);
  });
  const auto start = steady_clock::now();
  auto next = (*pool)->Acquire();
  EXPECT_TRUE(next.ok()) << next.status().message();
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  releaser.join();
}

TEST_F(DbTest, PoolReplacesAConnectionTheServerClosedWhileIdle) {
  auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(1000));
  ASSERT_TRUE(pool.ok());
  int first_pid = 0;
  {
    auto c = (*pool)->Acquire();
    ASSERT_TRUE(c.ok());
    first_pid = (*c)->backend_pid();
  }
  Terminate(first_pid);
  auto c = (*pool)->Acquire();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NE((*c)->backend_pid(), first_pid);
  auto r = (*c)->Exec("SELECT 1");
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*pool)->stats().open, 1);
}

TEST_F(DbTest, PoolDiscardsAConnectionThatBrokeInUse) {
  auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(1000));
  ASSERT_TRUE(pool.ok());
  {
    auto c = (*pool)->Acquire();
    ASSERT_TRUE(c.ok());
    Terminate((*c)->backend_pid());
    auto r = (*c)->Exec("SELECT 1");
    EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().message();
    EXPECT_TRUE((*c)->broken());
  }
  EXPECT_EQ((*pool)->stats().open, 0);
  EXPECT_TRUE((*pool)->Ping().ok());
}

TEST_F(DbTest, PoolRollsBackAnUnfinishedTransactionOnReturn) {
  MustRun(*conn_, "CREATE TABLE t (id int PRIMARY KEY)");
  auto pool = pg::Pool::Create(conninfo_, 1, milliseconds(1000));
  ASSERT_TRUE(pool.ok());
  {
    auto c = (*pool)->Acquire();
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->ExecScript("BEGIN").ok());
    ASSERT_TRUE((*c)->Exec("INSERT INTO t VALUES (1)").ok());
  }  // returned mid-transaction
  {
    auto c = (*pool)->Acquire();
    ASSERT_TRUE(c.ok());
    EXPECT_FALSE((*c)->in_transaction());
    EXPECT_EQ(QueryInt(**c, "SELECT count(*) FROM t"), 0);
    // And a transaction aborted by an error.
    ASSERT_TRUE((*c)->ExecScript("BEGIN").ok());
    EXPECT_FALSE((*c)->Exec("SELECT 1/0").ok());
  }
  auto c = (*pool)->Acquire();
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE((*c)->in_transaction());
  EXPECT_EQ(QueryInt(**c, "SELECT 1"), 1);
  EXPECT_EQ((*pool)->stats().open, 1);  // the same connection, cleaned, not a new one
}

TEST(PoolTest, CreateFailsFastWhenTheServerIsDown) {
  const auto start = steady_clock::now();
  auto pool = pg::Pool::Create("host=/nonexistent/dir port=5432 dbname=x", 4, milliseconds(100));
  EXPECT_EQ(pool.status().code(), Code::kUnavailable);
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  EXPECT_EQ(pg::Pool::Create("host=/tmp", 0, milliseconds(100)).status().code(),
            Code::kInvalidArgument);
}

TEST_F(DbTest, PoolServesManyThreads) {
  MustRun(*conn_, "CREATE TABLE counter (n int); INSERT INTO counter VALUES (0)");
  auto pool = pg::Pool::Create(conninfo_, 3, milliseconds(5000));
  ASSERT_TRUE(pool.ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto c = (*pool)->Acquire();
        if (!c.ok()) {
          ++failures;
          continue;
        }
        auto tx = pg::Transaction::Begin(**c);
        if (!tx.ok() || !tx->Exec("UPDATE counter SET n = n + 1").ok() || !tx->Commit().ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(QueryInt(*conn_, "SELECT n FROM counter"), 300);
  EXPECT_LE((*pool)->stats().open, 3);
  EXPECT_EQ((*pool)->stats().in_use, 0);
}

// ------------------------------------------------------------------------------------------------
// Migrator

class MigratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A database without our schema: the migrator is tested on its own migrations.
    auto admin = MustConnect(testing::AdminConninfo());
    ASSERT_NE(admin, nullptr);
    static std::atomic<int> n{0};
    const std::string name = "m_" + std::to_string(getpid()) + "_" + std::to_string(++n);
    MustRun(*admin, "CREATE DATABASE " + name);
    conninfo_ = testing::SharedCluster().conninfo_for(name);
    conn_ = MustConnect(conninfo_);
    ASSERT_NE(conn_, nullptr);
  }
  bool TableExists(const std::string& table) {
    return QueryInt(*conn_, "SELECT count(*) FROM pg_tables WHERE tablename = $1::text", {table}) ==
           1;
  }
  int64_t Applied() { return QueryInt(*conn_, "SELECT count(*) FROM schema_migrations"); }

  std::string conninfo_;
  std::unique_ptr<pg::Connection> conn_;
};

const Migration kCreateA{1, "create_a", "CREATE TABLE a (id int PRIMARY KEY);\n"};
const Migration kAlterA{2, "alter_a", "ALTER TABLE a ADD COLUMN b text;\nCREATE INDEX ON a (b);\n"};
const Migration kCreateC{3, "create_c", "CREATE TABLE c (id int);"};

TEST_F(MigratorTest, AppliesInVersionOrder) {
  EXPECT_EQ(CurrentSchemaVersion(*conn_).value(), 0);
  EXPECT_FALSE(IsSchemaAtHead(*conn_, {kCreateA, kAlterA}));
  // Given out of order on purpose: 0002 needs the table from 0001.
  Status st = ApplyMigrations(*conn_, {kAlterA, kCreateA});
  ASSERT_TRUE(st.ok()) << st.message();
  auto rows = conn_->Exec("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows(), 2);
  EXPECT_EQ(rows->Get(0, 1), "create_a");
  EXPECT_EQ(rows->Get(1, 1), "alter_a");
  EXPECT_EQ(rows->Get(0, 2), MigrationChecksum(kCreateA.sql));
  EXPECT_EQ(CurrentSchemaVersion(*conn_).value(), 2);
  EXPECT_TRUE(IsSchemaAtHead(*conn_, {kCreateA, kAlterA}));
  EXPECT_FALSE(IsSchemaAtHead(*conn_, {kCreateA, kAlterA, kCreateC}));
  // The session is handed back with its usual timeouts and no lock.
  EXPECT_FALSE(conn_->in_transaction());
  auto timeout = conn_->ExecScript("SHOW statement_timeout");
  ASSERT_TRUE(timeout.ok());
  EXPECT_EQ(timeout->Get(0, 0), "5s");
  EXPECT_EQ(QueryInt(*conn_, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"), 0);
}

TEST_F(MigratorTest, SecondRunIsANoOpAndLaterFilesApplyOnTop) {
  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA, kAlterA}).ok());
  auto before = conn_->Exec("SELECT applied_at::text FROM schema_migrations ORDER BY version");
  ASSERT_TRUE(before.ok());
  const std::string first_applied(before->Get(0, 0));
  Status again = ApplyMigrations(*conn_, {kCreateA, kAlterA});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(Applied(), 2);
  auto after = conn_->Exec("SELECT applied_at::text FROM schema_migrations ORDER BY version");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->Get(0, 0), first_applied);

  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA, kAlterA, kCreateC}).ok());
  EXPECT_EQ(Applied(), 3);
  EXPECT_TRUE(TableExists("c"));
}

TEST_F(MigratorTest, ChangedAppliedFileIsRefused) {
  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA}).ok());
  Migration edited = kCreateA;
  edited.sql = "CREATE TABLE a (id bigint PRIMARY KEY);\n";
  Status st = ApplyMigrations(*conn_, {edited, kAlterA});
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("0001_create_a.sql"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("changed after being applied"), std::string::npos) << st.message();
  EXPECT_EQ(Applied(), 1);  // 0002 was not applied either: nothing changes after a refusal
}

TEST_F(MigratorTest, FailingFileRollsBackWithItsRow) {
  const Migration bad{2, "bad", "CREATE TABLE b (id int);\nSELECT * FROM no_such_table;\n"};
  Status st = ApplyMigrations(*conn_, {kCreateA, bad, kCreateC});
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_NE(st.message().find("0002_bad.sql"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("no_such_table"), std::string::npos) << st.message();
  EXPECT_TRUE(TableExists("a"));   // 0001 committed before
  EXPECT_FALSE(TableExists("b"));  // 0002 rolled back, including its first statement
  EXPECT_FALSE(TableExists("c"));  // 0003 never ran
  EXPECT_EQ(CurrentSchemaVersion(*conn_).value(), 1);
  // The lock was released: another session can take it at once.
  auto other = MustConnect(conninfo_);
  ASSERT_NE(other, nullptr);
  auto got = other->Exec("SELECT pg_try_advisory_lock(hashtext('trainyard.schema_migrations'))");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->GetBool(0, 0));
  // After fixing the file, the run continues from 0002.
  const Migration fixed{2, "bad", "CREATE TABLE b (id int);\n"};
  other.reset();
  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA, fixed, kCreateC}).ok());
  EXPECT_EQ(CurrentSchemaVersion(*conn_).value(), 3);
}

TEST_F(MigratorTest, ConcurrentRunsSerialize) {
  // Slow enough that both threads are inside ApplyMigrations at the same time.
  const Migration slow{1, "slow", "SELECT pg_sleep(0.4);\nCREATE TABLE a (id int PRIMARY KEY);\n"};
  const std::vector<Migration> all = {slow, kAlterA, kCreateC};
  Status results[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      auto conn = pg::Connection::Connect(conninfo_);
      if (!conn.ok()) {
        results[i] = conn.status();
        return;
      }
      results[i] = ApplyMigrations(**conn, all);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(results[0].ok()) << results[0].message();
  EXPECT_TRUE(results[1].ok()) << results[1].message();
  EXPECT_EQ(Applied(), 3);
  EXPECT_TRUE(TableExists("c"));
}

TEST_F(MigratorTest, UnappliedFileBelowTheLatestIsRefused) {
  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA, kCreateC}).ok());
  Status st = ApplyMigrations(*conn_, {kCreateA, kAlterA, kCreateC});
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("0002_alter_a.sql"), std::string::npos) << st.message();
}

TEST_F(MigratorTest, BinaryOlderThanTheDatabaseStillStarts) {
  ASSERT_TRUE(ApplyMigrations(*conn_, {kCreateA, kAlterA}).ok());
  EXPECT_TRUE(ApplyMigrations(*conn_, {kCreateA}).ok());
  EXPECT_TRUE(IsSchemaAtHead(*conn_, {kCreateA}));
}

TEST_F(MigratorTest, NoTransactionFileRunsOnItsOwn) {
  const Migration concurrently{
      2, "index_a", "-- trainyard:no-transaction\nCREATE INDEX CONCURRENTLY a_id ON a (id);\n"};
  Status st = ApplyMigrations(*conn_, {kCreateA, concurrently});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(QueryInt(*conn_, "SELECT count(*) FROM pg_indexes WHERE indexname = 'a_id'"), 1);
  EXPECT_EQ(Applied(), 2);
}

TEST_F(MigratorTest, RejectsBadInput) {
  EXPECT_EQ(ApplyMigrations(*conn_, {kCreateA, kCreateA}).code(), Code::kInvalidArgument);
  EXPECT_EQ(ApplyMigrations(*conn_, {Migration{0, "zero", "SELECT 1"}}).code(),
            Code::kInvalidArgument);
  ASSERT_TRUE(conn_->ExecScript("BEGIN").ok());
  EXPECT_EQ(ApplyMigrations(*conn_, {kCreateA}).code(), Code::kInternal);
  ASSERT_TRUE(conn_->ExecScript("ROLLBACK").ok());
  EXPECT_FALSE(TableExists("a"));
}

TEST(MigrationFilesTest, ChecksumIsSha256OfTheBytes) {
  EXPECT_EQ(MigrationChecksum(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(MigrationChecksum("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(MigrationFileName(Migration{7, "add_nodes", ""}), "0007_add_nodes.sql");
}

TEST(MigrationFilesTest, NamesAreChecked) {
  using Files = std::vector<std::pair<std::string, std::string>>;
  auto ok = ParseMigrationFiles(Files{{"0002_b.sql", "B"}, {"0001_a_b9.sql", "A"}});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].version, 1);
  EXPECT_EQ((*ok)[0].name, "a_b9");
  EXPECT_EQ((*ok)[0].sql, "A");
  EXPECT_EQ((*ok)[1].version, 2);
  for (const char* bad : {"1_a.sql", "0000_a.sql", "0001_.sql", "0001-a.sql", "0001_a-b.sql",
                          "00001_a.sql", "0001_a.SQL", "abcd_a.sql"}) {
    auto r = ParseMigrationFiles(Files{{bad, ""}});
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
  auto dup = ParseMigrationFiles(Files{{"0001_a.sql", ""}, {"0001_b.sql", ""}});
  EXPECT_EQ(dup.status().code(), Code::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("0001_a.sql"), std::string::npos);
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ty-storage-test-XXXXXX";
    path_ = mkdtemp(tmpl) ? tmpl : "";
    chmod(path_.c_str(), 0711);  // when root, the postgres user must be able to pass through
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void Write(const std::string& name, const std::string& contents) const {
    std::ofstream(path_ + "/" + name, std::ios::binary) << contents;
  }

 private:
  std::string path_;
};

TEST(MigrationFilesTest, LoadsADirectory) {
  TempDir dir;
  dir.Write("0002_second.sql", "SELECT 2;\r\n");
  dir.Write("0001_first.sql", "SELECT 1;\n");
  dir.Write("README.md", "not a migration");
  dir.Write(".0003_hidden.sql", "editor swap file");
  auto loaded = LoadMigrationsFromDir(dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].name, "first");
  EXPECT_EQ((*loaded)[1].sql, "SELECT 2;\r\n");  // bytes exactly, CRLF included

  dir.Write("0002_again.sql", "");
  EXPECT_EQ(LoadMigrationsFromDir(dir.path()).status().code(), Code::kInvalidArgument);
  std::filesystem::remove(dir.path() + "/0002_again.sql");
  dir.Write("3_short.sql", "");
  EXPECT_EQ(LoadMigrationsFromDir(dir.path()).status().code(), Code::kInvalidArgument);

  EXPECT_FALSE(LoadMigrationsFromDir(dir.path() + "/missing").ok());
}

TEST(EmbeddedMigrationsTest, FreshDatabasesAreAtHead) {
  const auto& embedded = EmbeddedMigrations();
  for (size_t i = 1; i < embedded.size(); ++i) {
    EXPECT_LT(embedded[i - 1].version, embedded[i].version);
  }
  auto conn = MustConnect(testing::FreshDatabase());
  ASSERT_NE(conn, nullptr);
  EXPECT_TRUE(IsSchemaAtHead(*conn, embedded));
  EXPECT_EQ(CurrentSchemaVersion(*conn).value(), embedded.empty() ? 0 : embedded.back().version);
  // Each fresh database is its own: what one test writes, the next does not see.
  MustRun(*conn, "CREATE TABLE scratch (x int)");
  auto other = MustConnect(testing::FreshDatabase());
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(QueryInt(*other, "SELECT count(*) FROM pg_tables WHERE tablename = 'scratch'"), 0);
}

// ------------------------------------------------------------------------------------------------
// EmbeddedPostgres

EmbeddedPostgres::Options Opts(const std::string& dir, bool durable = false) {
  EmbeddedPostgres::Options o;
  o.data_dir = dir;
  o.durable = durable;
  return o;
}

TEST(EmbeddedPostgresTest, RestartKeepsData) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";  // created by Start
  std::unique_ptr<pg::Pool> pool;
  {
    auto pg = EmbeddedPostgres::Start(Opts(data_dir, /*durable=*/true));
    ASSERT_TRUE(pg.ok()) << pg.status().message();
    EXPECT_FALSE((*pg)->adopted());
    EXPECT_EQ((*pg)->socket_dir(), data_dir + "/pg/run");
    auto conn = MustConnect((*pg)->conninfo());
    ASSERT_NE(conn, nullptr);
    MustRun(*conn, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    auto durable = conn->ExecScript("SHOW fsync");
    ASSERT_TRUE(durable.ok());
    EXPECT_EQ(durable->Get(0, 0), "on");
    conn.reset();
    auto created = pg::Pool::Create((*pg)->conninfo(), 2, milliseconds(500));
    ASSERT_TRUE(created.ok()) << created.status().message();
    pool = std::move(created).value();
    ASSERT_TRUE((*pg)->Stop().ok());
    EXPECT_TRUE((*pg)->Stop().ok());  // idempotent
    EXPECT_EQ((*pg)->postmaster_pid(), 0);
    // While the server is down, checkouts fail as UNAVAILABLE rather than hand out dead sessions.
    EXPECT_EQ(pool->Acquire().status().code(), Code::kUnavailable);
    EXPECT_EQ(pool->Ping().code(), Code::kUnavailable);
  }
  auto pg = EmbeddedPostgres::Start(Opts(data_dir, /*durable=*/false));
  ASSERT_TRUE(pg.ok()) << pg.status().message();
  EXPECT_FALSE((*pg)->adopted());
  auto conn = MustConnect((*pg)->conninfo());
  ASSERT_NE(conn, nullptr);
  auto r = conn->Exec("SELECT v FROM kept");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->Get(0, 0), "still here");
  // The pool made before the restart recovers on its own.
  EXPECT_TRUE(pool->Ping().ok());
  EXPECT_EQ(pool->stats().open, 1);
  auto fsync = conn->ExecScript("SHOW fsync");
  ASSERT_TRUE(fsync.ok());
  EXPECT_EQ(fsync->Get(0, 0), "off");  // trainyard.conf is rewritten at every start
  // Only the unix socket: no TCP listener.
  auto listen = conn->ExecScript("SHOW listen_addresses");
  ASSERT_TRUE(listen.ok());
  EXPECT_EQ(listen->Get(0, 0), "");
}

// The conninfo without the server's password file: what any other local process could send.
std::string WithoutPassword(const std::string& conninfo) {
  return conninfo.substr(0, conninfo.find(" passfile=")) + " passfile=/dev/null";
}

TEST(EmbeddedPostgresTest, AConnectionWithoutTheServersPasswordIsRefused) {
  TempDir dir;
  auto pg = EmbeddedPostgres::Start(Opts(dir.path() + "/data"));
  ASSERT_TRUE(pg.ok()) << pg.status().message();
  EXPECT_NE(MustConnect((*pg)->conninfo()), nullptr) << "the server connects with its secret";
  auto stranger = pg::Connection::Connect(WithoutPassword((*pg)->conninfo()));
  ASSERT_FALSE(stranger.ok()) << "a local process without the password got in";
  EXPECT_NE(stranger.status().message().find("password"), std::string::npos)
      << stranger.status().message();
  struct stat st {};
  ASSERT_EQ(stat(((*pg)->cluster_dir() + "/server.pgpass").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
}

TEST(EmbeddedPostgresTest, AClusterThatTrustedLocalConnectionsAsksForThePasswordAfterAStart) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";
  std::string hba_path;
  {
    auto pg = EmbeddedPostgres::Start(Opts(data_dir));
    ASSERT_TRUE(pg.ok()) << pg.status().message();
    hba_path = (*pg)->cluster_dir() + "/data/pg_hba.conf";
    ASSERT_TRUE((*pg)->Stop().ok());
  }
  // As a cluster made by an older server was: initdb --auth=trust.
  {
    std::ifstream in(hba_path);
    std::stringstream text;
    text << in.rdbuf();
    std::string hba = text.str();
    for (size_t at; (at = hba.find("scram-sha-256")) != std::string::npos;) {
      hba.replace(at, 13, "trust");
    }
    std::ofstream(hba_path, std::ios::trunc) << hba;
  }
  auto pg = EmbeddedPostgres::Start(Opts(data_dir));
  ASSERT_TRUE(pg.ok()) << pg.status().message();
  EXPECT_NE(MustConnect((*pg)->conninfo()), nullptr);
  EXPECT_FALSE(pg::Connection::Connect(WithoutPassword((*pg)->conninfo())).ok())
      << "the trusting cluster still lets anyone in";
}

TEST(EmbeddedPostgresTest, AdoptsThePostmasterOfAKilledServer) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";
  // The child plays a server that starts PostgreSQL, writes, and is then kill -9'd: no destructor,
  // no Stop(), the postmaster stays behind.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto pg = EmbeddedPostgres::Start(Opts(data_dir));
    if (!pg.ok()) _exit(1);
    auto conn = pg::Connection::Connect((*pg)->conninfo());
    if (!conn.ok() ||
        !(*conn)->ExecScript("CREATE TABLE t (v int); INSERT INTO t VALUES (42)").ok()) {
      _exit(2);
    }
    raise(SIGKILL);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exit " << WEXITSTATUS(wstatus);

  auto pg = EmbeddedPostgres::Start(Opts(data_dir));
  ASSERT_TRUE(pg.ok()) << pg.status().message();
  EXPECT_TRUE((*pg)->adopted());
  const int pid = (*pg)->postmaster_pid();
  EXPECT_GT(pid, 0);
  auto conn = MustConnect((*pg)->conninfo());
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(QueryInt(*conn, "SELECT v FROM t"), 42);
  const std::string conninfo = (*pg)->conninfo();
  conn.reset();
  // The adopted postmaster is stopped with us.
  ASSERT_TRUE((*pg)->Stop().ok());
  EXPECT_EQ((*pg)->postmaster_pid(), 0);
  EXPECT_FALSE(pg::Connection::Connect(conninfo).ok());
}

TEST(EmbeddedPostgresTest, LongDataDirUsesAPrivateTmpSocketDir) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/" + std::string(60, 'x') + "/" + std::string(60, 'y');
  std::string socket_dir;
  {
    auto pg = EmbeddedPostgres::Start(Opts(data_dir));
    ASSERT_TRUE(pg.ok()) << pg.status().message();
    socket_dir = (*pg)->socket_dir();
    EXPECT_EQ(socket_dir.rfind("/tmp/trainyard-pg-", 0), 0u) << socket_dir;
    auto conn = MustConnect((*pg)->conninfo());
    ASSERT_NE(conn, nullptr);
    EXPECT_EQ(QueryInt(*conn, "SELECT 1"), 1);
  }  // destructor stops it
  EXPECT_FALSE(std::filesystem::exists(socket_dir));
}

TEST(EmbeddedPostgresTest, ReportsMissingBinaries) {
  TempDir dir;
  auto o = Opts(dir.path() + "/data");
  o.bin_dir = "/nonexistent/bin";
  EXPECT_EQ(EmbeddedPostgres::Start(o).status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(EmbeddedPostgres::Start(Opts("")).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

// What libpq was asked for on a connection, by keyword.
std::string ConnectionSetting(pg::Connection& conn, const std::string& keyword) {
  std::string value;
  PQconninfoOption* options = PQconninfo(conn.raw());
  for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o) {
    if (keyword == o->keyword && o->val != nullptr) value = o->val;
  }
  PQconninfoFree(options);
  return value;
}

// An unreachable database host must not hang a request thread on its socket for the kernel's
// two hours: connections probe the peer, unless the operator's conninfo says otherwise.
TEST(PgConnectionTest, KeepalivesAreOnUnlessTheConninfoSaysOtherwise) {
  const std::string conninfo = testing::FreshDatabase();
  auto conn = pg::Connection::Connect(conninfo);
  ASSERT_TRUE(conn.ok()) << conn.status().message();
  EXPECT_EQ(ConnectionSetting(**conn, "keepalives"), "1");
  EXPECT_EQ(ConnectionSetting(**conn, "keepalives_idle"), "30");
  EXPECT_EQ(ConnectionSetting(**conn, "keepalives_count"), "3");
  EXPECT_EQ(ConnectionSetting(**conn, "tcp_user_timeout"), "60000");
  auto own = pg::Connection::Connect(conninfo + " keepalives_idle=5");
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(ConnectionSetting(**own, "keepalives_idle"), "5");
  EXPECT_EQ(ConnectionSetting(**own, "keepalives_count"), "") << "the operator's choice, whole";
}

}  // namespace
}  // namespace trainyard
