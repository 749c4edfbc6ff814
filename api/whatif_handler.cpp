#include "api/whatif_handler.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/wire/json_reader.h"

namespace trainyard::api {
namespace {

using json = nlohmann::json;

json Encode(const WhatIfRun& run) {
  json out = {{"name", "whatif/runs/" + std::to_string(run.id)},
              {"scenarios", run.scenarios},
              {"uploaded", run.uploaded},
              {"progress", run.progress},
              {"createTime", FormatTimestamp(run.create_time)}};
  switch (run.state) {
    case WhatIfRun::State::kRunning:
      out["state"] = "RUNNING";
      break;
    case WhatIfRun::State::kSucceeded:
      out["state"] = "SUCCEEDED";
      break;
    case WhatIfRun::State::kFailed:
    case WhatIfRun::State::kCancelled:
      out["state"] = run.state == WhatIfRun::State::kFailed ? "FAILED" : "CANCELLED";
      out["error"] = {{"code", static_cast<int>(run.error.code())},
                      {"message", run.error.message()}};
      break;
  }
  if (run.seed) out["seed"] = std::to_string(*run.seed);
  if (run.end_time) out["endTime"] = FormatTimestamp(*run.end_time);
  if (run.state == WhatIfRun::State::kSucceeded) {
    out["comparison"] = json::parse(run.output.comparison_json, nullptr, false);
    out["plots"] = run.output.plots;
  }
  return out;
}

}  // namespace

void WhatIfHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/whatif/scenarios", Access::kFleetAdmin,
             [this](const HttpRequest&, const RouteMatch&) -> StatusOr<HttpResponse> {
               return JsonResponse({{"scenarios", whatif_.Offered()}});
             });
  router.Add("POST", "/trainyard/v1/whatif/runs", Access::kFleetAdmin,
             [this](const HttpRequest& request, const RouteMatch&) { return Start(request); });
  router.Add("GET", "/trainyard/v1/whatif/runs/{run}", Access::kFleetAdmin,
             [this](const HttpRequest&, const RouteMatch& match) { return Get(match, false); });
  router.Add("POST", "/trainyard/v1/whatif/runs/{run}:cancel", Access::kFleetAdmin,
             [this](const HttpRequest&, const RouteMatch& match) { return Get(match, true); });
}

StatusOr<HttpResponse> WhatIfHandler::Start(const HttpRequest& request) {
  TY_ASSIGN_OR_RETURN(json body, ParseJsonBody(request, /*allow_empty=*/false));
  std::vector<std::string> scenarios;
  std::optional<uint64_t> seed;
  ObjectReader r(body, FieldPath(""));
  r.GetStringList("scenarios", &scenarios);
  int64_t given = 0;
  if (r.GetInt64("seed", &given)) {
    if (given < 0) r.Fail(InvalidField("seed", "must not be negative"));
    seed = static_cast<uint64_t>(given);
  }
  // A scenario of the caller's own: {"scenario": "<its JSON text>", "trace": "<the trace's text>",
  // "traceName": "mine.csv"} (the request's 1 MiB bounds both).
  std::optional<WhatIfUpload> upload;
  r.GetObject("upload", "trainyard.WhatIfUpload", [&](ObjectReader& u) {
    upload.emplace();
    u.GetString("scenario", &upload->scenario);
    u.GetString("trace", &upload->trace);
    u.GetString("traceName", &upload->trace_name);
  });
  TY_RETURN_IF_ERROR(r.Finish());
  TY_ASSIGN_OR_RETURN(WhatIfRun run, whatif_.Start(std::move(scenarios), seed, std::move(upload)));
  return JsonResponse(Encode(run));
}

StatusOr<HttpResponse> WhatIfHandler::Get(const RouteMatch& match, bool cancel) {
  const std::string& text = match.params.at("run");
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return NotFound("what-if run " + text + " not found");
  }
  TY_ASSIGN_OR_RETURN(WhatIfRun run, cancel ? whatif_.Cancel(id) : whatif_.Get(id));
  return JsonResponse(Encode(run));
}

}  // namespace trainyard::api
