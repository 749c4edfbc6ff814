#include "storage/database.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  s.remove_prefix(std::min(s.find_first_not_of(kSpace), s.size()));
  s.remove_suffix(s.size() - (s.find_last_not_of(kSpace) + 1));
  return s;
}

// A descriptor closed on every way out.
struct FileCloser {
  int fd;
  ~FileCloser() { close(fd); }
};

}  // namespace

StatusOr<std::string> ReadDatabaseUrlFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    const std::string why =
        "cannot read the database URL file " + path + ": " + std::strerror(error);
    if (error == ENOENT) return NotFound(why);
    return Status(error == EACCES ? Code::kPermissionDenied : Code::kInvalidArgument, why);
  }
  FileCloser closer{fd};
  // Checked on the file opened, not on its name, so it cannot be swapped between the two.
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument("the database URL file " + path + " is not a regular file");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    return FailedPrecondition("the database URL file " + path +
                              " may be read or written by others (mode " + mode +
                              "); it may hold the database password: chmod 600 it");
  }
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return InvalidArgument("cannot read the database URL file " + path + ": " +
                             std::strerror(errno));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  std::string url(TrimSpace(text));
  if (url.empty()) return InvalidArgument("the database URL file " + path + " is empty");
  return url;
}

StatusOr<Database> OpenDatabase(const std::string& database_url, const std::string& data_dir,
                                int pool_size, const DatabaseWait& wait) {
  Database db;
  std::string conninfo = database_url;
  if (conninfo.empty()) {
    EmbeddedPostgres::Options options;
    options.data_dir = data_dir;
    TY_ASSIGN_OR_RETURN(db.embedded, EmbeddedPostgres::Start(options));
    conninfo = db.embedded->conninfo() + " application_name=" + ProcessApplicationName();
  }
  TY_ASSIGN_OR_RETURN(db.pool,
                      db.embedded ? pg::Pool::Create(conninfo, pool_size, kCheckoutTimeout)
                                  : CreatePoolWaiting(conninfo, pool_size, kCheckoutTimeout, wait));
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
