#include "services/model/base64url.h"

#include <cstdint>

namespace trainyard {

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64UrlAlphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kBase64UrlAlphabet[(buffer << (6 - bits)) & 0x3F]);
  return out;
}

bool Base64UrlDecode(std::string_view in, std::string& out) {
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    const size_t pos = kBase64UrlAlphabet.find(c);
    if (pos == std::string_view::npos) return false;
    buffer = (buffer << 6) | static_cast<uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return true;
}

}  // namespace trainyard
