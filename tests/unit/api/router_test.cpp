// Router: segment captures, custom verbs, and telling a wrong method from an unknown path.
#include "api/router.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace trainyard::api {
namespace {

constexpr char kJob[] = "/{version}/projects/{project}/locations/{location}/customJobs/{job}";
constexpr char kJobs[] = "/{version}/projects/{project}/locations/{location}/customJobs";

// A handler that answers with `status`, so a test can tell which route was chosen.
RouteHandler Answer(int status) {
  return [status](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
    HttpResponse r;
    r.status = status;
    return r;
  };
}

// Routes shaped like the CustomJob table: the verb route is registered before the plain one.
Router JobRouter() {
  Router router;
  router.Add("POST", std::string(kJob) + ":cancel", Access::kProjectEditor, Answer(1));
  router.Add("GET", kJob, Access::kProjectViewer, Answer(2));
  router.Add("DELETE", kJob, Access::kProjectEditor, Answer(3));
  router.Add("GET", kJobs, Access::kProjectViewer, Answer(4));
  router.Add("POST", kJobs, Access::kProjectEditor, Answer(5));
  return router;
}

struct Outcome {
  int handler = 0;  // status of the chosen handler, 0 when none
  bool path_matched = false;
  std::map<std::string, std::string> params;
};

Outcome Dispatch(const Router& router, const std::string& method, const std::string& path) {
  Outcome out;
  RouteMatch match;
  // Seeded with the wrong answer: Match must set it on every call.
  out.path_matched = true;
  const RouteHandler* handler = router.Match(method, path, match, out.path_matched);
  if (handler != nullptr) {
    out.handler = (*handler)(HttpRequest{}, match)->status;
    out.params = match.params;
  }
  return out;
}

TEST(RouterMatchTest, CapturesEveryNamedSegment) {
  Router router = JobRouter();
  Outcome o = Dispatch(router, "GET", "/v1/projects/my-proj/locations/us-central1/customJobs/123");
  EXPECT_EQ(o.handler, 2);
  EXPECT_TRUE(o.path_matched);
  const std::map<std::string, std::string> expected = {
      {"version", "v1"}, {"project", "my-proj"}, {"location", "us-central1"}, {"job", "123"}};
  EXPECT_EQ(o.params, expected);
}

TEST(RouterMatchTest, TheVersionPrefixIsOneCapture) {
  Router router = JobRouter();
  for (const std::string version : {"v1", "v1beta1", "ui"}) {
    Outcome o = Dispatch(router, "GET", "/" + version + "/projects/p/locations/l/customJobs");
    EXPECT_EQ(o.handler, 4) << version;
    EXPECT_EQ(o.params["version"], version);
  }
}

TEST(RouterMatchTest, ACustomVerbSelectsItsRouteAndIsNotPartOfTheCapture) {
  Router router = JobRouter();
  Outcome o = Dispatch(router, "POST", "/v1/projects/p/locations/l/customJobs/12:cancel");
  EXPECT_EQ(o.handler, 1);
  EXPECT_EQ(o.params["job"], "12");

  Outcome plain = Dispatch(router, "GET", "/v1/projects/p/locations/l/customJobs/12");
  EXPECT_EQ(plain.handler, 2) << "the verb route must not swallow the plain path";
  EXPECT_EQ(plain.params["job"], "12");
}

TEST(RouterMatchTest, AnUnknownVerbIsAnUnknownPath) {
  Router router = JobRouter();
  Outcome o = Dispatch(router, "POST", "/v1/projects/p/locations/l/customJobs/12:reboot");
  EXPECT_EQ(o.handler, 0);
  EXPECT_FALSE(o.path_matched);
}

TEST(RouterMatchTest, AColonBeforeTheLastSegmentIsNotAVerb) {
  Router router = JobRouter();
  // The ':' stays in the captured segment and the request is the plain GET.
  Outcome o = Dispatch(router, "GET", "/v1/projects/p:cancel/locations/l/customJobs/12");
  EXPECT_EQ(o.handler, 2);
  EXPECT_EQ(o.params["project"], "p:cancel");
  EXPECT_EQ(o.params["job"], "12");
  // So a POST there is not the :cancel route, only a wrong method on the job path.
  Outcome post = Dispatch(router, "POST", "/v1/projects/p:cancel/locations/l/customJobs/12");
  EXPECT_EQ(post.handler, 0);
  EXPECT_TRUE(post.path_matched);
  // And a verb on a literal segment in the middle does not make a known path.
  Outcome middle = Dispatch(router, "POST", "/v1/projects/p/locations/l/customJobs:cancel/12");
  EXPECT_EQ(middle.handler, 0);
  EXPECT_FALSE(middle.path_matched);
}

TEST(RouterMatchTest, AWrongMethodOnAKnownPathIsToldApart) {
  Router router = JobRouter();
  Outcome put = Dispatch(router, "PUT", "/v1/projects/p/locations/l/customJobs/12");
  EXPECT_EQ(put.handler, 0);
  EXPECT_TRUE(put.path_matched);
  Outcome get_cancel = Dispatch(router, "GET", "/v1/projects/p/locations/l/customJobs/12:cancel");
  EXPECT_EQ(get_cancel.handler, 0);
  EXPECT_TRUE(get_cancel.path_matched) << ":cancel exists, only as POST";
  Outcome patch = Dispatch(router, "PATCH", "/v1/projects/p/locations/l/customJobs");
  EXPECT_EQ(patch.handler, 0);
  EXPECT_TRUE(patch.path_matched);
}

TEST(RouterMatchTest, SeveralMethodsOnOnePathEachFindTheirHandler) {
  Router router = JobRouter();
  EXPECT_EQ(Dispatch(router, "DELETE", "/v1/projects/p/locations/l/customJobs/7").handler, 3);
  EXPECT_EQ(Dispatch(router, "POST", "/v1/projects/p/locations/l/customJobs").handler, 5);
  Outcome del = Dispatch(router, "DELETE", "/v1/projects/p/locations/l/customJobs/7");
  EXPECT_EQ(del.params["job"], "7");
}

TEST(RouterMatchTest, UnknownPathsMatchNothing) {
  Router router = JobRouter();
  for (const std::string path : {
           "/v1/projects/p/locations/l/customJobs/12/extra",  // one segment too many
           "/v1/projects/p/locations/l",                      // too few
           "/v1/projects/p/locations/l/customjobs/12",        // literals are case-sensitive
           "/v1/projects/p/regions/l/customJobs/12",          // wrong literal
           "/",
           "",
       }) {
    Outcome o = Dispatch(router, "GET", path);
    EXPECT_EQ(o.handler, 0) << path;
    EXPECT_FALSE(o.path_matched) << path;
  }
}

TEST(RouterMatchTest, EmptySegmentsAreNeverCaptured) {
  Router router = JobRouter();
  for (const std::string path : {
           "//projects/p/locations/l/customJobs/12",   // empty version
           "/v1/projects//locations/l/customJobs/12",  // empty project
           "/v1/projects/p/locations//customJobs/12",  // empty location
           "/v1/projects/p/locations/l/customJobs/",   // trailing slash: empty job
       }) {
    Outcome o = Dispatch(router, "GET", path);
    EXPECT_EQ(o.handler, 0) << path;
    EXPECT_FALSE(o.path_matched) << path;
  }
  Outcome cancel = Dispatch(router, "POST", "/v1/projects/p/locations/l/customJobs/:cancel");
  EXPECT_EQ(cancel.handler, 0) << "an empty job id before the verb";
  EXPECT_FALSE(cancel.path_matched);
}

TEST(RouterMatchTest, ALiteralRouteWithoutCapturesMatchesExactly) {
  Router router;
  router.Add("GET", "/healthz", Access::kPublic, Answer(7));
  EXPECT_EQ(Dispatch(router, "GET", "/healthz").handler, 7);
  EXPECT_TRUE(Dispatch(router, "GET", "/healthz").params.empty());
  EXPECT_EQ(Dispatch(router, "GET", "/healthz/").handler, 0);
  EXPECT_EQ(Dispatch(router, "GET", "/healthzz").handler, 0);
  Outcome post = Dispatch(router, "POST", "/healthz");
  EXPECT_EQ(post.handler, 0);
  EXPECT_TRUE(post.path_matched);
}

// The pipeline checks a route's access and names the permission in a denial the way Vertex does.
TEST(RouterMatchTest, CarriesTheRoutesAccessAndItsPermissionName) {
  Router router = JobRouter();
  router.Add("GET", "/trainyard/v1/fleet", Access::kFleetAdmin, Answer(6));
  router.Add("POST", "/v2/entries:list", Access::kProjectViewer, Answer(8));
  struct Case {
    const char* method;
    const char* path;
    Access access;
    const char* permission;
  };
  const Case cases[] = {
      {"POST", "/v1/projects/p/locations/l/customJobs", Access::kProjectEditor,
       "aiplatform.customJobs.create"},
      {"GET", "/v1/projects/p/locations/l/customJobs", Access::kProjectViewer,
       "aiplatform.customJobs.list"},
      {"GET", "/v1/projects/p/locations/l/customJobs/1", Access::kProjectViewer,
       "aiplatform.customJobs.get"},
      {"DELETE", "/v1/projects/p/locations/l/customJobs/1", Access::kProjectEditor,
       "aiplatform.customJobs.delete"},
      {"POST", "/v1/projects/p/locations/l/customJobs/1:cancel", Access::kProjectEditor,
       "aiplatform.customJobs.cancel"},
      {"GET", "/trainyard/v1/fleet", Access::kFleetAdmin, "trainyard.fleet.list"},
      {"POST", "/v2/entries:list", Access::kProjectViewer, "logging.entries.list"},
  };
  for (const Case& c : cases) {
    RouteMatch match;
    bool path_matched = false;
    ASSERT_NE(router.Match(c.method, c.path, match, path_matched), nullptr) << c.path;
    EXPECT_EQ(match.access, c.access) << c.method << " " << c.path;
    EXPECT_EQ(match.permission, c.permission) << c.method << " " << c.path;
  }
}

}  // namespace
}  // namespace trainyard::api
