#pragma once
// What a browser can send to a server it did not load its page from, refused before routing.
// A web page the developer opens can POST to 127.0.0.1 (a "simple" request needs no CORS
// preflight: text/plain, form encodings, or a Blob with no type) and, through DNS rebinding, can
// even read the replies under a name of its own. The guard refuses:
// - a body whose Content-Type is not application/json (gcloud, the Node SDK, our SDK and CLI all
//   send it);
// - an Origin that is not the server's own, scheme included (browsers send one on every
//   cross-origin request and on same-origin POSTs; gcloud, the SDKs and curl send none);
// - without tokens: a Host that is not a loopback name or one the operator named (DNS
//   rebinding), and a request a proxy forwarded (a proxy would publish a server without tokens).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

struct RequestGuardOptions {
  // No tokens (serve --auth=off): the Host must be loopback or in `allowed_hosts`, and forwarded
  // requests are refused.
  bool without_tokens = false;
  // Host names (without port) accepted besides the loopback ones (serve --allowed-host).
  std::vector<std::string> allowed_hosts;
  // The listener speaks HTTPS (serve --tls-cert): its own pages' Origin is https://, and an
  // http:// page (whoever answers plain HTTP for that name) is another site. Behind a proxy that
  // ends TLS, its X-Forwarded-Proto says the scheme instead.
  bool tls = false;
};

struct GuardRefusal {
  int http_status = 403;
  Status status;
};

// Nothing when the request may go on.
std::optional<GuardRefusal> GuardRequest(const HttpRequest& request,
                                         const RequestGuardOptions& options);

// The host part of a Host header or an origin's authority: "[::1]:8080" → "::1",
// "Example.COM:80" → "example.com". Empty when it is not a well-formed authority.
std::string HostOfAuthority(std::string_view authority);
// localhost (and *.localhost, RFC 6761), 127.0.0.0/8 and ::1.
bool IsLoopbackName(std::string_view host);

}  // namespace trainyard::api
