#include "storage/pg_token_store.h"

#include "services/auth/api_token.h"
#include "services/hex.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// The first process to ask writes its candidate; everyone reads back the one that won.
constexpr const char* kInsertKey =
    "INSERT INTO token_hash_key (key_hex) VALUES ($1) ON CONFLICT (singleton) DO NOTHING";
constexpr const char* kSelectKey = "SELECT key_hex FROM token_hash_key";

#define TY_TOKEN_COLUMNS                                                                     \
  "t.id, coalesce(t.project_number, 0), coalesce(p.project_id, ''), t.role, t.fleet_admin, " \
  "t.description, t.secret_hash, " TY_MICROS("t.create_time") ", " TY_MICROS(                \
      "t.expire_time") ", " TY_MICROS("t.revoke_time")
#define TY_TOKEN_FROM " FROM api_tokens t LEFT JOIN projects p ON p.number = t.project_number"

constexpr const char* kInsert =
    "INSERT INTO api_tokens (project_number, role, fleet_admin, description, secret_hash, "
    "create_time, expire_time) VALUES (nullif($1::bigint, 0), $2::smallint, $3::boolean, $4, $5, "
    "" TY_TS("$6") ", " TY_TS("$7") ") RETURNING id";
constexpr const char* kFind = "SELECT " TY_TOKEN_COLUMNS TY_TOKEN_FROM " WHERE t.id = $1::bigint";
constexpr const char* kList = "SELECT " TY_TOKEN_COLUMNS TY_TOKEN_FROM " ORDER BY t.id";
constexpr const char* kRevoke =
    "UPDATE api_tokens SET revoke_time = coalesce(revoke_time, " TY_TS("$2") ") "
    "WHERE id = $1::bigint";

std::string Unhex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>((nibble(hex[i]) << 4) | nibble(hex[i + 1]));
  }
  return out;
}

TokenRecord DecodeToken(const pg::Result& r, int row) {
  TokenRecord t;
  t.id = r.GetInt64(row, 0);
  t.project_number = r.GetInt64(row, 1);
  t.project_id = std::string(r.Get(row, 2));
  const int64_t role = r.GetInt64(row, 3);
  t.role = role >= 1 && role <= 4 ? static_cast<Role>(role) : Role::kViewer;
  t.fleet_admin = r.GetBool(row, 4);
  t.description = std::string(r.Get(row, 5));
  t.secret_hash = Unhex(r.Get(row, 6));
  t.create_time = FromUnixMicros(r.GetInt64(row, 7));
  t.expire_time = OptionalTime(r, row, 8);
  t.revoke_time = OptionalTime(r, row, 9);
  return t;
}

}  // namespace

StatusOr<std::string> PgTokenStore::HashKey() {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result found, conn->Exec(kSelectKey));
  if (found.rows() == 0) {
    TY_ASSIGN_OR_RETURN(std::string candidate, NewTokenHashKey());
    TY_RETURN_IF_ERROR(conn->Exec(kInsertKey, {HexOf(candidate)}).status());
    TY_ASSIGN_OR_RETURN(found, conn->Exec(kSelectKey));
  }
  if (found.rows() == 0) return Internal("the token hash key is missing");
  return Unhex(found.Get(0, 0));
}

StatusOr<int64_t> PgTokenStore::Insert(const TokenRecord& t) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kInsert,
                 {std::to_string(t.project_number), std::to_string(static_cast<int>(t.role)),
                  t.fleet_admin ? "true" : "false", t.description, HexOf(t.secret_hash),
                  MicrosParam(t.create_time), MicrosParam(t.expire_time)}));
  return r.GetInt64(0, 0);
}

StatusOr<std::optional<TokenRecord>> PgTokenStore::Find(int64_t id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kFind, {std::to_string(id)}));
  if (r.rows() == 0) return std::optional<TokenRecord>();
  return std::optional(DecodeToken(r, 0));
}

StatusOr<std::vector<TokenRecord>> PgTokenStore::List() {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kList));
  std::vector<TokenRecord> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeToken(r, i));
  return out;
}

StatusOr<bool> PgTokenStore::Revoke(int64_t id, Timestamp now) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kRevoke, {std::to_string(id), MicrosParam(now)}));
  return r.affected() > 0;
}

}  // namespace trainyard::storage
