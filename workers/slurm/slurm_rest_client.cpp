#include "workers/slurm/slurm_rest_client.h"

#include <fstream>
#include <sstream>

#include <cpprest/http_client.h>
#include <boost/asio/ssl.hpp>

#include <exception>
#include <filesystem>
#include <optional>

#include "workers/slurm/slurm_wire.h"

namespace trainyard::slurm {
namespace http = web::http;

std::string TokenFromFileText(const std::string& text) {
  std::string token = text;
  if (size_t eq = token.find("SLURM_JWT="); eq != std::string::npos) {
    token = token.substr(eq + 10);
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  return token;
}

struct SlurmRestClient::Impl {
  SlurmRestOptions options;
  http::client::http_client_config config;
  http::client::http_client client;
  std::mutex mu;
  std::string token;  // as last read
  std::filesystem::file_time_type token_mtime{};

  Impl(SlurmRestOptions o, http::client::http_client_config cfg)
      : options(std::move(o)),
        config(std::move(cfg)),
        client(utility::conversions::to_string_t(options.url), config),
        token(options.token) {}

  std::string Token() {
    std::lock_guard lock(mu);
    if (options.token_file.empty()) return token;
    std::error_code ec;
    auto mtime = std::filesystem::last_write_time(options.token_file, ec);
    if (!ec && (token.empty() || mtime != token_mtime)) {
      // The operator's own file, which may well be a link (a mounted secret): read as named.
      std::ifstream in(options.token_file, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      token = TokenFromFileText(text.str());
      token_mtime = mtime;
    }
    return token;
  }

  struct Reply {
    int status = 0;
    std::string body;
  };

  // cpprestsdk reports transport failures by throwing; they stop here as UNAVAILABLE.
  // `timeout`, when shorter than the client's, bounds this request alone (a client of its own).
  StatusOr<Reply> Send(const http::method& method, const std::string& path, const std::string* body,
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    try {
      std::optional<http::client::http_client> bounded;
      if (timeout && *timeout < options.timeout) {
        http::client::http_client_config shorter = config;
        shorter.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(*timeout));
        bounded.emplace(utility::conversions::to_string_t(options.url), shorter);
      }
      http::http_request request(method);
      request.set_request_uri("/slurm/" + std::string(kOpenApiVersion) + path);
      request.headers().add("Accept", "application/json");
      request.headers().add("X-SLURM-USER-NAME", options.user);
      request.headers().add("X-SLURM-USER-TOKEN", Token());
      if (body != nullptr) request.set_body(*body, "application/json");
      http::http_response response = (bounded ? *bounded : client).request(request).get();
      Reply reply;
      reply.status = response.status_code();
      reply.body = response.extract_string(/*ignore_content_type=*/true).get();
      return reply;
    } catch (const std::exception& e) {
      return Unavailable("slurmrestd at " + options.url + " cannot be reached: " + e.what());
    }
  }
};

StatusOr<std::unique_ptr<SlurmRestClient>> SlurmRestClient::Create(SlurmRestOptions options) {
  if (options.url.rfind("http://", 0) != 0 && options.url.rfind("https://", 0) != 0) {
    return InvalidArgument("--slurm-url must be an http:// or https:// URL, got \"" + options.url +
                           "\"");
  }
  if (options.token.empty() && options.token_file.empty()) {
    return InvalidArgument(
        "the Slurm runtime needs a token: --slurm-token-file FILE or SLURM_JWT in the environment");
  }
  if (options.user.empty()) return InvalidArgument("--slurm-user must not be empty");
  if (!options.ca_file.empty() && options.url.rfind("https://", 0) != 0) {
    return InvalidArgument("--slurm-ca-file is for an https:// --slurm-url, got \"" + options.url +
                           "\"");
  }
  try {
    http::client::http_client_config config;
    config.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(options.timeout));
    if (!options.ca_file.empty()) {
      // Read now: a bad file is one clear error at start, not a failed handshake per call.
      boost::asio::ssl::context probe(boost::asio::ssl::context::tls_client);
      boost::system::error_code ec;
      probe.load_verify_file(options.ca_file, ec);
      if (ec)
        return InvalidArgument("cannot read --slurm-ca-file " + options.ca_file + ": " +
                               ec.message());
      config.set_ssl_context_callback([ca = options.ca_file](boost::asio::ssl::context& ctx) {
        boost::system::error_code ignored;  // read above; a file that vanished fails the handshake
        ctx.load_verify_file(ca, ignored);
      });
    }
    auto impl = std::make_unique<Impl>(std::move(options), std::move(config));
    return std::unique_ptr<SlurmRestClient>(new SlurmRestClient(std::move(impl)));
  } catch (const std::exception& e) {
    return InvalidArgument("--slurm-url: " + std::string(e.what()));
  }
}

SlurmRestClient::SlurmRestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SlurmRestClient::~SlurmRestClient() = default;

StatusOr<int64_t> SlurmRestClient::Submit(const SlurmSubmit& job,
                                          std::chrono::milliseconds timeout) {
  const std::string body = EncodeSubmit(job);
  TY_ASSIGN_OR_RETURN(Impl::Reply reply,
                      impl_->Send(http::methods::POST, "/job/submit", &body, timeout));
  return DecodeSubmitReply(reply.status, reply.body);
}

StatusOr<std::vector<SlurmJob>> SlurmRestClient::Jobs() {
  TY_ASSIGN_OR_RETURN(Impl::Reply reply, impl_->Send(http::methods::GET, "/jobs", nullptr));
  return DecodeJobs(reply.status, reply.body);
}

Status SlurmRestClient::Cancel(int64_t job_id) {
  TY_ASSIGN_OR_RETURN(Impl::Reply reply,
                      impl_->Send(http::methods::DEL, "/job/" + std::to_string(job_id), nullptr));
  return DecodeCancelReply(reply.status, reply.body);
}

// slurmrestd's DELETE /job/{job_id} with a signal and flags=FULL_JOB is scancel's --signal with
// --full (KILL_FULL_JOB): the batch shell is signalled with the steps, and the job is not ended.
Status SlurmRestClient::Signal(int64_t job_id, const std::string& signal) {
  TY_ASSIGN_OR_RETURN(Impl::Reply reply, impl_->Send(http::methods::DEL,
                                                     "/job/" + std::to_string(job_id) +
                                                         "?signal=" + signal + "&flags=FULL_JOB",
                                                     nullptr));
  return DecodeCancelReply(reply.status, reply.body);
}

StatusOr<std::vector<SlurmNode>> SlurmRestClient::Nodes() {
  TY_ASSIGN_OR_RETURN(Impl::Reply reply, impl_->Send(http::methods::GET, "/nodes", nullptr));
  return DecodeNodes(reply.status, reply.body);
}

}  // namespace trainyard::slurm
