#include "api/field_mask.h"

#include <algorithm>

namespace trainyard::api {
namespace {

std::string ToCamel(const std::string& s) {
  std::string out;
  bool upper = false;
  for (char c : s) {
    if (c == '_') {
      upper = true;
    } else {
      out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
      upper = false;
    }
  }
  return out;
}

void CopyPath(const nlohmann::json& from, nlohmann::json& to, const std::vector<std::string>& path,
              size_t i) {
  if (!from.is_object()) return;
  auto it = from.find(path[i]);
  if (it == from.end()) return;
  if (i + 1 == path.size()) {
    to[path[i]] = *it;
    return;
  }
  if (!it->is_object()) return;  // a path cannot walk into a scalar or a list
  if (!to.contains(path[i])) to[path[i]] = nlohmann::json::object();
  CopyPath(*it, to[path[i]], path, i + 1);
}

}  // namespace

StatusOr<FieldMask> ParseFieldMask(const std::string& text,
                                   const std::vector<std::string>& known_top_level,
                                   const std::string& parameter) {
  FieldMask mask;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string path = text.substr(start, end - start);
    start = end + 1;
    path.erase(0, path.find_first_not_of(' '));
    path.erase(path.find_last_not_of(' ') + 1);
    if (path.empty()) continue;
    std::vector<std::string> segments;
    size_t s = 0;
    while (s <= path.size()) {
      size_t e = path.find('.', s);
      if (e == std::string::npos) e = path.size();
      std::string segment = ToCamel(path.substr(s, e - s));
      if (segment.empty()) return InvalidField(parameter, "empty segment in path \"" + path + "\"");
      segments.push_back(std::move(segment));
      s = e + 1;
    }
    if (std::find(known_top_level.begin(), known_top_level.end(), segments[0]) ==
        known_top_level.end()) {
      return InvalidField(parameter, "unknown field \"" + path + "\"");
    }
    mask.paths.push_back(std::move(segments));
  }
  return mask;
}

std::vector<std::string> MaskPaths(const FieldMask& mask) {
  std::vector<std::string> out;
  for (const auto& segments : mask.paths) {
    std::string path;
    for (const std::string& segment : segments) path += (path.empty() ? "" : ".") + segment;
    out.push_back(std::move(path));
  }
  return out;
}

nlohmann::json ApplyFieldMask(const nlohmann::json& resource, const FieldMask& mask) {
  if (mask.paths.empty()) return resource;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& path : mask.paths) CopyPath(resource, out, path, 0);
  return out;
}

}  // namespace trainyard::api
