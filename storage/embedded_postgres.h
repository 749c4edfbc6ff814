#pragma once
// The private PostgreSQL that `trainyard serve` runs when no --database-url is given: initdb on the
// first start, the same cluster on every later start, stopped with the server. The cluster lives in
// data_dir/pg, except when root runs it for a data directory the postgres user cannot reach. It
// listens only on a unix socket in a private directory (no TCP), asks every connection for a
// password (SCRAM; the secret in a 0600 password file of the server's, embedded_pg_secret.h), and
// runs as the `postgres` OS user when we are root because initdb and postgres refuse to run as
// root.
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "services/status.h"

namespace trainyard {

class EmbeddedPostgres {
 public:
  struct Options {
    std::string data_dir;  // the server's --data-dir; the cluster lives in data_dir/pg
    // false: fsync, synchronous_commit and full_page_writes off. Only for tests and throwaway runs:
    // a crash of the machine (not of the process) can then corrupt the cluster.
    bool durable = true;
    std::string bin_dir = "/usr/lib/postgresql/15/bin";
  };

  // Starts the cluster (creating it first if needed), or adopts the postmaster a previous
  // incarnation left running on the same directory (after kill -9), waits until it accepts
  // connections and creates the `trainyard` database if missing.
  static StatusOr<std::unique_ptr<EmbeddedPostgres>> Start(const Options& options);

  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;
  // Stops the server if Stop() was not called.
  ~EmbeddedPostgres();

  // libpq keyword string for the `trainyard` database, over the private socket.
  std::string conninfo() const { return conninfo_for("trainyard"); }
  // The same for any database of this cluster (tests use `postgres` and template databases).
  std::string conninfo_for(std::string_view dbname) const;

  // pg_ctl stop -m fast -w: open sessions are disconnected, the cluster shuts down cleanly.
  // Idempotent.
  Status Stop();
  // Leaves the cluster running for the other processes that use it: neither Stop() nor the
  // destructor will stop it from now on.
  void LeaveRunning() { running_ = false; }

  const std::string& socket_dir() const { return socket_dir_; }
  int port() const { return kPort; }
  // The postmaster's process id, as recorded in postmaster.pid.
  int postmaster_pid() const;
  // True when Start() found the postmaster already running and adopted it.
  bool adopted() const { return adopted_; }
  // Where the cluster lives: data_dir/pg, or (root, with a data directory the postgres user cannot
  // reach, such as a clone in /root) a directory under kRelocatedClusters.
  const std::string& cluster_dir() const { return pg_dir_; }
  static constexpr const char* kRelocatedClusters = "/var/lib/trainyard/clusters";

  // Nothing else listens on our private socket directory, so the conventional port is safe; it
  // only names the socket file (.s.PGSQL.5432).
  static constexpr int kPort = 5432;

 private:
  explicit EmbeddedPostgres(Options options) : options_(std::move(options)) {}
  Status DoStart();
  static StatusOr<std::string> RelocatedClusterDir(const std::string& data_dir);

  Options options_;
  std::string pg_dir_;   // data_dir/pg
  std::string pgdata_;   // data_dir/pg/data
  std::string log_dir_;  // data_dir/pg/log
  std::string socket_dir_;
  std::string passfile_;          // the libpq password file every conninfo names
  bool temp_socket_dir_ = false;  // a mkdtemp dir under /tmp that Stop() removes
  bool as_postgres_user_ = false;
  bool adopted_ = false;
  bool running_ = false;
};

}  // namespace trainyard
