#pragma once
// The server seam. Whatever listener sits behind it, limits are enforced here in our code: body
// size (413 before the body is read), header size (431), chunked bodies refused, and a drain on
// shutdown.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

using Handler = std::function<HttpResponse(HttpRequest&)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  size_t max_body_bytes = 1 << 20;  // 1 MiB, as Vertex
  // Every header's name and value together; more is a 431. Chosen: twice Node's 16 KiB default,
  // half of what the shipped nginx file lets through (4 x 16k), far above any client's 2 KiB.
  size_t max_header_bytes = 32 << 10;
  // Both set: HTTPS only, TLS 1.2 or later, with this PEM certificate chain and private key.
  std::string tls_cert_file;
  std::string tls_key_file;
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  virtual Status Start() = 0;
  // Stops accepting, waits up to `drain` for requests in flight, then closes.
  virtual void Stop(std::chrono::milliseconds drain) = 0;
  virtual int InFlight() const = 0;
};

std::unique_ptr<HttpServer> NewCpprestServer(ServerOptions options, Handler handler);

// Sizes the listener's worker pool. Handlers block on the database, so the pool needs
// threads ≥ DB pool size + 2 × cores. Call first thing in main, before any server exists.
void ConfigureHttpThreads(int threads);

}  // namespace trainyard::api
