#include "api/query_params.h"

#include <algorithm>
#include <charconv>

namespace trainyard::api {

std::string QueryOr(const HttpRequest& request, const char* camel, const char* snake) {
  if (const std::string* v = request.Query(camel)) return *v;
  if (const std::string* v = request.Query(snake)) return *v;
  return "";
}

StatusOr<int> ParsePageSize(const std::string& text, int default_size, int max_size) {
  if (text.empty()) return default_size;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return InvalidField("pageSize", "must be a non-negative integer, got \"" + text + "\"");
  }
  if (value == 0) return default_size;
  return std::min(value, max_size);
}

}  // namespace trainyard::api
