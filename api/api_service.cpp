#include "api/api_service.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "api/console_handler.h"
#include "api/error_body.h"
#include "api/json_body.h"
#include "api/openapi_handler.h"
#include "services/log.h"

namespace trainyard::api {
namespace {

bool IsApiVersion(const std::string& v) { return v == "v1" || v == "v1beta1" || v == "ui"; }

}  // namespace

std::string RequestIdFor(const HttpRequest& request) {
  if (const std::string* given = request.Header("x-request-id")) {
    bool ok = !given->empty() && given->size() <= 64;
    for (char c : *given) {
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
    }
    if (ok) return *given;
  }
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

ApiService::ApiService(ReadinessProbe readiness, RequestGuardOptions guard)
    : readiness_(std::move(readiness)), guard_(std::move(guard)) {
  health_router_.Add("GET", "/healthz", Access::kPublic,
                     [](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
                       return JsonResponse({{"status", "ok"}});
                     });
  health_router_.Add("GET", "/readyz", Access::kPublic,
                     [this](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
                       Status ready = readiness_();
                       if (!ready.ok()) return Unavailable("not ready: " + ready.message());
                       return JsonResponse({{"status", "ready"}});
                     });
  // Here rather than with the API's routes: it answers while the server starts, and needs no
  // token, as it describes the routes and holds no data.
  health_router_.Add("GET", "/openapi.json", Access::kPublic, ServeOpenApi);
}

std::vector<RouteInfo> ApiService::Routes() const {
  std::vector<RouteInfo> routes = health_router_.Routes();
  if (const Resources* r = resources_.load(std::memory_order_acquire); r != nullptr) {
    for (RouteInfo& route : r->router.Routes()) routes.push_back(std::move(route));
  }
  return routes;
}

void ApiService::Attach(const Services& services) {
  resources_owner_ = std::make_unique<Resources>(services);
  Resources& r = *resources_owner_;
  FaultInjector* injector = services.injector;
  JobLogService* logs = services.logs;
  r.tokens = services.tokens;
  r.projects = services.projects;
  r.custom_jobs.Register(r.router);
  r.operations.Register(r.router);
  r.persistent_resources.Register(r.router);
  r.job_events.Register(r.router);
  r.fleet.Register(r.router);
  r.nodes.Register(r.router);
  r.reservations.Register(r.router);
  r.queues.Register(r.router);
  r.costs.Register(r.router);
  r.session.Register(r.router);
  if (injector != nullptr) {
    r.injections = std::make_unique<FleetInjectionHandler>(*injector);
    r.injections->Register(r.router);
  }
  if (services.utilization != nullptr) {
    r.utilization = std::make_unique<JobUtilizationHandler>(*services.utilization);
    r.utilization->Register(r.router);
  }
  if (logs != nullptr) {
    r.job_logs = std::make_unique<JobLogHandler>(*logs);
    r.job_logs->Register(r.router);
    r.logging = std::make_unique<LoggingHandler>(*logs);
    r.logging->Register(r.router);
  }
  if (services.whatif != nullptr) {
    r.whatif = std::make_unique<WhatIfHandler>(*services.whatif);
    r.whatif->Register(r.router);
  }
  if (services.metrics != nullptr) {
    metrics::Registry* registry = services.metrics;
    r.router.Add("GET", "/metrics", Access::kMetrics,
                 [registry](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
                   HttpResponse response;
                   response.content_type = std::string(metrics::kContentType);
                   response.body = registry->Render();
                   return response;
                 });
    registry->Add([this](metrics::Exposition& e) {
      Collect(e);
      return Status::Ok();
    });
  }
  resources_.store(resources_owner_.get(), std::memory_order_release);
}

void ApiService::Collect(metrics::Exposition& e) const {
  std::vector<const RouteStats*> routes = health_router_.Stats();
  if (const Resources* r = resources_.load(std::memory_order_acquire); r != nullptr) {
    for (const RouteStats* s : r->router.Stats()) routes.push_back(s);
  }
  routes.push_back(&unmatched_);
  WriteRequestFamilies(routes, e);
}

namespace {

// Where a handler's typed error becomes HTTP: the one mapping of Status to the Vertex error body.
HttpResponse Answer(StatusOr<HttpResponse> answered, const HttpRequest& request) {
  if (!answered.ok()) return ErrorResponse(answered.status(), request.request_id);
  return std::move(answered).value();
}

}  // namespace

StatusOr<Principal> ApiService::Admit(HttpRequest& request, const RouteMatch& match,
                                      TokenService& tokens) const {
  TY_ASSIGN_OR_RETURN(Principal principal,
                      tokens.Authenticate(request.Header("authorization"), request.request_id));
  auto project = match.params.find("project");
  if (project != match.params.end() || match.access == Access::kFleetAdmin ||
      match.access == Access::kMetrics) {
    TY_RETURN_IF_ERROR(Authorize(principal, match.access,
                                 project == match.params.end() ? "" : project->second,
                                 match.permission));
  } else if (!RoleCovers(principal, match.access)) {
    TY_RETURN_IF_ERROR(Authorize(principal, match.access, "", match.permission));
  }
  request.principal = principal;
  request.project_access = [principal, access = match.access,
                            permission = match.permission](const std::string& named) {
    return Authorize(principal, access, named, permission);
  };
  return principal;
}

std::string ApiService::CreateBucketOf(const Resources& resources, const std::string& project) {
  // A project id starts with a letter; a path may name the project by its number instead. Both
  // are one project, and so one budget: keyed by the id (a number is resolved, once per process).
  const bool number = !project.empty() && std::all_of(project.begin(), project.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!number || resources.projects == nullptr) return project;
  auto resolved = resources.projects->Resolve(project, /*create_if_missing=*/false);
  return resolved.ok() ? resolved->id : project;
}

std::optional<HttpResponse> ApiService::OverLimit(RateLimiter& limiter, const std::string& key,
                                                  const std::string& what,
                                                  const HttpRequest& request) {
  const std::chrono::microseconds wait = limiter.Take(key, RateLimiter::Clock::now());
  if (wait.count() == 0) return std::nullopt;
  char delay[32];
  std::snprintf(delay, sizeof(delay), "%.3fs", static_cast<double>(wait.count()) / 1e6);
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%g per second", limiter.limit().per_second);
  Status status(Code::kResourceExhausted,
                "Quota exceeded: " + what + " are limited to " + rate + "; retry after " + delay);
  return RetryLaterResponse(std::move(status), wait, request.request_id);
}

HttpResponse ApiService::Route(HttpRequest& request, RouteMatch& match) {
  if (std::optional<HttpResponse> console = ServeConsole(request)) return *std::move(console);
  bool path_matched = false;
  const RouteHandler* handler =
      health_router_.Match(request.method, request.path, match, path_matched);
  if (handler != nullptr) return Answer((*handler)(request, match), request);
  Resources* resources = resources_.load(std::memory_order_acquire);
  if (resources == nullptr) {
    // Nothing was done: clients may send it again, creates included (`jobs create --wait`
    // right after `make run`).
    return RetryLaterResponse(Unavailable("the server is starting; retry shortly"),
                              std::chrono::milliseconds(500), request.request_id);
  }
  handler = resources->router.Match(request.method, request.path, match, path_matched);
  auto version = match.params.find("version");
  if (handler == nullptr || (version != match.params.end() && !IsApiVersion(version->second))) {
    std::string what = request.method + " " + request.path;
    match = RouteMatch{};  // counted and logged as unmatched: a path is not a route
    return ErrorResponse(NotFound(path_matched ? "method not allowed: " + what
                                               : "no such resource or method: " + what),
                         request.request_id);
  }
  // Authentication first, then each caller's own request budget: one token cannot spend
  // another's. A refused credential costs no query (TokenService caches unknown ids too).
  std::string caller;  // without tokens every caller is one
  if (resources->tokens != nullptr && match.access != Access::kPublic) {
    auto principal = Admit(request, match, *resources->tokens);
    if (!principal.ok()) return DeniedResponse(principal.status(), request.request_id);
    caller = std::to_string(principal->token_id);
  }
  if (auto over = OverLimit(resources->requests, caller, "requests by one caller", request)) {
    return *over;
  }
  // After authorization, so that nobody spends a project's budget without its token.
  if (auto project = match.params.find("project");
      project != match.params.end() && match.permission.ends_with(".create")) {
    if (auto over = OverLimit(resources->creates, CreateBucketOf(*resources, project->second),
                              "creates in project " + project->second, request)) {
      return *over;
    }
  }
  return Answer((*handler)(request, match), request);
}

HttpResponse ApiService::Handle(HttpRequest& request) {
  auto start = std::chrono::steady_clock::now();
  request.request_id = RequestIdFor(request);
  HttpResponse response;
  RouteMatch match;
  try {
    // Before routing: a refused request touches nothing, not even the rate limits.
    if (auto refused = GuardRequest(request, guard_)) {
      response = ErrorResponse(refused->status, request.request_id, refused->http_status);
    } else {
      response = Route(request, match);
    }
  } catch (const std::exception& e) {
    LogJson(LogLevel::kError, "handler_exception",
            {{"request_id", request.request_id}, {"what", e.what()}});
    response = ErrorResponse(Internal("internal error"), request.request_id);
  }
  response.headers.emplace_back("X-Request-Id", request.request_id);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const RouteStats& stats = match.stats != nullptr ? *match.stats : unmatched_;
  stats.Record(response.status, seconds);
  if (request.path != "/healthz" && request.path != "/readyz") {
    auto project = match.params.find("project");
    LogJson(LogLevel::kInfo, "http_request",
            {{"request_id", request.request_id},
             {"method", request.method},
             {"route", stats.route()},
             {"path", request.path},
             {"project", project == match.params.end() ? "" : project->second},
             {"status", response.status},
             {"ms", seconds * 1000}});
  }
  return response;
}

}  // namespace trainyard::api
