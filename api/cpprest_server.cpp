// cpprestsdk behind our seam. The listener has no body limit, no timeouts and no drain (see
// docs/engineering.md §1.3–1.5), so this file adds what we need and exposes nothing of cpprest.
#include <cpprest/http_listener.h>
#include <cpprest/uri.h>
#include <pplx/threadpool.h>
#include <boost/asio/ssl.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "api/error_body.h"
#include "api/http_server.h"

namespace trainyard::api {
namespace {

using web::http::http_request;
using web::http::http_response;
using web::http::experimental::listener::http_listener;
using web::http::experimental::listener::http_listener_config;

std::string Lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A query's '+' is a space (HTML forms, curl --data-urlencode); a literal plus comes as %2B.
std::string DecodeQueryPart(std::string part) {
  for (char& c : part) {
    if (c == '+') c = ' ';
  }
  return web::uri::decode(part);
}

// Requests between Accept and their reply written: a drain waits for none to be left. Shared with
// the reply's continuation, which may run after the server is gone.
struct RequestsInFlight {
  std::mutex mu;
  std::condition_variable idle;
  int count = 0;
  void Leave() {
    std::lock_guard lock(mu);
    if (--count == 0) idle.notify_all();
  }
};

// `written` runs once the reply is on the wire (or the client went away): the request counts as in
// flight until then, so closing the listener after a drain never cuts a reply short.
void ReplyWith(const http_request& req, const HttpResponse& out,
               std::shared_ptr<RequestsInFlight> written = nullptr) {
  http_response resp(static_cast<web::http::status_code>(out.status));
  for (const auto& [name, value] : out.headers) resp.headers().add(name, value);
  if (out.close_connection) resp.headers().add("Connection", "close");
  resp.set_body(out.body, out.content_type);
  req.reply(resp).then([written = std::move(written)](pplx::task<void> t) {
    try {
      t.get();
    } catch (...) {
      // The client went away before the reply; nothing to do.
    }
    if (written) written->Leave();
  });
}

class CpprestServer final : public HttpServer {
 public:
  CpprestServer(ServerOptions options, Handler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {}

  ~CpprestServer() override { Stop(std::chrono::milliseconds(0)); }

  // TLS 1.2 or later (no SSLv3, TLS 1.0 or 1.1), no compression, our certificate and key.
  // Throws boost::system::system_error for an unreadable or mismatched file.
  void ConfigureTls(boost::asio::ssl::context& ctx) const {
    namespace ssl = boost::asio::ssl;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                    ssl::context::no_compression | ssl::context::single_dh_use);
    ctx.use_certificate_chain_file(options_.tls_cert_file);
    ctx.use_private_key_file(options_.tls_key_file, ssl::context::pem);
  }

  Status Start() override {
    try {
      http_listener_config config;
      const bool tls = !options_.tls_cert_file.empty();
      if (tls) {
        // Read now, so a bad file stops start-up with its name instead of failing each handshake.
        try {
          boost::asio::ssl::context probe(boost::asio::ssl::context::tls_server);
          ConfigureTls(probe);
        } catch (const std::exception& e) {
          return InvalidArgument("cannot use the TLS certificate " + options_.tls_cert_file +
                                 " with the key " + options_.tls_key_file + ": " + e.what());
        }
        config.set_ssl_context_callback(
            [this](boost::asio::ssl::context& ctx) { ConfigureTls(ctx); });
      }
      std::string uri = std::string(tls ? "https" : "http") + "://" + options_.host + ":" +
                        std::to_string(options_.port);
      listener_ = std::make_unique<http_listener>(uri, config);
      listener_->support([this](http_request req) { Accept(std::move(req)); });
      listener_->open().wait();
      return Status::Ok();
    } catch (const std::exception& e) {
      listener_.reset();
      return Unavailable(std::string("cannot listen on ") + options_.host + ":" +
                         std::to_string(options_.port) + ": " + e.what());
    }
  }

  void Stop(std::chrono::milliseconds drain) override {
    draining_ = true;
    {
      std::unique_lock lock(in_flight_->mu);
      in_flight_->idle.wait_for(lock, drain, [this] { return in_flight_->count == 0; });
    }
    if (listener_) {
      try {
        listener_->close().wait();
      } catch (...) {
      }
      listener_.reset();
    }
  }

  int InFlight() const override {
    std::lock_guard lock(in_flight_->mu);
    return in_flight_->count;
  }

 private:
  void Accept(http_request req) {
    if (draining_) {
      ReplyWith(req, ErrorResponse(Unavailable("the server is shutting down"), ""));
      return;
    }
    Enter();
    const auto& headers = req.headers();
    auto te = headers.find("Transfer-Encoding");
    if (te != headers.end() && Lowercase(te->second).find("chunked") != std::string::npos) {
      HttpResponse out =
          ErrorResponse(Status(Code::kInvalidArgument,
                               "chunked request bodies are not accepted; send a Content-Length"),
                        "", 411);
      out.close_connection = true;
      Finish(req, out);
      return;
    }
    size_t header_bytes = 0;
    for (const auto& [name, value] : headers) header_bytes += name.size() + value.size() + 4;
    if (header_bytes > options_.max_header_bytes) {
      // cpprest has read them already; what we refuse is to route and log them (RFC 6585 §5).
      RefuseOversized(req, "request headers", header_bytes, options_.max_header_bytes, 431);
      return;
    }
    uint64_t length = headers.content_length();
    if (length > options_.max_body_bytes) {
      // Reply before the body is read: the client stops sending and the connection closes.
      RefuseOversized(req, "request body", length, options_.max_body_bytes, 413);
      return;
    }
    auto request = std::make_shared<HttpRequest>();
    request->method = req.method();
    try {
      const auto& relative = req.relative_uri();
      request->path = web::uri::decode(relative.path());
      for (const auto& [k, v] : web::uri::split_query(relative.query())) {
        request->query[DecodeQueryPart(k)] = DecodeQueryPart(v);
      }
    } catch (const std::exception&) {
      Finish(req, ErrorResponse(InvalidArgument("malformed request URI"), ""));
      return;
    }
    for (const auto& [name, value] : headers) request->headers[Lowercase(name)] = value;

    req.extract_utf8string(/*ignore_content_type=*/true)
        .then([this, req, request](pplx::task<std::string> body) {
          HttpResponse out;
          try {
            request->body = body.get();
            out = handler_(*request);
          } catch (const std::exception& e) {
            out = ErrorResponse(InvalidArgument(std::string("cannot read request: ") + e.what()),
                                request->request_id);
          }
          Finish(req, out);
        });
  }

  // A request over one of our size limits, answered before it is routed; the connection closes.
  void RefuseOversized(const http_request& req, const char* what, uint64_t bytes, uint64_t limit,
                       int http_status) {
    HttpResponse out =
        ErrorResponse(Status(Code::kInvalidArgument,
                             std::string(what) + " of " + std::to_string(bytes) +
                                 " bytes exceeds the limit of " + std::to_string(limit) + " bytes"),
                      "", http_status);
    out.close_connection = true;
    Finish(req, out);
  }

  void Enter() {
    std::lock_guard lock(in_flight_->mu);
    ++in_flight_->count;
  }

  void Finish(const http_request& req, const HttpResponse& out) { ReplyWith(req, out, in_flight_); }

  ServerOptions options_;
  Handler handler_;
  std::unique_ptr<http_listener> listener_;
  std::atomic<bool> draining_{false};
  std::shared_ptr<RequestsInFlight> in_flight_ = std::make_shared<RequestsInFlight>();
};

}  // namespace

void ConfigureHttpThreads(int threads) {
  crossplat::threadpool::initialize_with_threads(static_cast<size_t>(threads));
}

std::unique_ptr<HttpServer> NewCpprestServer(ServerOptions options, Handler handler) {
  return std::make_unique<CpprestServer>(std::move(options), std::move(handler));
}

}  // namespace trainyard::api
