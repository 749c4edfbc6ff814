#include "storage/embedded_postgres.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <openssl/sha.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "services/hex.h"
#include "services/log.h"
#include "storage/embedded_pg_secret.h"
#include "storage/pg.h"

extern char** environ;

namespace trainyard {
namespace {

namespace fs = std::filesystem;

// sun_path is 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = 107;
constexpr char kSocketFile[] = "/.s.PGSQL.5432";
constexpr char kDatabase[] = "trainyard";
// Crash recovery after a kill -9 of the machine can replay a lot of WAL; give it time.
constexpr int kStartTimeoutSeconds = 120;
constexpr auto kAdoptReadyTimeout = std::chrono::seconds(60);

struct OsUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

StatusOr<OsUser> LookupUser(const char* name) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc = getpwnam_r(name, &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || found == nullptr) {
    return FailedPrecondition(std::string("running as root needs an OS user named '") + name +
                              "' to run PostgreSQL (it comes with the postgresql package)");
  }
  return OsUser{pw.pw_uid, pw.pw_gid};
}

std::string FindRunuser() {
  for (const char* p : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", "/bin/runuser"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

std::string Timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The last `max_lines` lines of a log, to put the actual reason into an error message.
std::string Tail(const std::string& path, int max_lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > max_lines) lines.erase(lines.begin());
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : " | ") + l;
  if (out.size() > 1500) out = "..." + out.substr(out.size() - 1500);
  return out;
}

// A string for postgresql.conf: single quotes doubled, backslashes doubled (the file's parser
// treats backslash as an escape inside quoted values).
std::string ConfString(std::string_view v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out.push_back(c);
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

void FsyncPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

struct PidFile {
  int pid = 0;
  int port = 0;
  std::string socket_dir;
  std::string status;  // "starting", "ready", "stopping", "standby" (PG writes it padded)
};

// postmaster.pid: pid, data dir, start time, port, first socket dir, listen address, shmem key,
// status -- one per line (PostgreSQL's LOCK_FILE_LINE_* constants).
std::optional<PidFile> ReadPidFile(const std::string& pgdata) {
  std::ifstream in(pgdata + "/postmaster.pid");
  if (!in) return std::nullopt;
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (lines.size() < 5) return std::nullopt;
  PidFile p;
  p.pid = std::atoi(lines[0].c_str());
  p.port = std::atoi(lines[3].c_str());
  p.socket_dir = lines[4];
  if (lines.size() >= 8) {
    p.status = lines[7];
    while (!p.status.empty() && p.status.back() == ' ') p.status.pop_back();
  }
  if (p.pid <= 0) return std::nullopt;
  return p;
}

bool ProcessAlive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Runs argv to completion with stdin from /dev/null and stdout+stderr appended to log_file; as the
// postgres OS user (through runuser) when as_postgres. No shell is involved, so paths need no
// quoting. Descriptors >= 3 are closed in the child: pg_ctl's postmaster outlives us and must not
// keep our listening socket or database connections open.
Status RunCommand(std::vector<std::string> argv, const std::string& log_file,
                  const std::string& cwd, bool as_postgres, int* exit_code) {
  if (as_postgres) {
    std::string runuser = FindRunuser();
    if (runuser.empty()) {
      return FailedPrecondition(
          "running as root needs runuser (util-linux) to start PostgreSQL as the postgres user");
    }
    argv.insert(argv.begin(), {runuser, "-u", "postgres", "--"});
  }
  {
    std::ofstream log(log_file, std::ios::app);
    log << "# " << Timestamp() << " $";
    for (const auto& a : argv) log << ' ' << a;
    log << '\n';
  }

  // PG* variables (PGDATA, PGPORT, PGOPTIONS...) from our environment must not steer the tools.
  std::vector<std::string> env_storage;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "PG", 2) == 0) continue;
    env_storage.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0640);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // The postgres user may not be able to enter our working directory (e.g. /root).
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Default signal dispositions in the child, whatever the server installed for itself.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    // The spawn also opens the log and enters `cwd`: a data directory removed under a running
    // server fails here with ENOENT, which alone would blame the program.
    return Internal("cannot run " + argv[0] + " (output to " + log_file + ", in " + cwd +
                    "): " + std::strerror(rc));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return Internal("waiting for " + argv[0] + ": " + std::strerror(errno));
  }
  *exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return Status::Ok();
}

Status Chown(const std::string& path, const OsUser& user) {
  if (chown(path.c_str(), user.uid, user.gid) != 0) {
    return Internal("chown " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status MakeDir(const std::string& path, mode_t mode) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Internal("cannot create " + path + ": " + ec.message());
  if (chmod(path.c_str(), mode) != 0) {
    return Internal("chmod " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

// Where root keeps the cluster of a data directory the postgres user cannot reach: one directory
// per data directory (named by a hash of its absolute path), so the same --data-dir finds the same
// cluster on every start. Each level above it is root's and searchable, as PostgreSQL needs.
StatusOr<std::string> EmbeddedPostgres::RelocatedClusterDir(const std::string& data_dir) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data_dir.data()), data_dir.size(), digest);
  const std::string name = HexOf(std::string_view(reinterpret_cast<const char*>(digest), 8));
  TY_RETURN_IF_ERROR(MakeDir(kRelocatedClusters, 0755));
  const std::string dir = std::string(kRelocatedClusters) + "/" + name;
  // A note beside it says whose it is, for whoever finds the directory later.
  std::ofstream(dir + ".data-dir") << data_dir << "\n";
  return dir;
}

std::string EmbeddedPostgres::conninfo_for(std::string_view dbname) const {
  return "host=" + pg::QuoteConninfoValue(socket_dir_) + " port=" + std::to_string(kPort) +
         " user=postgres dbname=" + pg::QuoteConninfoValue(dbname) +
         " passfile=" + pg::QuoteConninfoValue(passfile_);
}

int EmbeddedPostgres::postmaster_pid() const {
  auto pid = ReadPidFile(pgdata_);
  return pid ? pid->pid : 0;
}

StatusOr<std::unique_ptr<EmbeddedPostgres>> EmbeddedPostgres::Start(const Options& options) {
  if (options.data_dir.empty())
    return InvalidArgument("embedded PostgreSQL needs a data directory");
  std::unique_ptr<EmbeddedPostgres> pg(new EmbeddedPostgres(options));
  Status st = pg->DoStart();
  if (!st.ok()) {
    // Leave nothing half-owned behind: a server we started but could not finish setting up is
    // stopped again (the destructor does it when running_).
    return st;
  }
  return pg;
}

namespace {

// A cluster made before it had a password trusts local connections: give postgres the password,
// then ask for it (pg_hba.conf rewritten and reloaded).
Status RemoveTrust(pg::Connection& conn, const std::string& pgdata, const std::string& password,
                   const OsUser* owner) {
  const std::string hba_path = pgdata + "/pg_hba.conf";
  std::ifstream in(hba_path);
  std::stringstream hba;
  hba << in.rdbuf();
  if (!in || !embedded_pg::HbaTrusts(hba.str())) return Status::Ok();
  // The password is hex: nothing in it needs quoting.
  TY_RETURN_IF_ERROR(conn.ExecScript("ALTER ROLE postgres PASSWORD '" + password + "'").status());
  const std::string tmp = hba_path + ".trainyard";
  {
    std::ofstream out(tmp, std::ios::trunc);
    chmod(tmp.c_str(), 0600);
    out << embedded_pg::HbaWithoutTrust(hba.str());
    if (!out) return Internal("cannot write " + tmp);
  }
  if (owner != nullptr) TY_RETURN_IF_ERROR(Chown(tmp, *owner));
  if (std::rename(tmp.c_str(), hba_path.c_str()) != 0) {
    return Internal("cannot replace " + hba_path + ": " + std::strerror(errno));
  }
  TY_RETURN_IF_ERROR(conn.ExecScript("SELECT pg_reload_conf()").status());
  LogJson(LogLevel::kInfo, "embedded_postgres_password_set",
          {{"why", "the cluster trusted local connections"}});
  return Status::Ok();
}

}  // namespace

Status EmbeddedPostgres::DoStart() {
  std::error_code ec;
  fs::path data_dir = fs::absolute(options_.data_dir, ec).lexically_normal();
  if (ec) return InvalidArgument("bad data directory " + options_.data_dir + ": " + ec.message());
  std::string base = data_dir.string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string bin = options_.bin_dir;
  const std::string pg_ctl = bin + "/pg_ctl";
  if (access(pg_ctl.c_str(), X_OK) != 0) {
    return FailedPrecondition("PostgreSQL binaries not found in " + bin +
                              " (install postgresql-15 or pass the right bin_dir)");
  }
  fs::create_directories(data_dir, ec);
  if (ec) return Internal("cannot create " + base + ": " + ec.message());

  // initdb and postgres refuse to run as root; when we are root they run as `postgres`, which must
  // own everything under the cluster's directory: data_dir/pg where that user can reach it, else
  // (a clone in root's home, say) a directory of its own under kRelocatedClusters.
  as_postgres_user_ = geteuid() == 0;
  pg_dir_ = base + "/pg";
  OsUser pg_user;
  if (as_postgres_user_) {
    TY_ASSIGN_OR_RETURN(pg_user, LookupUser("postgres"));
    int reachable = 0;
    TY_RETURN_IF_ERROR(RunCommand({"test", "-x", base}, "/dev/null", "/", true, &reachable));
    if (reachable != 0) {
      TY_ASSIGN_OR_RETURN(pg_dir_, RelocatedClusterDir(base));
      LogJson(LogLevel::kInfo, "embedded_postgres_relocated",
              {{"data_dir", base},
               {"cluster_dir", pg_dir_},
               {"why", "the postgres OS user cannot reach the data directory"}});
    }
  }
  pgdata_ = pg_dir_ + "/data";
  log_dir_ = pg_dir_ + "/log";
  TY_RETURN_IF_ERROR(MakeDir(pg_dir_, 0700));
  TY_RETURN_IF_ERROR(MakeDir(log_dir_, 0700));
  if (as_postgres_user_) {
    TY_RETURN_IF_ERROR(Chown(pg_dir_, pg_user));
    TY_RETURN_IF_ERROR(Chown(log_dir_, pg_user));
    int code = 0;
    TY_RETURN_IF_ERROR(
        RunCommand({"test", "-w", pg_dir_}, log_dir_ + "/commands.log", "/", true, &code));
    if (code != 0) {
      return FailedPrecondition("the postgres OS user cannot write " + pg_dir_ +
                                ": every directory above it must be searchable by that user "
                                "(chmod o+x), e.g. use a --data-dir outside /root");
    }
  }
  const std::string commands_log = log_dir_ + "/commands.log";
  // The server's secret, readable by no one else (not the postgres user, not a replica).
  passfile_ = pg_dir_ + "/server.pgpass";
  TY_ASSIGN_OR_RETURN(const std::string password, embedded_pg::EnsurePassFile(passfile_));

  // First start: initdb into a scratch directory and rename it into place, so a crash during
  // initdb never leaves a half-made cluster that later starts would trip over.
  bool initialized = false;
  if (!fs::exists(pgdata_ + "/PG_VERSION")) {
    if (fs::exists(pgdata_) && !fs::is_empty(pgdata_, ec)) {
      return FailedPrecondition(pgdata_ +
                                " exists but holds no PostgreSQL cluster (no PG_VERSION); move it "
                                "away or remove it");
    }
    fs::remove(pgdata_, ec);
    const std::string scratch = pg_dir_ + "/data.initdb";
    fs::remove_all(scratch, ec);
    // initdb reads the password from a file of the user it runs as, removed right after.
    const std::string pwfile = pg_dir_ + "/initdb.pw";
    fs::remove(pwfile, ec);
    {
      std::ofstream out(pwfile);
      chmod(pwfile.c_str(), 0600);
      out << password << "\n";
      if (!out) return Internal("cannot write " + pwfile);
    }
    if (as_postgres_user_) TY_RETURN_IF_ERROR(Chown(pwfile, pg_user));
    std::vector<std::string> argv = {
        bin + "/initdb",      "-D", scratch, "-U",         "postgres", "--auth=scram-sha-256",
        "--pwfile=" + pwfile, "-E", "UTF8",  "--no-locale"};
    if (!options_.durable) argv.push_back("--no-sync");
    int code = 0;
    const Status ran =
        RunCommand(argv, log_dir_ + "/initdb.log", pg_dir_, as_postgres_user_, &code);
    fs::remove(pwfile, ec);
    TY_RETURN_IF_ERROR(ran);
    if (code != 0) {
      return Internal("initdb failed (exit " + std::to_string(code) +
                      "): " + Tail(log_dir_ + "/initdb.log", 5));
    }
    {
      std::ofstream conf(scratch + "/postgresql.conf", std::ios::app);
      conf
          << "\n# Added by trainyard: the settings it manages are in trainyard.conf, rewritten at\n"
             "# every start. Put your own settings above this line or in postgresql.auto.conf.\n"
             "include_if_exists = 'trainyard.conf'\n";
      if (!conf) return Internal("cannot append to " + scratch + "/postgresql.conf");
    }
    fs::rename(scratch, pgdata_, ec);
    if (ec) return Internal("cannot move the new cluster into " + pgdata_ + ": " + ec.message());
    if (options_.durable) FsyncPath(pg_dir_);
    initialized = true;
  }

  // A postmaster left behind by a previous incarnation (we were kill -9'd) still serves this
  // directory: adopt it. Its socket directory is whatever it was started with.
  int status_code = 0;
  TY_RETURN_IF_ERROR(RunCommand({pg_ctl, "status", "-D", pgdata_}, commands_log, pg_dir_,
                                as_postgres_user_, &status_code));
  if (status_code == 0) {
    auto pid = ReadPidFile(pgdata_);
    if (pid && !pid->socket_dir.empty() && pid->status != "stopping") {
      socket_dir_ = pid->socket_dir;
      temp_socket_dir_ = socket_dir_.rfind("/tmp/trainyard-pg-", 0) == 0;
      adopted_ = true;
      running_ = true;
    } else if (pid) {
      // Shutting down right now: let it finish, then start it afresh below.
      const auto deadline = std::chrono::steady_clock::now() + kAdoptReadyTimeout;
      while (ProcessAlive(pid->pid) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  if (!running_) {
    // Socket directory: private, inside the cluster's directory when the path fits in sun_path,
    // else a private mkdtemp directory (its name is recorded in postmaster.pid for adoption).
    std::string run_dir = pg_dir_ + "/run";
    if (run_dir.size() + std::strlen(kSocketFile) <= kMaxSocketPath) {
      TY_RETURN_IF_ERROR(MakeDir(run_dir, 0700));
      socket_dir_ = run_dir;
    } else {
      char tmpl[] = "/tmp/trainyard-pg-XXXXXX";
      if (mkdtemp(tmpl) == nullptr) {
        return Internal(std::string("cannot create a socket directory under /tmp: ") +
                        std::strerror(errno));
      }
      socket_dir_ = tmpl;
      temp_socket_dir_ = true;
    }
    if (as_postgres_user_) TY_RETURN_IF_ERROR(Chown(socket_dir_, pg_user));

    const std::string conf_path = pgdata_ + "/trainyard.conf";
    {
      const char* on_off = options_.durable ? "on" : "off";
      std::ofstream conf(conf_path, std::ios::trunc);
      conf << "# Written by trainyard at every start of its embedded PostgreSQL; changes here are\n"
              "# lost. Use postgresql.conf or ALTER SYSTEM for your own settings.\n"
           << "listen_addresses = ''\n"
           << "port = " << kPort << "\n"
           << "unix_socket_directories = " << ConfString(socket_dir_) << "\n"
           << "unix_socket_permissions = 0700\n"
           << "fsync = " << on_off << "\n"
           << "synchronous_commit = " << on_off << "\n"
           << "full_page_writes = " << on_off << "\n";
      if (!conf) return Internal("cannot write " + conf_path);
    }
    if (as_postgres_user_) TY_RETURN_IF_ERROR(Chown(conf_path, pg_user));

    int code = 0;
    const std::string server_log = log_dir_ + "/postgres.log";
    TY_RETURN_IF_ERROR(RunCommand({pg_ctl, "start", "-D", pgdata_, "-l", server_log, "-w", "-t",
                                   std::to_string(kStartTimeoutSeconds)},
                                  log_dir_ + "/pg_ctl.log", pg_dir_, as_postgres_user_, &code));
    if (code != 0) {
      if (temp_socket_dir_) fs::remove_all(socket_dir_, ec);
      return Unavailable("embedded PostgreSQL did not start (pg_ctl exit " + std::to_string(code) +
                         "): " + Tail(server_log, 5));
    }
    running_ = true;
  }

  // Wait until it accepts connections: an adopted postmaster may still be in crash recovery.
  const std::string admin = conninfo_for("postgres") + " connect_timeout=2";
  const auto deadline = std::chrono::steady_clock::now() + kAdoptReadyTimeout;
  for (;;) {
    if (PQping(admin.c_str()) == PQPING_OK) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return Unavailable("embedded PostgreSQL at " + socket_dir_ +
                         " does not accept connections; see " + log_dir_ + "/postgres.log");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // The application database. CREATE DATABASE cannot run in a transaction block and a short
  // statement_timeout could cut it off on a slow disk, hence the generous session settings.
  pg::SessionOptions session;
  session.statement_timeout = std::chrono::minutes(2);
  TY_ASSIGN_OR_RETURN(std::unique_ptr<pg::Connection> conn,
                      pg::Connection::Connect(conninfo_for("postgres"), session));
  TY_RETURN_IF_ERROR(RemoveTrust(*conn, pgdata_, password, as_postgres_user_ ? &pg_user : nullptr));
  const std::string exists_sql = "SELECT 1 FROM pg_database WHERE datname = $1::text";
  TY_ASSIGN_OR_RETURN(pg::Result found, conn->Exec(exists_sql, {std::string(kDatabase)}));
  if (found.rows() == 0) {
    auto created = conn->ExecScript(std::string("CREATE DATABASE ") + kDatabase);
    if (!created.ok()) {
      // Lost a race with another process adopting the same cluster? Then it exists now.
      TY_ASSIGN_OR_RETURN(pg::Result again, conn->Exec(exists_sql, {std::string(kDatabase)}));
      if (again.rows() == 0) return created.status();
    }
  }

  LogJson(LogLevel::kInfo, "embedded_postgres_ready",
          {{"data_dir", pgdata_},
           {"socket_dir", socket_dir_},
           {"initdb", initialized ? "true" : "false"},
           {"adopted", adopted_ ? "true" : "false"},
           {"durable", options_.durable ? "true" : "false"},
           {"pid", postmaster_pid()}});
  return Status::Ok();
}

Status EmbeddedPostgres::Stop() {
  if (!running_) return Status::Ok();
  const std::string pg_ctl = options_.bin_dir + "/pg_ctl";
  const std::string log = log_dir_ + "/pg_ctl.log";
  int code = 0;
  TY_RETURN_IF_ERROR(RunCommand({pg_ctl, "stop", "-D", pgdata_, "-m", "fast", "-w", "-t", "60"},
                                log, pg_dir_, as_postgres_user_, &code));
  if (code != 0) {
    auto pid = ReadPidFile(pgdata_);
    if (pid && ProcessAlive(pid->pid)) {
      // Fast shutdown did not finish in time; immediate is crash-safe (WAL replay on next start).
      TY_RETURN_IF_ERROR(
          RunCommand({pg_ctl, "stop", "-D", pgdata_, "-m", "immediate", "-w", "-t", "30"}, log,
                     pg_dir_, as_postgres_user_, &code));
      if (code != 0) {
        return Internal("cannot stop embedded PostgreSQL (pg_ctl exit " + std::to_string(code) +
                        "); see " + log);
      }
    }
    // else: it was already gone (someone else stopped it); nothing to do.
  }
  running_ = false;
  if (temp_socket_dir_) {
    std::error_code ec;
    fs::remove_all(socket_dir_, ec);
  }
  LogJson(LogLevel::kInfo, "embedded_postgres_stopped", {{"data_dir", pgdata_}});
  return Status::Ok();
}

EmbeddedPostgres::~EmbeddedPostgres() {
  Status st = Stop();
  if (!st.ok()) {
    LogJson(LogLevel::kError, "embedded_postgres_stop_failed", {{"error", st.message()}});
  }
}

}  // namespace trainyard
