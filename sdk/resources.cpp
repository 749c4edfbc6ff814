#include "sdk/resources.h"

#include <utility>

#include "api/wire/custom_job_codec.h"
#include "api/wire/json_reader.h"
#include "api/wire/persistent_resource_codec.h"

namespace trainyard::sdk {

StatusOr<Job> DecodeJob(nlohmann::json body) {
  TY_ASSIGN_OR_RETURN(CustomJob job,
                      DecodeCustomJob(body, OutputOnlyFields::kKeep, UnknownFields::kIgnore));
  return Job{std::move(job), std::move(body)};
}

StatusOr<Operation> DecodeOperation(nlohmann::json body) {
  if (!body.is_object()) return Internal("operation: expected a JSON object");
  Operation op;
  ObjectReader reader(body, FieldPath("operation"));
  reader.IgnoreUnknownFields();
  reader.GetString("name", &op.name);
  reader.GetBool("done", &op.done);
  TY_RETURN_IF_ERROR(reader.Finish());
  if (op.name.empty()) return Internal("operation: the server sent no name");
  if (auto it = body.find("metadata"); it != body.end()) op.metadata = *it;
  if (auto it = body.find("response"); it != body.end() && !it->is_null()) op.response = *it;
  if (auto it = body.find("error"); it != body.end() && !it->is_null()) {
    TY_ASSIGN_OR_RETURN(op.error, DecodeRpcStatus(*it, UnknownFields::kIgnore));
  }
  op.raw = std::move(body);
  return op;
}

StatusOr<PersistentResource> DecodePersistentResource(nlohmann::json body) {
  TY_ASSIGN_OR_RETURN(
      trainyard::PersistentResource resource,
      trainyard::DecodePersistentResource(body, OutputOnlyFields::kKeep, UnknownFields::kIgnore));
  return PersistentResource{std::move(resource), std::move(body)};
}

StatusOr<nlohmann::json> OperationResult(const Operation& op) {
  if (!op.done) return FailedPrecondition("operation " + op.name + " is not done");
  if (op.error) {
    const int code = op.error->code;
    const bool known = code > 0 && code <= static_cast<int>(Code::kUnauthenticated);
    return Status(known ? static_cast<Code>(code) : Code::kUnknown, op.error->message);
  }
  return op.response.value_or(nlohmann::json::object());
}

std::string JobId(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace trainyard::sdk
