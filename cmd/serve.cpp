#include "cmd/serve.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <variant>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/wire/fleet_codec.h"
#include "cmd/app/runtimes.h"
#include "cmd/app/serve_flags.h"
#include "cmd/app/serving_plane.h"
#include "services/log.h"
#include "storage/database.h"
#include "storage/migrator.h"
#include "workers/buffered_log_sink.h"

namespace trainyard::cmd {
namespace {

constexpr auto kDrain = std::chrono::seconds(20);

// SIGINT/SIGTERM are blocked in every thread and taken by sigwait in main (cpprestsdk#1559).
sigset_t BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A write to a pipe whose reader is gone (a replica's keeper that died) is an EPIPE to handle,
  // not the end of the server. Replicas get the default back (local runtime).
  signal(SIGPIPE, SIG_IGN);
  return set;
}

// Whether a SIGINT or SIGTERM waits, blocked, for sigwait: a stop asked during start-up.
bool StopAsked() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1;
}

// The drain period, until `until`: the listener still accepts and answers while /readyz says 503.
// A second SIGINT or SIGTERM (Ctrl-C again) ends it at once.
void WaitOutDrain(const sigset_t& signals, std::chrono::steady_clock::time_point until) {
  for (auto left = until - std::chrono::steady_clock::now(); left > left.zero();
       left = until - std::chrono::steady_clock::now()) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                           static_cast<long>(ns % 1'000'000'000)};
    if (int signal = sigtimedwait(&signals, nullptr, &timeout); signal > 0) {
      LogJson(LogLevel::kInfo, "drain_cut_short", {{"signal", signal}});
      return;
    }
    // EAGAIN: the period is over, as the loop finds; EINTR: woken for nothing, wait on.
  }
}

int Fail(const std::string& event, const Status& status) {
  LogJson(LogLevel::kError, event,
          {{"code", CodeName(status.code())}, {"error", status.message()}});
  std::cerr << "trainyard: " << status.message() << "\n";
  return 1;
}

// The server's log: request threads append their lines to a buffer that one thread writes
// (workers/buffered_log_sink.h).
void InitBufferedJsonLogging(spdlog::level::level_enum level) {
  auto sink = std::make_shared<BufferedLogSink>(STDERR_FILENO);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("trainyard", std::move(sink)));
  spdlog::set_level(level);
  spdlog::flush_on(spdlog::level::err);
}

spdlog::level::level_enum SpdLevel(const std::string& name) {
  if (name == "debug") return spdlog::level::debug;
  if (name == "warn") return spdlog::level::warn;
  if (name == "error") return spdlog::level::err;
  return spdlog::level::info;
}

// A refused flag: its line on stderr, and a usage error's exit code.
int Refuse(const app::FlagError& error) {
  std::cerr << "trainyard: " << error.message << "\n";
  return app::FlagError::kExitCode;
}

// The source tree's fleet file and what-if scenarios where the flags name none.
ServeOptions WithSourceTreeDefaults(ServeOptions options) {
  if (options.fleet.empty()) options.fleet = TRAINYARD_DEFAULT_FLEET;
  if (options.whatif_dir.empty()) options.whatif_dir = TRAINYARD_WHATIF_DIR;
  return options;
}

// --database-url, or the URL --database-url-file holds (unreadable or unprotected: an error).
StatusOr<std::string> DatabaseUrl(const ServeOptions& options) {
  if (options.database_url_file.empty()) return options.database_url;
  return storage::ReadDatabaseUrlFile(options.database_url_file);
}

}  // namespace

void AddServeLifecycleFlags(CLI::App& serve_cmd, ServeOptions& serve) {
  serve_cmd
      .add_option("--database-url-file", serve.database_url_file,
                  "a file holding --database-url (trimmed), readable by its owner alone (chmod "
                  "600), so the URL stays off the command line; the password may instead come from "
                  "PGPASSFILE or ~/.pgpass, which libpq reads when the URL has none")
      ->excludes(serve_cmd.get_option("--database-url"));
  serve_cmd
      .add_option("--database-wait", serve.database_wait_seconds,
                  "seconds start-up waits for an external database that refuses connections for "
                  "now (not yet listening, starting up, recovering), trying again every 2 s at "
                  "most; a refused password or an unknown database fails at once; 0: no wait")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  serve_cmd
      .add_option("--drain-period", serve.drain_period_seconds,
                  "seconds after SIGTERM that the API still accepts and answers every request "
                  "while /readyz says 503, so a load balancer takes this server out first (a "
                  "second SIGTERM or Ctrl-C ends it); 0: the port closes at once")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  serve_cmd
      .add_option("--max-connections", serve.max_connections,
                  "connections the API keeps open at once; more wait until one closes (keep it "
                  "below the open files limit, ulimit -n)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
}

// JSON lines on stderr (stdout stays free for command output); the line is built by LogJson.
void InitJsonLogging(bool debug) {
  spdlog::set_default_logger(spdlog::stderr_logger_mt("trainyard"));
  spdlog::set_pattern("%v");
  spdlog::set_level(debug ? spdlog::level::debug : spdlog::level::info);
}

int RunServe(const ServeOptions& parsed) {
  InitBufferedJsonLogging(SpdLevel(parsed.debug ? "debug" : parsed.log_level));
  // Declared first, so it runs last: whatever the way out, the buffered lines are written.
  struct FlushLogsAtExit {
    ~FlushLogsAtExit() { spdlog::default_logger()->flush(); }
  } flush_logs_at_exit;
  sigset_t signals = BlockShutdownSignals();
  const ServeOptions options = WithSourceTreeDefaults(parsed);

  // A bad fleet file stops start-up before anything listens; so does an unreadable or unprotected
  // URL file, and then a flag refused.
  auto fleet = LoadFleetFile(options.fleet);
  if (!fleet.ok()) return Fail("fleet_invalid", fleet.status());
  auto database_url = DatabaseUrl(options);
  if (!database_url.ok()) return Fail("database_url_file_invalid", database_url.status());
  const app::RuntimeRegistry runtimes = app::ServeRuntimes(options);
  auto checked = app::CheckServeFlags(options, runtimes);
  if (const auto* refused = std::get_if<app::FlagError>(&checked)) return Refuse(*refused);

  app::ServingPlane plane(options, std::get<app::ServeFlags>(std::move(checked)), runtimes,
                          *std::move(fleet), *std::move(database_url));
  if (auto failed = plane.Start(StopAsked)) return Fail(failed->event, failed->status);

  int signal = 0;
  sigwait(&signals, &signal);
  const auto drain_until =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(options.drain_period_seconds * 1000));
  LogJson(LogLevel::kInfo, "shutting_down",
          {{"signal", signal}, {"drain_period_seconds", options.drain_period_seconds}});
  plane.BeginDrain();  // /readyz says 503 while the listeners still answer
  WaitOutDrain(signals, drain_until);
  if (Status s = plane.Close(kDrain); !s.ok()) return Fail("postgres_stop_failed", s);
  LogJson(LogLevel::kInfo, "stopped", {});
  return 0;
}

int RunMigrate(const MigrateOptions& options) {
  InitJsonLogging(false);
  auto db = storage::OpenDatabase(options.database_url, options.data_dir, 1);
  if (!db.ok()) return Fail("database_failed", db.status());
  if (Status s = storage::Migrate(*db->pool); !s.ok()) return Fail("migration_failed", s);
  if (Status s = db->CloseAfterCommand(); !s.ok()) return Fail("postgres_stop_failed", s);
  std::cout << "migrations applied\n";
  return 0;
}

}  // namespace trainyard::cmd
