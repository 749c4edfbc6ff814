// Token text, hashing and the Authorization header: what a client sends and what a forger tries.
#include "services/auth/api_token.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(ApiTokenTest, AMintedTokenParsesBackToItsIdAndSecret) {
  auto secret = NewTokenSecret();
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(secret->size(), 43u);
  const std::string token = FormatToken(42, *secret);
  EXPECT_EQ(token.rfind("ty1_42_", 0), 0u);
  auto parts = ParseToken(token);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->id, 42);
  EXPECT_EQ(parts->secret, *secret);
}

TEST(ApiTokenTest, SecretsDoNotRepeat) {
  auto a = NewTokenSecret();
  auto b = NewTokenSecret();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(ApiTokenTest, AnythingElseIsNotAToken) {
  const std::string secret(43, 'A');
  for (const std::string& text :
       {std::string(""), std::string("ty1_"), "ty1_1_" + secret.substr(1), "ty1_1_" + secret + "A",
        "ty2_1_" + secret, "ty1__" + secret, "ty1_0_" + secret, "ty1_-1_" + secret,
        "ty1_1x_" + secret, "ty1_1234567890123456789_" + secret, "ty1_1_" + secret.substr(1) + "=",
        "ty1_1_" + secret.substr(1) + "'", "ty1_1_" + secret.substr(2) + "\xc3\xa9",
        std::string("Bearer ty1_1_") + secret}) {
    EXPECT_FALSE(ParseToken(text).has_value()) << text;
  }
}

TEST(ApiTokenTest, TheHashDependsOnKeyAndSecretAndComparesOnlyEqualHashes) {
  const std::string h = HashTokenSecret("key", "secret");
  EXPECT_EQ(h.size(), 32u);
  EXPECT_TRUE(SameTokenHash(h, HashTokenSecret("key", "secret")));
  EXPECT_FALSE(SameTokenHash(h, HashTokenSecret("key2", "secret")));
  EXPECT_FALSE(SameTokenHash(h, HashTokenSecret("key", "secret2")));
  EXPECT_FALSE(SameTokenHash(h, h.substr(0, 31)));
  EXPECT_FALSE(SameTokenHash("", ""));
}

TEST(ApiTokenTest, BearerCredentialsTakeTheSchemeInAnyCase) {
  EXPECT_EQ(BearerCredentials("Bearer abc").value_or(""), "abc");
  EXPECT_EQ(BearerCredentials("bearer abc").value_or(""), "abc");
  EXPECT_EQ(BearerCredentials("BEARER  abc ").value_or(""), "abc");
  EXPECT_FALSE(BearerCredentials("Basic abc").has_value());
  EXPECT_FALSE(BearerCredentials("Bearer").has_value());
  EXPECT_FALSE(BearerCredentials("Bearer ").has_value());
  EXPECT_FALSE(BearerCredentials("Bearerabc").has_value());
  EXPECT_FALSE(BearerCredentials("").has_value());
}

}  // namespace
}  // namespace trainyard
