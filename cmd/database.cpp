#include "cmd/database.h"

#include "storage/migrator.h"

namespace trainyard::cmd {
namespace {

constexpr auto kCheckoutTimeout = std::chrono::milliseconds(500);

}  // namespace

StatusOr<Database> OpenDatabase(const std::string& database_url, const std::string& data_dir,
                                int pool_size) {
  Database db;
  std::string conninfo = database_url;
  if (conninfo.empty()) {
    EmbeddedPostgres::Options options;
    options.data_dir = data_dir;
    TY_ASSIGN_OR_RETURN(db.embedded, EmbeddedPostgres::Start(options));
    conninfo = db.embedded->conninfo();
  }
  TY_ASSIGN_OR_RETURN(db.pool, pg::Pool::Create(conninfo, pool_size, kCheckoutTimeout));
  db.conninfo = conninfo;
  return db;
}

Status Migrate(pg::Pool& pool) {
  TY_ASSIGN_OR_RETURN(auto conn, pool.Acquire());
  return ApplyMigrations(*conn, EmbeddedMigrations());
}

Status Database::CloseAfterCommand() {
  pool.reset();
  if (embedded && !embedded->adopted()) return embedded->Stop();
  // Adopted: a server runs this cluster; leave it running for it.
  embedded.release();  // NOLINT: its destructor would stop the cluster
  return Status::Ok();
}

}  // namespace trainyard::cmd
