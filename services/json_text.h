#pragma once
// A JSON string literal built by hand, for the few places in services/ that write JSON text
// without a JSON library (structured logs, CLUSTER_SPEC and TF_CONFIG).
#include <string>
#include <string_view>

namespace trainyard {

// Appends `s` as a quoted JSON string, escaping quotes, backslashes and control characters.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace trainyard
