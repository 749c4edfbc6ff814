#include "api/request_guard.h"

#include <algorithm>
#include <cctype>

namespace trainyard::api {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "application/json" or "application/json; charset=utf-8", in any case.
bool IsJsonMediaType(std::string_view content_type) {
  std::string_view type = Trim(content_type.substr(0, content_type.find(';')));
  return Lower(type) == "application/json";
}

bool IsPortText(std::string_view port) {
  return !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// "host:443" → "host" for https, "host:80" → "host" for http; other ports stay, lowercased.
std::string WithoutDefaultPort(std::string_view authority, std::string_view scheme) {
  const std::string_view default_port = scheme == "https" ? ":443" : ":80";
  if (authority.ends_with(default_port)) authority.remove_suffix(default_port.size());
  return Lower(authority);
}

// "http://Host:80" → "http://host"; "https://h:443" → "https://h"; other ports stay. Empty for
// "null" (a sandboxed or file:// page) and anything that is not scheme://authority.
std::string NormalizedOrigin(std::string_view origin) {
  std::string lower = Lower(Trim(origin));
  std::string_view text = lower;
  std::string_view scheme;
  if (text.starts_with("http://")) {
    scheme = "http";
  } else if (text.starts_with("https://")) {
    scheme = "https";
  } else {
    return "";
  }
  std::string_view authority = text.substr(scheme.size() + 3);
  if (authority.empty() || authority.find('/') != std::string_view::npos) return "";
  if (HostOfAuthority(authority).empty()) return "";
  return std::string(scheme) + "://" + WithoutDefaultPort(authority, scheme);
}

// How the client reached this server: the scheme a TLS-ending proxy names (the shipped nginx file
// sets X-Forwarded-Proto; a page cannot add that header without a CORS preflight, which this
// server never grants), else the listener's own. Lowercase; whatever a proxy wrote, unchecked.
std::string SchemeReached(const HttpRequest& request, const RequestGuardOptions& options) {
  if (const std::string* proto = request.Header("x-forwarded-proto")) {
    std::string_view first = *proto;
    return Lower(Trim(first.substr(0, first.find(','))));  // a chain of proxies: the client's
  }
  return options.tls ? "https" : "http";
}

// The origin of this server's own pages: the scheme it was reached with and its Host.
std::string OwnOrigin(const HttpRequest& request, const RequestGuardOptions& options,
                      std::string_view host) {
  const std::string scheme = SchemeReached(request, options);
  return scheme + "://" + WithoutDefaultPort(Trim(host), scheme);
}

GuardRefusal Refuse(int http_status, Code code, std::string message) {
  return GuardRefusal{http_status, Status(code, std::move(message))};
}

constexpr const char* kForwardedHeaders[] = {"forwarded", "x-forwarded-for", "x-forwarded-host",
                                             "x-real-ip"};

}  // namespace

std::string HostOfAuthority(std::string_view authority) {
  std::string_view host = authority;
  if (host.starts_with("[")) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return "";
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && !(rest.front() == ':' && IsPortText(rest.substr(1)))) return "";
    host = host.substr(1, close - 1);
    if (host.empty() || !std::all_of(host.begin(), host.end(), [](char c) {
          return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        })) {
      return "";
    }
    return Lower(host);
  }
  if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    if (!IsPortText(host.substr(colon + 1))) return "";
    host = host.substr(0, colon);
  }
  if (host.empty() || !std::all_of(host.begin(), host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
      })) {
    return "";
  }
  return Lower(host);
}

bool IsLoopbackName(std::string_view host) {
  if (host == "localhost" || host.ends_with(".localhost") || host == "::1") return true;
  // 127.0.0.0/8 written as a dotted quad: four numbers, the first 127.
  if (!host.starts_with("127.")) return false;
  int parts = 0;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    std::string_view part =
        host.substr(start, dot == std::string_view::npos ? host.npos : dot - start);
    if (part.empty() || part.size() > 3 ||
        !std::all_of(part.begin(), part.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
        std::stoi(std::string(part)) > 255) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 4;
}

std::optional<GuardRefusal> GuardRequest(const HttpRequest& request,
                                         const RequestGuardOptions& options) {
  if (!request.body.empty()) {
    const std::string* type = request.Header("content-type");
    if (type == nullptr || !IsJsonMediaType(*type)) {
      return Refuse(415, Code::kInvalidArgument,
                    "a request body must be sent with Content-Type: application/json, not " +
                        (type == nullptr ? std::string("none") : "\"" + *type + "\""));
    }
  }
  const std::string* host = request.Header("host");
  if (const std::string* origin = request.Header("origin")) {
    const std::string from = NormalizedOrigin(*origin);
    const std::string own = host == nullptr ? "" : OwnOrigin(request, options, *host);
    if (from.empty() || own.empty() || from != own) {
      // The origin it expected, so an operator whose proxy ends TLS without saying so
      // (X-Forwarded-Proto) sees why the console's own requests are refused.
      return Refuse(403, Code::kPermissionDenied,
                    "requests from the web page at Origin \"" + *origin +
                        "\" are refused: only this server's own pages (its /console/" +
                        (own.empty() ? std::string() : ", at " + own) +
                        ") may call it from a browser");
    }
  }
  if (!options.without_tokens) return std::nullopt;
  for (const char* name : kForwardedHeaders) {
    if (request.Header(name) != nullptr) {
      return Refuse(403, Code::kPermissionDenied,
                    std::string("this server runs without tokens (--auth=off) and refuses "
                                "requests a proxy forwarded (") +
                        name +
                        "): a proxy would publish it to everyone who reaches the proxy. Serve "
                        "with --auth=tokens behind a proxy.");
    }
  }
  const std::string name = host == nullptr ? "" : HostOfAuthority(Trim(*host));
  const bool allowed =
      !name.empty() &&
      (IsLoopbackName(name) || std::find(options.allowed_hosts.begin(), options.allowed_hosts.end(),
                                         name) != options.allowed_hosts.end());
  if (!allowed) {
    return Refuse(403, Code::kPermissionDenied,
                  "this server runs without tokens (--auth=off) and answers only requests "
                  "addressed to a loopback name (localhost, 127.0.0.1, [::1]) or to a name given "
                  "with --allowed-host; Host was \"" +
                      (host == nullptr ? std::string() : *host) + "\"");
  }
  return std::nullopt;
}

}  // namespace trainyard::api
