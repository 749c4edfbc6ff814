#pragma once
// A byte pre-scan run on untrusted bodies before they are parsed. nlohmann's parser, its
// destructor and our recursive decoders all go one stack frame deeper per nesting level, so a
// 100k-deep "[[[[..." must be refused before it reaches them. (Protobuf's own JSON parser stops at
// depth 100.)
#include <string_view>

namespace trainyard {

// How deep any JSON a caller sends may nest: a request body, and the scenario text inside one.
inline constexpr int kMaxJsonDepth = 64;

// True when no '[' or '{' outside JSON strings nests deeper than max_depth ("{}" is depth 1,
// "{"a":[1]}" depth 2). Escapes inside strings are honoured; the text need not be valid JSON
// (the parser judges that), and stray closers never lower the depth below 0.
bool JsonDepthWithin(std::string_view text, int max_depth);

}  // namespace trainyard
