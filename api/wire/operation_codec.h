#pragma once
#include <nlohmann/json.hpp>

#include "services/model/operation.h"

namespace trainyard {

// google.longrunning.Operation in proto3 JSON: numeric id in the name, @type on metadata and
// response (the Node SDK refuses an Any without it), `done` omitted while false.
nlohmann::json EncodeOperation(const Operation& op);

}  // namespace trainyard
