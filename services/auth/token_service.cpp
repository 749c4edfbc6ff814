#include "services/auth/token_service.h"

#include "services/auth/api_token.h"
#include "services/log.h"

namespace trainyard {
namespace {

Status Refuse(const char* reason, int64_t token_id, const std::string& request_id) {
  LogJson(LogLevel::kInfo, "auth_refused",
          {{"request_id", request_id}, {"reason", reason}, {"token_id", token_id}});
  return UnauthenticatedError();
}

}  // namespace

Status UnauthenticatedError() {
  return Status(Code::kUnauthenticated,
                "Request had invalid authentication credentials. Expected a trainyard bearer "
                "token (Authorization: Bearer ty1_...): see `trainyard tokens create`.");
}

StatusOr<const std::string*> TokenService::Key() {
  {
    std::lock_guard lock(mu_);
    if (key_) return &*key_;
  }
  TY_ASSIGN_OR_RETURN(std::string key, tokens_.HashKey());
  std::lock_guard lock(mu_);
  if (!key_) key_ = std::move(key);
  return &*key_;
}

StatusOr<MintedToken> TokenService::Create(const TokenRequest& request) {
  TokenRecord record;
  if (request.role == Role::kMetricsViewer) {
    if (request.fleet_admin || !request.project.empty()) {
      return InvalidArgument(
          "a metrics-viewer token belongs to no project and is not a fleet admin: it may read "
          "/metrics and nothing else");
    }
  } else if (!request.fleet_admin || !request.project.empty()) {
    if (request.project.empty()) return InvalidArgument("a token needs a project (--project)");
    TY_ASSIGN_OR_RETURN(Project project, projects_.Resolve(request.project, true));
    record.project_number = project.number;
    record.project_id = project.id;
  }
  if (request.lifetime && *request.lifetime <= Duration::zero()) {
    return InvalidArgument("a token's lifetime must be positive");
  }
  record.role = request.role;
  record.fleet_admin = request.fleet_admin;
  record.description = request.description;
  record.create_time = clock_.Now();
  if (request.lifetime) {
    record.expire_time = record.create_time +
                         std::chrono::duration_cast<std::chrono::microseconds>(*request.lifetime);
  }
  TY_ASSIGN_OR_RETURN(const std::string* key, Key());
  TY_ASSIGN_OR_RETURN(std::string secret, NewTokenSecret());
  record.secret_hash = HashTokenSecret(*key, secret);
  TY_ASSIGN_OR_RETURN(record.id, tokens_.Insert(record));
  {
    std::lock_guard lock(mu_);
    unknown_.erase(record.id);
  }
  LogJson(LogLevel::kInfo, "token_created",
          {{"token_id", record.id},
           {"project", record.project_id},
           {"role", RoleName(record.role)},
           {"fleet_admin", record.fleet_admin ? "true" : "false"}});
  return MintedToken{record, FormatToken(record.id, secret)};
}

StatusOr<std::vector<TokenRecord>> TokenService::List() { return tokens_.List(); }

Status TokenService::Revoke(int64_t id) {
  TY_ASSIGN_OR_RETURN(bool found, tokens_.Revoke(id, clock_.Now()));
  if (!found) return NotFound("no token " + std::to_string(id));
  std::lock_guard lock(mu_);
  verified_.erase(id);
  LogJson(LogLevel::kInfo, "token_revoked", {{"token_id", id}});
  return Status::Ok();
}

StatusOr<std::optional<TokenRecord>> TokenService::Lookup(int64_t id) {
  const Timestamp now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    if (auto it = verified_.find(id); it != verified_.end() && it->second.until > now) {
      return std::optional(it->second.record);
    }
    if (auto it = unknown_.find(id); it != unknown_.end() && it->second > now) {
      return std::optional<TokenRecord>();
    }
  }
  TY_ASSIGN_OR_RETURN(std::optional<TokenRecord> found, tokens_.Find(id));
  std::lock_guard lock(mu_);
  if (found) {
    // Bounded by the tokens that exist, since only found ones are kept.
    verified_[id] = Cached{*found, now + kCacheFor};
    unknown_.erase(id);
  } else {
    if (unknown_.size() >= kMaxUnknown) unknown_.clear();
    unknown_[id] = now + kCacheFor;
  }
  return found;
}

StatusOr<Principal> TokenService::Authenticate(const std::string* authorization,
                                               const std::string& request_id) {
  if (authorization == nullptr) return Refuse("no Authorization header", 0, request_id);
  std::optional<std::string_view> credentials = BearerCredentials(*authorization);
  if (!credentials) return Refuse("not a Bearer credential", 0, request_id);
  std::optional<TokenParts> parts = ParseToken(*credentials);
  if (!parts) return Refuse("not a trainyard token", 0, request_id);
  TY_ASSIGN_OR_RETURN(std::optional<TokenRecord> record, Lookup(parts->id));
  if (!record) return Refuse("no such token", parts->id, request_id);
  TY_ASSIGN_OR_RETURN(const std::string* key, Key());
  if (!SameTokenHash(HashTokenSecret(*key, parts->secret), record->secret_hash)) {
    return Refuse("wrong secret", parts->id, request_id);
  }
  if (record->revoke_time) return Refuse("revoked", parts->id, request_id);
  if (record->expire_time && *record->expire_time <= clock_.Now()) {
    return Refuse("expired", parts->id, request_id);
  }
  Principal principal;
  principal.token_id = record->id;
  principal.project_number = record->project_number;
  principal.project_id = record->project_id;
  principal.role = record->role;
  principal.fleet_admin = record->fleet_admin;
  return principal;
}

}  // namespace trainyard
