#pragma once
// Bearer tokens: "ty1_<id>_<secret>", where the secret is 32 random bytes in base64url (43
// characters). The id finds the row; only a keyed hash of the secret is stored (HMAC-SHA256 under
// the installation's key), and it is compared in constant time, so neither the database nor the
// timing of a comparison gives a usable token away.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "services/status.h"

namespace trainyard {

struct TokenParts {
  int64_t id = 0;
  std::string secret;
};

// A new random secret (OpenSSL's RAND_bytes); kInternal when the generator fails, since a token
// without randomness would be guessable.
StatusOr<std::string> NewTokenSecret();
// A new random key for HashTokenSecret, as raw bytes.
StatusOr<std::string> NewTokenHashKey();
std::string FormatToken(int64_t id, std::string_view secret);
// nullopt for anything that is not exactly a token this server could have minted.
std::optional<TokenParts> ParseToken(std::string_view text);
// HMAC-SHA256(key, secret), 32 raw bytes.
std::string HashTokenSecret(std::string_view key, std::string_view secret);
// Constant-time equality of two hashes (CRYPTO_memcmp); false when their sizes differ.
bool SameTokenHash(std::string_view a, std::string_view b);
// The credentials of an Authorization header: "Bearer <token>", the scheme in any case (RFC
// 9110 §11.1). nullopt for another scheme or an empty token.
std::optional<std::string_view> BearerCredentials(std::string_view header);

}  // namespace trainyard
