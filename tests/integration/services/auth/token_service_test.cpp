// TokenService on a real PostgreSQL with a manual clock: what a minted token authenticates as, and
// every way it stops working (expiry, revocation, a wrong secret), each the same 401.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "services/auth/token_service.h"
#include "storage/pg.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_token_store.h"
#include "tests/integration/test_database.h"

namespace trainyard {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

class TokenServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pool = pg::Pool::Create(testing::FreshDatabase(), 2, std::chrono::milliseconds(2000));
    ASSERT_TRUE(pool.ok()) << pool.status().message();
    pool_ = std::move(pool).value();
    projects_ = std::make_unique<storage::PgProjectRepository>(*pool_);
    tokens_ = std::make_unique<storage::PgTokenStore>(*pool_);
    service_ = std::make_unique<TokenService>(*tokens_, *projects_, clock_);
  }

  MintedToken Mint(TokenRequest request) {
    auto minted = service_->Create(request);
    EXPECT_TRUE(minted.ok()) << minted.status().message();
    return minted.ok() ? *minted : MintedToken{};
  }

  StatusOr<Principal> Present(const std::string& token) {
    const std::string header = "Bearer " + token;
    return service_->Authenticate(&header, "test-request");
  }

  static void ExpectRefused(const StatusOr<Principal>& result, const std::string& why) {
    ASSERT_FALSE(result.ok()) << why;
    EXPECT_EQ(result.status().code(), Code::kUnauthenticated) << why;
    EXPECT_EQ(result.status().message(), UnauthenticatedError().message()) << why;
  }

  ManualClock clock_{FromUnixMicros(1'800'000'000'000'000)};
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<storage::PgProjectRepository> projects_;
  std::unique_ptr<storage::PgTokenStore> tokens_;
  std::unique_ptr<TokenService> service_;
};

TEST_F(TokenServiceTest, AMintedTokenIsItsProjectAndRole) {
  MintedToken minted = Mint({"team-a", Role::kEditor, false, "ci", std::nullopt});
  auto principal = Present(minted.token);
  ASSERT_TRUE(principal.ok()) << principal.status().message();
  EXPECT_EQ(principal->project_id, "team-a");
  EXPECT_NE(principal->project_number, 0);
  EXPECT_EQ(principal->role, Role::kEditor);
  EXPECT_FALSE(principal->fleet_admin);
}

TEST_F(TokenServiceTest, ATokenWorksUntilItsLifetimeEndsAndNotAfter) {
  MintedToken minted = Mint({"team-a", Role::kViewer, false, "", hours(1)});
  clock_.Advance(minutes(59));
  EXPECT_TRUE(Present(minted.token).ok());
  clock_.Advance(minutes(1));
  ExpectRefused(Present(minted.token), "expired at its lifetime's end");
}

TEST_F(TokenServiceTest, ARevokedTokenIsRefusedOnceTheCacheWindowPasses) {
  MintedToken minted = Mint({"team-a", Role::kAdmin, false, "", std::nullopt});
  ASSERT_TRUE(Present(minted.token).ok());
  ASSERT_TRUE(service_->Revoke(minted.record.id).ok());
  clock_.Advance(TokenService::kCacheFor + seconds(1));
  ExpectRefused(Present(minted.token), "revoked");
  EXPECT_EQ(service_->Revoke(minted.record.id + 1000).code(), Code::kNotFound);
}

TEST_F(TokenServiceTest, AWrongSecretForARealIdIsRefusedLikeGarbage) {
  MintedToken minted = Mint({"team-a", Role::kViewer, false, "", std::nullopt});
  std::string forged = minted.token;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  ExpectRefused(Present(forged), "a wrong secret");
  ExpectRefused(Present("not-a-token"), "garbage");
  ExpectRefused(service_->Authenticate(nullptr, "r"), "no header");
}

}  // namespace
}  // namespace trainyard
