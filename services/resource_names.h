#pragma once
// Resource names as the domain sees them: a project (by id or number), a location, a resource id.
#include <cstdint>
#include <random>
#include <string>

#include "services/status.h"

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

// How a client names a project: true for its number (digits, at most 18), false for its id;
// INVALID_ARGUMENT when it is neither. Ids are looser than GCP's 6-30 lowercase rule on purpose:
// docs and SDK samples use "P" or "demo", and domain-scoped ids ("example.com:proj") carry '.'
// and ':'.
StatusOr<bool> IsProjectNumber(const std::string& id_or_number);

std::string JobName(int64_t project_number, const std::string& location, int64_t job_id);
std::string OperationName(int64_t project_number, const std::string& location,
                          const std::string& parent, int64_t operation_id);
std::string PersistentResourceName(int64_t project_number, const std::string& location,
                                   const std::string& resource_id);

// Random 19-digit id, the shape of real Vertex job and operation ids.
int64_t NewResourceId();

// Location ids are region names ("us-central1"): lowercase letters, digits and '-'.
Status ValidateLocation(const std::string& location);

// Where new job and operation ids come from: random in a server, a seeded sequence of the same
// shape where a run must repeat exactly (`simulate`: ids break ties in the queue's order).
class IdSource {
 public:
  virtual ~IdSource() = default;
  virtual int64_t Next() = 0;
};
class RandomIds final : public IdSource {
 public:
  int64_t Next() override { return NewResourceId(); }
};
class SeededIds final : public IdSource {
 public:
  explicit SeededIds(uint64_t seed) : rng_(seed) {}
  int64_t Next() override;

 private:
  std::mt19937_64 rng_;
};
// The process's random source (what services use when given none).
IdSource& RandomIdSource();

}  // namespace trainyard
