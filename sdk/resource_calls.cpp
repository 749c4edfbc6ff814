// The client's persistent-resource and operation calls (sdk/client.h).
#include "sdk/client.h"
#include "sdk/reply.h"

namespace trainyard::sdk {

Status Client::ListAll(const std::string& path, const std::string& query, const std::string& key,
                       const std::function<Status(nlohmann::json)>& on_item) {
  std::string token;
  do {
    std::string url = path + query;
    if (!token.empty())
      url += (query.empty() ? "?" : "&") + std::string("pageToken=") + Encode(token);
    TY_ASSIGN_OR_RETURN(auto reply, Call({"GET", url, std::nullopt, /*idempotent=*/true}));
    if (auto items = reply.find(key); items != reply.end() && items->is_array()) {
      for (auto& item : *items) TY_RETURN_IF_ERROR(on_item(std::move(item)));
    }
    auto next = reply.find("nextPageToken");
    token = next != reply.end() && next->is_string() ? next->get<std::string>() : "";
  } while (!token.empty());
  return Status::Ok();
}

StatusOr<Operation> Client::CreateResource(const std::string& id, const nlohmann::json& body) {
  const std::string parent = "projects/" + options_.project + "/locations/" + options_.location;
  TY_ASSIGN_OR_RETURN(
      auto reply,
      Call({"POST", "/v1/" + parent + "/persistentResources?persistentResourceId=" + Encode(id),
            body, /*idempotent=*/false}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<PersistentResource> Client::GetResource(const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reply, Call({"GET", "/v1/" + ResourceName(name, "persistentResources"),
                                        std::nullopt, /*idempotent=*/true}));
  return Decoded(DecodePersistentResource(std::move(reply)), "persistent resource");
}

StatusOr<std::vector<PersistentResource>> Client::ListResources() {
  std::vector<PersistentResource> out;
  TY_RETURN_IF_ERROR(ListAll("/v1/projects/" + options_.project + "/locations/" +
                                 options_.location + "/persistentResources",
                             "", "persistentResources", [&](nlohmann::json raw) -> Status {
                               TY_ASSIGN_OR_RETURN(PersistentResource r,
                                                   Decoded(DecodePersistentResource(std::move(raw)),
                                                           "persistent resource"));
                               out.push_back(std::move(r));
                               return Status::Ok();
                             }));
  return out;
}

StatusOr<Operation> Client::UpdateResource(const std::string& name, const nlohmann::json& body,
                                           const std::string& update_mask) {
  TY_ASSIGN_OR_RETURN(auto reply, Call({"PATCH",
                                        "/v1/" + ResourceName(name, "persistentResources") +
                                            "?updateMask=" + Encode(update_mask),
                                        body, /*idempotent=*/false}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<Operation> Client::RebootResource(const std::string& name) {
  TY_ASSIGN_OR_RETURN(auto reply,
                      Call({"POST", "/v1/" + ResourceName(name, "persistentResources") + ":reboot",
                            nlohmann::json::object(), /*idempotent=*/false}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<Operation> Client::DeleteResource(const std::string& name) {
  TY_ASSIGN_OR_RETURN(
      auto reply, Call({"DELETE", "/v1/" + ResourceName(name, "persistentResources"), std::nullopt,
                        /*idempotent=*/false}));
  return Decoded(DecodeOperation(std::move(reply)), "operation");
}

StatusOr<std::vector<Operation>> Client::ListOperations(const std::string& filter) {
  std::vector<Operation> out;
  TY_RETURN_IF_ERROR(ListAll(
      "/v1/projects/" + options_.project + "/locations/" + options_.location + "/operations",
      filter.empty() ? "" : "?filter=" + Encode(filter), "operations",
      [&](nlohmann::json raw) -> Status {
        TY_ASSIGN_OR_RETURN(Operation op, Decoded(DecodeOperation(std::move(raw)), "operation"));
        out.push_back(std::move(op));
        return Status::Ok();
      }));
  return out;
}

Status Client::CancelOperation(const std::string& name) {
  auto reply = Call({"POST", "/v1/" + ResourceName(name, "operations") + ":cancel",
                     nlohmann::json::object(), /*idempotent=*/false});
  return reply.ok() ? Status::Ok() : reply.status();
}

Status Client::DeleteOperation(const std::string& name) {
  auto reply = Call({"DELETE", "/v1/" + ResourceName(name, "operations"), std::nullopt,
                     /*idempotent=*/false});
  return reply.ok() ? Status::Ok() : reply.status();
}

}  // namespace trainyard::sdk
