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
