#include "services/resource_names.h"

#include <algorithm>
#include <cctype>
#include <random>

namespace trainyard {

std::string JobName(int64_t project_number, const std::string& location, int64_t job_id) {
  return "projects/" + std::to_string(project_number) + "/locations/" + location + "/customJobs/" +
         std::to_string(job_id);
}

std::string OperationName(int64_t project_number, const std::string& location,
                          const std::string& parent, int64_t operation_id) {
  std::string name = "projects/" + std::to_string(project_number) + "/locations/" + location + "/";
  if (!parent.empty()) name += parent + "/";
  return name + "operations/" + std::to_string(operation_id);
}

std::string PersistentResourceName(int64_t project_number, const std::string& location,
                                   const std::string& resource_id) {
  return "projects/" + std::to_string(project_number) + "/locations/" + location +
         "/persistentResources/" + resource_id;
}

StatusOr<bool> IsProjectNumber(const std::string& s) {
  auto all = [&](auto keep) { return std::all_of(s.begin(), s.end(), keep); };
  if (!s.empty() && s.size() <= 18 && all([](unsigned char c) { return std::isdigit(c); })) {
    return true;
  }
  if (!s.empty() && s.size() <= 63 && std::isalpha(static_cast<unsigned char>(s[0])) &&
      all([](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == ':';
      })) {
    return false;
  }
  return InvalidArgument("invalid project \"" + s +
                         "\": expected a project id (a letter, then letters, digits, "
                         "'-', '_', '.', ':') or a project number");
}

int64_t NewResourceId() {
  // Uniform over [1e18, INT64_MAX]: always 19 digits, never negative. Collisions surface as a
  // unique violation and the caller retries.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int64_t> dist(1'000'000'000'000'000'000LL,
                                              9'223'372'036'854'775'807LL);
  return dist(rng);
}

int64_t SeededIds::Next() {
  std::uniform_int_distribution<int64_t> dist(1'000'000'000'000'000'000LL,
                                              9'223'372'036'854'775'807LL);
  return dist(rng_);
}

IdSource& RandomIdSource() {
  static RandomIds ids;
  return ids;
}

Status ValidateLocation(const std::string& location) {
  bool ok = !location.empty() && location.size() <= 63;
  for (char c : location) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  }
  if (!ok)
    return InvalidArgument("invalid location \"" + location +
                           "\": expected a region like us-central1");
  return Status::Ok();
}

}  // namespace trainyard
