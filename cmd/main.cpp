// trainyard: parse flags, wire the concrete pieces, start the roles. Nothing else lives here.
#include <openssl/crypto.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <string>

#include "cmd/client_commands.h"
#include "cmd/serve.h"
#include "cmd/simulate_command.h"
#include "cmd/verb_help.h"
#include "services/scheduler/scheduler.h"

int main(int argc, char** argv) {
  // OpenSSL must not tear itself down at exit: cpprestsdk's thread pool may still be freeing an
  // https client's SSL_CTX then, and a destroyed lock hangs or crashes that thread (seen: a CLI
  // that failed a handshake spinning at exit). The OS reclaims everything anyway.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  CLI::App app{"Trainyard: a self-hosted, Vertex-AI-compatible training job service", "trainyard"};
  app.require_subcommand(1);
  // Set before the verbs are added: they inherit it. A bad invocation prints one line and usage.
  app.failure_message(trainyard::cmd::FailureWithUsage);

  trainyard::cmd::ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve",
                                           "Run the API, the runtime and (by default) an "
                                           "embedded PostgreSQL");
  serve_cmd->add_option("--listen", serve.listen, "host:port to listen on")->capture_default_str();
  serve_cmd
      ->add_option("--data-dir", serve.data_dir,
                   "directory for the embedded PostgreSQL (DIR/pg) and other state")
      ->capture_default_str();
  serve_cmd->add_option("--database-url", serve.database_url,
                        "libpq connection string of an external PostgreSQL; no embedded one is "
                        "started");
  serve_cmd
      ->add_option("--sim-speed", serve.sim_speed,
                   "virtual seconds per wall second for the simulated runtime")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve_cmd
      ->add_option("--http-threads", serve.http_threads,
                   "threads for writes (POST, DELETE), which wait for their commit")
      ->check(CLI::Range(2, 256))
      ->capture_default_str();
  serve_cmd->add_option("--db-pool", serve.db_pool, "database connections")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_cmd
      ->add_option("--slurm-capacity-interval", serve.slurm_capacity_seconds,
                   "slurm runtime: seconds between reads of the cluster's nodes (a partition's "
                   "nodes that are down or drained are taken out of its pools)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--lease-seconds", serve.lease_seconds,
                   "how long a job stays with this process after its last heartbeat; a "
                   "crashed process's jobs move on after this")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  serve_cmd->add_option("--whatif-dir", serve.whatif_dir,
                        "scenarios the console's what-if runs may choose from (default: "
                        "payloads/simulate)");
  serve_cmd->add_option("--fleet", serve.fleet,
                        "fleet file: zones, pools, consumption models, quotas (default: "
                        "payloads/fleets/default.json)");
  serve_cmd
      ->add_option("--roles", serve.roles,
                   "parts to run, comma-separated: api (the HTTP API), scheduler (admission; one "
                   "leader per database), executor (the runtime's job leases)")
      ->delimiter(',')
      ->check(CLI::IsMember({"api", "scheduler", "executor"}))
      ->capture_default_str();
  const trainyard::SchedulerConfig scheduler_defaults;
  serve_cmd->add_option(
      "--scheduler", serve.scheduler_knobs,
      "a scheduler knob as NAME=VALUE, repeatable: holdAfter (a waiting job holds capacity "
      "after this wait, default " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(scheduler_defaults.reserve_min_wait)
                  .count()) +
          "s), holdsPerCycle (how many may hold in one cycle, 1-1000, default " +
          std::to_string(scheduler_defaults.max_reservations) +
          "), requeueTimestamp (Creation or Eviction: what a requeued job queues by, default "
          "Creation)");
  serve_cmd
      ->add_option("--log-lines-per-job", serve.log_lines_per_job,
                   "replica log lines kept per job: the first half and the newest half; the "
                   "lines between are dropped, counted, and noted in the job's log")
      ->check(CLI::Range(int64_t{2}, int64_t{100000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--job-cache-entries", serve.job_cache_entries,
                   "polled jobs kept in memory, each dropped as soon as any server on the "
                   "database changes it (0: every poll reads the database)")
      ->check(CLI::Range(int64_t{0}, int64_t{10000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--runtime", serve.runtime,
                   "what runs the replicas: sim (simulated capacity), local (each replica a "
                   "process of this host, for development and tests; images are not pulled) or "
                   "slurm (a Slurm cluster through slurmrestd)")
      ->check(CLI::IsMember({"sim", "local", "slurm"}))
      ->capture_default_str();
  serve_cmd->add_option("--slurm-url", serve.slurm_url,
                        "slurm runtime: slurmrestd's URL, http://HOST:PORT (openapi/v0.0.38)");
  serve_cmd
      ->add_option("--slurm-token-file", serve.slurm_token_file,
                   "slurm runtime: a file holding the JWT (`scontrol token` output or the bare "
                   "token), read again when it changes; default: SLURM_JWT from the environment")
      ->check(CLI::ExistingFile);
  serve_cmd->add_option("--slurm-user", serve.slurm_user,
                        "slurm runtime (required): the user jobs run as (X-SLURM-USER-NAME); only "
                        "this user's jobs are ever taken for Trainyard's");
  serve_cmd
      ->add_option("--slurm-ca-file", serve.slurm_ca_file,
                   "slurm runtime: the PEM CA of an https:// --slurm-url's certificate")
      ->check(CLI::ExistingFile);
  serve_cmd->add_option("--slurm-shared-dir", serve.slurm_shared_dir,
                        "slurm runtime: a directory this server and every node see at the same "
                        "path (replicas' working directories, exit codes and output); default: "
                        "<data dir>/slurm");
  serve_cmd
      ->add_option("--slurm-tasks-per-node", serve.slurm_tasks_per_node,
                   "slurm runtime: replicas per node (1 on a real cluster, as on Vertex; more on "
                   "a one-node test cluster)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_cmd
      ->add_option("--stop-grace", serve.stop_grace_seconds,
                   "local runtime: seconds between SIGTERM and SIGKILL when replicas are stopped")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--auth", serve.auth,
                   "tokens: every API call needs a bearer token (trainyard tokens create); off: "
                   "none, allowed only on a loopback --listen address. Default: off on loopback, "
                   "tokens elsewhere")
      ->check(CLI::IsMember({"tokens", "off"}));
  serve_cmd->add_option("--allowed-host", serve.allowed_hosts,
                        "with --auth=off: a Host name (besides localhost, 127.0.0.1 and ::1) "
                        "requests may be addressed to; any other is refused, so a web page cannot "
                        "reach this server through DNS rebinding. Repeatable");
  serve_cmd->add_flag("--allow-remote-command-execution", serve.allow_remote_commands,
                      "with --runtime=local on a non-loopback --listen: every holder of an editor "
                      "token may then run any command on this host as the replicas' user");
  serve_cmd->add_flag("--allow-unsandboxed-replicas", serve.allow_unsandboxed_replicas,
                      "with --runtime=local and --auth=tokens on a server that is not root: run "
                      "every project's replicas as the server's own user (they cannot be dropped "
                      "to trainyard-run), each able to read what that user may read");
  serve_cmd
      ->add_option("--rate-limit", serve.rate_limit,
                   "requests per second per caller (per token; without tokens, all callers "
                   "together), bursts of twice that; more get 429 "
                   "RESOURCE_EXHAUSTED with RetryInfo and Retry-After (0: unlimited)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve_cmd
      ->add_option("--create-rate-limit", serve.create_rate_limit,
                   "creates (jobs, persistent resources) per second per project, bursts of twice "
                   "that, so one team cannot starve the others (0: unlimited)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option* tls_cert =
      serve_cmd
          ->add_option("--tls-cert", serve.tls_cert,
                       "PEM certificate chain: serve HTTPS only, TLS 1.2 or later (with --tls-key)")
          ->check(CLI::ExistingFile);
  serve_cmd->add_option("--tls-key", serve.tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile)
      ->needs(tls_cert);
  tls_cert->needs(serve_cmd->get_option("--tls-key"));
  serve_cmd->add_option("--metrics-listen", serve.metrics_listen,
                        "host:port of a second listener that serves GET /metrics alone");
  serve_cmd->add_option("--log-level", serve.log_level, "the least severe log lines written")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->capture_default_str();
  serve_cmd->add_flag("--debug", serve.debug, "the same as --log-level=debug");
  trainyard::cmd::AddServeLifecycleFlags(*serve_cmd, serve);

  trainyard::cmd::MigrateOptions migrate;
  CLI::App* migrate_cmd =
      app.add_subcommand("migrate", "Apply migrations/NNNN_*.sql to the database and exit");
  migrate_cmd->add_option("--data-dir", migrate.data_dir, "embedded PostgreSQL directory")
      ->capture_default_str();
  migrate_cmd->add_option("--database-url", migrate.database_url, "external PostgreSQL");

  trainyard::cmd::CommandRun client_run;
  trainyard::cmd::AddJobsCommand(app, &client_run);
  trainyard::cmd::AddOpsCommand(app, &client_run);
  trainyard::cmd::AddResourcesCommand(app, &client_run);
  trainyard::cmd::AddTokensCommand(app, &client_run);
  trainyard::cmd::AddSimulateCommand(app, &client_run);
  trainyard::cmd::AddVerbHelp(app);  // after every verb: it lists them and adds their examples

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every real parse error is a usage error.
    return app.exit(e) == 0 ? 0 : trainyard::cmd::kExitUsage;
  }
  if (serve_cmd->parsed()) return trainyard::cmd::RunServe(serve);
  if (migrate_cmd->parsed()) return trainyard::cmd::RunMigrate(migrate);
  if (client_run) return client_run();
  return trainyard::cmd::kExitUsage;
}
