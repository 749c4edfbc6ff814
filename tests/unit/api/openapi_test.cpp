// The API's description (api/openapi.json, served at GET /openapi.json) against the routes the
// server really has: every route is described, every described operation is a route, each with the
// access its route needs. A route added without its description, or a description left behind by
// a removed route, fails here, naming it.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api_service.h"
#include "services/metrics/registry.h"
#include "services/whatif/whatif_service.h"
#include "tests/unit/memory_plane.h"

namespace trainyard::api {
namespace {

using json = nlohmann::json;

constexpr const char* kFleet = R"({"zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 1}]}]})";

constexpr const char* kMethods[] = {"get",     "put",  "post",  "delete",
                                    "options", "head", "patch", "trace"};

// Only the routes are looked at: no what-if run is ever started.
struct NoWhatIfRuns : WhatIfRunner {
  StatusOr<std::unique_ptr<WhatIfExecution>> Stage(const std::vector<std::string>&,
                                                   const std::optional<WhatIfUpload>&,
                                                   std::optional<uint64_t>) override {
    return Unimplemented("no what-if runs in this test");
  }
};

// The x-trainyard-access spelling of each Access (services/auth/access.h).
std::string AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kProjectViewer:
      return "project-viewer";
    case Access::kProjectEditor:
      return "project-editor";
    case Access::kProjectAdmin:
      return "project-admin";
    case Access::kFleetAdmin:
      return "fleet-admin";
    case Access::kMetrics:
      return "metrics";
  }
  return "?";
}

// "POST /{version}/…/customJobs/{job}:cancel". The router's templates are already OpenAPI's: a
// {name} capture is a path parameter, and a custom verb is part of the literal path.
std::string Key(const std::string& method, const std::string& path) { return method + " " + path; }

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Listed(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += "\n  " + k;
  return out;
}

// The server as `serve` builds it (cmd/serve.cpp), over memory: every optional service is set, so
// every route `serve` can register is registered.
class OpenApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = world_.Start(kFleet, "openapi-test");
    ASSERT_TRUE(started.ok()) << started.message();
    whatif_ = std::make_unique<WhatIfService>(std::vector<std::string>{"on-demand"},
                                              std::make_unique<NoWhatIfRuns>(),
                                              [this] { return world_.clock.Now(); });
    api_ = std::make_unique<ApiService>([] { return Status::Ok(); });
    ApiService::Services services{world_.plane->jobs(),
                                  world_.plane->operations(),
                                  world_.plane->resources(),
                                  world_.plane->admin(),
                                  &world_.plane->injector(),
                                  &world_.plane->logs(),
                                  &world_.plane->tokens(),
                                  RateLimit{},
                                  RateLimit{},
                                  &metrics_,
                                  &world_.plane->utilization(),
                                  world_.memory.ports().projects};
    services.whatif = whatif_.get();
    api_->Attach(services);
    ASSERT_NO_FATAL_FAILURE(document_ = Served());
  }

  // GET /openapi.json without a token, though this server asks for tokens.
  json Served() {
    HttpRequest request;
    request.method = "GET";
    request.path = "/openapi.json";
    HttpResponse response = api_->Handle(request);
    EXPECT_EQ(response.status, 200) << response.body;
    EXPECT_TRUE(response.content_type.starts_with("application/json")) << response.content_type;
    json doc = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << "the served document is not JSON";
    return doc;
  }

  // Each described operation by "METHOD path", with its path item.
  std::map<std::string, std::pair<const json*, const json*>> Operations() const {
    std::map<std::string, std::pair<const json*, const json*>> out;
    for (const auto& [path, item] : document_.at("paths").items()) {
      for (const char* method : kMethods) {
        if (item.contains(method)) out[Key(Upper(method), path)] = {&item, &item.at(method)};
      }
    }
    return out;
  }

  // A parameter, or the one its $ref names.
  const json& Resolved(const json& parameter) const {
    if (!parameter.contains("$ref")) return parameter;
    std::string pointer = parameter.at("$ref").get<std::string>().substr(1);  // drop the '#'
    return document_.at(json::json_pointer(pointer));
  }

  metrics::Registry metrics_;  // outlives the API, which registers with it
  testing::MemoryPlane world_;
  std::unique_ptr<WhatIfService> whatif_;
  std::unique_ptr<ApiService> api_;
  json document_;
};

TEST_F(OpenApiTest, TheServedDocumentIsOpenApi3WithPaths) {
  ASSERT_TRUE(document_.is_object());
  ASSERT_TRUE(document_.contains("openapi"));
  EXPECT_TRUE(document_.at("openapi").get<std::string>().starts_with("3."));
  ASSERT_TRUE(document_.contains("paths"));
  EXPECT_TRUE(document_.at("paths").is_object());
  EXPECT_FALSE(document_.at("paths").empty());
}

TEST_F(OpenApiTest, EveryRouteIsDescribedAndEveryDescribedOperationIsARoute) {
  std::set<std::string> routes;
  for (const RouteInfo& route : api_->Routes()) routes.insert(Key(route.method, route.pattern));
  std::set<std::string> described;
  for (const auto& [key, operation] : Operations()) described.insert(key);

  std::set<std::string> undescribed, unrouted;
  for (const std::string& r : routes) {
    if (!described.contains(r)) undescribed.insert(r);
  }
  for (const std::string& d : described) {
    if (!routes.contains(d)) unrouted.insert(d);
  }
  EXPECT_TRUE(undescribed.empty())
      << "routes missing from api/openapi.json:" << Listed(undescribed);
  EXPECT_TRUE(unrouted.empty()) << "operations in api/openapi.json that no route serves:"
                                << Listed(unrouted);
  EXPECT_EQ(routes.size(), api_->Routes().size()) << "a route is registered twice";
}

TEST_F(OpenApiTest, EachOperationStatesTheAccessItsRouteNeeds) {
  const auto operations = Operations();
  for (const RouteInfo& route : api_->Routes()) {
    auto it = operations.find(Key(route.method, route.pattern));
    if (it == operations.end()) continue;  // the test above names it
    const json& operation = *it->second.second;
    EXPECT_EQ(operation.value("x-trainyard-access", ""), AccessName(route.access)) << it->first;
    // Public routes say so to clients: no security requirement, overriding the document's.
    const bool open = operation.contains("security") && operation.at("security").empty();
    EXPECT_EQ(open, route.access == Access::kPublic) << it->first;
  }
}

TEST_F(OpenApiTest, EveryPathParameterIsDeclaredAndEveryDeclaredOneIsInThePath) {
  const std::regex capture(R"(\{([^}]+)\})");
  for (const auto& [key, found] : Operations()) {
    const auto& [item, operation] = found;
    const std::string path = key.substr(key.find(' ') + 1);
    std::set<std::string> in_path;
    for (auto m = std::sregex_iterator(path.begin(), path.end(), capture);
         m != std::sregex_iterator(); ++m) {
      in_path.insert((*m)[1]);
    }
    std::set<std::string> declared;
    for (const json* owner : {item, operation}) {
      for (const json& p : owner->value("parameters", json::array())) {
        const json& parameter = Resolved(p);
        if (parameter.at("in") == "path") declared.insert(parameter.at("name").get<std::string>());
      }
    }
    EXPECT_EQ(declared, in_path) << key;
  }
}

TEST_F(OpenApiTest, EveryErrorIsTheVertexErrorBodyAndEveryReferenceResolves) {
  for (const auto& [key, found] : Operations()) {
    const json& responses = found.second->at("responses");
    EXPECT_TRUE(responses.contains("200")) << key;
    const json& fallback = responses.value("default", json::object());
    EXPECT_EQ(fallback.value("$ref", ""), "#/components/responses/Error") << key;
  }
  std::vector<const json*> pending = {&document_};
  while (!pending.empty()) {
    const json& node = *pending.back();
    pending.pop_back();
    if (node.is_object() && node.contains("$ref") && node.at("$ref").is_string()) {
      const std::string target = node.at("$ref").get<std::string>();
      ASSERT_TRUE(target.starts_with("#/")) << target;
      EXPECT_TRUE(document_.contains(json::json_pointer(target.substr(1))))
          << "dangling reference " << target;
    }
    if (node.is_structured()) {
      for (const json& child : node) pending.push_back(&child);
    }
  }
}

}  // namespace
}  // namespace trainyard::api
