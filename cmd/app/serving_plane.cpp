#include "cmd/app/serving_plane.h"

#include <algorithm>

#include "cmd/app/serve_api.h"
#include "cmd/app/serve_metrics.h"
#include "cmd/app/serve_whatif.h"
#include "services/log.h"
#include "storage/migrator.h"
#include "storage/sim_clock_store.h"

namespace trainyard::app {
namespace {

std::string JoinRoles(const std::vector<std::string>& roles) {
  std::string out;
  for (const auto& r : roles) out += (out.empty() ? "" : ",") + r;
  return out;
}

}  // namespace

ServingPlane::ServingPlane(const ServeOptions& options, ServeFlags flags,
                           const RuntimeRegistry& runtimes, Fleet fleet, std::string database_url)
    : options_(options),
      flags_(std::move(flags)),
      runtimes_(runtimes),
      fleet_(std::move(fleet)),
      database_url_(std::move(database_url)),
      writes_in_flight_(std::max(1, options.http_threads / 2)),
      api_(
          [this]() -> Status {
            if (draining_) return Unavailable("draining");
            pg::Pool* pool = ready_pool_.load();
            if (pool == nullptr) return Unavailable("database not migrated yet");
            return pool->Ping();
          },
          ListenerGuard(options, flags_, !options.tls_cert.empty())) {}

ServingPlane::~ServingPlane() = default;

std::optional<StartFailure> ServingPlane::Start(std::function<bool()> stop_asked) {
  server_ =
      api::NewHttpServer(ApiServerOptions(options_, flags_, writes_in_flight_), api_.AsHandler());
  if (Status s = server_->Start(); !s.ok()) return StartFailure{"listen_failed", s};
  LogJson(LogLevel::kInfo, "listening", {{"listen", options_.listen}});

  const storage::DatabaseWait wait{
      std::chrono::milliseconds(static_cast<int64_t>(options_.database_wait_seconds * 1000)),
      std::move(stop_asked)};
  auto db = storage::OpenDatabase(database_url_, options_.data_dir, options_.db_pool, wait);
  if (!db.ok()) return StartFailure{"database_failed", db.status()};
  db_ = std::move(db).value();
  if (Status s = storage::Migrate(*db_->pool); !s.ok()) return StartFailure{"migration_failed", s};
  auto clock = storage::LoadSimClock(*db_->pool, options_.sim_speed);
  if (!clock.ok()) return StartFailure{"sim_clock_failed", clock.status()};
  clock_ = std::move(clock).value();
  // The runtime's leases on a pool of their own, so its checkouts never wait behind requests';
  // two sessions: its loop holds one at a time, the other is headroom.
  if (Status s = storage::OpenBackgroundSessions(*db_, 2); !s.ok()) {
    return StartFailure{"database_failed", s};
  }
  // Polls are cached only where the API answers them.
  adapters_ = std::make_unique<PgAdapters>(
      *db_->pool, *db_->background_pool, db_->conninfo, db_->scheduler_session,
      JobLogRetention{options_.log_lines_per_job},
      Runs("api") ? static_cast<size_t>(options_.job_cache_entries) : 0);
  auto runtime = runtimes_.Make(options_.runtime, fleet_);
  if (!runtime.ok()) return StartFailure{"runtime_failed", runtime.status()};
  runtime_ = std::move(runtime).value();
  auto built = ControlPlane::Build(adapters_->ports(), fleet_, *clock_, *runtime_.runtime,
                                   PlaneOptions(runtime_));
  if (!built.ok()) return StartFailure{"fleet_sync_failed", built.status()};
  plane_ = std::move(built).value();
  whatif_ = MakeWhatIfService(options_.whatif_dir, *clock_);
  if (Runs("api")) {
    api_.Attach(ApiServices(*plane_, *adapters_, options_, flags_, metrics_, *whatif_));
  }
  ready_pool_ = db_->pool.get();
  plane_->Start(Runs("scheduler"), Runs("executor"));
  AddServeFamilies(metrics_, *plane_, *adapters_);
  if (flags_.metrics) {
    metrics_listener_ =
        std::make_unique<MetricsListener>(metrics_, flags_.tokens ? &plane_->tokens() : nullptr,
                                          ListenerGuard(options_, flags_, /*https=*/false));
    if (Status s = metrics_listener_->Start(*flags_.metrics); !s.ok()) {
      return StartFailure{"metrics_listen_failed", s};
    }
  }
  LogReady();
  return std::nullopt;
}

void ServingPlane::BeginDrain() {
  draining_ = true;
  if (plane_) plane_->Stop();
}

Status ServingPlane::Close(std::chrono::milliseconds drain) {
  if (metrics_listener_) metrics_listener_->Stop(drain);
  if (server_) server_->Stop(drain);
  if (adapters_) adapters_->StopChangeFeed();
  return db_ ? db_->CloseAfterServe() : Status::Ok();
}

bool ServingPlane::Runs(const char* role) const {
  return std::find(options_.roles.begin(), options_.roles.end(), role) != options_.roles.end();
}

ControlPlaneOptions ServingPlane::PlaneOptions(const RuntimeBundle& runtime) {
  ControlPlaneOptions plane;
  // A quarter of the request threads may wait on :wait; the rest stay for everything else.
  plane.operation_waiters = std::max(1, options_.http_threads / 4);
  plane.scheduler.simulated_startup = runtime.simulated_startup;
  plane.scheduler.config = flags_.scheduler;
  // On Slurm, the scheduler admits only onto nodes the cluster can run (read from slurmrestd).
  plane.external_capacity = runtime.capacity.get();
  // A queue's positions as a client polls them are at most a second old (chosen: a human reads
  // them; Kueue's were 5 s old), instead of a write of every moved one at each pass.
  plane.scheduler.positions_period = std::chrono::seconds(1);
  // Requests first: the scheduler's and the runtime's passes wait while half the writers' threads
  // or more are taken (chosen; Slurm's max_rpc_cnt, 150 of 256 threads, is a like share).
  plane.scheduler.deferral.requests = &writes_in_flight_;
  plane.executor.deferral.requests = &writes_in_flight_;
  // …and the runtime's never long enough to let its leases run out (its pass heartbeats them).
  plane.executor.deferral.max_defer = std::min<std::chrono::milliseconds>(
      plane.executor.deferral.max_defer, std::chrono::seconds(options_.lease_seconds) / 4);
  plane.executor.owner = DefaultExecutorOwner();
  plane.executor.lease = std::chrono::seconds(options_.lease_seconds);
  // A scheduler beside a runtime hands it what it admits (the claim's row write saved); the
  // runtimes of other processes still take what a dead one's leases leave, as they run out.
  if (Runs("scheduler") && Runs("executor")) {
    plane.scheduler.runtime_lease = LeaseGrant{plane.executor.owner, plane.executor.lease};
  }
  return plane;
}

void ServingPlane::LogReady() const {
  LogJson(LogLevel::kInfo, "ready",
          {{"listen", options_.listen},
           {"sim_speed", options_.sim_speed},
           {"embedded_postgres", db_->embedded ? db_->embedded->cluster_dir() : "no"},
           {"fleet", fleet_.name},
           {"roles", JoinRoles(options_.roles)},
           {"auth", flags_.auth()},
           {"tls", options_.tls_cert.empty() ? "off" : "on"},
           {"runtime", options_.runtime},
           {"pools", static_cast<int64_t>(fleet_.pools.size())}});
}

}  // namespace trainyard::app
