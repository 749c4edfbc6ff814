// The request pipeline on a real PostgreSQL. With --auth=tokens: who gets in (401 for every kind
// of bad credential), what a role may do in its own project, and that another project's resources
// are refused alike whether or not they exist, leaving the database as it was. With rate limits:
// a create over its project's limit is a 429 that says when to retry and wrote nothing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/api_service.h"
#include "services/admin/admin_service.h"
#include "services/auth/api_token.h"
#include "services/auth/token_service.h"
#include "services/logs/job_log_service.h"
#include "storage/pg_admin_store.h"
#include "storage/pg_job_log_store.h"
#include "storage/pg_token_store.h"
#include "tests/integration/sim_fixture.h"

namespace trainyard {
namespace {

using api::HttpRequest;
using api::HttpResponse;
using nlohmann::json;

constexpr const char* kFleet = R"({
  "zones": [{"zone": "us-central1-a", "pools": [
    {"machineType": "a3-highgpu-8g", "model": "ON_DEMAND", "nodes": 4}]}]})";

constexpr const char* kJob = R"({"displayName": "lora", "jobSpec": {"workerPoolSpecs": [{
  "machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
                  "acceleratorCount": 8},
  "replicaCount": "1", "containerSpec": {"imageUri": "us-docker.pkg.dev/demo/lora:1"}}]}})";

constexpr const char* kResource = R"({"resourcePools": [{"machineSpec": {
  "machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8},
  "replicaCount": "1"}]})";

class ApiServiceAuthTest : public testing::SimFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(kFleet));
    admin_store_ = std::make_unique<storage::PgAdminStore>(*pool_);
    admin_ = std::make_unique<AdminService>(*admin_store_, *projects_, fleet_, clock_);
    token_store_ = std::make_unique<storage::PgTokenStore>(*pool_);
    tokens_ = std::make_unique<TokenService>(*token_store_, *projects_, clock_);
    api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
    api_->Attach({*service_,
                  *operation_service_,
                  *resource_service_,
                  *admin_,
                  nullptr,
                  nullptr,
                  tokens_.get(),
                  {},
                  {}});
  }

  std::string Mint(const std::string& project, Role role, bool fleet_admin = false,
                   std::optional<Duration> lifetime = std::nullopt) {
    TokenRequest request;
    request.project = project;
    request.role = role;
    request.fleet_admin = fleet_admin;
    request.lifetime = lifetime;
    auto minted = tokens_->Create(request);
    EXPECT_TRUE(minted.ok()) << minted.status().message();
    return minted.ok() ? minted->token : "";
  }

  HttpResponse Call(const std::string& method, const std::string& path, const std::string& token,
                    const std::string& body = "") {
    HttpRequest request;
    request.method = method;
    request.path = path.substr(0, path.find('?'));
    if (size_t q = path.find('?'); q != std::string::npos) {
      const std::string param = path.substr(q + 1);
      request.query[param.substr(0, param.find('='))] = param.substr(param.find('=') + 1);
    }
    request.body = body;
    if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
    return api_->Handle(request);
  }

  static json Error(const HttpResponse& r) { return json::parse(r.body)["error"]; }

  int64_t Count(const char* table) {
    auto conn = pool_->Acquire();
    auto r = (*conn)->Exec(std::string("SELECT count(*) FROM ") + table);
    return r.ok() ? r->GetInt64(0, 0) : -1;
  }

  // A job in `project`, created by an editor of it; its resource name.
  std::string CreateJob(const std::string& project) {
    HttpResponse r = Call("POST", "/v1/projects/" + project + "/locations/us-central1/customJobs",
                          Mint(project, Role::kEditor), kJob);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body).value("name", "");
  }

  std::unique_ptr<storage::PgAdminStore> admin_store_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<storage::PgTokenStore> token_store_;
  std::unique_ptr<TokenService> tokens_;
  std::unique_ptr<api::ApiService> api_;
};

const std::string kJobs = "/v1/projects/team-a/locations/us-central1/customJobs";

TEST_F(ApiServiceAuthTest, EveryBadCredentialIsTheSame401WithTheVertexBody) {
  const std::string good = Mint("team-a", Role::kViewer);
  const std::string revoked = Mint("team-a", Role::kViewer);
  ASSERT_TRUE(tokens_->Revoke(ParseToken(revoked)->id).ok());
  const std::string expiring = Mint("team-a", Role::kViewer, false, std::chrono::hours(1));
  clock_.Advance(std::chrono::hours(1));
  std::string wrong_secret = good;
  wrong_secret.back() = wrong_secret.back() == 'A' ? 'B' : 'A';
  for (const std::string& header : std::vector<std::string>{
           "", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer not-a-token", "Bearer " + wrong_secret,
           "Bearer ty1_999_" + good.substr(good.size() - 43), "Bearer " + revoked,
           "Bearer " + expiring, "Bearer " + good + "'; DROP TABLE api_tokens;--"}) {
    HttpRequest request;
    request.method = "GET";
    request.path = kJobs;
    if (!header.empty()) request.headers["authorization"] = header;
    HttpResponse r = api_->Handle(request);
    EXPECT_EQ(r.status, 401) << header;
    EXPECT_EQ(Error(r)["status"], "UNAUTHENTICATED") << header;
    EXPECT_EQ(Error(r)["code"], 401);
    bool challenged = false;
    for (const auto& [name, value] : r.headers) challenged |= name == "WWW-Authenticate";
    EXPECT_TRUE(challenged) << header;
  }
  EXPECT_EQ(Call("GET", kJobs, good).status, 200);
  EXPECT_EQ(Count("api_tokens"), 3);
}

TEST_F(ApiServiceAuthTest, HealthChecksNeedNoToken) {
  EXPECT_EQ(Call("GET", "/healthz", "").status, 200);
  EXPECT_EQ(Call("GET", "/readyz", "").status, 200);
}

TEST_F(ApiServiceAuthTest, AViewerReadsButCannotWrite) {
  const std::string job = CreateJob("team-a");
  const std::string viewer = Mint("team-a", Role::kViewer);
  EXPECT_EQ(Call("GET", "/v1/" + job, viewer).status, 200);
  EXPECT_EQ(Call("GET", kJobs, viewer).status, 200);
  HttpResponse create = Call("POST", kJobs, viewer, kJob);
  EXPECT_EQ(create.status, 403);
  EXPECT_EQ(Error(create)["status"], "PERMISSION_DENIED");
  EXPECT_EQ(Error(create)["message"],
            "Permission 'aiplatform.customJobs.create' denied on resource 'projects/team-a' (or "
            "it may not exist).");
  EXPECT_EQ(Call("POST", "/v1/" + job + ":cancel", viewer).status, 403);
  EXPECT_EQ(Call("DELETE", "/v1/" + job, viewer).status, 403);
  EXPECT_EQ(Count("custom_jobs"), 1);
}

TEST_F(ApiServiceAuthTest, AnEditorRunsJobsButOnlyAnAdminManagesPersistentResources) {
  const std::string editor = Mint("team-a", Role::kEditor);
  const std::string admin = Mint("team-a", Role::kAdmin);
  const std::string resources = "/v1/projects/team-a/locations/us-central1/persistentResources";
  EXPECT_EQ(Call("POST", kJobs, editor, kJob).status, 200);
  EXPECT_EQ(Call("POST", resources + "?persistentResourceId=pool", editor, kResource).status, 403);
  EXPECT_EQ(Count("persistent_resources"), 0);
  HttpResponse created = Call("POST", resources + "?persistentResourceId=pool", admin, kResource);
  EXPECT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(Call("GET", resources + "/pool", editor).status, 200);
  EXPECT_EQ(Call("DELETE", resources + "/pool", editor).status, 403);
  EXPECT_EQ(Call("POST", resources + "/pool:reboot", editor).status, 403);
}

// Project B's job and a job that exists nowhere get the same answer, byte for byte: a token
// learns nothing about projects it does not belong to, and nothing there changes.
TEST_F(ApiServiceAuthTest, AnotherProjectIsRefusedAlikeWhetherOrNotItsResourceExists) {
  const std::string b_job = CreateJob("team-b");
  const std::string b_id = b_job.substr(b_job.rfind('/') + 1);
  const std::string a_admin = Mint("team-a", Role::kAdmin);
  const std::string b_jobs = "/v1/projects/team-b/locations/us-central1/customJobs";
  for (const auto& [method, path, body] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", b_jobs + "/" + b_id, ""},
           {"POST", b_jobs + "/" + b_id + ":cancel", ""},
           {"DELETE", b_jobs + "/" + b_id, ""},
           {"GET", b_jobs, ""},
           {"POST", b_jobs, kJob},
           {"GET", "/v1/" + b_job, ""}}) {
    HttpResponse real = Call(method, path, a_admin, body);
    std::string missing_path = path;
    if (size_t at = missing_path.find(b_id); at != std::string::npos) {
      missing_path.replace(at, b_id.size(), "999999");
    }
    HttpResponse missing = Call(method, missing_path, a_admin, body);
    EXPECT_EQ(real.status, 403) << method << " " << path;
    EXPECT_EQ(Error(real)["status"], "PERMISSION_DENIED");
    EXPECT_EQ(Error(real)["message"].get<std::string>().find(b_id), std::string::npos);
    EXPECT_EQ(missing.status, real.status) << method << " " << missing_path;
    EXPECT_EQ(Error(missing)["message"], Error(real)["message"]) << method << " " << path;
  }
  // Unknown projects too: the same words as for one that exists.
  HttpResponse unknown =
      Call("GET", "/v1/projects/no-such/locations/us-central1/customJobs", a_admin);
  EXPECT_EQ(unknown.status, 403);
  EXPECT_EQ(Count("custom_jobs"), 1);
  HttpResponse still = Call("GET", "/v1/" + b_job, Mint("team-b", Role::kViewer));
  EXPECT_EQ(json::parse(still.body)["state"], "JOB_STATE_QUEUED") << still.body;
}

TEST_F(ApiServiceAuthTest, AProjectIsReachableByItsNumberToo) {
  const std::string job = CreateJob("team-a");  // projects/<number>/locations/…
  EXPECT_EQ(Call("GET", "/v1/" + job, Mint("team-a", Role::kViewer)).status, 200);
}

TEST_F(ApiServiceAuthTest, TheFleetViewNeedsTheFleetAdmin) {
  const std::string project_admin = Mint("team-a", Role::kAdmin);
  const std::string fleet_admin = Mint("", Role::kViewer, /*fleet_admin=*/true);
  for (const char* path : {"/trainyard/v1/fleet", "/trainyard/v1/nodes",
                           "/trainyard/v1/reservations", "/trainyard/v1/queues"}) {
    HttpResponse denied = Call("GET", path, project_admin);
    EXPECT_EQ(denied.status, 403) << path;
    EXPECT_EQ(Call("GET", path, fleet_admin).status, 200) << path;
  }
  const std::string job = CreateJob("team-b");
  EXPECT_EQ(Call("GET", "/v1/" + job, fleet_admin).status, 200);
}

// Cloud Logging names its projects in the body, not the path: each is checked all the same.
TEST_F(ApiServiceAuthTest, LogEntriesOfAnotherProjectAreRefused) {
  api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
  storage::PgJobLogStore log_store(*pool_, JobLogRetention{});
  JobLogService logs(log_store, *projects_, clock_);
  api_->Attach({*service_,
                *operation_service_,
                *resource_service_,
                *admin_,
                nullptr,
                &logs,
                tokens_.get(),
                {},
                {}});
  const std::string job = CreateJob("team-a");
  const std::string filter = "resource.labels.job_id=\"" + job.substr(job.rfind('/') + 1) + "\"";
  const std::string viewer = Mint("team-a", Role::kViewer);
  HttpResponse own = Call("POST", "/v2/entries:list", viewer,
                          json{{"resourceNames", {"projects/team-a"}}, {"filter", filter}}.dump());
  EXPECT_EQ(own.status, 200) << own.body;
  HttpResponse other = Call(
      "POST", "/v2/entries:list", viewer,
      json{{"resourceNames", {"projects/team-a", "projects/team-b"}}, {"filter", filter}}.dump());
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(Error(other)["message"],
            "Permission 'logging.entries.list' denied on resource 'projects/team-b' (or it may "
            "not exist).");
}

TEST_F(ApiServiceAuthTest, ARevokedTokenIsRefusedAtOnceByTheProcessThatRevokedIt) {
  const std::string token = Mint("team-a", Role::kViewer);
  EXPECT_EQ(Call("GET", kJobs, token).status, 200);
  ASSERT_TRUE(tokens_->Revoke(ParseToken(token)->id).ok());
  EXPECT_EQ(Call("GET", kJobs, token).status, 401);
  EXPECT_EQ(tokens_->Revoke(424242).code(), Code::kNotFound);
}

// Another process (the CLI) revokes in the database; this one stops accepting the token once its
// cache entry ages out.
TEST_F(ApiServiceAuthTest, ARevocationElsewhereTakesEffectWithinTheCacheTime) {
  const std::string token = Mint("team-a", Role::kViewer);
  EXPECT_EQ(Call("GET", kJobs, token).status, 200);
  TokenService elsewhere(*token_store_, *projects_, clock_);
  ASSERT_TRUE(elsewhere.Revoke(ParseToken(token)->id).ok());
  clock_.Advance(TokenService::kCacheFor + std::chrono::milliseconds(1));
  EXPECT_EQ(Call("GET", kJobs, token).status, 401);
}

TEST_F(ApiServiceAuthTest, TokensAreStoredOnlyAsKeyedHashes) {
  const std::string token = Mint("team-a", Role::kAdmin);
  const std::string secret = token.substr(token.size() - 43);
  auto conn = pool_->Acquire();
  auto rows = (*conn)->Exec("SELECT t::text FROM api_tokens t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->rows(), 1);
  EXPECT_EQ(std::string(rows->Get(0, 0)).find(secret), std::string::npos);
  auto listed = tokens_->List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].project_id, "team-a");
  EXPECT_EQ((*listed)[0].role, Role::kAdmin);
}

class ApiServiceLimitsTest : public ApiServiceAuthTest {
 protected:
  void Limit(api::RateLimit requests, api::RateLimit creates) {
    api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
    api_->Attach({*service_, *operation_service_, *resource_service_, *admin_, nullptr, nullptr,
                  nullptr, requests, creates});
  }
};

TEST_F(ApiServiceLimitsTest, ACreateOverItsProjectsLimitIs429WithWhenToRetryAndWritesNothing) {
  Limit({}, {1, 1});
  EXPECT_EQ(Call("POST", kJobs, "", kJob).status, 200);
  HttpResponse refused = Call("POST", kJobs, "", kJob);
  ASSERT_EQ(refused.status, 429);
  EXPECT_EQ(Error(refused)["status"], "RESOURCE_EXHAUSTED");
  EXPECT_NE(Error(refused)["message"].get<std::string>().find("creates in project team-a"),
            std::string::npos);
  bool retry_info = false;
  const json error = Error(refused);
  for (const json& d : error["details"]) {
    if (d["@type"] == "type.googleapis.com/google.rpc.RetryInfo") {
      retry_info = true;
      const std::string delay = d["retryDelay"];
      EXPECT_TRUE(delay.ends_with("s") && std::stod(delay) > 0 && std::stod(delay) <= 1) << delay;
    }
  }
  EXPECT_TRUE(retry_info) << refused.body;
  std::string retry_after;
  for (const auto& [name, value] : refused.headers) {
    if (name == "Retry-After") retry_after = value;
  }
  EXPECT_EQ(retry_after, "1");
  EXPECT_EQ(Count("custom_jobs"), 1);
  // Reads are not creates, and another project has its own budget.
  EXPECT_EQ(Call("GET", kJobs, "").status, 200);
  EXPECT_EQ(Call("POST", "/v1/projects/team-b/locations/us-central1/customJobs", "", kJob).status,
            200);
  EXPECT_EQ(Count("custom_jobs"), 2);
}

TEST_F(ApiServiceLimitsTest, TheServerWideLimitCountsEveryRouteButHealthChecks) {
  Limit({2, 2}, {});
  EXPECT_EQ(Call("GET", kJobs, "").status, 200);
  EXPECT_EQ(Call("GET", kJobs, "").status, 200);
  EXPECT_EQ(Call("GET", kJobs, "").status, 429);
  EXPECT_EQ(Call("GET", "/healthz", "").status, 200);
  EXPECT_EQ(Call("GET", "/readyz", "").status, 200);
}

}  // namespace
}  // namespace trainyard
