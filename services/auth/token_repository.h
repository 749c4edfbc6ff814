#pragma once
// Where tokens live: rows of id, owner, role and the keyed hash of the secret, plus the one key
// the hashes are made with (the same for every process on the database).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "services/auth/access.h"
#include "services/status.h"
#include "services/time.h"

namespace trainyard {

struct TokenRecord {
  int64_t id = 0;
  int64_t project_number = 0;  // 0 for a fleet-admin token
  std::string project_id;
  Role role = Role::kViewer;
  bool fleet_admin = false;
  std::string description;
  std::string secret_hash;  // HashTokenSecret's raw bytes; never leaves the server
  Timestamp create_time{};
  std::optional<Timestamp> expire_time;
  std::optional<Timestamp> revoke_time;
};

class TokenRepository {
 public:
  virtual ~TokenRepository() = default;
  // The installation's hash key, created by whoever asks first.
  virtual StatusOr<std::string> HashKey() = 0;
  // Stores a new token (its id is the store's); returns the id.
  virtual StatusOr<int64_t> Insert(const TokenRecord& record) = 0;
  virtual StatusOr<std::optional<TokenRecord>> Find(int64_t id) = 0;
  virtual StatusOr<std::vector<TokenRecord>> List() = 0;
  // false when there is no such token; revoking twice keeps the first time.
  virtual StatusOr<bool> Revoke(int64_t id, Timestamp now) = 0;
};

}  // namespace trainyard
