#pragma once
// Bytes as lowercase hexadecimal text, two digits a byte (digests, keys, tags).
#include <string>
#include <string_view>

namespace trainyard {

inline std::string HexOf(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace trainyard
