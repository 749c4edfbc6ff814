#pragma once
// One HTTP exchange with the server over cpprestsdk's http_client, and the retry rule: a call
// marked idempotent (GETs, polls) is retried with backoff on 503 and on a connection that failed
// or was reset; anything else (creates above all) is sent once more only after a 429, which the
// server refused before doing anything, because a reply lost after the server committed would
// otherwise create a second job. Between attempts it waits at least what the server asked for
// (RetryInfo's retryDelay, else Retry-After), up to the backoff's cap.
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sdk/backoff.h"
#include "sdk/timing.h"
#include "services/status.h"

namespace trainyard::sdk {

struct RetryPolicy {
  int max_attempts = 5;  // including the first
  BackoffPolicy backoff{std::chrono::milliseconds(500), 1.5, std::chrono::milliseconds(10000), 0.2};
};

struct TransportOptions {
  std::string endpoint;      // "http://127.0.0.1:8080"
  std::string bearer_token;  // sent as "Authorization: Bearer …" when not empty
  // https endpoints: PEM CA certificates to trust besides the system's (a private CA, a
  // self-signed server).
  std::string ca_file;
  std::chrono::milliseconds request_timeout{30000};
  RetryPolicy retry;
  Timing timing;
};

struct HttpCall {
  std::string method;  // "GET", "POST", "DELETE"
  std::string path;    // "/v1/projects/…", query included, already encoded
  std::optional<nlohmann::json> body;
  bool idempotent = false;
};

class HttpTransport {
 public:
  // INVALID_ARGUMENT when the endpoint is not an http(s) URL.
  static StatusOr<std::unique_ptr<HttpTransport>> Create(TransportOptions options);
  ~HttpTransport();

  // The JSON body of a 2xx reply ({} when empty), or the failure as a Status: the server's error
  // body decoded (sdk/http_error.h), UNAVAILABLE for a connection that failed.
  StatusOr<nlohmann::json> Call(const HttpCall& call);

 private:
  struct Impl;
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainyard::sdk
