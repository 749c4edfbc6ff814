#pragma once
// Where a command's database comes from: an external URL, or our own PostgreSQL under
// data_dir/pg (started, or adopted when a server already runs it), and when it may be stopped.
// Shared by serve, migrate and tokens (cmd/), which hold no SQL of their own.
#include <memory>
#include <string>

#include "storage/database_wait.h"
#include "storage/embedded_postgres.h"
#include "storage/pg.h"

namespace trainyard::storage {

struct Database {
  std::unique_ptr<EmbeddedPostgres> embedded;
  std::unique_ptr<pg::Pool> pool;
  std::string conninfo;
  // The background roles' sessions (OpenBackgroundSessions): the runtime's own pool (null until
  // opened), and how the scheduler's session starts (on the embedded cluster, its backend at a
  // lower CPU priority: storage/backend_priority.h).
  std::unique_ptr<pg::Pool> background_pool;
  pg::SessionOptions scheduler_session;

  // For a one-shot command: closes the pool and stops the embedded cluster only if this command
  // started it, so running one next to a live server leaves the server's database alone.
  Status CloseAfterCommand();
  // For serve: closes the pool and stops the embedded cluster unless another trainyard process
  // is still connected to it. Servers sharing a data directory share its cluster (the later ones
  // adopt it); the last one out stops it. An external database is never stopped.
  Status CloseAfterServe();
};

// An external database_url that refuses connections for now is tried again while `wait` lasts
// (storage/database_wait.h); the embedded cluster is started here, so it is never waited for.
StatusOr<Database> OpenDatabase(const std::string& database_url, const std::string& data_dir,
                                int pool_size, const DatabaseWait& wait = {});
// The URL kept in a file (serve --database-url-file), trimmed; refused unless only its owner may
// read or write it (libpq's rule for a password file). A URL without a password leaves it to
// libpq, which reads PGPASSFILE (default ~/.pgpass) then: nothing here sets `passfile`.
StatusOr<std::string> ReadDatabaseUrlFile(const std::string& path);
// For serve's scheduler and runtime: fills db.background_pool (`size` sessions) and
// db.scheduler_session.
Status OpenBackgroundSessions(Database& db, int size);
// Brings the schema to head.
Status Migrate(pg::Pool& pool);

}  // namespace trainyard::storage
