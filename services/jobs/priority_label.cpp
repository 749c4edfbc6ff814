#include "services/jobs/priority_label.h"

#include <charconv>

namespace trainyard {

StatusOr<int> ParsePriorityLabel(const std::map<std::string, std::string>& labels) {
  auto it = labels.find(std::string(kPriorityLabel));
  if (it == labels.end()) return kDefaultPriority;
  const std::string& v = it->second;
  if (v == "low") return 100;
  if (v == "medium") return 500;
  if (v == "high") return 1000;
  int value = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (ec == std::errc() && end == v.data() + v.size() && value >= 0 && value <= 1000000) {
    return value;
  }
  return InvalidField(
      "labels." + std::string(kPriorityLabel),
      "must be low, medium, high or a number from 0 to 1000000 (got \"" + v + "\")");
}

}  // namespace trainyard
