#pragma once
// The HTTP exchange as our code sees it: plain values, no cpprestsdk types. The server seam
// (http_server.h) converts at the edge, so the listener can be replaced without touching handlers.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "services/auth/access.h"
#include "services/status.h"

namespace trainyard::api {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // decoded path, without the query
  std::map<std::string, std::string> query;    // decoded; last value wins
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::string request_id;
  // Set by the pipeline when tokens are on: whether the caller may use this route on a project
  // that the body names rather than the path (Cloud Logging's resourceNames). Unset: any project.
  std::function<Status(const std::string& project)> project_access;
  // Who is asking, once the pipeline authenticated them; none without tokens (every caller may do
  // everything).
  std::optional<Principal> principal;

  Status AllowProject(const std::string& project) const {
    return project_access ? project_access(project) : Status::Ok();
  }

  const std::string* Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? nullptr : &it->second;
  }
  const std::string* Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? nullptr : &it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=UTF-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close_connection = false;
};

}  // namespace trainyard::api
