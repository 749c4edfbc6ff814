#pragma once
// Maps (method, path) to a handler. Patterns are segment lists with {captures}; the last segment
// may carry a custom verb (":cancel"). The version prefix (v1, v1beta1, ui) is one capture, so
// every API path is served under all three without a second table.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/http_types.h"
#include "api/request_metrics.h"
#include "services/auth/access.h"
#include "services/status.h"

namespace trainyard::api {

struct RouteMatch {
  std::map<std::string, std::string> params;  // capture name → segment
  Access access = Access::kPublic;            // what the route needs
  // The permission the request exercises, in Vertex's form ("aiplatform.customJobs.create"),
  // derived from the route: the service, the collection, and the verb.
  std::string permission;
  RouteStats* stats = nullptr;  // the route's request figures
};

// A handler answers, or fails with a typed Status; ApiService::Route turns every failure into the
// Vertex error body (api/error_body.h) at one place, so handlers only propagate.
using RouteHandler = std::function<StatusOr<HttpResponse>(const HttpRequest&, const RouteMatch&)>;

// A route as it was registered: what the API description (api/openapi.json) is checked against.
struct RouteInfo {
  std::string method;
  std::string pattern;  // as given to Add, custom verb included
  Access access = Access::kPublic;
};

class Router {
 public:
  // pattern like "/{version}/projects/{project}/locations/{location}/customJobs/{job}:cancel".
  // Every route states its access: the request pipeline checks it before the handler runs.
  void Add(std::string method, const std::string& pattern, Access access, RouteHandler handler);
  // nullptr when nothing matches; `path_matched` tells a wrong method from an unknown path.
  const RouteHandler* Match(const std::string& method, const std::string& path, RouteMatch& match,
                            bool& path_matched) const;
  std::vector<const RouteStats*> Stats() const;
  // Every route, in the order it was added.
  std::vector<RouteInfo> Routes() const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    std::string verb;
    Access access = Access::kPublic;
    std::string permission;
    RouteHandler handler;
    std::unique_ptr<RouteStats> stats;
  };
  std::vector<Route> routes_;
};

}  // namespace trainyard::api
