#include "cmd/serve.h"

#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/api_service.h"
#include "api/http_server.h"
#include "api/metrics_endpoint.h"
#include "api/request_guard.h"
#include "api/wire/custom_job_codec.h"
#include "api/wire/fleet_codec.h"
#include "cmd/app/control_plane.h"
#include "cmd/app/pg_adapters.h"
#include "cmd/app/runtime_registry.h"
#include "cmd/simulate/whatif_runner.h"
#include "services/admin/admin_metrics.h"
#include "services/log.h"
#include "services/metrics/registry.h"
#include "services/telemetry/utilization_metrics.h"
#include "storage/database.h"
#include "storage/embedded_postgres.h"
#include "storage/migrator.h"
#include "storage/pg.h"
#include "storage/sim_clock_store.h"
#include "storage/storage_metrics.h"
#include "workers/buffered_log_sink.h"
#include "workers/files/secret_file.h"
#include "workers/local/local_runtime.h"
#include "workers/sim/sim_runtime.h"
#include "workers/slurm/slurm_capacity.h"
#include "workers/slurm/slurm_rest_client.h"
#include "workers/slurm/slurm_runtime.h"

namespace trainyard::cmd {
namespace {

constexpr auto kDrain = std::chrono::seconds(20);

bool SplitListen(const std::string& listen, std::string& host, int& port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  host = listen.substr(0, colon);
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
    return false;
  }
  return port > 0 && port < 65536 && !host.empty();
}

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

std::string JoinRoles(const std::vector<std::string>& roles) {
  std::string out;
  for (const auto& r : roles) out += (out.empty() ? "" : ",") + r;
  return out;
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

// CLUSTER_SPEC's "job": the spec in the wire's JSON (the runtimes sit below the wire).
std::string EncodeJobSpec(const CustomJobSpec& spec) { return EncodeCustomJobSpec(spec).dump(); }

// slurmrestd's client, with the token from --slurm-token-file or SLURM_JWT.
StatusOr<std::unique_ptr<slurm::SlurmRestClient>> MakeSlurmClient(const ServeOptions& options) {
  slurm::SlurmRestOptions rest;
  rest.url = options.slurm_url;
  if (rest.url.empty()) return InvalidArgument("--runtime=slurm needs --slurm-url");
  rest.token_file = options.slurm_token_file;
  if (const char* jwt = std::getenv("SLURM_JWT"); jwt != nullptr && rest.token_file.empty()) {
    rest.token = jwt;
  }
  // Whom the jobs run as is the operator's choice, never a default (it used to fall back to root).
  rest.user = options.slurm_user;
  if (rest.user.empty()) {
    return InvalidArgument("--runtime=slurm needs --slurm-user: the Slurm user the jobs run as");
  }
  rest.ca_file = options.slurm_ca_file;
  return slurm::SlurmRestClient::Create(std::move(rest));
}

// The Slurm runtime, with the partitions the fleet file's pools name.
StatusOr<std::unique_ptr<Runtime>> MakeSlurmRuntime(const ServeOptions& options,
                                                    const Fleet& fleet) {
  TY_ASSIGN_OR_RETURN(std::unique_ptr<slurm::SlurmRestClient> client, MakeSlurmClient(options));
  slurm::SlurmRuntimeOptions runtime;
  runtime.shared_dir = std::filesystem::absolute(
      options.slurm_shared_dir.empty() ? std::filesystem::path(options.data_dir) / "slurm"
                                       : std::filesystem::path(options.slurm_shared_dir));
  runtime.state_dir =
      std::filesystem::absolute(std::filesystem::path(options.data_dir) / "slurm-state");
  runtime.user = options.slurm_user;
  TY_ASSIGN_OR_RETURN(runtime.tag_key, files::LoadOrCreateSecret(runtime.state_dir / "tag.key"));
  if (geteuid() == 0) {
    // The jobs run as the Slurm user, so their folders are its; the same uid on every node.
    if (const passwd* pw = getpwnam(options.slurm_user.c_str()); pw != nullptr) {
      runtime.folder_owner = std::make_pair(pw->pw_uid, pw->pw_gid);
    }
  }
  runtime.tasks_per_node = options.slurm_tasks_per_node;
  runtime.encode_job_spec = EncodeJobSpec;
  runtime.launch_lookup_age = std::chrono::milliseconds(options.lease_seconds * 1000 / 4);
  for (const CapacityPool& pool : fleet.pools) {
    if (!pool.slurm_partition.empty()) runtime.partition_of_pool[pool.id] = pool.slurm_partition;
  }
  return std::unique_ptr<Runtime>(
      std::make_unique<slurm::SlurmRuntime>(std::move(client), std::move(runtime)));
}

// The local runtime, its replicas as isolated as this host allows; refused where they would not
// keep projects apart and the API takes tokens (`tokens`).
StatusOr<std::unique_ptr<Runtime>> MakeLocalRuntime(const ServeOptions& options, bool tokens) {
  local::LocalRuntimeOptions local_options;
  TY_ASSIGN_OR_RETURN(local_options.sandbox, local::DetectSandbox(local::kReplicaUser));
  TY_RETURN_IF_ERROR(
      local::ReviewIsolation(local_options.sandbox, tokens, options.allow_unsandboxed_replicas));
  local_options.data_dir = std::filesystem::absolute(options.data_dir);
  local_options.root = local::ReachableReplicaRoot(
      std::filesystem::absolute(options.data_dir) / "replicas", local_options.sandbox);
  local_options.grace =
      std::chrono::milliseconds(static_cast<int64_t>(options.stop_grace_seconds * 1000));
  local_options.encode_job_spec = EncodeJobSpec;
  return std::unique_ptr<Runtime>(std::make_unique<local::LocalRuntime>(local_options));
}

// Every runtime `serve` can run jobs on, by --runtime's name.
app::RuntimeRegistry Runtimes(const ServeOptions& options, bool tokens) {
  app::RuntimeRegistry registry;
  registry.Register("sim", [](const Fleet&) -> StatusOr<std::unique_ptr<Runtime>> {
    return std::unique_ptr<Runtime>(std::make_unique<sim::SimRuntime>());
  });
  registry.Register("local",
                    [&options, tokens](const Fleet&) { return MakeLocalRuntime(options, tokens); });
  registry.Register("slurm",
                    [&options](const Fleet& fleet) { return MakeSlurmRuntime(options, fleet); });
  return registry;
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

bool IsLoopbackHost(const std::string& host) {
  // "127.0.0.1", "localhost", "[::1]" as --listen spells them, and a bare "::1".
  return api::IsLoopbackName(host) || api::IsLoopbackName(api::HostOfAuthority(host));
}

// JSON lines on stderr (stdout stays free for command output); the line is built by LogJson.
void InitJsonLogging(bool debug) {
  spdlog::set_default_logger(spdlog::stderr_logger_mt("trainyard"));
  spdlog::set_pattern("%v");
  spdlog::set_level(debug ? spdlog::level::debug : spdlog::level::info);
}

// What-if runs execute this binary's `simulate` in a child process, as the replicas' user when
// the server is root; without that user they are refused rather than run as root.
std::unique_ptr<WhatIfRunner> MakeWhatIfRunner(const std::string& dir) {
  simulate::WhatIfRunnerOptions options;
  options.dir = dir;
  std::error_code ec;
  options.program = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  auto user = simulate::WhatIfUser(local::kReplicaUser);
  if (user.ok()) {
    options.user = *user;
  } else {
    options.refused = user.status();
    LogJson(LogLevel::kWarn, "whatif_refused", {{"error", user.status().message()}});
  }
  return simulate::MakeWhatIfRunner(std::move(options));
}

int RunServe(const ServeOptions& options) {
  InitBufferedJsonLogging(SpdLevel(options.debug ? "debug" : options.log_level));
  // Declared first, so it runs last: whatever the way out, the buffered lines are written.
  struct FlushLogsAtExit {
    ~FlushLogsAtExit() { spdlog::default_logger()->flush(); }
  } flush_logs_at_exit;
  sigset_t signals = BlockShutdownSignals();

  // A bad fleet file stops start-up before anything listens.
  auto fleet = LoadFleetFile(options.fleet.empty() ? TRAINYARD_DEFAULT_FLEET : options.fleet);
  if (!fleet.ok()) return Fail("fleet_invalid", fleet.status());
  // So does an unreadable or unprotected URL file.
  std::string database_url = options.database_url;
  if (!options.database_url_file.empty()) {
    auto url = storage::ReadDatabaseUrlFile(options.database_url_file);
    if (!url.ok()) return Fail("database_url_file_invalid", url.status());
    database_url = *std::move(url);
  }

  api::ServerOptions server_options;
  if (!SplitListen(options.listen, server_options.host, server_options.port)) {
    std::cerr << "trainyard: --listen must be host:port, got \"" << options.listen << "\"\n";
    return 2;
  }
  server_options.tls_cert_file = options.tls_cert;
  server_options.tls_key_file = options.tls_key;
  server_options.threads = options.http_threads;
  server_options.max_connections = options.max_connections;
  RequestGauge writes_in_flight(std::max(1, options.http_threads / 2));
  server_options.writes_in_flight = &writes_in_flight;
  // Reads never wait on a commit: twice the cores (docs/performance.md).
  server_options.io_threads =
      static_cast<int>(std::max(2u, 2 * std::thread::hardware_concurrency()));
  const bool loopback = IsLoopbackHost(server_options.host);
  const std::string auth = options.auth.empty() ? (loopback ? "off" : "tokens") : options.auth;
  std::string metrics_host;
  int metrics_port = 0;
  if (!options.metrics_listen.empty() &&
      !SplitListen(options.metrics_listen, metrics_host, metrics_port)) {
    std::cerr << "trainyard: --metrics-listen must be host:port, got \"" << options.metrics_listen
              << "\"\n";
    return 2;
  }
  if (auth == "off" && !options.metrics_listen.empty() && !IsLoopbackHost(metrics_host)) {
    std::cerr << "trainyard: --metrics-listen on " << metrics_host
              << " needs --auth=tokens (a fleet-admin token reads it); without auth only a "
                 "loopback address is allowed\n";
    return 2;
  }
  if (auth == "off" && !loopback) {
    std::cerr << "trainyard: --auth=off is only allowed on a loopback --listen address "
                 "(127.0.0.1, ::1, localhost): on "
              << server_options.host
              << " anyone who reaches the port could read and cancel every project's jobs. Mint "
                 "a token with `trainyard tokens create` and serve with --auth=tokens.\n";
    return 2;
  }

  if (options.runtime == "local" && !loopback && !options.allow_remote_commands) {
    std::cerr << "trainyard: --runtime=local on " << server_options.host
              << " would let every holder of an editor token run any command on this host. "
                 "Listen on a loopback address, or say you mean it with "
                 "--allow-remote-command-execution.\n";
    return 2;
  }
  for (const std::string& name : options.allowed_hosts) {
    if (api::HostOfAuthority(name) != name) {
      std::cerr << "trainyard: --allowed-host takes a lowercase host name without a port, got \""
                << name << "\"\n";
      return 2;
    }
  }

  // Readiness: the database answers and is migrated, and we are not draining.
  std::atomic<pg::Pool*> ready_pool{nullptr};
  std::atomic<bool> draining{false};
  // Declared before the API, which serves it, and outlives it.
  metrics::Registry metrics_registry;
  api::ApiService api(
      [&]() -> Status {
        if (draining) return Unavailable("draining");
        pg::Pool* pool = ready_pool.load();
        if (pool == nullptr) return Unavailable("database not migrated yet");
        return pool->Ping();
      },
      api::RequestGuardOptions{auth == "off", options.allowed_hosts, !options.tls_cert.empty()});

  // Listen first: /healthz answers while PostgreSQL starts.
  auto server = api::NewHttpServer(server_options, api.AsHandler());
  if (Status s = server->Start(); !s.ok()) return Fail("listen_failed", s);
  LogJson(LogLevel::kInfo, "listening", {{"listen", options.listen}});

  auto db = storage::OpenDatabase(database_url, options.data_dir, options.db_pool);
  if (!db.ok()) return Fail("database_failed", db.status());
  if (Status s = storage::Migrate(*db->pool); !s.ok()) return Fail("migration_failed", s);
  auto clock = storage::LoadSimClock(*db->pool, options.sim_speed);
  if (!clock.ok()) return Fail("sim_clock_failed", clock.status());

  auto runs = [&](const char* role) {
    return std::find(options.roles.begin(), options.roles.end(), role) != options.roles.end();
  };
  // The runtime's leases on a pool of their own, so its checkouts never wait behind requests';
  // two sessions: its loop holds one at a time, the other is headroom.
  if (Status s = storage::OpenBackgroundSessions(*db, 2); !s.ok()) {
    return Fail("database_failed", s);
  }
  // Polls are cached only where the API answers them.
  app::PgAdapters adapters(*db->pool, *db->background_pool, db->conninfo, db->scheduler_session,
                           JobLogRetention{options.log_lines_per_job},
                           runs("api") ? static_cast<size_t>(options.job_cache_entries) : 0);
  auto runtime = Runtimes(options, auth == "tokens").Make(options.runtime, *fleet);
  if (!runtime.ok()) return Fail("runtime_failed", runtime.status());
  // On Slurm, the scheduler admits only onto nodes the cluster can run (read from slurmrestd).
  // Declared before the control plane that reads it, so it outlives it on every way out.
  std::unique_ptr<slurm::SlurmCapacity> slurm_capacity;
  app::ControlPlaneOptions plane_options;
  // A quarter of the request threads may wait on :wait; the rest stay for everything else.
  plane_options.operation_waiters = std::max(1, options.http_threads / 4);
  // Simulated capacity boots and pulls images in simulated time; real processes start at once.
  plane_options.scheduler.simulated_startup = options.runtime == "sim";
  // A queue's positions as a client polls them are at most a second old (chosen: a human reads
  // them; Kueue's were 5 s old), instead of a write of every moved one at each pass.
  plane_options.scheduler.positions_period = std::chrono::seconds(1);
  // Requests first: the scheduler's and the runtime's passes wait while half the writers' threads
  // or more are taken (chosen; Slurm's max_rpc_cnt, 150 of 256 threads, is a like share).
  plane_options.scheduler.deferral.requests = &writes_in_flight;
  plane_options.executor.deferral.requests = &writes_in_flight;
  // …and the runtime's never long enough to let its leases run out (its pass heartbeats them).
  plane_options.executor.deferral.max_defer = std::min<std::chrono::milliseconds>(
      plane_options.executor.deferral.max_defer, std::chrono::seconds(options.lease_seconds) / 4);
  plane_options.executor.owner = DefaultExecutorOwner();
  plane_options.executor.lease = std::chrono::seconds(options.lease_seconds);
  if (options.runtime == "slurm") {
    auto client = MakeSlurmClient(options);
    if (!client.ok()) return Fail("slurm_runtime_failed", client.status());
    slurm_capacity = std::make_unique<slurm::SlurmCapacity>(
        std::move(client).value(), *fleet,
        std::chrono::milliseconds(static_cast<int64_t>(options.slurm_capacity_seconds * 1000)),
        options.slurm_tasks_per_node);
    if (Status read = slurm_capacity->Refresh(); !read.ok()) {
      LogJson(LogLevel::kWarn, "slurm_capacity_failed", {{"error", read.message()}});
    }
    slurm_capacity->Start();
    plane_options.external_capacity = slurm_capacity.get();
  }
  auto built = app::ControlPlane::Build(adapters.ports(), *fleet, **clock, **runtime,
                                        std::move(plane_options));
  if (!built.ok()) return Fail("fleet_sync_failed", built.status());
  app::ControlPlane& plane = **built;
  // What-if runs: one at a time, in the background, on the scenarios of the what-if directory.
  const std::string whatif_dir =
      options.whatif_dir.empty() ? TRAINYARD_WHATIF_DIR : options.whatif_dir;
  WhatIfService whatif(simulate::OfferedScenarios(whatif_dir), MakeWhatIfRunner(whatif_dir),
                       [&clock_ref = **clock] { return clock_ref.Now(); });
  if (runs("api")) {
    api::ApiService::Services services{
        plane.jobs(),
        plane.operations(),
        plane.resources(),
        plane.admin(),
        &plane.injector(),
        &plane.logs(),
        auth == "tokens" ? &plane.tokens() : nullptr,
        api::RateLimit{options.rate_limit, 2 * options.rate_limit},
        api::RateLimit{options.create_rate_limit, 2 * options.create_rate_limit},
        &metrics_registry,
        &plane.utilization(),
        &adapters.projects()};
    services.whatif = &whatif;
    api.Attach(services);
  }
  ready_pool = db->pool.get();
  plane.Start(runs("scheduler"), runs("executor"));
  metrics_registry.Add([&plane](metrics::Exposition& e) {
    plane.scheduler().metrics().Write(e);
    plane.executor().metrics().Write(e);
    return Status::Ok();
  });
  metrics_registry.Add([&](metrics::Exposition& e) {
    storage::WriteDatabaseFamilies(*db->pool, adapters.jobs().creates(), e);
    storage::WriteJobCacheFamilies(adapters.job_cache(), e);
    return Status::Ok();
  });
  metrics_registry.Add([&](metrics::Exposition& e) { return WriteJobFamilies(plane.admin(), e); });
  metrics_registry.Add(
      [&](metrics::Exposition& e) { return WriteFleetFamilies(plane.admin(), e); });
  metrics_registry.Add([&](metrics::Exposition& e) { return WriteCostFamilies(plane.admin(), e); });
  metrics_registry.Add(
      [&](metrics::Exposition& e) { return WriteUtilizationFamilies(plane.utilization(), e); });

  // --metrics-listen: /metrics alone on a port of its own.
  api::MetricsEndpoint metrics_endpoint(
      metrics_registry, auth == "tokens" ? &plane.tokens() : nullptr,
      api::RequestGuardOptions{auth == "off", options.allowed_hosts});
  std::unique_ptr<api::HttpServer> metrics_server;
  if (!options.metrics_listen.empty()) {
    api::ServerOptions metrics_options;
    metrics_options.host = metrics_host;
    metrics_options.port = metrics_port;
    metrics_options.io_threads = 2;  // one scrape at a time, and a health check beside it
    metrics_options.threads = 1;
    metrics_server = api::NewHttpServer(metrics_options, metrics_endpoint.AsHandler());
    if (Status s = metrics_server->Start(); !s.ok()) return Fail("metrics_listen_failed", s);
  }
  LogJson(LogLevel::kInfo, "ready",
          {{"listen", options.listen},
           {"sim_speed", options.sim_speed},
           {"embedded_postgres", db->embedded ? db->embedded->cluster_dir() : "no"},
           {"fleet", fleet->name},
           {"roles", JoinRoles(options.roles)},
           {"auth", auth},
           {"tls", options.tls_cert.empty() ? "off" : "on"},
           {"runtime", options.runtime},
           {"pools", static_cast<int64_t>(fleet->pools.size())}});

  int signal = 0;
  sigwait(&signals, &signal);
  const auto drain_until =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(options.drain_period_seconds * 1000));
  LogJson(LogLevel::kInfo, "shutting_down",
          {{"signal", signal}, {"drain_period_seconds", options.drain_period_seconds}});
  draining = true;
  // A stopped server ends its replicas; a killed one leaves them to be adopted on restart. The
  // scheduler's lead and the job leases go at once, the drain runs on without them.
  plane.Stop();
  WaitOutDrain(signals, drain_until);
  if (metrics_server) metrics_server->Stop(kDrain);
  server->Stop(kDrain);
  if (Status s = db->CloseAfterServe(); !s.ok()) return Fail("postgres_stop_failed", s);
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
