#include "api/request_target.h"

namespace trainyard::api {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int high = HexValue(text[i + 1]);
      int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool ParseRequestTarget(std::string_view target, HttpRequest& request) {
  if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) {
    size_t slash = target.find('/', target.find("://") + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (size_t hash = target.find('#'); hash != std::string_view::npos)
    target = target.substr(0, hash);
  size_t question = target.find('?');
  auto path = PercentDecode(target.substr(0, question), /*plus_is_space=*/false);
  if (!path) return false;
  request.path = std::move(*path);
  if (question == std::string_view::npos) return true;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), /*plus_is_space=*/true);
    auto value =
        PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                      /*plus_is_space=*/true);
    if (!key || !value) return false;
    request.query[std::move(*key)] = std::move(*value);
  }
  return true;
}

}  // namespace trainyard::api
