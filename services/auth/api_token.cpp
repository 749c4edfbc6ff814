#include "services/auth/api_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>

#include "services/model/base64url.h"

namespace trainyard {
namespace {

constexpr std::string_view kPrefix = "ty1_";
constexpr size_t kSecretBytes = 32;
constexpr size_t kSecretChars = 43;  // base64url of 32 bytes, unpadded

StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    return Internal("no random bytes from OpenSSL (RAND_bytes failed)");
  }
  return out;
}

}  // namespace

StatusOr<std::string> NewTokenSecret() {
  TY_ASSIGN_OR_RETURN(std::string bytes, RandomBytes(kSecretBytes));
  return Base64UrlEncode(bytes);
}

StatusOr<std::string> NewTokenHashKey() { return RandomBytes(32); }

std::string FormatToken(int64_t id, std::string_view secret) {
  return std::string(kPrefix) + std::to_string(id) + "_" + std::string(secret);
}

std::optional<TokenParts> ParseToken(std::string_view text) {
  if (text.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  size_t sep = text.find('_');
  if (sep == std::string_view::npos || sep == 0 || sep > 18) return std::nullopt;
  TokenParts parts;
  for (char c : text.substr(0, sep)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    parts.id = parts.id * 10 + (c - '0');
  }
  std::string_view secret = text.substr(sep + 1);
  if (parts.id <= 0 || secret.size() != kSecretChars) return std::nullopt;
  for (char c : secret) {
    if (kBase64UrlAlphabet.find(c) == std::string_view::npos) return std::nullopt;
  }
  parts.secret = std::string(secret);
  return parts;
}

std::string HashTokenSecret(std::string_view key, std::string_view secret) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), digest, &size);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

bool SameTokenHash(std::string_view a, std::string_view b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string_view> BearerCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || header[kScheme.size()] != ' ') return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = header.substr(kScheme.size() + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

}  // namespace trainyard
