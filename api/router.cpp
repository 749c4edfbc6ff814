#include "api/router.h"

namespace trainyard::api {
namespace {

// Splits "/a/b/c:verb" into {"a","b","c"} and "verb". A ':' only counts in the last segment.
std::vector<std::string> SplitPath(const std::string& path, std::string& verb) {
  std::vector<std::string> segments;
  size_t start = path.empty() || path[0] != '/' ? 0 : 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  verb.clear();
  if (!segments.empty()) {
    std::string& last = segments.back();
    size_t colon = last.find(':');
    if (colon != std::string::npos) {
      verb = last.substr(colon + 1);
      last.resize(colon);
    }
  }
  return segments;
}

bool IsCapture(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// "aiplatform.customJobs.create": the API's service (the {version} routes are Vertex's), the
// last collection the pattern names, and the custom verb or the standard method's.
std::string PermissionOf(const std::string& method, const std::vector<std::string>& segments,
                         const std::string& verb) {
  std::string service = segments.empty() || IsCapture(segments[0]) ? "aiplatform"
                        : segments[0] == "v2"                      ? "logging"
                                                                   : segments[0];
  std::string collection;
  size_t last_literal = 0;
  for (size_t i = 1; i < segments.size(); ++i) {
    if (!IsCapture(segments[i])) {
      collection = segments[i];
      last_literal = i;
    }
  }
  const bool on_collection = last_literal + 1 == segments.size();
  std::string action = verb;
  if (action.empty()) {
    action = method == "GET"      ? (on_collection ? "list" : "get")
             : method == "POST"   ? "create"
             : method == "PATCH"  ? "update"
             : method == "DELETE" ? "delete"
                                  : method;
  }
  return service + "." + collection + "." + action;
}

}  // namespace

void Router::Add(std::string method, const std::string& pattern, Access access,
                 RouteHandler handler) {
  Route route;
  route.method = std::move(method);
  route.pattern = pattern;
  route.segments = SplitPath(pattern, route.verb);
  route.access = access;
  route.permission = PermissionOf(route.method, route.segments, route.verb);
  route.handler = std::move(handler);
  route.stats = std::make_unique<RouteStats>(pattern, route.method);
  routes_.push_back(std::move(route));
}

const RouteHandler* Router::Match(const std::string& method, const std::string& path,
                                  RouteMatch& match, bool& path_matched) const {
  std::string verb;
  std::vector<std::string> segments = SplitPath(path, verb);
  path_matched = false;
  for (const Route& route : routes_) {
    if (route.segments.size() != segments.size() || route.verb != verb) continue;
    RouteMatch candidate;
    bool ok = true;
    for (size_t i = 0; i < segments.size() && ok; ++i) {
      if (IsCapture(route.segments[i])) {
        if (segments[i].empty()) ok = false;
        candidate.params[route.segments[i].substr(1, route.segments[i].size() - 2)] = segments[i];
      } else {
        ok = route.segments[i] == segments[i];
      }
    }
    if (!ok) continue;
    path_matched = true;
    if (route.method != method) continue;
    match = std::move(candidate);
    match.access = route.access;
    match.permission = route.permission;
    match.stats = route.stats.get();
    return &route.handler;
  }
  return nullptr;
}

std::vector<const RouteStats*> Router::Stats() const {
  std::vector<const RouteStats*> out;
  for (const Route& route : routes_) out.push_back(route.stats.get());
  return out;
}

std::vector<RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  out.reserve(routes_.size());
  for (const Route& route : routes_) out.push_back({route.method, route.pattern, route.access});
  return out;
}

}  // namespace trainyard::api
