#include "api/wire/operation_codec.h"

#include "api/wire/custom_job_codec.h"
#include "api/wire/json_reader.h"
#include "services/resource_names.h"

namespace trainyard {

nlohmann::json EncodeOperation(const Operation& op) {
  nlohmann::json out;
  out["name"] = OperationName(op.project_number, op.location, op.parent, op.id);
  out["metadata"] = {{"@type", "type.googleapis.com/" + op.metadata_type},
                     {"genericMetadata",
                      {{"createTime", FormatTimestamp(op.create_time)},
                       {"updateTime", FormatTimestamp(op.update_time)}}}};
  // The persistent-resource metadata types have a progressMessage; DeleteOperationMetadata has
  // none, and a strict client would refuse it there.
  if (!op.progress_message.empty() && op.metadata_type != kDeleteOperationMetadata) {
    out["metadata"]["progressMessage"] = op.progress_message;
  }
  if (op.done) {
    out["done"] = true;
    if (op.error) {
      out["error"] = EncodeRpcStatus(*op.error);
    } else if (op.response_json) {
      out["response"] = nlohmann::json::parse(*op.response_json, nullptr, false);
    }
  }
  return out;
}

}  // namespace trainyard
