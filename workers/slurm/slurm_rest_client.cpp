#include "workers/slurm/slurm_rest_client.h"

#include <fstream>
#include <sstream>

#include <cpprest/http_client.h>

#include <exception>
#include <filesystem>

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
  http::client::http_client client;
  std::mutex mu;
  std::string token;  // as last read
  std::filesystem::file_time_type token_mtime{};

  Impl(SlurmRestOptions o, http::client::http_client c)
      : options(std::move(o)), client(std::move(c)), token(options.token) {}

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
  StatusOr<Reply> Send(const http::method& method, const std::string& path,
                       const std::string* body) {
    try {
      http::http_request request(method);
      request.set_request_uri("/slurm/" + std::string(kOpenApiVersion) + path);
      request.headers().add("Accept", "application/json");
      request.headers().add("X-SLURM-USER-NAME", options.user);
      request.headers().add("X-SLURM-USER-TOKEN", Token());
      if (body != nullptr) request.set_body(*body, "application/json");
      http::http_response response = client.request(request).get();
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
  try {
    http::client::http_client_config config;
    config.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(options.timeout));
    http::client::http_client client(utility::conversions::to_string_t(options.url), config);
    auto impl = std::make_unique<Impl>(std::move(options), std::move(client));
    return std::unique_ptr<SlurmRestClient>(new SlurmRestClient(std::move(impl)));
  } catch (const std::exception& e) {
    return InvalidArgument("--slurm-url: " + std::string(e.what()));
  }
}

SlurmRestClient::SlurmRestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SlurmRestClient::~SlurmRestClient() = default;

StatusOr<int64_t> SlurmRestClient::Submit(const SlurmSubmit& job) {
  const std::string body = EncodeSubmit(job);
  TY_ASSIGN_OR_RETURN(Impl::Reply reply, impl_->Send(http::methods::POST, "/job/submit", &body));
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

StatusOr<std::vector<SlurmNode>> SlurmRestClient::Nodes() {
  TY_ASSIGN_OR_RETURN(Impl::Reply reply, impl_->Send(http::methods::GET, "/nodes", nullptr));
  return DecodeNodes(reply.status, reply.body);
}

}  // namespace trainyard::slurm
