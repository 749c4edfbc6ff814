// slurmrestd over https (usually behind a TLS proxy): the client trusts the CA --slurm-ca-file
// names and nothing else, and refuses a CA file with a plain http:// URL.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "api/http_server.h"
#include "tests/free_port.h"
#include "workers/slurm/slurm_rest_client.h"

namespace trainyard::slurm {
namespace {
namespace fs = std::filesystem;

using testing::FreePort;

TEST(SlurmRestTlsTest, TrustsTheNamedCaAndNothingElse) {
  const fs::path pki = fs::temp_directory_path() / ("ty-slurm-pki-" + std::to_string(getpid()));
  fs::remove_all(pki);
  const std::string make =
      std::string("bash ") + TRAINYARD_SOURCE_DIR + "/tests/make_test_pki " + pki.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << "openssl could not make the test's certificates";

  api::ServerOptions tls;
  tls.port = FreePort();
  tls.tls_cert_file = (pki / "server.pem").string();
  tls.tls_key_file = (pki / "server.key").string();
  auto slurmrestd = api::NewHttpServer(tls, [](api::HttpRequest& request) {
    api::HttpResponse reply;
    reply.body = request.path == "/slurm/v0.0.38/jobs" ? R"({"jobs": []})" : "{}";
    return reply;
  });
  ASSERT_TRUE(slurmrestd->Start().ok());

  SlurmRestOptions options;
  options.url = "https://127.0.0.1:" + std::to_string(tls.port);
  options.user = "alice";
  options.token = "jwt";
  options.timeout = std::chrono::milliseconds(5000);
  options.ca_file = (pki / "ca.pem").string();
  auto trusting = SlurmRestClient::Create(options);
  ASSERT_TRUE(trusting.ok()) << trusting.status().message();
  auto jobs = (*trusting)->Jobs();
  EXPECT_TRUE(jobs.ok()) << jobs.status().message();

  options.ca_file.clear();
  auto untrusting = SlurmRestClient::Create(options);
  ASSERT_TRUE(untrusting.ok());
  EXPECT_EQ((*untrusting)->Jobs().status().code(), Code::kUnavailable)
      << "a certificate no trusted CA signed";

  options.url = "http://127.0.0.1:" + std::to_string(tls.port);
  options.ca_file = (pki / "ca.pem").string();
  EXPECT_EQ(SlurmRestClient::Create(options).status().code(), Code::kInvalidArgument);
  slurmrestd->Stop(std::chrono::milliseconds(0));
  fs::remove_all(pki);
}

}  // namespace
}  // namespace trainyard::slurm
