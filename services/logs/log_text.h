#pragma once
// Replica output is arbitrary bytes; what is stored must be text PostgreSQL accepts and JSON can
// carry. A single bad line must not fail the batch it came in.
#include <cstddef>
#include <string>
#include <string_view>

namespace trainyard {

// Cloud Logging's entry limit is 256 KB; a line longer than this is a runaway print, not a log.
inline constexpr size_t kMaxLogMessageBytes = 64 * 1024;

// Invalid UTF-8 sequences become U+FFFD, NUL bytes are removed (PostgreSQL text cannot hold them),
// and a message over kMaxLogMessageBytes is cut at a character boundary and marked
// "…[truncated]".
std::string SanitizeLogMessage(std::string_view raw);

}  // namespace trainyard
