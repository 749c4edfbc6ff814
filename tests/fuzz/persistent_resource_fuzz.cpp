// The persistentResources.create body: parse, decode, validate; an accepted resource must
// survive its own encoding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "api/wire/persistent_resource_codec.h"
#include "services/persistent_resources/resource_validator.h"
#include "tests/fuzz/request_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard;
  auto body = fuzz::ParseRequestBody(data, size);
  if (!body) return 0;
  auto resource = DecodePersistentResource(*body);
  if (!resource.ok() || !ValidatePersistentResource(*resource).ok()) return 0;
  nlohmann::json encoded = EncodePersistentResource(*resource);
  auto again = DecodePersistentResource(encoded);
  if (!again.ok() || !ValidatePersistentResource(*again).ok()) std::abort();
  return 0;
}
