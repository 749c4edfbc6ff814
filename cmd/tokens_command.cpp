// `trainyard tokens create|list|revoke`: bearer tokens, written straight to the database (the
// embedded one under --data-dir, running or not, or --database-url), so the first admin token
// can exist before anyone can call the API.
#include <iomanip>
#include <iostream>
#include <memory>

#include "api/wire/json_reader.h"
#include "cmd/client_commands.h"
#include "cmd/serve.h"
#include "services/auth/token_service.h"
#include "services/model/duration_text.h"
#include "storage/database.h"
#include "storage/pg_project_repository.h"
#include "storage/pg_token_store.h"

namespace trainyard::cmd {
namespace {

struct TokensFlags {
  std::string data_dir = ".trainyard";
  std::string database_url;
  std::string project;
  std::string role = "viewer";
  bool fleet_admin = false;
  std::string expires_in;
  std::string description;
  int64_t id = 0;
};

// Opens the database, runs `body` with a token service on it, closes it again.
int WithTokens(const TokensFlags& flags, const std::function<int(TokenService&)>& body) {
  InitJsonLogging(false);
  auto db = storage::OpenDatabase(flags.database_url, flags.data_dir, 1);
  if (!db.ok()) return PrintError(db.status());
  if (Status s = storage::Migrate(*db->pool); !s.ok()) return PrintError(s);
  int code = kExitOk;
  {
    storage::PgProjectRepository projects(*db->pool);
    storage::PgTokenStore store(*db->pool);
    SystemClock clock;
    TokenService tokens(store, projects, clock);
    code = body(tokens);
  }
  if (Status s = db->CloseAfterCommand(); !s.ok()) return PrintError(s);
  return code;
}

std::string TimeOrDash(const std::optional<Timestamp>& t) { return t ? FormatTimestamp(*t) : "-"; }

void AddDatabaseFlags(CLI::App& verb, TokensFlags& flags) {
  verb.add_option("--data-dir", flags.data_dir,
                  "the server's --data-dir (its embedded PostgreSQL, running or not)")
      ->capture_default_str();
  verb.add_option("--database-url", flags.database_url, "an external PostgreSQL instead");
}

}  // namespace

void AddTokensCommand(CLI::App& app, CommandRun* run) {
  auto flags = std::make_shared<TokensFlags>();
  CLI::App* tokens = app.add_subcommand(
      "tokens",
      "Bearer tokens for serve --auth=tokens: create (prints the secret once), list, "
      "revoke");
  tokens->require_subcommand(1);

  CLI::App* create = tokens->add_subcommand(
      "create", "Mint a token and print it, alone, on stdout; only its hash is stored");
  AddDatabaseFlags(*create, *flags);
  create->add_option("--project", flags->project, "the project the token acts on (id or number)");
  create
      ->add_option("--role", flags->role,
                   "viewer (reads), editor (also creates, cancels and deletes jobs) or admin "
                   "(also manages persistent resources) of --project; or metrics-viewer, of no "
                   "project, which may read /metrics and nothing else (for Prometheus)")
      ->check(CLI::IsMember({"viewer", "editor", "admin", "metrics-viewer"}))
      ->capture_default_str();
  create->add_flag("--fleet-admin", flags->fleet_admin,
                   "the fleet's operator: every project, the fleet-wide admin view and fault "
                   "injection (--project not needed)");
  create->add_option("--expires-in", flags->expires_in,
                     "lifetime as a Duration, e.g. 86400s; none: until revoked");
  create->add_option("--description", flags->description, "a note shown by tokens list");
  create->callback([run, flags, create] {
    *run = [flags, create] {
      TokenRequest request;
      request.project = flags->project;
      request.role = *ParseRole(flags->role);
      request.fleet_admin = flags->fleet_admin;
      request.description = flags->description;
      if (!flags->fleet_admin && flags->project.empty() && request.role != Role::kMetricsViewer) {
        return PrintUsageError(*create, "--project is required (or --fleet-admin)");
      }
      if (!flags->expires_in.empty()) {
        request.lifetime = ParseDurationText(flags->expires_in);
        if (!request.lifetime || *request.lifetime <= Duration::zero()) {
          return PrintUsageError(*create,
                                 "--expires-in must be a positive Duration like 86400s, "
                                 "got \"" +
                                     flags->expires_in + "\"");
        }
      }
      return WithTokens(*flags, [&](TokenService& tokens) {
        auto minted = tokens.Create(request);
        if (!minted.ok()) return PrintError(minted.status());
        std::cout << minted->token << std::endl;
        return static_cast<int>(kExitOk);
      });
    };
  });

  CLI::App* list = tokens->add_subcommand("list", "List tokens (never their secrets)");
  AddDatabaseFlags(*list, *flags);
  list->callback([run, flags] {
    *run = [flags] {
      return WithTokens(*flags, [](TokenService& tokens) {
        auto all = tokens.List();
        if (!all.ok()) return PrintError(all.status());
        std::cout << std::left << std::setw(6) << "ID" << std::setw(20) << "PROJECT"
                  << std::setw(16) << "ROLE" << std::setw(13) << "FLEET_ADMIN" << std::setw(25)
                  << "CREATED" << std::setw(25) << "EXPIRES" << std::setw(25) << "REVOKED"
                  << "DESCRIPTION\n";
        for (const TokenRecord& t : *all) {
          std::cout << std::setw(6) << t.id << std::setw(20)
                    << (t.project_id.empty() ? "-" : t.project_id) << std::setw(16)
                    << RoleName(t.role) << std::setw(13) << (t.fleet_admin ? "yes" : "no")
                    << std::setw(25) << FormatTimestamp(t.create_time) << std::setw(25)
                    << TimeOrDash(t.expire_time) << std::setw(25) << TimeOrDash(t.revoke_time)
                    << t.description << "\n";
        }
        return static_cast<int>(kExitOk);
      });
    };
  });

  CLI::App* revoke =
      tokens->add_subcommand("revoke", "Revoke a token: refused everywhere within 2 seconds");
  AddDatabaseFlags(*revoke, *flags);
  revoke->add_option("ID", flags->id, "the token's id (tokens list)")->required();
  revoke->callback([run, flags] {
    *run = [flags] {
      return WithTokens(*flags, [&](TokenService& tokens) {
        if (Status s = tokens.Revoke(flags->id); !s.ok()) return PrintError(s);
        std::cout << "revoked token " << flags->id << "\n";
        return static_cast<int>(kExitOk);
      });
    };
  });
}

}  // namespace trainyard::cmd
