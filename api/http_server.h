#pragma once
// The server seam. Whatever listener sits behind it keeps these: body size (413 before the body
// is read), header size (431 while the header is read), chunked bodies refused (411), a client that
// dribbles cut off, a cap on open connections, and a drain on shutdown.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "services/request_gauge.h"
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
  // Threads that read and write the sockets and answer reads (GET: most from memory, else one
  // query). Measured here (docs/performance.md): 2 × cores kept a poll's p99 lowest; 16 doubled it.
  int io_threads = 4;
  // Threads that run writes' handlers (POST, PATCH, DELETE), which wait for their commit: a create
  // for its group commit, `:wait` for an operation. Threads ≥ DB pool size + 2 × cores
  // (docs/performance.md, "Thread counts"), or the group commits shrink.
  int threads = 4;
  // Once a request's first byte is in, its header must be whole within header_timeout and its body
  // within body_timeout (what the shipped nginx file allows: client_header_timeout 10s,
  // client_body_timeout 30s); a kept connection may wait idle_timeout for its next request
  // (nginx's keepalive_timeout default, 75 s, longer than Node's agent keeps a socket, 4-5 s).
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds idle_timeout{75'000};
  std::chrono::milliseconds write_timeout{30'000};
  // Connections open at once. At the cap the listener accepts no more until one closes: the
  // kernel's backlog holds the newcomers, who are served late rather than refused. Chosen: room
  // for thousands of pollers each keeping a connection, far below the 65,536 descriptors a
  // service is commonly allowed, so requests' own files and database connections never run out.
  int max_connections = 4096;
  // Counts the writes from their header to their reply, for the background loops that give way
  // to them (services/request_gauge.h); none: not counted. Must outlive the server.
  RequestGauge* writes_in_flight = nullptr;
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;
  virtual Status Start() = 0;
  // Stops accepting, waits up to `drain` for requests in flight, then closes. Until it is called
  // the listener accepts and answers as ever: a drain period (serve --drain-period) is the
  // caller's, which turns readiness to 503 meanwhile.
  virtual void Stop(std::chrono::milliseconds drain) = 0;
  virtual int InFlight() const = 0;
};

// The listener: Boost.Beast on one asio io_context run by options.io_threads threads; writes'
// handlers on a pool of options.threads.
std::unique_ptr<HttpServer> NewHttpServer(ServerOptions options, Handler handler);

}  // namespace trainyard::api
