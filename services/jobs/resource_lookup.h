#pragma once
// What a job's create asks of persistent resources: the one its spec names, as it is now. A port
// of its own so the job use cases need nothing of the resources' folder, which builds on jobs.
#include <cstdint>
#include <string>

#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

class ResourceLookup {
 public:
  virtual ~ResourceLookup() = default;
  // NOT_FOUND when the project has no resource by that id in the location.
  virtual StatusOr<PersistentResource> LookupResource(int64_t project_number,
                                                      const std::string& location,
                                                      const std::string& resource_id) = 0;
};

}  // namespace trainyard
