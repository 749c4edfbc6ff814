#include "api/logging_handler.h"

#include <algorithm>

#include "api/json_body.h"
#include "api/logging_filter.h"
#include "api/page_token.h"
#include "api/wire/json_reader.h"
#include "api/wire/log_entry_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 50;  // Cloud Logging's

struct ListEntriesBody {
  std::vector<std::string> resource_names;
  std::string filter;
  std::string order_by;
  int32_t page_size = 0;
  std::string page_token;
};

// google.logging.v2.ListLogEntriesRequest; unknown fields are refused as everywhere else.
StatusOr<ListEntriesBody> ReadBody(const nlohmann::json& json) {
  ListEntriesBody body;
  ObjectReader reader(json, FieldPath("list_log_entries_request"));
  reader.GetStringList("resourceNames", &body.resource_names);
  reader.GetStringList("projectIds", &body.resource_names);  // deprecated form: bare ids
  reader.GetString("filter", &body.filter);
  reader.GetString("orderBy", &body.order_by);
  reader.GetInt32("pageSize", &body.page_size);
  reader.GetString("pageToken", &body.page_token);
  TY_RETURN_IF_ERROR(reader.Finish());
  return body;
}

// Chosen: far more projects than one reader holds, few enough that one request cannot make the
// server read every project's logs.
constexpr size_t kMaxResourceNames = 100;

// "projects/p" → "p"; a bare id (projectIds) as is. Organizations, folders and billing accounts
// hold no custom job logs, so they contribute nothing.
StatusOr<std::vector<std::string>> Projects(const std::vector<std::string>& names) {
  if (names.empty()) {
    return InvalidField("resourceNames", "at least one is required, e.g. \"projects/my-project\"");
  }
  if (names.size() > kMaxResourceNames) {
    return InvalidField("resourceNames", "at most " + std::to_string(kMaxResourceNames) +
                                             " are read in one request, got " +
                                             std::to_string(names.size()));
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (name.rfind("projects/", 0) == 0) {
      std::string id = name.substr(9);
      if (id.empty() || id.find('/') != std::string::npos) {
        return InvalidField("resourceNames[" + std::to_string(i) + "]",
                            "\"" + name + "\" is not projects/<project>");
      }
      out.push_back(id);
    } else if (name.find('/') == std::string::npos && !name.empty()) {
      out.push_back(name);
    }
  }
  // Each project is read once, however often it is named.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

void LoggingHandler::Register(Router& router) {
  router.Add("POST", "/v2/entries:list", Access::kProjectViewer,
             [this](const HttpRequest& request, const RouteMatch&) -> StatusOr<HttpResponse> {
               return ListEntries(request);
             });
}

StatusOr<HttpResponse> LoggingHandler::ListEntries(const HttpRequest& request) {
  auto json = ParseJsonBody(request, /*allow_empty=*/true);
  TY_RETURN_IF_ERROR(json.status());
  auto body = ReadBody(*json);
  TY_RETURN_IF_ERROR(body.status());

  LogEntriesRequest list;
  auto projects = Projects(body->resource_names);
  TY_RETURN_IF_ERROR(projects.status());
  for (const std::string& project : *projects) TY_RETURN_IF_ERROR(request.AllowProject(project));
  list.projects = std::move(*projects);
  auto tree = ParseLoggingFilter(body->filter);
  TY_RETURN_IF_ERROR(tree.status());
  auto filter = ToJobLogFilter(*tree);
  TY_RETURN_IF_ERROR(filter.status());
  list.filter = std::move(*filter);

  if (body->order_by == "timestamp desc") {
    list.descending = true;
  } else if (!body->order_by.empty() && body->order_by != "timestamp asc" &&
             body->order_by != "timestamp") {
    return InvalidField("orderBy", "must be \"timestamp asc\" or \"timestamp desc\", got \"" +
                                       body->order_by + "\"");
  }
  if (body->page_size < 0) return InvalidField("pageSize", "must not be negative");
  list.page_size =
      body->page_size == 0 ? kDefaultPageSize : std::min<int>(body->page_size, kMaxLogPageSize);

  // A token only resumes the request it came from.
  std::string fingerprint = body->filter + "\n" + body->order_by;
  for (const std::string& name : body->resource_names) fingerprint += "\n" + name;
  if (!body->page_token.empty()) {
    auto after = DecodeLogPageToken(body->page_token, fingerprint);
    TY_RETURN_IF_ERROR(after.status());
    list.page_after = *after;
  }

  auto page = logs_.ListEntries(list);
  TY_RETURN_IF_ERROR(page.status());
  std::string next = page->page.next ? EncodeLogPageToken(*page->page.next, fingerprint) : "";
  return JsonResponse(EncodeLogEntries(page->page.entries, page->project, next));
}

}  // namespace trainyard::api
