#pragma once
// The request pipeline: request id → route → handler → error rendering, with an access log line
// per request. Exceptions from a handler stop here and become a logged 500.
#include <atomic>
#include <functional>
#include <memory>

#include "api/admin_cost_handler.h"
#include "api/admin_fleet_handler.h"
#include "api/admin_node_handler.h"
#include "api/admin_queue_handler.h"
#include "api/admin_reservation_handler.h"
#include "api/custom_job_handler.h"
#include "api/fleet_injection_handler.h"
#include "api/http_server.h"
#include "api/job_event_handler.h"
#include "api/job_log_handler.h"
#include "api/job_utilization_handler.h"
#include "api/logging_handler.h"
#include "api/operation_handler.h"
#include "api/persistent_resource_handler.h"
#include "api/rate_limiter.h"
#include "api/request_guard.h"
#include "api/router.h"
#include "api/session_handler.h"
#include "api/whatif_handler.h"
#include "services/auth/token_service.h"
#include "services/jobs/job_service.h"
#include "services/metrics/registry.h"

namespace trainyard::api {

// Ready: the database answers and its schema is at head. Liveness needs nothing.
using ReadinessProbe = std::function<Status()>;

// The server listens before the database is up, so /healthz answers at once; the resource routes
// are attached once storage is ready and answer 503 UNAVAILABLE until then.
class ApiService {
 public:
  explicit ApiService(ReadinessProbe readiness, RequestGuardOptions guard = {});
  // `injector` (optional) serves the fleet's fault injection endpoints; `logs` (optional) the job
  // logs: /trainyard/v1/…/customJobs/{id}/logs and Cloud Logging's POST /v2/entries:list.
  struct Services {
    JobService& jobs;
    OperationService& operations;
    ResourceService& resources;
    AdminService& admin;
    FaultInjector* injector = nullptr;
    JobLogService* logs = nullptr;
    // Set: every route but the health checks needs a bearer token whose role covers the route's
    // access on the project it names (serve --auth=tokens). Null: no authentication.
    TokenService* tokens = nullptr;
    // Each caller's requests to this process (per token; without tokens, all of them), and each
    // project's creates (jobs and persistent resources); zero rates: unlimited.
    RateLimit requests;
    RateLimit creates_per_project;
    // Set: GET /metrics renders it (fleet-admin when tokens are on), and the request figures of
    // every route are part of it.
    metrics::Registry* metrics = nullptr;
    // Set: GET …/customJobs/{id}/utilization, the job's hosts' accelerator figures.
    UtilizationService* utilization = nullptr;
    // Set: a project's creates share one budget whether its path names the id or the number.
    ProjectRepository* projects = nullptr;
    // Set: the what-if runs under /trainyard/v1/whatif (fleet admins).
    WhatIfService* whatif = nullptr;
  };
  void Attach(const Services& services);
  HttpResponse Handle(HttpRequest& request);
  // Every route it answers: the health checks and GET /openapi.json from the start, the API's
  // once attached (what api/openapi.json is checked against). The console is served apart.
  std::vector<RouteInfo> Routes() const;
  Handler AsHandler() {
    return [this](HttpRequest& r) { return Handle(r); };
  }

 private:
  struct Resources {
    explicit Resources(const Services& s)
        : requests(s.requests),
          creates(s.creates_per_project),
          custom_jobs(s.jobs),
          operations(s.operations),
          persistent_resources(s.resources),
          job_events(s.admin),
          fleet(s.admin),
          nodes(s.admin),
          reservations(s.admin),
          queues(s.admin),
          costs(s.admin),
          session(s.projects, s.tokens != nullptr) {}
    Router router;
    RateLimiter requests;
    RateLimiter creates;
    CustomJobHandler custom_jobs;
    OperationHandler operations;
    PersistentResourceHandler persistent_resources;
    // The read-only admin view under /trainyard/v1/.
    JobEventHandler job_events;
    AdminFleetHandler fleet;
    AdminNodeHandler nodes;
    AdminReservationHandler reservations;
    AdminQueueHandler queues;
    AdminCostHandler costs;
    SessionHandler session;  // who the caller is, for the console
    std::unique_ptr<FleetInjectionHandler> injections;
    std::unique_ptr<JobUtilizationHandler> utilization;
    std::unique_ptr<JobLogHandler> job_logs;
    std::unique_ptr<LoggingHandler> logging;
    std::unique_ptr<WhatIfHandler> whatif;
    TokenService* tokens = nullptr;
    ProjectRepository* projects = nullptr;
  };

  // Fills `match` as far as routing got (empty when no route matched).
  HttpResponse Route(HttpRequest& request, RouteMatch& match);
  // trainyard_http_requests_total and trainyard_http_request_duration_seconds.
  void Collect(metrics::Exposition& e) const;
  // Authenticates the caller and authorizes the matched route; on success the request carries
  // the check for projects its body names.
  StatusOr<Principal> Admit(HttpRequest& request, const RouteMatch& match,
                            TokenService& tokens) const;
  // The create limiter's key for the project a path names: its id (a number is resolved to it).
  static std::string CreateBucketOf(const Resources& resources, const std::string& project);
  // The 429 of a request over `limiter`'s limit for `key`, or nothing when it is within it.
  static std::optional<HttpResponse> OverLimit(RateLimiter& limiter, const std::string& key,
                                               const std::string& what, const HttpRequest& request);

  Router health_router_;
  RouteStats unmatched_{"(unmatched)", "(any)"};  // not the client's method: it is unbounded
  ReadinessProbe readiness_;
  const RequestGuardOptions guard_;
  std::unique_ptr<Resources> resources_owner_;
  std::atomic<Resources*> resources_{nullptr};  // published once, after it is fully built
};

// X-Request-Id if it is [A-Za-z0-9._-]{1,64}, else 16 random bytes as hex.
std::string RequestIdFor(const HttpRequest& request);

}  // namespace trainyard::api
