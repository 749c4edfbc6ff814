#pragma once
// serve's flags as parsed (cmd/main.cpp declares them): what the composition root assembles a
// server from (cmd/app/serving_plane.h).
#include <cstdint>
#include <string>
#include <vector>

namespace trainyard::app {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = ".trainyard";
  std::string database_url;
  // A file holding the URL instead (0600; any process of the host can read a command line).
  std::string database_url_file;
  // How long start-up waits for an external database that refuses connections for now (not up
  // yet, starting, recovering); 0: it exits on the first refusal. storage/database_wait.h.
  double database_wait_seconds = 60;
  double sim_speed = 1.0;
  int http_threads = 16;
  int db_pool = 8;
  int lease_seconds = 30;
  std::string fleet;  // fleet file; empty: payloads/fleets/default.json of the source tree
  // The scenarios the console's what-if page may run; empty: payloads/simulate of the source tree.
  std::string whatif_dir;
  // Which parts run in this process: api, scheduler, executor. Scale-out runs many api processes
  // and scheduler/executor ones on one PostgreSQL; the scheduler leads by advisory lock.
  std::vector<std::string> roles = {"api", "scheduler", "executor"};
  // The scheduler's knobs as NAME=VALUE, by a scenario's names (holdAfter=0s,
  // requeueTimestamp=Eviction; services/scheduler/scheduler_knobs.h); unset ones keep their
  // default.
  std::vector<std::string> scheduler_knobs;
  bool debug = false;              // the same as log_level "debug"
  std::string log_level = "info";  // debug, info, warn, error
  std::string metrics_listen;      // host:port of a listener serving /metrics alone; "": none
  // Replica lines kept per job: the first half and the newest half; those between are dropped and
  // counted (services/logs/job_log_repository.h).
  int64_t log_lines_per_job = 10000;
  // Polled jobs the API keeps in memory, dropped when any server on the database changes them
  // (storage/job_record_cache.h); 0: every poll reads the database.
  int64_t job_cache_entries = 10000;
  // What runs the replicas: "sim" (the simulator), "local" (processes of this host) or "slurm"
  // (a Slurm cluster through slurmrestd).
  std::string runtime = "sim";
  double stop_grace_seconds = 10;  // local: SIGTERM, then SIGKILL after this
  std::string slurm_url;           // http://host:port of slurmrestd
  std::string slurm_token_file;    // or SLURM_JWT in the environment
  std::string slurm_user;          // whom jobs run as: required with --runtime=slurm
  std::string slurm_ca_file;       // https slurmrestd: the CA of its certificate
  // Seen by this server and every node at the same path; "": <data dir>/slurm.
  std::string slurm_shared_dir;
  int slurm_tasks_per_node = 1;
  double slurm_capacity_seconds = 10;  // how often the cluster's nodes are read
  // "tokens", "off", or "" for the default: off on a loopback address, tokens elsewhere.
  std::string auth;
  // Without tokens, Host names accepted besides the loopback ones (DNS rebinding defence).
  std::vector<std::string> allowed_hosts;
  // --runtime=local on a non-loopback --listen: every editor token may run commands here.
  bool allow_remote_commands = false;
  // --runtime=local with tokens on a server that is not root: every project's replicas then run
  // as the server's own user (workers/local/replica_sandbox.h).
  bool allow_unsandboxed_replicas = false;
  // Requests per second per caller (per token; without tokens, all callers together; all routes
  // but health checks), and creates per second per project; 0: unlimited. Bursts of twice the
  // rate pass.
  double rate_limit = 0;
  double create_rate_limit = 0;
  // PEM files; both given: HTTPS only (TLS 1.2 or later).
  std::string tls_cert;
  std::string tls_key;
  // After SIGTERM, seconds the API still accepts and answers while /readyz says 503, so a load
  // balancer polling it moves traffic away before the port closes; 0: it closes at once.
  double drain_period_seconds = 5;
  // Connections the API listener keeps open at once (api/http_server.h).
  int max_connections = 4096;
};

}  // namespace trainyard::app
