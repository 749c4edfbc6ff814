#include "storage/database.h"

#include <unistd.h>

#include "services/log.h"
#include "storage/backend_priority.h"
#include "storage/migrator.h"

namespace trainyard::storage {
namespace {

constexpr auto kCheckoutTimeout = std::chrono::milliseconds(500);

// Every connection this process makes to its embedded cluster carries this name, so that at
// shutdown it can tell its own sessions from another server's.
std::string ProcessApplicationName() { return "trainyard:" + std::to_string(getpid()); }

// Client sessions of other trainyard processes on the cluster.
StatusOr<int64_t> OtherProcesses(const std::string& conninfo) {
  TY_ASSIGN_OR_RETURN(auto conn, pg::Connection::Connect(conninfo));
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                 "AND application_name LIKE 'trainyard:%' AND application_name <> $1::text",
                 {ProcessApplicationName()}));
  return r.GetInt64(0, 0);
}

}  // namespace

StatusOr<Database> OpenDatabase(const std::string& database_url, const std::string& data_dir,
                                int pool_size) {
  Database db;
  std::string conninfo = database_url;
  if (conninfo.empty()) {
    EmbeddedPostgres::Options options;
    options.data_dir = data_dir;
    TY_ASSIGN_OR_RETURN(db.embedded, EmbeddedPostgres::Start(options));
    conninfo = db.embedded->conninfo() + " application_name=" + ProcessApplicationName();
  }
  TY_ASSIGN_OR_RETURN(db.pool, pg::Pool::Create(conninfo, pool_size, kCheckoutTimeout));
  db.conninfo = conninfo;
  return db;
}

Status OpenBackgroundSessions(Database& db, int size) {
  db.scheduler_session = BackgroundSession(db.embedded ? db.embedded->postmaster_pid() : 0);
  // The runtime's sessions keep their priority: its pass heartbeats its leases, and a lease that
  // ran out while its holder waited for a core lets another server start a second copy.
  pg::SessionOptions runtime_session;
  runtime_session.parallel_query = false;  // as the scheduler's (pg.h)
  TY_ASSIGN_OR_RETURN(db.background_pool,
                      pg::Pool::Create(db.conninfo, size, kCheckoutTimeout, runtime_session));
  return Status::Ok();
}

Status Migrate(pg::Pool& pool) {
  TY_ASSIGN_OR_RETURN(auto conn, pool.Acquire());
  return ApplyMigrations(*conn, EmbeddedMigrations());
}

Status Database::CloseAfterCommand() {
  background_pool.reset();
  pool.reset();
  if (embedded && !embedded->adopted()) return embedded->Stop();
  // Adopted: a server runs this cluster; leave it running for it.
  embedded->LeaveRunning();
  return Status::Ok();
}

Status Database::CloseAfterServe() {
  background_pool.reset();
  pool.reset();
  if (!embedded) return Status::Ok();
  auto others = OtherProcesses(conninfo);
  if (others.ok() && *others > 0) {
    LogJson(LogLevel::kInfo, "postgres_left_running",
            {{"cluster", embedded->cluster_dir()}, {"other_sessions", *others}});
    embedded->LeaveRunning();
    return Status::Ok();
  }
  return embedded->Stop();
}

}  // namespace trainyard::storage
