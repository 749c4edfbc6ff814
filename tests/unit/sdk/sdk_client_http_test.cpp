// The SDK client over real HTTP against a scripted test endpoint (our own server seam):
// retries of GETs on 503/429/refused connections, creates sent once, page tokens followed, error
// bodies decoded, unknown fields kept. The real server is exercised by tests/e2e/cli_test.sh.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <mutex>
#include <vector>

#include "api/error_body.h"
#include "api/http_server.h"
#include "api/wire/custom_job_codec.h"
#include "sdk/client.h"
#include "tests/free_port.h"
#include "tests/unit/sdk/sdk_fake_timing.h"

namespace trainyard::sdk {
namespace {

using api::HttpRequest;
using api::HttpResponse;

using testing::FreePort;

constexpr char kJobName[] = "projects/100000000001/locations/us-central1/customJobs/42";

nlohmann::json JobJson(const std::string& name, JobState state) {
  CustomJob job;
  job.name = name;
  job.display_name = "test";
  job.state = state;
  job.job_spec.worker_pool_specs.emplace_back().replica_count = 1;
  return EncodeCustomJob(job);
}

HttpResponse Json(const nlohmann::json& body) {
  HttpResponse out;
  out.body = body.dump();
  return out;
}

// An HTTP endpoint whose answers the test scripts; it records what it was sent.
class TestEndpoint {
 public:
  using Script = std::function<HttpResponse(const HttpRequest&, int call)>;

  explicit TestEndpoint(Script script) : script_(std::move(script)), port_(FreePort()) {
    api::ServerOptions options;
    options.port = port_;
    server_ = api::NewHttpServer(options, [this](HttpRequest& request) {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      return script_(request, static_cast<int>(requests_.size()));
    });
    Status started = server_->Start();
    EXPECT_TRUE(started.ok()) << started.message();
  }
  ~TestEndpoint() { server_->Stop(std::chrono::milliseconds(1000)); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<HttpRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  Script script_;
  int port_;
  std::unique_ptr<api::HttpServer> server_;
  std::mutex mu_;
  std::vector<HttpRequest> requests_;
};

class SdkClientHttpTest : public ::testing::Test {
 protected:
  std::unique_ptr<Client> Connect(const std::string& url) {
    ClientOptions options;
    options.endpoint = url;
    options.project = "demo";
    options.bearer_token = "secret";
    options.request_timeout = std::chrono::milliseconds(5000);
    options.timing = time_.Get();
    auto client = Client::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().message();
    return std::move(client).value();
  }

  FakeTiming time_;
};

// What the server answers before its storage is ready (api/api_service.cpp).
HttpResponse StillStarting() {
  return api::RetryLaterResponse(Unavailable("the server is starting; retry shortly"),
                                 std::chrono::milliseconds(500), "");
}

TEST_F(SdkClientHttpTest, AGetAnswered503OnceIsRetriedAndSucceeds) {
  TestEndpoint endpoint([](const HttpRequest&, int call) {
    if (call == 1) return api::ErrorResponse(Unavailable("warming up"), "");
    return Json(JobJson(kJobName, JobState::kRunning));
  });
  auto client = Connect(endpoint.url());

  auto job = client->GetJob("42");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->name(), kJobName);
  EXPECT_EQ(job->state(), JobState::kRunning);
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].path, "/v1/projects/demo/locations/us-central1/customJobs/42");
  ASSERT_NE(requests[0].Header("authorization"), nullptr);
  EXPECT_EQ(*requests[0].Header("authorization"), "Bearer secret");
  EXPECT_EQ(time_.sleeps_ms, (std::vector<int64_t>{500}));  // the retry backoff's first delay
}

TEST_F(SdkClientHttpTest, ACreateAnswered503IsNotRetried) {
  TestEndpoint endpoint(
      [](const HttpRequest&, int) { return api::ErrorResponse(Unavailable("overloaded"), ""); });
  auto client = Connect(endpoint.url());

  auto job = client->CreateJob(JobJson("", JobState::kUnspecified));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kUnavailable);
  EXPECT_EQ(job.status().message(), "overloaded");
  EXPECT_EQ(endpoint.requests().size(), 1u);
  EXPECT_TRUE(time_.sleeps_ms.empty());
}

// A server still starting did nothing and says when to come back: the create is sent again.
TEST_F(SdkClientHttpTest, ACreateAnswered503WithRetryInfoIsSentAgain) {
  TestEndpoint endpoint([](const HttpRequest&, int call) {
    if (call == 1) {
      return StillStarting();
    }
    return Json(JobJson(kJobName, JobState::kPending));
  });
  auto client = Connect(endpoint.url());

  auto job = client->CreateJob(JobJson("", JobState::kUnspecified));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(endpoint.requests().size(), 2u);
}

// `jobs create --wait` right after `make run`: a first start (initdb) may take longer than five
// tries; a starting server is waited for up to the request timeout.
TEST_F(SdkClientHttpTest, AServerThatIsStillStartingIsWaitedForUpToTheRequestTimeout) {
  TestEndpoint endpoint([](const HttpRequest&, int call) {
    if (call <= 5) {
      return StillStarting();
    }
    return Json(JobJson(kJobName, JobState::kPending));
  });
  auto client = Connect(endpoint.url());
  auto job = client->CreateJob(JobJson("", JobState::kUnspecified));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(endpoint.requests().size(), 6u) << "more tries than max_attempts (5)";

  TestEndpoint never([](const HttpRequest&, int) { return StillStarting(); });
  auto stuck = Connect(never.url());
  EXPECT_EQ(stuck->CreateJob(JobJson("", JobState::kUnspecified)).status().code(),
            Code::kUnavailable);
  EXPECT_GE(time_.now - std::chrono::steady_clock::time_point{}, std::chrono::milliseconds(5000))
      << "it gave up only after the request timeout (5 s here)";
}

TEST_F(SdkClientHttpTest, AGetStillAnswered429GivesUpAfterMaxAttempts) {
  TestEndpoint endpoint([](const HttpRequest&, int) {
    Status busy(Code::kResourceExhausted, "slow down");
    return api::ErrorResponse(busy, "");
  });
  auto client = Connect(endpoint.url());

  auto job = client->GetJob("42");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(endpoint.requests().size(), 5u);
  EXPECT_EQ(time_.sleeps_ms, (std::vector<int64_t>{500, 750, 1125, 1688}));
}

TEST_F(SdkClientHttpTest, ARefusedConnectionIsRetriedForGetsButNotForCreates) {
  auto client = Connect("http://127.0.0.1:" + std::to_string(FreePort()));  // nobody listens

  auto job = client->GetJob("42");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kUnavailable);
  EXPECT_EQ(time_.sleeps_ms.size(), 4u);

  time_.sleeps_ms.clear();
  auto created = client->CreateJob(JobJson("", JobState::kUnspecified));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), Code::kUnavailable);
  EXPECT_TRUE(time_.sleeps_ms.empty());
}

TEST_F(SdkClientHttpTest, OtherErrorsAreDecodedAndNotRetried) {
  TestEndpoint endpoint([](const HttpRequest&, int) {
    return api::ErrorResponse(NotFound("CustomJob 42 not found"), "req-7");
  });
  auto client = Connect(endpoint.url());

  auto job = client->GetJob("42");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), Code::kNotFound);
  EXPECT_EQ(job.status().message(), "CustomJob 42 not found");
  EXPECT_EQ(endpoint.requests().size(), 1u);
}

TEST_F(SdkClientHttpTest, ListFollowsPageTokensAndSendsTheFilter) {
  TestEndpoint endpoint([](const HttpRequest& request, int) {
    const std::string* token = request.Query("pageToken");
    nlohmann::json page;
    if (token == nullptr) {
      page = {{"customJobs",
               {JobJson(std::string(kJobName) + "1", JobState::kSucceeded),
                JobJson(std::string(kJobName) + "2", JobState::kSucceeded)}},
              {"nextPageToken", "p2"}};
    } else if (*token == "p2") {
      page = {{"nextPageToken", "p3"}};  // an empty page in the middle is legal
    } else {
      page = {{"customJobs", {JobJson(std::string(kJobName) + "3", JobState::kSucceeded)}}};
    }
    return Json(page);
  });
  auto client = Connect(endpoint.url());

  JobList list = client->ListJobs({"state=JOB_STATE_SUCCEEDED AND labels.team=nlp", 2});
  std::vector<std::string> names;
  for (;;) {
    auto next = list.Next();
    ASSERT_TRUE(next.ok()) << next.status().message();
    if (!*next) break;
    names.push_back((*next)->name());
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{std::string(kJobName) + "1", std::string(kJobName) + "2",
                                      std::string(kJobName) + "3"}));
  EXPECT_EQ(list.pages_fetched(), 3);
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 3u);
  ASSERT_NE(requests[0].Query("filter"), nullptr);
  EXPECT_EQ(*requests[0].Query("filter"), "state=JOB_STATE_SUCCEEDED AND labels.team=nlp");
  EXPECT_EQ(*requests[0].Query("pageSize"), "2");
  EXPECT_EQ(*requests[2].Query("pageToken"), "p3");
}

TEST_F(SdkClientHttpTest, UnknownFieldsAreKeptAndTheTrainyardObjectIsTyped) {
  TestEndpoint endpoint([](const HttpRequest&, int) {
    nlohmann::json job = JobJson(kJobName, JobState::kQueued);
    job["fieldFromTheFuture"] = {{"x", 1}};
    job["jobSpec"]["newSpecField"] = true;
    job["trainyard"] = {{"reason", {{"code", "NO_CAPACITY"}, {"message", "no free a3"}}},
                        {"queuePosition", 3},
                        {"priority", 500},
                        {"hourlyPriceUsd", 35.39},
                        {"costUsd", 0},
                        {"somethingNew", "kept"}};
    return Json(job);
  });
  auto client = Connect(endpoint.url());

  auto job = client->GetJob(kJobName);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_TRUE(job->job.trainyard.has_value());
  EXPECT_EQ(job->job.trainyard->reason_code, "NO_CAPACITY");
  EXPECT_EQ(job->job.trainyard->reason_message, "no free a3");
  EXPECT_EQ(job->job.trainyard->queue_position, 3);
  EXPECT_DOUBLE_EQ(job->job.trainyard->hourly_price_usd, 35.39);
  EXPECT_EQ(job->raw["fieldFromTheFuture"]["x"], 1);
  EXPECT_EQ(job->raw["jobSpec"]["newSpecField"], true);
  EXPECT_EQ(job->raw["trainyard"]["somethingNew"], "kept");
}

TEST_F(SdkClientHttpTest, WaitPollsUntilTerminalAndTimesOutWithTheLastState) {
  TestEndpoint endpoint([](const HttpRequest&, int call) {
    return Json(JobJson(kJobName, call < 3 ? JobState::kRunning : JobState::kSucceeded));
  });
  auto client = Connect(endpoint.url());

  std::vector<JobState> seen;
  WaitOptions options;
  options.on_change = [&](const Job& job) { seen.push_back(job.state()); };
  auto job = client->WaitJob("42", options);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->state(), JobState::kSucceeded);
  EXPECT_EQ(seen, (std::vector<JobState>{JobState::kRunning, JobState::kSucceeded}));
  EXPECT_EQ(time_.sleeps_ms, (std::vector<int64_t>{1000, 1500}));

  TestEndpoint stuck(
      [](const HttpRequest&, int) { return Json(JobJson(kJobName, JobState::kRunning)); });
  auto slow = Connect(stuck.url());
  WaitOptions short_wait;
  short_wait.timeout = std::chrono::milliseconds(2000);
  auto timed_out = slow->WaitJob("42", short_wait);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(timed_out.status().message().find("JOB_STATE_RUNNING"), std::string::npos);
}

TEST_F(SdkClientHttpTest, AnEndpointThatIsNotAUrlIsRefusedAtCreate) {
  ClientOptions options;
  options.endpoint = "127.0.0.1:8080";
  options.project = "demo";
  auto client = Client::Create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard::sdk
