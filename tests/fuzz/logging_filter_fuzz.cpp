// The Cloud Logging filter that `gcloud ai custom-jobs stream-logs` sends: parse, then read as a
// job's log query.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/logging_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tree = trainyard::api::ParseLoggingFilter(text);
  if (tree.ok()) (void)trainyard::api::ToJobLogFilter(*tree);
  return 0;
}
