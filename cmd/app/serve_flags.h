#pragma once
// serve's flags checked before anything listens: where the API and /metrics listen, whether the
// API asks for tokens, and the combinations refused because they would open this host to whoever
// reaches the port. A refusal is a FlagError: its message on stderr and exit code 2, a usage error.
#include <optional>
#include <string>
#include <variant>

#include "cmd/app/runtime_registry.h"
#include "cmd/app/serve_options.h"
#include "services/scheduler/scheduler.h"

namespace trainyard::app {

// A listener's address, as --listen and --metrics-listen give it.
struct ListenAddress {
  std::string host;
  int port = 0;
};

// "host:port" with a host and a port in 1..65535 (the last colon splits: "[::1]:8080"); none
// otherwise.
std::optional<ListenAddress> ParseListen(const std::string& listen);

// Whether `host` (of --listen) only accepts connections from this machine.
bool IsLoopbackHost(const std::string& host);

// Whether the API asks for bearer tokens: --auth, else off on a loopback --listen and on
// elsewhere.
bool ApiTakesTokens(const ServeOptions& options);

// The flags as checked.
struct ServeFlags {
  ListenAddress api;
  std::optional<ListenAddress> metrics;  // --metrics-listen; none: no listener of its own
  bool tokens = false;                   // ApiTakesTokens
  SchedulerConfig scheduler;             // with the --scheduler knobs set
  // --auth as the `ready` line gives it: "tokens" or "off".
  const char* auth() const { return tokens ? "tokens" : "off"; }
};

struct FlagError {
  static constexpr int kExitCode = 2;  // a usage error, as for a flag CLI11 refuses
  std::string message;                 // the line after "trainyard: "
};

// The flags serve starts with, or the first it refuses: --listen or --metrics-listen not
// host:port; /metrics or the API on a non-loopback address without tokens; a runtime that runs
// commands on this host (`runtimes` says which) on a non-loopback address without
// --allow-remote-command-execution; an --allowed-host that is not a bare lowercase host name; a
// --scheduler knob that is not NAME=VALUE, or whose name or value the scheduler does not take.
std::variant<ServeFlags, FlagError> CheckServeFlags(const ServeOptions& options,
                                                    const RuntimeRegistry& runtimes);

}  // namespace trainyard::app
