#include "storage/migrator.h"

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "services/hex.h"
#include "services/log.h"

namespace trainyard {
namespace {

// Every process and every replica hashes the same name, so they all contend for the same lock; the
// lock is per database, so separate databases (one per test) migrate independently.
constexpr char kLockName[] = "trainyard.schema_migrations";

// How long a replica waits for another one to finish migrating before giving up on start-up.
constexpr char kLockWaitMillis[] = "300000";

constexpr char kNoTransactionMarker[] = "-- trainyard:no-transaction";

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version int PRIMARY KEY,"
    " name text NOT NULL,"
    " checksum text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

bool ParseFileName(std::string_view file, int* version, std::string* name) {
  constexpr std::string_view kExt = ".sql";
  if (file.size() < 4 + 1 + 1 + kExt.size() || !file.ends_with(kExt)) return false;
  for (int i = 0; i < 4; ++i) {
    if (file[i] < '0' || file[i] > '9') return false;
  }
  if (file[4] != '_') return false;
  std::string_view rest = file.substr(5, file.size() - 5 - kExt.size());
  if (rest.empty()) return false;
  for (char c : rest) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  int v = (file[0] - '0') * 1000 + (file[1] - '0') * 100 + (file[2] - '0') * 10 + (file[3] - '0');
  if (v < 1) return false;
  *version = v;
  *name = std::string(rest);
  return true;
}

bool RunsOutsideTransaction(std::string_view sql) {
  if (sql.starts_with("\xEF\xBB\xBF")) sql.remove_prefix(3);  // a UTF-8 BOM from some editors
  return sql.starts_with(kNoTransactionMarker);
}

Status Annotate(const Status& st, const std::string& prefix) {
  return Status(st.code(), prefix + st.message());
}

Status AcquireLock(pg::Connection& conn) {
  const pg::Params name = {std::string(kLockName)};
  TY_ASSIGN_OR_RETURN(pg::Result tried,
                      conn.Exec("SELECT pg_try_advisory_lock(hashtext($1::text))", name));
  if (tried.GetBool(0, 0)) return Status::Ok();

  LogJson(LogLevel::kInfo, "migration_lock_wait", {{"lock", kLockName}});
  // The session's 2 s lock_timeout and 5 s statement_timeout are for traffic; here another replica
  // is legitimately holding the lock for as long as its migrations take.
  TY_ASSIGN_OR_RETURN(
      pg::Result set,
      conn.ExecScript(std::string("SET lock_timeout = 0; SET statement_timeout = ") +
                      kLockWaitMillis));
  (void)set;
  auto waited = conn.Exec("SELECT pg_advisory_lock(hashtext($1::text))", name);
  (void)conn.ExecScript("RESET lock_timeout; RESET statement_timeout");
  if (!waited.ok()) {
    return Annotate(waited.status(),
                    "timed out waiting for the schema migration lock held by another process: ");
  }
  return Status::Ok();
}

// Releases the lock and restores the session's timeouts. A broken session has released the lock on
// the server already, so there is nothing to do.
void ReleaseLock(pg::Connection& conn) {
  if (conn.broken()) return;
  if (conn.in_transaction()) (void)conn.ExecScript("ROLLBACK");
  auto unlocked =
      conn.Exec("SELECT pg_advisory_unlock(hashtext($1::text))", {std::string(kLockName)});
  if (!unlocked.ok()) {
    LogJson(LogLevel::kWarn, "migration_unlock_failed", {{"error", unlocked.status().message()}});
  }
  (void)conn.ExecScript("RESET statement_timeout; RESET lock_timeout");
}

Status ApplyOne(pg::Connection& conn, const Migration& m, const std::string& checksum) {
  const std::string file = MigrationFileName(m);
  const auto start = std::chrono::steady_clock::now();
  const pg::Params row = {std::to_string(m.version), m.name, checksum};
  constexpr char kInsert[] =
      "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1::int, $2::text, "
      "$3::text)";
  const bool transactional = !RunsOutsideTransaction(m.sql);
  if (transactional) {
    TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(conn));
    auto ran = conn.ExecScript(m.sql);
    if (!ran.ok()) return Annotate(ran.status(), "migration " + file + " failed: ");
    if (!conn.in_transaction()) {
      // The file said COMMIT or ROLLBACK itself, so part of it may have committed without its row.
      return Internal("migration " + file +
                      " ended the transaction itself; remove COMMIT/ROLLBACK/BEGIN from the file "
                      "and check the schema by hand, it may be partly applied");
    }
    auto inserted = tx.Exec(kInsert, row);
    if (!inserted.ok()) return Annotate(inserted.status(), "recording migration " + file + ": ");
    Status committed = tx.Commit();
    if (!committed.ok()) return Annotate(committed, "committing migration " + file + ": ");
  } else {
    auto ran = conn.ExecScript(m.sql);
    if (!ran.ok()) return Annotate(ran.status(), "migration " + file + " failed: ");
    auto inserted = conn.Exec(kInsert, row);
    if (!inserted.ok()) return Annotate(inserted.status(), "recording migration " + file + ": ");
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  LogJson(LogLevel::kInfo, "migration_applied",
          {{"version", m.version},
           {"name", m.name},
           {"file", file},
           {"checksum", checksum},
           {"transactional", transactional ? "true" : "false"},
           {"duration_ms", static_cast<int64_t>(ms)}});
  return Status::Ok();
}

Status ApplyLocked(pg::Connection& conn, const std::vector<const Migration*>& sorted) {
  TY_ASSIGN_OR_RETURN(pg::Result created, conn.ExecScript(kCreateTable));
  (void)created;
  // Schema changes may run as long as they need; lock_timeout (session default) still stops a DDL
  // from queueing behind live traffic.
  TY_ASSIGN_OR_RETURN(pg::Result unbounded, conn.ExecScript("SET statement_timeout = 0"));
  (void)unbounded;
  TY_ASSIGN_OR_RETURN(
      pg::Result rows,
      conn.Exec("SELECT version, name, checksum FROM schema_migrations ORDER BY version"));
  struct Applied {
    std::string name;
    std::string checksum;
  };
  std::map<int, Applied> applied;
  for (int r = 0; r < rows.rows(); ++r) {
    applied[static_cast<int>(rows.GetInt64(r, 0))] =
        Applied{std::string(rows.Get(r, 1)), std::string(rows.Get(r, 2))};
  }
  const int latest_applied = applied.empty() ? 0 : applied.rbegin()->first;

  // Check everything before changing anything.
  std::vector<std::pair<const Migration*, std::string>> pending;
  std::set<int> known;
  for (const Migration* m : sorted) {
    known.insert(m->version);
    std::string checksum = MigrationChecksum(m->sql);
    auto it = applied.find(m->version);
    if (it != applied.end()) {
      if (it->second.checksum != checksum) {
        return FailedPrecondition("migration " + MigrationFileName(*m) +
                                  " was changed after being applied (applied checksum " +
                                  it->second.checksum + ", file checksum " + checksum +
                                  "); restore the file and put the change in a new migration");
      }
      continue;
    }
    if (m->version < latest_applied) {
      char latest[16];
      std::snprintf(latest, sizeof(latest), "%04d", latest_applied);
      return FailedPrecondition("migration " + MigrationFileName(*m) +
                                " was never applied but the database is already at version " +
                                latest + "; give it a number above " + latest);
    }
    pending.emplace_back(m, std::move(checksum));
  }
  for (const auto& [version, a] : applied) {
    if (!known.contains(version)) {
      // A newer binary migrated this database (rolling deploy or rollback). Forward-compatible
      // migrations keep the old binary working, so note it rather than refuse to start.
      LogJson(LogLevel::kWarn, "migration_unknown_applied",
              {{"version", version}, {"name", a.name}});
    }
  }
  for (const auto& [m, checksum] : pending) TY_RETURN_IF_ERROR(ApplyOne(conn, *m, checksum));
  return Status::Ok();
}

}  // namespace

std::string MigrationFileName(const Migration& m) {
  char num[16];
  std::snprintf(num, sizeof(num), "%04d", m.version);
  return std::string(num) + "_" + m.name + ".sql";
}

std::string MigrationChecksum(std::string_view sql) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(sql.data(), sql.size(), md, &len, EVP_sha256(), nullptr) != 1) return "";
  return HexOf(std::string_view(reinterpret_cast<const char*>(md), len));
}

StatusOr<std::vector<Migration>> ParseMigrationFiles(
    std::vector<std::pair<std::string, std::string>> files) {
  std::vector<Migration> out;
  std::map<int, std::string> seen;
  for (auto& [file, contents] : files) {
    Migration m;
    if (!ParseFileName(file, &m.version, &m.name)) {
      return InvalidArgument("bad migration file name \"" + file +
                             "\": expected NNNN_name.sql (four digits from 0001, then letters, "
                             "digits or underscores)");
    }
    auto [it, inserted] = seen.emplace(m.version, file);
    if (!inserted) {
      return InvalidArgument("migration files \"" + it->second + "\" and \"" + file +
                             "\" share the number " + file.substr(0, 4));
    }
    m.sql = std::move(contents);
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  return out;
}

StatusOr<std::vector<Migration>> LoadMigrationsFromDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return FailedPrecondition("cannot read migrations directory " + dir + ": " + ec.message());
  std::vector<std::pair<std::string, std::string>> files;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    std::string file = path.filename().string();
    if (file.starts_with(".") || path.extension() != ".sql") continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    if (!in.good() && !in.eof()) return Internal("cannot read migration file " + path.string());
    files.emplace_back(std::move(file), contents.str());
  }
  if (ec)
    return FailedPrecondition("cannot read migrations directory " + dir + ": " + ec.message());
  return ParseMigrationFiles(std::move(files));
}

const std::vector<Migration>& EmbeddedMigrations() {
  static const std::vector<Migration>* const migrations = [] {
    std::vector<std::pair<std::string, std::string>> files;
    for (const internal::EmbeddedFile& f : internal::EmbeddedMigrationFiles()) {
      files.emplace_back(f.name, std::string(f.data, f.size));
    }
    auto parsed = ParseMigrationFiles(std::move(files));
    if (!parsed.ok()) {
      // embed_migrations.cmake applies the same rules and fails the build, so this is a broken
      // build, not a runtime condition; starting without the schema would be worse than stopping.
      LogJson(LogLevel::kError, "embedded_migrations_invalid",
              {{"error", parsed.status().message()}});
      std::abort();
    }
    return new std::vector<Migration>(std::move(parsed).value());
  }();
  return *migrations;
}

Status ApplyMigrations(pg::Connection& conn, const std::vector<Migration>& migrations) {
  std::vector<const Migration*> sorted;
  sorted.reserve(migrations.size());
  for (const Migration& m : migrations) {
    if (m.version < 1) return InvalidArgument("migration versions start at 1");
    sorted.push_back(&m);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Migration* a, const Migration* b) { return a->version < b->version; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->version == sorted[i - 1]->version) {
      return InvalidArgument("two migrations share version " + std::to_string(sorted[i]->version));
    }
  }
  if (conn.in_transaction()) {
    return Internal("ApplyMigrations needs a connection that is not inside a transaction");
  }

  TY_RETURN_IF_ERROR(AcquireLock(conn));
  Status st = ApplyLocked(conn, sorted);
  ReleaseLock(conn);
  if (!st.ok()) {
    LogJson(LogLevel::kError, "migration_failed", {{"error", st.message()}});
  }
  return st;
}

StatusOr<int> CurrentSchemaVersion(pg::Connection& conn) {
  TY_ASSIGN_OR_RETURN(pg::Result exists,
                      conn.Exec("SELECT to_regclass('schema_migrations') IS NOT NULL"));
  if (!exists.GetBool(0, 0)) return 0;
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn.Exec("SELECT coalesce(max(version), 0) FROM schema_migrations"));
  return static_cast<int>(r.GetInt64(0, 0));
}

bool IsSchemaAtHead(pg::Connection& conn, const std::vector<Migration>& migrations) {
  auto exists = conn.Exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
  if (!exists.ok()) return false;
  if (!exists->GetBool(0, 0)) return migrations.empty();
  std::string versions = "{";
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (i > 0) versions += ",";
    versions += std::to_string(migrations[i].version);
  }
  versions += "}";
  auto r = conn.Exec("SELECT count(*) FROM schema_migrations WHERE version = ANY($1::int[])",
                     {versions});
  if (!r.ok()) return false;
  return r->GetInt64(0, 0) == static_cast<int64_t>(migrations.size());
}

}  // namespace trainyard
