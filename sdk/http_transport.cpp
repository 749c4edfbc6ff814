#include "sdk/http_transport.h"

#include <cpprest/http_client.h>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <exception>
#include <utility>

#include "sdk/http_error.h"

namespace trainyard::sdk {
namespace {

namespace http = web::http;

// The outcome of one attempt: a reply, or a transport failure (no reply at all).
struct Attempt {
  std::optional<int> status;
  std::string body;
  std::string retry_after;  // the Retry-After header, if any
  std::string transport_error;
};

// A 503 that says when to come back (RetryInfo): the server is still starting and did nothing.
bool Starting(const Attempt& attempt) {
  return attempt.status && *attempt.status == 503 &&
         ServerRetryDelay(StatusFromHttpError(503, attempt.body), "").has_value();
}

bool ShouldRetry(const HttpCall& call, const Attempt& attempt) {
  // A 429 (a rate limit) did nothing on the server: safe to send again, creates included. So did
  // a server that is still starting.
  if (attempt.status && *attempt.status == 429) return true;
  if (Starting(attempt)) return true;
  if (!call.idempotent) return false;
  if (!attempt.status) return true;  // connection refused, reset, or timed out
  return *attempt.status == 503;
}

}  // namespace

struct HttpTransport::Impl {
  TransportOptions options;
  http::client::http_client client;

  Impl(TransportOptions o, http::client::http_client c)
      : options(std::move(o)), client(std::move(c)) {}

  // cpprestsdk reports transport failures by throwing; they stop here.
  Attempt Send(const HttpCall& call) {
    Attempt attempt;
    try {
      http::http_request request(call.method);
      request.set_request_uri(call.path);
      request.headers().add("Accept", "application/json");
      if (!options.bearer_token.empty()) {
        request.headers().add("Authorization", "Bearer " + options.bearer_token);
      }
      if (call.body) request.set_body(call.body->dump(), "application/json");
      http::http_response response = client.request(request).get();
      attempt.status = response.status_code();
      if (auto it = response.headers().find("Retry-After"); it != response.headers().end()) {
        attempt.retry_after = it->second;
      }
      attempt.body = response.extract_string(/*ignore_content_type=*/true).get();
    } catch (const std::exception& e) {
      attempt.status.reset();
      attempt.transport_error = e.what();
    }
    return attempt;
  }
};

StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Create(TransportOptions options) {
  const std::string& endpoint = options.endpoint;
  if (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0) {
    return InvalidArgument("endpoint must be an http:// or https:// URL, got \"" + endpoint + "\"");
  }
  try {
    http::client::http_client_config config;
    config.set_timeout(
        std::chrono::duration_cast<std::chrono::microseconds>(options.request_timeout));
    if (!options.ca_file.empty()) {
      // Checked here, so that a bad file is one clear error and not a failed handshake per call.
      boost::asio::ssl::context probe(boost::asio::ssl::context::tls_client);
      boost::system::error_code ec;
      probe.load_verify_file(options.ca_file, ec);
      if (ec) {
        return InvalidArgument("cannot read the CA file " + options.ca_file + ": " + ec.message());
      }
      config.set_ssl_context_callback([ca = options.ca_file](boost::asio::ssl::context& ctx) {
        ctx.set_default_verify_paths();
        boost::system::error_code ignored;  // read above; a file that vanished fails the handshake
        ctx.load_verify_file(ca, ignored);
      });
    }
    http::client::http_client client(web::uri(endpoint), config);
    auto impl = std::make_unique<Impl>(std::move(options), std::move(client));
    return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
  } catch (const std::exception& e) {
    return InvalidArgument("endpoint \"" + endpoint + "\" is not a valid URL: " + e.what());
  }
}

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTransport::~HttpTransport() = default;

StatusOr<nlohmann::json> HttpTransport::Call(const HttpCall& call) {
  const TransportOptions& options = impl_->options;
  Backoff backoff(options.retry.backoff, options.timing.uniform01);
  Attempt attempt;
  const auto first = options.timing.now();
  for (int n = 1;; ++n) {
    attempt = impl_->Send(call);
    if (!ShouldRetry(call, attempt)) break;
    // A starting server (its PostgreSQL's first initdb can take seconds) is waited for up to the
    // request timeout, however many tries that takes; anything else gets max_attempts.
    if (Starting(attempt) ? options.timing.now() - first >= options.request_timeout
                          : n >= options.retry.max_attempts) {
      break;
    }
    // The server's word on when to come back (RetryInfo, Retry-After) wins over our schedule.
    std::chrono::milliseconds delay = backoff.Next();
    if (attempt.status) {
      const Status refused = StatusFromHttpError(*attempt.status, attempt.body);
      if (auto asked = ServerRetryDelay(refused, attempt.retry_after)) {
        delay = std::max(delay, std::min(*asked, options.retry.backoff.max));
      }
    }
    options.timing.sleep(delay);
  }
  if (!attempt.status) {
    return Unavailable("cannot reach " + options.endpoint + ": " + attempt.transport_error);
  }
  if (*attempt.status < 200 || *attempt.status >= 300) {
    return StatusFromHttpError(*attempt.status, attempt.body);
  }
  if (attempt.body.empty()) return nlohmann::json::object();
  nlohmann::json body = nlohmann::json::parse(attempt.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return Internal("the server answered " + call.method + " " + call.path +
                    " with a body that is not JSON");
  }
  return body;
}

}  // namespace trainyard::sdk
