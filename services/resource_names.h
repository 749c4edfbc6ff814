#pragma once
// Resource names as the domain sees them: a project (by id or number), a location, a resource id.
#include <cstdint>
#include <string>

namespace trainyard {

struct Project {
  int64_t number = 0;
  std::string id;  // "demo"; equal to the number's digits for projects only known by number
};

// What a request path names, before the project is resolved.
struct ParentRef {
  std::string project;  // id or number, as the client wrote it
  std::string location;
};

struct JobRef {
  ParentRef parent;
  std::string job_id;  // as the client wrote it (digits expected)
};

struct OperationRef {
  ParentRef parent;
  std::string collection;   // "", "customJobs", "persistentResources"
  std::string resource_id;  // the job or resource the operation nests under ("" when flat)
  std::string operation_id;
};

std::string JobName(int64_t project_number, const std::string& location, int64_t job_id);
std::string OperationName(int64_t project_number, const std::string& location,
                          const std::string& parent, int64_t operation_id);

// Random 19-digit id, the shape of real Vertex job and operation ids.
int64_t NewResourceId();

}  // namespace trainyard
