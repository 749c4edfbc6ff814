#pragma once
// Unpadded base64url (RFC 4648 §5): page tokens and bearer tokens, both of which travel in URLs
// and headers untouched.
#include <string>
#include <string_view>

namespace trainyard {

inline constexpr std::string_view kBase64UrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in);
// Appends the decoded bytes to *out; false at the first character outside the alphabet.
bool Base64UrlDecode(std::string_view in, std::string& out);

}  // namespace trainyard
