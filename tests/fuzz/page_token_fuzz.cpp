// Page tokens come back from clients: any text must decode to a position or an error. The first
// byte picks the decoder; the rest is the token, or (odd first byte) the JSON inside a token, so
// the fuzzer reaches past the base64url layer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/page_token.h"
#include "services/model/base64url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard;
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string token = (mode & 1) ? Base64UrlEncode(rest) : rest;
  const std::string filter = "/projects/p/locations/us-central1/customJobs?";
  switch ((mode >> 1) % 3) {
    case 0:
      (void)api::DecodePageToken(token, filter);
      break;
    case 1:
      (void)api::DecodeNodePageToken(token, filter);
      break;
    default:
      (void)api::DecodeLogPageToken(token, filter);
      break;
  }
  return 0;
}
