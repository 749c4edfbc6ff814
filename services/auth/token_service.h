#pragma once
// Mints, lists and revokes tokens, and turns an Authorization header into a Principal. Every way a
// credential can be wrong (missing, garbled, unknown, wrong secret, revoked, expired) is the same
// 401 UNAUTHENTICATED to the caller; the log says which.
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "services/auth/access.h"
#include "services/auth/token_repository.h"
#include "services/clock.h"
#include "services/jobs/job_repository.h"

namespace trainyard {

struct TokenRequest {
  std::string project;  // id or number; registered if new. Empty only with fleet_admin.
  Role role = Role::kViewer;
  bool fleet_admin = false;
  std::string description;
  std::optional<Duration> lifetime;  // none: until revoked
};

struct MintedToken {
  TokenRecord record;
  std::string token;  // shown once; only its hash is kept
};

class TokenService {
 public:
  // Verified tokens are remembered this long, so a revocation made by another process (the CLI)
  // takes effect within it; ids with no row too, so a token another process minted under an id
  // someone had just tried works within it.
  static constexpr std::chrono::seconds kCacheFor{2};

  // `clock` is wall time: tokens expire in real time, whatever speed the simulator runs at.
  TokenService(TokenRepository& tokens, ProjectRepository& projects, const Clock& clock)
      : tokens_(tokens), projects_(projects), clock_(clock) {}

  StatusOr<MintedToken> Create(const TokenRequest& request);
  StatusOr<std::vector<TokenRecord>> List();
  // kNotFound when there is no such token.
  Status Revoke(int64_t id);
  // `authorization`: the request's Authorization header, nullptr when absent. `request_id` only
  // goes into the log line that says why a credential was refused.
  StatusOr<Principal> Authenticate(const std::string* authorization, const std::string& request_id);

 private:
  struct Cached {
    TokenRecord record;
    Timestamp until{};
  };
  StatusOr<const std::string*> Key();
  StatusOr<std::optional<TokenRecord>> Lookup(int64_t id);

  TokenRepository& tokens_;
  ProjectRepository& projects_;
  const Clock& clock_;
  std::mutex mu_;
  std::optional<std::string> key_;                // guarded by mu_; never changes once read
  std::unordered_map<int64_t, Cached> verified_;  // guarded by mu_
  // Ids that had no row, until when: a stream of made-up tokens costs no query each. Bounded:
  // cleared when it reaches kMaxUnknown, so a flood of random ids cannot grow it.
  std::unordered_map<int64_t, Timestamp> unknown_;  // guarded by mu_
  static constexpr size_t kMaxUnknown = 65536;
};

// The 401 every failed authentication gets (Vertex's wording).
Status UnauthenticatedError();

}  // namespace trainyard
