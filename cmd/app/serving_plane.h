#pragma once
// A server as `serve` runs it, assembled from its checked flags: the API's listener, the database,
// the runtime its registry entry makes, the control plane with the roles this process runs, the
// what-if runs and /metrics. Start brings them up in that order; they go down in the reverse one.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/api_service.h"
#include "api/http_server.h"
#include "cmd/app/control_plane.h"
#include "cmd/app/metrics_listener.h"
#include "cmd/app/pg_adapters.h"
#include "cmd/app/runtime_registry.h"
#include "cmd/app/serve_flags.h"
#include "cmd/app/serve_options.h"
#include "services/clock.h"
#include "services/fleet/fleet.h"
#include "services/metrics/registry.h"
#include "services/request_gauge.h"
#include "services/whatif/whatif_service.h"
#include "storage/database.h"

namespace trainyard::app {

// Why a server did not start: the event its log line names and the error.
struct StartFailure {
  std::string event;
  Status status;
};

class ServingPlane {
 public:
  // `options` (its fleet and what-if directory set) and `runtimes` must outlive it; nothing runs
  // until Start.
  ServingPlane(const ServeOptions& options, ServeFlags flags, const RuntimeRegistry& runtimes,
               Fleet fleet, std::string database_url);
  ~ServingPlane();
  ServingPlane(const ServingPlane&) = delete;
  ServingPlane& operator=(const ServingPlane&) = delete;

  // The API listens first, so /healthz answers while PostgreSQL starts (logged `listening`); then
  // the database is opened and migrated, the runtime made, the control plane built and its roles
  // started, and /metrics served (logged `ready`). The first failure stops it there: what started
  // stops with this object, after the caller has logged it. An external database is waited for
  // (ServeOptions::database_wait_seconds) until `stop_asked` says true.
  std::optional<StartFailure> Start(std::function<bool()> stop_asked = {});
  // /readyz says 503 from now on, while the listeners still answer. The scheduler's lead and the
  // job leases go at once: a stopped server ends its replicas (a killed one leaves them to be
  // adopted on restart).
  void BeginDrain();
  // Closes the listeners, each giving the requests in flight up to `drain`, then the job change
  // feed, then the database.
  Status Close(std::chrono::milliseconds drain);

 private:
  bool Runs(const char* role) const;
  ControlPlaneOptions PlaneOptions(const RuntimeBundle& runtime);
  void LogReady() const;

  const ServeOptions& options_;
  const ServeFlags flags_;
  const RuntimeRegistry& runtimes_;
  Fleet fleet_;
  const std::string database_url_;
  RequestGauge writes_in_flight_;
  // Readiness: the database answers and is migrated, and we are not draining.
  std::atomic<pg::Pool*> ready_pool_{nullptr};
  std::atomic<bool> draining_{false};
  metrics::Registry metrics_;  // before the API, which serves it, and outlives it
  api::ApiService api_;
  std::unique_ptr<api::HttpServer> server_;
  std::optional<storage::Database> db_;
  std::unique_ptr<ScaledClock> clock_;
  std::unique_ptr<PgAdapters> adapters_;
  RuntimeBundle runtime_;  // with the capacity reader the control plane reads: outlives it
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<WhatIfService> whatif_;
  std::unique_ptr<MetricsListener> metrics_listener_;
};

}  // namespace trainyard::app
