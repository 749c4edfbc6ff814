#pragma once
// The embedded PostgreSQL's password: local connections authenticate with SCRAM, not trust, so a
// process that reaches the socket (a replica of the server's own user, say) cannot connect without
// a secret only the server can read. The secret lives in a libpq password file (0600, the server's
// user) beside the cluster, named in every conninfo as `passfile`.
#include <string>
#include <string_view>

#include "services/status.h"

namespace trainyard::embedded_pg {

// The password in `path` (a pgpass line "*:*:*:postgres:<hex>"), made with 32 random bytes when
// the file is missing; never read through a link.
StatusOr<std::string> EnsurePassFile(const std::string& path);

// pg_hba.conf with every `trust` method turned into `scram-sha-256` (clusters made before the
// password existed); comments and other lines as they were.
std::string HbaWithoutTrust(std::string_view hba);
bool HbaTrusts(std::string_view hba);

}  // namespace trainyard::embedded_pg
