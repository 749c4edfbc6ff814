#pragma once
// Tokens and the hash key on PostgreSQL (migrations/0011_api_tokens.sql).
#include "services/auth/token_repository.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgTokenStore final : public TokenRepository {
 public:
  explicit PgTokenStore(pg::Pool& pool) : pool_(pool) {}
  StatusOr<std::string> HashKey() override;
  StatusOr<int64_t> Insert(const TokenRecord& record) override;
  StatusOr<std::optional<TokenRecord>> Find(int64_t id) override;
  StatusOr<std::vector<TokenRecord>> List() override;
  StatusOr<bool> Revoke(int64_t id, Timestamp now) override;

 private:
  pg::Pool& pool_;
};

}  // namespace trainyard::storage
