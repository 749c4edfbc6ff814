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
#include "services/metrics/registry.h"
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
    if (!body.empty()) request.headers["content-type"] = "application/json";
    if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
    return api_->Handle(request);
  }

  static json Error(const HttpResponse& r) { return json::parse(r.body)["error"]; }

  // A pipeline that serves Cloud Logging's entries:list from `logs`.
  void AttachWithLogs(JobLogService& logs, TokenService* tokens) {
    api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
    api_->Attach({*service_,
                  *operation_service_,
                  *resource_service_,
                  *admin_,
                  nullptr,
                  &logs,
                  tokens,
                  {},
                  {}});
  }

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
  storage::PgJobLogStore log_store(*pool_, JobLogRetention{});
  JobLogService logs(log_store, *projects_, clock_);
  AttachWithLogs(logs, tokens_.get());
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

// Counts what reaches the token table, so a test can tell a cached answer from a query.
class CountingTokenRepository final : public TokenRepository {
 public:
  explicit CountingTokenRepository(TokenRepository& inner) : inner_(inner) {}
  StatusOr<std::string> HashKey() override { return inner_.HashKey(); }
  StatusOr<int64_t> Insert(const TokenRecord& record) override { return inner_.Insert(record); }
  StatusOr<std::optional<TokenRecord>> Find(int64_t id) override {
    ++finds;
    return inner_.Find(id);
  }
  StatusOr<std::vector<TokenRecord>> List() override { return inner_.List(); }
  StatusOr<bool> Revoke(int64_t id, Timestamp now) override { return inner_.Revoke(id, now); }
  int finds = 0;

 private:
  TokenRepository& inner_;
};

TEST_F(ApiServiceAuthTest, AnUnknownTokenIdCostsOneQueryWhateverHowOftenItIsTried) {
  CountingTokenRepository counting(*token_store_);
  tokens_ = std::make_unique<TokenService>(counting, *projects_, clock_);
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
  const std::string made_up = "ty1_987654_" + std::string(43, 'A');
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Call("GET", kJobs, made_up).status, 401);
  EXPECT_EQ(counting.finds, 1);
  // Past the cache time it is asked again: a token minted elsewhere under that id would work.
  clock_.Advance(TokenService::kCacheFor + std::chrono::seconds(1));
  EXPECT_EQ(Call("GET", kJobs, made_up).status, 401);
  EXPECT_EQ(counting.finds, 2);
  // A token this process mints is usable at once even under an id tried before.
  const std::string minted = Mint("team-a", Role::kViewer);
  EXPECT_EQ(Call("GET", kJobs, minted).status, 200);
}

TEST_F(ApiServiceAuthTest, AMetricsViewerScrapesMetricsAndNothingElse) {
  metrics::Registry registry;
  api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
  api_->Attach({*service_,
                *operation_service_,
                *resource_service_,
                *admin_,
                nullptr,
                nullptr,
                tokens_.get(),
                {},
                {},
                &registry});
  const std::string scraper = Mint("", Role::kMetricsViewer);
  HttpResponse scraped = Call("GET", "/metrics", scraper);
  EXPECT_EQ(scraped.status, 200) << scraped.body;
  EXPECT_NE(scraped.body.find("trainyard_http_requests_total"), std::string::npos);
  for (const char* path : {"/trainyard/v1/fleet", "/trainyard/v1/queues", kJobs.c_str()}) {
    EXPECT_EQ(Call("GET", path, scraper).status, 403) << path;
  }
  EXPECT_EQ(Call("POST", kJobs, scraper, kJob).status, 403);
  EXPECT_EQ(Count("custom_jobs"), 0);
  // A project's admin cannot scrape the fleet's figures; a fleet admin can.
  EXPECT_EQ(Call("GET", "/metrics", Mint("team-a", Role::kAdmin)).status, 403);
  EXPECT_EQ(Call("GET", "/metrics", Mint("", Role::kViewer, /*fleet_admin=*/true)).status, 200);
  // A metrics viewer belongs to no project.
  TokenRequest scoped;
  scoped.project = "team-a";
  scoped.role = Role::kMetricsViewer;
  EXPECT_EQ(tokens_->Create(scoped).status().code(), Code::kInvalidArgument);
}

// One request names each project once however often it repeats it, and at most 100 of them.
TEST_F(ApiServiceAuthTest, LogEntriesReadEachProjectOnceAndAtMostAHundred) {
  storage::PgJobLogStore log_store(*pool_, JobLogRetention{});
  JobLogService logs(log_store, *projects_, clock_);
  AttachWithLogs(logs, nullptr);
  const std::string job = CreateJob("team-a");
  const std::string filter = "resource.labels.job_id=\"" + job.substr(job.rfind('/') + 1) + "\"";
  json once = json{{"resourceNames", {"projects/team-a"}}, {"filter", filter}};
  json repeated = once;
  repeated["resourceNames"] = json::array();
  for (int i = 0; i < 100; ++i) repeated["resourceNames"].push_back("projects/team-a");
  HttpResponse a = Call("POST", "/v2/entries:list", "", once.dump());
  HttpResponse b = Call("POST", "/v2/entries:list", "", repeated.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(json::parse(a.body)["entries"].size(), json::parse(b.body)["entries"].size())
      << "a project named 100 times is read once: no entry comes back 100 times";
  repeated["resourceNames"].push_back("projects/team-b");
  HttpResponse over = Call("POST", "/v2/entries:list", "", repeated.dump());
  EXPECT_EQ(over.status, 400);
  std::string field;
  const json error = Error(over);
  for (const json& d : error["details"]) {
    if (d.contains("fieldViolations")) field = d["fieldViolations"][0]["field"];
  }
  EXPECT_EQ(field, "resourceNames") << over.body;
}

class ApiServiceLimitsTest : public ApiServiceAuthTest {
 protected:
  void Limit(api::RateLimit requests, api::RateLimit creates, TokenService* tokens = nullptr) {
    api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });
    api_->Attach({*service_, *operation_service_, *resource_service_, *admin_, nullptr, nullptr,
                  tokens, requests, creates, nullptr, nullptr, projects_});
  }
};

TEST_F(ApiServiceLimitsTest, EachTokenHasItsOwnRequestBudget) {
  Limit({2, 2}, {}, tokens_.get());
  const std::string busy = Mint("team-a", Role::kViewer);
  const std::string quiet = Mint("team-a", Role::kViewer);
  EXPECT_EQ(Call("GET", kJobs, busy).status, 200);
  EXPECT_EQ(Call("GET", kJobs, busy).status, 200);
  EXPECT_EQ(Call("GET", kJobs, busy).status, 429);
  EXPECT_EQ(Call("GET", kJobs, quiet).status, 200) << "another caller's budget is its own";
  // A bad credential is refused as such, and spends nobody's budget.
  EXPECT_EQ(Call("GET", kJobs, "ty1_5_" + std::string(43, 'A')).status, 401);
  EXPECT_EQ(Call("GET", kJobs, quiet).status, 200);
}

TEST_F(ApiServiceLimitsTest, AProjectsIdAndNumberShareOneCreateBudget) {
  Limit({}, {1, 1});
  const std::string first = CreateJob("team-a");  // projects/<number>/…
  ASSERT_FALSE(first.empty());
  const std::string number = first.substr(9, first.find('/', 9) - 9);
  ASSERT_NE(number, "team-a");
  HttpResponse by_number =
      Call("POST", "/v1/projects/" + number + "/locations/us-central1/customJobs", "", kJob);
  EXPECT_EQ(by_number.status, 429) << by_number.body;
  EXPECT_EQ(Count("custom_jobs"), 1);
}

TEST_F(ApiServiceLimitsTest, WhileStartingA503SaysWhenToComeBackSoCreatesMayBeSentAgain) {
  api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); });  // never attached
  HttpResponse r = Call("POST", kJobs, "", kJob);
  ASSERT_EQ(r.status, 503);
  bool retry_info = false;
  const json error = Error(r);
  for (const json& d : error["details"]) {
    retry_info |= d["@type"] == "type.googleapis.com/google.rpc.RetryInfo";
  }
  EXPECT_TRUE(retry_info) << r.body;
}

// What a web page can make a browser send is refused before anything is stored.
class ApiServiceGuardTest : public ApiServiceAuthTest {
 protected:
  void Guard(api::RequestGuardOptions guard) {
    api_ = std::make_unique<api::ApiService>([] { return Status::Ok(); }, std::move(guard));
    api_->Attach({*service_,
                  *operation_service_,
                  *resource_service_,
                  *admin_,
                  nullptr,
                  nullptr,
                  nullptr,
                  {},
                  {}});
  }
  HttpResponse Post(std::map<std::string, std::string> headers, std::string body = kJob) {
    HttpRequest request;
    request.method = "POST";
    request.path = kJobs;
    request.body = std::move(body);
    request.headers = std::move(headers);
    return api_->Handle(request);
  }
};

TEST_F(ApiServiceGuardTest, ABodyThatIsNotJsonByItsContentTypeIs415AndStoresNothing) {
  Guard({});
  for (const char* type :
       {"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonp"}) {
    HttpResponse r = Post({{"host", "127.0.0.1:8080"}, {"content-type", type}});
    EXPECT_EQ(r.status, 415) << type;
    EXPECT_EQ(Error(r)["code"], 415);
  }
  EXPECT_EQ(Post({{"host", "127.0.0.1:8080"}}).status, 415) << "no Content-Type at all";
  EXPECT_EQ(Count("custom_jobs"), 0);
  // What gcloud, the Node SDK and the CLI send.
  for (const char* type :
       {"application/json", "application/json; charset=utf-8", "Application/JSON"}) {
    EXPECT_EQ(Post({{"host", "127.0.0.1:8080"}, {"content-type", type}}).status, 200) << type;
  }
  // A body-less cancel or delete needs no Content-Type.
  HttpRequest list;
  list.method = "GET";
  list.path = kJobs;
  EXPECT_EQ(api_->Handle(list).status, 200);
}

TEST_F(ApiServiceGuardTest, AnotherSitesOriginIsRefusedAndTheServersOwnIsNot) {
  Guard({});
  const std::map<std::string, std::string> json = {{"host", "127.0.0.1:8080"},
                                                   {"content-type", "application/json"}};
  for (const char* origin : {"https://evil.example", "http://127.0.0.1:9999", "null",
                             "http://127.0.0.1:8080.evil", "file://"}) {
    auto headers = json;
    headers["origin"] = origin;
    HttpResponse r = Post(headers);
    EXPECT_EQ(r.status, 403) << origin;
    EXPECT_EQ(Error(r)["status"], "PERMISSION_DENIED") << origin;
  }
  EXPECT_EQ(Count("custom_jobs"), 0);
  auto own = json;
  own["origin"] = "http://127.0.0.1:8080";
  EXPECT_EQ(Post(own).status, 200);
}

TEST_F(ApiServiceGuardTest, WithoutTokensOnlyLoopbackOrNamedHostsAndNoProxy) {
  Guard({/*without_tokens=*/true, {"devbox.internal"}});
  auto with_host = [](const std::string& host) {
    return std::map<std::string, std::string>{{"host", host}, {"content-type", "application/json"}};
  };
  // DNS rebinding: the page's own name, resolved to 127.0.0.1, with a matching Origin.
  auto rebound = with_host("attacker.example:8080");
  rebound["origin"] = "http://attacker.example:8080";
  EXPECT_EQ(Post(rebound).status, 403);
  EXPECT_EQ(Post(with_host("127.0.0.1.attacker.example")).status, 403);
  EXPECT_EQ(Post({{"content-type", "application/json"}}).status, 403) << "no Host";
  auto forwarded = with_host("127.0.0.1:8080");
  forwarded["x-forwarded-for"] = "203.0.113.9";
  EXPECT_EQ(Post(forwarded).status, 403);
  EXPECT_EQ(Count("custom_jobs"), 0);
  for (const char* host :
       {"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.2", "devbox.internal:8080"}) {
    EXPECT_EQ(Post(with_host(host)).status, 200) << host;
  }
}

TEST_F(ApiServiceGuardTest, WithTokensAnyHostAndProxiesAreFine) {
  Guard({/*without_tokens=*/false, {}});
  EXPECT_EQ(Post({{"host", "trainyard.example.com"},
                  {"x-forwarded-for", "203.0.113.9"},
                  {"content-type", "application/json"}})
                .status,
            200);
}

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
